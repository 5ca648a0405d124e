// node-redis against a running kvrocks: node client_test.js <port>
// Exits non-zero (with the failing check) if anything differs from Redis.
'use strict';
const assert = require('assert');
const { createClient } = require('redis');
const redis3 = require('redis3');

const port = Number(process.argv[2]);
// "replica": the server is a replica in sync; only the ready check and reads are tried.
const replica = process.argv[3] === 'replica';

async function v4() {
  const c = createClient({ socket: { host: '127.0.0.1', port } });
  c.on('error', (e) => { throw e; });
  await c.connect();
  assert.strictEqual(await c.ping(), 'PONG');
  await c.set('node:k', 'v', { EX: 100 });
  assert.strictEqual(await c.get('node:k'), 'v');
  assert.ok((await c.ttl('node:k')) > 0);
  await c.hSet('node:h', { a: '1', b: '2' });
  assert.deepStrictEqual({ ...(await c.hGetAll('node:h')) }, { a: '1', b: '2' });
  await c.rPush('node:l', ['x', 'y']);
  assert.deepStrictEqual(await c.lRange('node:l', 0, -1), ['x', 'y']);
  const replies = await c.multi().incr('node:n').incr('node:n').exec();
  assert.deepStrictEqual(replies, [1, 2]);
  assert.strictEqual(await c.eval("return redis.call('get', KEYS[1])", { keys: ['node:k'] }), 'v');
  const keys = [];
  for await (const k of c.scanIterator({ MATCH: 'node:*' })) keys.push(k);
  assert.deepStrictEqual(keys.sort(), ['node:h', 'node:k', 'node:l', 'node:n']);

  const sub = c.duplicate();
  await sub.connect();
  const got = new Promise((resolve) => sub.subscribe('node:chan', (msg) => resolve(msg)));
  await new Promise((r) => setTimeout(r, 50));
  assert.strictEqual(await c.publish('node:chan', 'hello'), 1);
  assert.strictEqual(await got, 'hello');
  await sub.quit();
  await c.del(['node:k', 'node:h', 'node:l', 'node:n']);
  await c.quit();
}

function v3() {
  // node-redis 3 waits for INFO's loading:0 (its "ready check") before it is ready.
  return new Promise((resolve, reject) => {
    const c = redis3.createClient({ host: '127.0.0.1', port });
    c.on('error', reject);
    c.on('ready', () => {
      assert.strictEqual(c.server_info.loading, '0');
      assert.ok(c.server_info.redis_version);
      if (replica) {
        assert.strictEqual(c.server_info.role, 'slave');
        assert.strictEqual(c.server_info.master_link_status, 'up');
        return c.get('from-master', (err, v) => {
          if (err) return reject(err);
          assert.strictEqual(v, 'hello');
          c.quit(() => resolve());
        });
      }
      c.set('node3:k', 'v3', (err) => {
        if (err) return reject(err);
        c.get('node3:k', (err2, v) => {
          if (err2) return reject(err2);
          assert.strictEqual(v, 'v3');
          c.del('node3:k', () => c.quit(() => resolve()));
        });
      });
    });
  });
}

(async () => {
  if (!replica) await v4();
  await v3();
  console.log('node-redis checks passed');
})().catch((e) => {
  console.error(e);
  process.exit(1);
});
