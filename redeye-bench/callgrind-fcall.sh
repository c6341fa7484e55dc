#!/usr/bin/env bash
# Instructions a Redis server executes per FCALL of one function of a Lua library, counted by callgrind
# (valgrind's instruction counter: repeatable whatever else the machine runs, unlike the slow log's µs).
#
#   redeye-bench/callgrind-fcall.sh LUA_FILE FUNCTION CALLS NUMKEYS KEY... ARG...
#
# LUA_FILE is a library body in the form of store-redis's redeye.lua (it calls export(name, fn)); it is
# loaded as the library `bench` on a private redis-server started under valgrind on a free port, the first key
# is set to $VALUE (default: a closed state of the string layout), CALLS calls are sent one at a time by
# redis-benchmark, and the instructions executed inside fcallCommand are divided by CALLS. The server is
# stopped by its pid when done. Needs valgrind, redis-server and redis-benchmark (Debian: valgrind,
# redis-server, redis-tools). Example, the record function's sub-threshold failure with the stream:
#
#   redeye-bench/callgrind-fcall.sh store-redis/src/main/resources/dev/redeye/store/redis/redeye.lua record 5000 \
#     2 'p:{op}:state' 'p:redeye:feed' failure 1796320740502 0,2147483647,0,0.5,10,0.9,1,86400000 op 10000 604800000
set -euo pipefail
lua=$1 fn=$2 calls=$3
shift 3
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
{ echo '#!lua name=bench'
  echo "local function export(name, fn) redis.register_function{function_name = 'bench_' .. name, callback = fn, flags = {}} end"
  cat "$lua"; } > "$dir/lib.lua"
port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
valgrind --tool=callgrind --callgrind-out-file="$dir/out" --collect-atstart=no --toggle-collect=fcallCommand \
  redis-server --port "$port" --bind 127.0.0.1 --save '' --appendonly no --dir "$dir" > "$dir/valgrind.log" 2>&1 &
pid=$!
for _ in $(seq 1 150); do redis-cli -p "$port" ping > /dev/null 2>&1 && break; sleep 0.2; done
redis-cli -p "$port" -x function load < "$dir/lib.lua" > /dev/null
redis-cli -p "$port" set "$2" "${VALUE:-0,0,0,0,0,0,0,0,0,1796320740511878}" > /dev/null
redis-benchmark -p "$port" -n "$calls" -c 1 -q FCALL "bench_$fn" "$@" > /dev/null
redis-cli -p "$port" shutdown nosave > /dev/null 2>&1 || kill "$pid"
wait "$pid" || true
total=$(awk '/^(summary|totals):/ {print $2; exit}' "$dir/out")
echo "$fn: $((total / calls)) instructions per call inside fcallCommand ($calls calls)"
