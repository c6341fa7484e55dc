#!/usr/bin/env bash
# Builds redeye-bench/target/benchmarks.jar and runs every benchmark behind BENCHMARK.md, in sequence, on a
# quiet machine (run nothing else meanwhile: the figures are only as good as the machine is idle):
#   1. JMH HealthyPathBenchmark  (local mode, healthy path, 1 and 2 threads, -prof gc)
#   2. JMH RejectionBenchmark    (local mode, open breaker, 1 and 2 threads, -prof gc)
#   3. JMH ScalingBenchmark      (diagnostic: 2 threads on one breaker vs a breaker per thread)
#   4. JMH CachedHealthyPathBenchmark (distributed healthy path with localCache on Redis and PostgreSQL vs
#      local mode, 1 and 2 threads, -prof gc)
#   5. DistributedBench          (ops per call, latency vs round trip, record path vs the store's smallest
#                                write, atomic vs best-effort, growth, fleet)
#   6. PostgresPathBench         (PostgreSQL store's record path and read vs plain JDBC, issue 13 targets 1 and 2)
#   7. redeye simulate           (the CLI's fleet simulation, shared breaker, defaults: in-memory store vs
#                                PostgreSQL, 3 runs each, alternating; issue 13 target 7)
# Raw results go to redeye-bench/results/<UTC date-time>/ (JMH text and JSON, the JMH tables with the
# targets checked (JmhTables), the distributed tables, the fleet chart fleet.png, the PostgreSQL path table, the machine).
# About 20 minutes in all. Redis, PostgreSQL and dynalite come from scripts/services.sh
# (REDEYE_REDIS_URL / REDEYE_POSTGRES_URL when set).
#
# Usage: scripts/bench.sh            the full run BENCHMARK.md quotes
#        scripts/bench.sh --quick    a smoke run of the harness (1 short iteration; figures mean nothing),
#                                    written under /tmp instead of the results directory
set -euo pipefail
cd "$(dirname "$0")/.."

QUICK=0
if [ "${1:-}" = "--quick" ]; then
  QUICK=1
fi

. scripts/services.sh

STAMP=$(date -u +%Y-%m-%dT%H%MZ)
if [ "$QUICK" = 1 ]; then
  OUT=$(mktemp -d /tmp/redeye-bench-smoke.XXXXXX)
  JMH_OPTS="-f 1 -wi 1 -w 1s -i 1 -r 1s"
  DIST_OPTS="--quick"
  PG_OPTS="--samples 300 --warmup 100"
else
  OUT=redeye-bench/results/$STAMP
  JMH_OPTS="-f 1 -wi 3 -w 2s -i 5 -r 2s"
  DIST_OPTS=""
  PG_OPTS=""
fi
mkdir -p "$OUT"
JAR=redeye-bench/target/benchmarks.jar

echo "[bench] building $JAR" >&2
mvn -B -q package -pl redeye-bench,redeye-cli -am -DskipTests

{
  echo "date: $(date -u +%Y-%m-%dT%H:%M:%SZ)"
  echo "cores: $(nproc)"
  echo "cpu: $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2- | sed 's/^ //')"
  echo "jdk: $(java -version 2>&1 | head -2 | tail -1)"
  echo "uptime before: $(uptime)"
  echo "other java/mvn processes before: $(pgrep -c -x java || true)"
} > "$OUT/machine.txt"

for BENCH in HealthyPathBenchmark RejectionBenchmark ScalingBenchmark CachedHealthyPathBenchmark; do
  echo "[bench] java -jar $JAR $BENCH $JMH_OPTS -prof gc" >&2
  # shellcheck disable=SC2086
  java -jar "$JAR" "$BENCH" $JMH_OPTS -prof gc -rf json -rff "$OUT/jmh-$BENCH.json" \
    > "$OUT/jmh-$BENCH.txt" 2>&1
  sed -n '/^Benchmark /,$p' "$OUT/jmh-$BENCH.txt" >&2
done

java -cp "$JAR" dev.redeye.bench.JmhTables "$OUT/jmh-HealthyPathBenchmark.json" "$OUT/jmh-RejectionBenchmark.json" \
  "$OUT/jmh-ScalingBenchmark.json" "$OUT/jmh-CachedHealthyPathBenchmark.json" \
  > "$OUT/jmh-tables.md"
cat "$OUT/jmh-tables.md" >&2

echo "[bench] java -cp $JAR dev.redeye.bench.DistributedBench $DIST_OPTS --chart-dir $OUT" >&2
# shellcheck disable=SC2086
java -Djava.awt.headless=true -Dorg.slf4j.simpleLogger.defaultLogLevel=warn -cp "$JAR" \
  dev.redeye.bench.DistributedBench $DIST_OPTS --chart-dir "$OUT" \
  > "$OUT/distributed.md" 2> "$OUT/distributed.log"
cat "$OUT/distributed.md" >&2

echo "[bench] java -cp $JAR dev.redeye.bench.PostgresPathBench $PG_OPTS" >&2
# shellcheck disable=SC2086
java -Dorg.slf4j.simpleLogger.defaultLogLevel=warn -cp "$JAR" dev.redeye.bench.PostgresPathBench $PG_OPTS \
  > "$OUT/postgres-path.md" 2> "$OUT/postgres-path.log"
cat "$OUT/postgres-path.md" >&2

# The fleet simulation on PostgreSQL against the in-memory store: calls that reached the dead dependency, read
# from `redeye simulate --json` (shared breaker, defaults). Target: PostgreSQL at most 1.5x memory (means).
CLI=redeye-cli/target/redeye.jar
SIM_RUNS=3
[ "$QUICK" = 1 ] && SIM_RUNS=1
{
  echo "### redeye simulate: calls reaching the dead dependency, in-memory store vs PostgreSQL"
  echo
  echo "Command per run: \`java -jar $CLI simulate --store STORE --json\` (shared breaker, defaults), $SIM_RUNS runs per store, alternating."
  echo
  echo "| run | memory: reached dead dependency | memory: of which in flight at opening | postgres: reached dead dependency | postgres: of which in flight at opening |"
  echo "|---|---|---|---|---|"
} > "$OUT/simulate-stores.md"
sim_field() { # json field -> value
  grep -o "\"$2\" *: *[0-9]*" "$1" | head -1 | sed 's/.*: *//'
}
MEM_SUM=0; PG_SUM=0
for i in $(seq 1 "$SIM_RUNS"); do
  echo "[bench] java -jar $CLI simulate --json (memory:, then PostgreSQL), run $i of $SIM_RUNS" >&2
  java -jar "$CLI" simulate --store memory: --json > "$OUT/simulate-memory-$i.json" 2>> "$OUT/simulate.log"
  java -jar "$CLI" simulate --store "$REDEYE_POSTGRES_URL" --json > "$OUT/simulate-postgres-$i.json" 2>> "$OUT/simulate.log"
  m=$(sim_field "$OUT/simulate-memory-$i.json" reachedDeadDependency)
  mf=$(sim_field "$OUT/simulate-memory-$i.json" inFlightAtOpening)
  p=$(sim_field "$OUT/simulate-postgres-$i.json" reachedDeadDependency)
  pf=$(sim_field "$OUT/simulate-postgres-$i.json" inFlightAtOpening)
  echo "| $i | $m | ${mf:--} | $p | ${pf:--} |" >> "$OUT/simulate-stores.md"
  MEM_SUM=$((MEM_SUM + m)); PG_SUM=$((PG_SUM + p))
done
awk -v m="$MEM_SUM" -v p="$PG_SUM" -v n="$SIM_RUNS" 'BEGIN {
  r = p / m; verdict = (r <= 1.5) ? "MET" : "MISSED";
  printf "\n- %s: fleet on PostgreSQL, calls reaching the dead dependency at most 1.5x the in-memory store'"'"'s (means of %d runs) — measured %.1f vs %.1f (%.2fx)\n", verdict, n, p / n, m / n, r }' \
  >> "$OUT/simulate-stores.md"
cat "$OUT/simulate-stores.md" >&2

echo "uptime after: $(uptime)" >> "$OUT/machine.txt"
echo "[bench] results in $OUT" >&2
