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
# Raw results go to redeye-bench/results/<UTC date-time>/ (JMH text and JSON, the JMH tables with the
# targets checked (JmhTables), the distributed tables, the fleet chart fleet.png, the PostgreSQL path table, the machine).
# About 15 minutes in all. Redis, PostgreSQL and dynalite come from scripts/services.sh
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
mvn -B -q package -pl redeye-bench -am -DskipTests

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

echo "uptime after: $(uptime)" >> "$OUT/machine.txt"
echo "[bench] results in $OUT" >&2
