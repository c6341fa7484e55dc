#!/usr/bin/env bash
# What a batch of outcomes costs the Redis server (store-redis's outcomes function) next to one outcome (its
# record function), per policy: consecutive, error rate, count windows of 100 and 1,000, a time window of 120 s
# (its outcomes 117 ms apart, so a full batch keeps all 120 buckets busy) and a quorum (one instance).
#
#   redeye-bench/redis-batch-bench.sh LUA_FILE [ROUNDS]      µs of server time per call (INFO commandstats)
#   CALLGRIND=1 redeye-bench/redis-batch-bench.sh LUA_FILE   instructions per call (callgrind-fcall.sh)
#
# LUA_FILE is a library body in the form of store-redis's redeye.lua. The first form starts a private
# redis-server on a free port (--save '' --appendonly no), loads the library as `bench`, and for each policy
# sends 20,000 single failures and batches of 16, 100 and 1,024 outcomes (3,000, 3,000 and 300 calls, one
# connection, redis-benchmark), each key being written by its own calls only; it prints the server's
# usec_per_call of FCALL for each, ROUNDS times (default 3), and stops the server by its pid. The µs move with
# the machine's load; the instruction counts of the second form do not. A batch's outcomes: a tenth failures,
# a tenth slow (drawn from a fixed seed), 5 ms apart (the time window: 117 ms).
set -euo pipefail
lua=$1 rounds=${2:-3}
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
policies=(consecutive errorrate count100 count1000 time120 quorum)
declare -A POL=(
  [consecutive]="0,2147483647,0,0.5,10,0.5,1,60000"
  [errorrate]="1,5,0,1.0,10,0.9,1,60000"
  [count100]="3,5,0,0.5,10,0.5,1,60000,50.0,100,100.0,c100,1"
  [count1000]="3,5,0,0.5,10,0.5,1,60000,50.0,100,100.0,c1000,1"
  [time120]="3,5,0,0.5,10,0.5,1,60000,50.0,100,100.0,t120,1"
  [quorum]="0,2147483647,0,0.5,10,0.5,1,60000,50.0,100,100.0,c100,1,2,0.0")
declare -A STEP=([consecutive]=5 [errorrate]=5 [count100]=5 [count1000]=5 [time120]=117 [quorum]=5)

# The outcomes function's BATCH text of n outcomes, step ms apart (see redeye.lua).
batch() {
  python3 - "$1" "$2" <<'EOF'
import random, sys
n, step = int(sys.argv[1]), int(sys.argv[2])
r, prev, tokens = random.Random(1), 0, []
for i in range(n):
    code = (1 if r.random() < 0.1 else 0) + (2 if r.random() < 0.1 else 0)
    at = 1764800000000 + i * step
    tokens.append((str(at - prev) if at != prev else '') + str(code))
    prev = at
print(','.join(tokens))
EOF
}

instance() { [[ $1 == quorum ]] && echo pod-1 || true; }

if [[ -n "${CALLGRIND:-}" ]]; then
  for p in "${policies[@]}"; do
    line="$p"
    line+=" record $("$here/callgrind-fcall.sh" "$lua" record 1000 1 'p:{op}:state' failure 1764800000000 \
        "${POL[$p]}" $(instance "$p") | awk '{print $2}')"
    for n in 16 1024; do
      calls=$(( n == 1024 ? 30 : 300 ))
      line+=" batch$n $("$here/callgrind-fcall.sh" "$lua" outcomes $calls 1 'p:{op}:state' "$(batch $n "${STEP[$p]}")" \
          "${POL[$p]}" $(instance "$p") | awk '{print $2}')"
    done
    echo "$line"
  done
  exit 0
fi

dir=$(mktemp -d)
port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
redis-server --port "$port" --bind 127.0.0.1 --save '' --appendonly no --dir "$dir" > "$dir/redis.log" 2>&1 &
pid=$!
trap 'kill "$pid" 2> /dev/null || true; wait "$pid" 2> /dev/null || true; rm -rf "$dir"' EXIT
for _ in $(seq 1 50); do redis-cli -p "$port" ping > /dev/null 2>&1 && break; sleep 0.1; done
{ echo '#!lua name=bench'
  echo "local function export(name, fn) redis.register_function{function_name = 'bench_' .. name, callback = fn, flags = {}} end"
  cat "$lua"; } | redis-cli -p "$port" -x function load > /dev/null

# µs of server time per call of n calls of FCALL with the given arguments
usec() {
  local n=$1
  shift
  redis-cli -p "$port" config resetstat > /dev/null
  redis-benchmark -p "$port" -n "$n" -c 1 -q FCALL "$@" > /dev/null
  redis-cli -p "$port" info commandstats | tr -d '\r' | sed -n 's/^cmdstat_fcall:.*usec_per_call=\([0-9.]*\).*/\1/p'
}

echo "load before: $(cut -d' ' -f1-3 /proc/loadavg)"
for round in $(seq 1 "$rounds"); do
  for p in "${policies[@]}"; do
    line="$p record $(usec 20000 bench_record 1 "s-$p" failure 1764800000000 "${POL[$p]}" $(instance "$p"))"
    for n in 16 100 1024; do
      calls=$(( n == 1024 ? 300 : 3000 ))
      line+=" batch$n $(usec $calls bench_outcomes 1 "b$n-$p" "$(batch $n "${STEP[$p]}")" "${POL[$p]}" $(instance "$p"))"
    done
    echo "$line"
  done
done
echo "load after: $(cut -d' ' -f1-3 /proc/loadavg)"
