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
#
# With SCRIPT=1 the function runs as the EVAL script store-redis sends where Functions are missing or refused
# (EVALSHA; the instructions inside evalShaCommand), built as its LuaLibrary builds it: the lines that pick the
# function, then the body without the sections marked for another function ('-- @only <name>' ... '-- @end').
set -euo pipefail
lua=$1 fn=$2 calls=$3
shift 3
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
if [[ -n "${SCRIPT:-}" ]]; then
  { echo 'if redis.replicate_commands then redis.replicate_commands() end'
    echo 'local ENTRY'
    echo "local function export(name, fn) if name == '$fn' then ENTRY = fn end end"
    awk -v fn="$fn" '/^-- @only / {s = $3; if (s == fn) print; next}
      $0 == "-- @end" {if (s == fn) print; s = ""; next}
      s == "" || s == fn' "$lua"
    echo 'return ENTRY(KEYS, ARGV)'; } > "$dir/lib.lua"
  command=evalShaCommand
else
  { echo '#!lua name=bench'
    echo "local function export(name, fn) redis.register_function{function_name = 'bench_' .. name, callback = fn, flags = {}} end"
    cat "$lua"; } > "$dir/lib.lua"
  command=fcallCommand
fi
port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
valgrind --tool=callgrind --callgrind-out-file="$dir/out" --collect-atstart=no --toggle-collect=$command \
  redis-server --port "$port" --bind 127.0.0.1 --save '' --appendonly no --dir "$dir" > "$dir/valgrind.log" 2>&1 &
pid=$!
for _ in $(seq 1 150); do redis-cli -p "$port" ping > /dev/null 2>&1 && break; sleep 0.2; done
redis-cli -p "$port" set "$2" "${VALUE:-0,0,0,0,0,0,0,0,0,1796320740511878}" > /dev/null
if [[ -n "${SCRIPT:-}" ]]; then
  sha=$(redis-cli -p "$port" -x script load < "$dir/lib.lua")
  redis-benchmark -p "$port" -n "$calls" -c 1 -q EVALSHA "$sha" "$@" > /dev/null
else
  redis-cli -p "$port" -x function load < "$dir/lib.lua" > /dev/null
  redis-benchmark -p "$port" -n "$calls" -c 1 -q FCALL "bench_$fn" "$@" > /dev/null
fi
redis-cli -p "$port" shutdown nosave > /dev/null 2>&1 || kill "$pid"
wait "$pid" || true
total=$(awk '/^(summary|totals):/ {print $2; exit}' "$dir/out")
echo "$fn: $((total / calls)) instructions per call inside $command ($calls calls)"
