#!/usr/bin/env bash
# Counts the instructions a kvrocks binary spends on a fixed load, for A/B comparisons of
# builds on VMs whose perf has no hardware counters: the server runs under callgrind while
# redis-benchmark sends 20000 SETs, 40000 GETs pipelined by 16 and 40000 SETs pipelined by
# 16 (-c 10, -r 1000000). Prints the program's total and the self cost of kvrocks' own
# functions. Usage: bench/callgrind_load.sh BIN [OUT]  (OUT: the callgrind file, kept).
set -euo pipefail
bin=$1
out=${2:-$(mktemp /tmp/callgrind.XXXXXX)}
port=$((31000 + RANDOM % 500))
dir=$(mktemp -d)
valgrind --tool=callgrind --callgrind-out-file="$out" "$bin" --port "$port" --dir "$dir" --bind 127.0.0.1 \
  --workers 2 >"$dir/log" 2>&1 &
pid=$!
for _ in $(seq 60); do redis-cli -p "$port" ping >/dev/null 2>&1 && break; sleep 1; done
redis-benchmark -p "$port" -t set -n 20000 -r 1000000 -c 10 -q >/dev/null 2>&1
redis-benchmark -p "$port" -t get -n 40000 -r 1000000 -c 10 -P 16 -q >/dev/null 2>&1
redis-benchmark -p "$port" -t set -n 40000 -r 1000000 -c 10 -P 16 -q >/dev/null 2>&1
kill "$pid"
wait "$pid" || true
rm -rf "$dir"
callgrind_annotate "$out" | grep "PROGRAM TOTALS"
# The function list is the first block after its header; kvrocks' own are in namespace kvrocks.
callgrind_annotate --threshold=100 "$out" |
  awk '/file:function/ {on = 1; next} on && (/^-+$/ || NF == 0) {if (seen) exit; next} on {seen = 1; print}' |
  grep "kvrocks::" | awk '{gsub(",", "", $1); s += $1; n++} END {printf "kvrocks:: self %d in %d functions\n", s, n}'
echo "callgrind file: $out"
