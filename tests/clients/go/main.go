// go-redis v9 against a running server: go run . <port> <protocol 2|3>
//
// Prints one line per operation: what go-redis made of the reply (values with
// their Go types, or the error). tests/integration/test_client_libraries.py runs
// it against kvrocks and against redis-server and compares the transcripts, so
// every line must be deterministic for a given server state.
package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/redis/go-redis/v9"
)

var ctx = context.Background()

func show(name string, v interface{}, err error) {
	if err != nil {
		if errors.Is(err, redis.Nil) {
			fmt.Printf("%s: nil\n", name)
		} else {
			fmt.Printf("%s: error %v\n", name, err)
		}
		return
	}
	fmt.Printf("%s: %T %v\n", name, v, v)
}

func sortedKeys(m map[string]string) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

func main() {
	port := os.Args[1]
	protocol, _ := strconv.Atoi(os.Args[2])
	c := redis.NewClient(&redis.Options{Addr: "127.0.0.1:" + port, Protocol: protocol, MaxRetries: -1})
	defer c.Close()
	if err := c.FlushAll(ctx).Err(); err != nil {
		fmt.Println("connect:", err)
		os.Exit(1)
	}

	// Strings and keys.
	st, err := c.Set(ctx, "go:s", "v", time.Minute).Result()
	show("set", st, err)
	v, err := c.Get(ctx, "go:s").Result()
	show("get", v, err)
	v, err = c.Get(ctx, "go:missing").Result()
	show("get missing", v, err)
	ttl, err := c.TTL(ctx, "go:s").Result()
	show("ttl set", ttl > 50*time.Second && ttl <= time.Minute, err)
	ok, err := c.SetNX(ctx, "go:s", "w", 0).Result()
	show("setnx", ok, err)
	n, err := c.Incr(ctx, "go:n").Result()
	show("incr", n, err)
	f, err := c.IncrByFloat(ctx, "go:f", 1.5).Result()
	show("incrbyfloat", f, err)
	_, err = c.Incr(ctx, "go:s").Result()
	show("incr string", nil, err)
	show("mset", nil, c.MSet(ctx, "go:a", "1", "go:b", "2").Err())
	vals, err := c.MGet(ctx, "go:a", "go:missing", "go:b").Result()
	show("mget", vals, err)
	old, err := c.SetArgs(ctx, "go:a", "3", redis.SetArgs{Get: true, KeepTTL: true}).Result()
	show("set get", old, err)
	ex, err := c.GetEx(ctx, "go:a", 10*time.Second).Result()
	show("getex", ex, err)
	exists, err := c.Exists(ctx, "go:a", "go:b", "go:missing").Result()
	show("exists", exists, err)
	typ, err := c.Type(ctx, "go:a").Result()
	show("type", typ, err)
	lcs, err := c.LCS(ctx, &redis.LCSQuery{Key1: "go:a", Key2: "go:b"}).Result()
	show("lcs", lcs.MatchString, err)

	// Hashes: RESP3 maps.
	hn, err := c.HSet(ctx, "go:h", map[string]interface{}{"a": "1", "b": "2"}).Result()
	show("hset", hn, err)
	all, err := c.HGetAll(ctx, "go:h").Result()
	show("hgetall keys", sortedKeys(all), err)
	show("hgetall a", all["a"], err)
	hf, err := c.HIncrByFloat(ctx, "go:h", "a", 0.25).Result()
	show("hincrbyfloat", hf, err)
	hv, err := c.HMGet(ctx, "go:h", "a", "zz").Result()
	show("hmget", hv, err)
	rf, err := c.HRandField(ctx, "go:h", 5).Result()
	sort.Strings(rf)
	show("hrandfield", rf, err)

	// Lists, including a blocking pop that times out and one that is served.
	ln, err := c.RPush(ctx, "go:l", "x", "y", "z").Result()
	show("rpush", ln, err)
	lr, err := c.LRange(ctx, "go:l", 0, -1).Result()
	show("lrange", lr, err)
	bl, err := c.BLPop(ctx, time.Second, "go:l").Result()
	show("blpop", bl, err)
	bl, err = c.BLPop(ctx, time.Second, "go:empty").Result()
	show("blpop timeout", bl, err)
	pos, err := c.LPos(ctx, "go:l", "z", redis.LPosArgs{}).Result()
	show("lpos", pos, err)
	mv, err := c.LMove(ctx, "go:l", "go:l2", "LEFT", "RIGHT").Result()
	show("lmove", mv, err)
	lk, lv, err := c.LMPop(ctx, "left", 2, "go:missing", "go:l").Result()
	show("lmpop", fmt.Sprint(lk, lv), err)

	// Sets: RESP3 sets.
	sn, err := c.SAdd(ctx, "go:set", "a", "b", "c").Result()
	show("sadd", sn, err)
	members, err := c.SMembers(ctx, "go:set").Result()
	sort.Strings(members)
	show("smembers", members, err)
	ism, err := c.SMIsMember(ctx, "go:set", "a", "z").Result()
	show("smismember", ism, err)
	inter, err := c.SInterCard(ctx, 0, "go:set", "go:set").Result()
	show("sintercard", inter, err)

	// Sorted sets: RESP3 doubles.
	zn, err := c.ZAdd(ctx, "go:z", redis.Z{Score: 1.5, Member: "a"}, redis.Z{Score: -2, Member: "b"},
		redis.Z{Score: 3, Member: "c"}).Result()
	show("zadd", zn, err)
	zs, err := c.ZRangeWithScores(ctx, "go:z", 0, -1).Result()
	show("zrange withscores", zs, err)
	score, err := c.ZScore(ctx, "go:z", "a").Result()
	show("zscore", score, err)
	ms, err := c.ZMScore(ctx, "go:z", "a", "nope").Result()
	show("zmscore", ms, err)
	zr, err := c.ZRangeArgs(ctx, redis.ZRangeArgs{Key: "go:z", Start: "(0", Stop: "+inf", ByScore: true}).Result()
	show("zrange byscore", zr, err)
	rank, err := c.ZRank(ctx, "go:z", "c").Result()
	show("zrank", rank, err)
	zi, err := c.ZIncrBy(ctx, "go:z", 0.5, "a").Result()
	show("zincrby", zi, err)
	pop, err := c.ZPopMin(ctx, "go:z", 1).Result()
	show("zpopmin", pop, err)
	bz, err := c.BZPopMax(ctx, time.Second, "go:z").Result()
	show("bzpopmax", fmt.Sprint(bz.Key, bz.Member, bz.Score), err)
	zk, zm, err := c.ZMPop(ctx, "min", 5, "go:z").Result()
	show("zmpop", fmt.Sprint(zk, zm), err)

	// Streams and consumer groups.
	id, err := c.XAdd(ctx, &redis.XAddArgs{Stream: "go:x", ID: "1-1", Values: map[string]interface{}{"f": "v"}}).Result()
	show("xadd", id, err)
	show("xgroup create", nil, c.XGroupCreate(ctx, "go:x", "g", "0").Err())
	streams, err := c.XReadGroup(ctx, &redis.XReadGroupArgs{Group: "g", Consumer: "c1", Streams: []string{"go:x", ">"},
		Count: 10}).Result()
	show("xreadgroup", streams, err)
	acked, err := c.XAck(ctx, "go:x", "g", "1-1").Result()
	show("xack", acked, err)
	xr, err := c.XRange(ctx, "go:x", "-", "+").Result()
	show("xrange", xr, err)
	info, err := c.XInfoStream(ctx, "go:x").Result()
	show("xinfo stream", fmt.Sprint(info.Length, info.LastGeneratedID, info.Groups, info.EntriesAdded), err)
	groups, err := c.XInfoGroups(ctx, "go:x").Result()
	show("xinfo groups", groups, err)
	pending, err := c.XPending(ctx, "go:x", "g").Result()
	show("xpending", pending, err)

	// Pipelines and transactions.
	cmds, err := c.Pipelined(ctx, func(p redis.Pipeliner) error {
		p.Incr(ctx, "go:p")
		p.Get(ctx, "go:p")
		p.HGet(ctx, "go:s", "x")
		return nil
	})
	for i, cmd := range cmds {
		show("pipeline "+strconv.Itoa(i), cmd.String(), cmd.Err())
	}
	show("pipeline", nil, err)
	cmds, err = c.TxPipelined(ctx, func(p redis.Pipeliner) error {
		p.Incr(ctx, "go:t")
		p.IncrBy(ctx, "go:t", 10)
		return nil
	})
	for i, cmd := range cmds {
		show("multi "+strconv.Itoa(i), cmd.String(), cmd.Err())
	}
	show("multi", nil, err)
	// Optimistic locking: the watched key changes before EXEC on another connection.
	err = c.Watch(ctx, func(tx *redis.Tx) error {
		c.Set(ctx, "go:w", "changed", 0)
		_, err := tx.TxPipelined(ctx, func(p redis.Pipeliner) error {
			p.Set(ctx, "go:w", "mine", 0)
			return nil
		})
		return err
	}, "go:w")
	show("watch", nil, err)
	w, err := c.Get(ctx, "go:w").Result()
	show("watched key", w, err)

	// Scripts and functions.
	ev, err := c.Eval(ctx, "return {KEYS[1], ARGV[1], 3, {ok='fine'}, redis.call('get', KEYS[1])}", []string{"go:s"},
		"arg").Result()
	show("eval", ev, err)
	ev, err = c.Eval(ctx, "return redis.call('incr', KEYS[1])", []string{"go:s"}).Result()
	show("eval error", ev, err)
	script := redis.NewScript("return tonumber(ARGV[1]) * 2")
	sv, err := script.Run(ctx, c, nil, 21).Result()
	show("script run", sv, err)
	sha, err := c.ScriptLoad(ctx, "return 'loaded'").Result()
	show("script load", sha, err)
	es, err := c.EvalSha(ctx, sha, nil).Result()
	show("evalsha", es, err)
	lib, err := c.FunctionLoadReplace(ctx, "#!lua name=golib\nredis.register_function('twice', "+
		"function(keys, args) return args[1] .. args[1] end)").Result()
	show("function load", lib, err)
	fc, err := c.FCall(ctx, "twice", nil, "ab").Result()
	show("fcall", fc, err)
	libs, err := c.FunctionList(ctx, redis.FunctionListQuery{LibraryNamePattern: "golib"}).Result()
	if err == nil && len(libs) == 1 {
		show("function list", fmt.Sprint(libs[0].Name, libs[0].Engine, len(libs[0].Functions)), err)
	} else {
		show("function list", libs, err)
	}

	// SCAN through the iterator.
	var keys []string
	iter := c.Scan(ctx, 0, "go:*", 3).Iterator()
	for iter.Next(ctx) {
		keys = append(keys, iter.Val())
	}
	sort.Strings(keys)
	show("scan", keys, iter.Err())
	typed, _, err := c.ScanType(ctx, 0, "go:*", 1000, "zset").Result()
	show("scan type", typed, err)

	// Pub/Sub.
	sub := c.Subscribe(ctx, "go:chan")
	if _, err := sub.Receive(ctx); err != nil {
		show("subscribe", nil, err)
	}
	got, err := c.Publish(ctx, "go:chan", "hello").Result()
	show("publish", got, err)
	msg, err := sub.ReceiveMessage(ctx)
	if err == nil {
		show("message", msg.Channel+" "+msg.Payload, err)
	} else {
		show("message", nil, err)
	}
	numsub, err := c.PubSubNumSub(ctx, "go:chan").Result()
	show("pubsub numsub", numsub, err)
	sub.Close()

	// Server.
	srv, err := c.Info(ctx, "keyspace").Result()
	if i := strings.Index(srv, ",avg_ttl="); i >= 0 { // a mean of remaining times: timing
		srv = srv[:i]
	}
	show("info keyspace", srv, err)
	size, err := c.DBSize(ctx).Result()
	show("dbsize", size, err)
	cfg, err := c.ConfigGet(ctx, "maxclients").Result()
	show("config get", cfg, err)
	name := c.Do(ctx, "CLIENT", "SETNAME", "gotest")
	show("client setname", name.Val(), name.Err())
	gn, err := c.ClientGetName(ctx).Result()
	show("client getname", gn, err)
	dump, err := c.Dump(ctx, "go:missing").Result()
	show("dump missing", dump, err)
	cnt, err := c.ObjectEncoding(ctx, "go:set").Result()
	show("object encoding", cnt, err)
	del, err := c.Del(ctx, "go:s", "go:h", "go:missing").Result()
	show("del", del, err)
	fmt.Println("go-redis transcript done")
}
