#!/usr/bin/env bash
# The one command that runs every test: makes sure Redis, PostgreSQL and dynalite (DynamoDB) are reachable
# (starting or installing them when needed, see scripts/services.sh), then runs the Maven build with all
# tests. A dynalite started here is stopped when the build ends; one already running (ours) is left alone.
set -euo pipefail
cd "$(dirname "$0")/.."
. scripts/services.sh
if [ -n "${REDEYE_DYNALITE_STARTED:-}" ]; then
  trap redeye_stop_dynalite EXIT
fi
# Four modules at a time: the store modules' tests mostly wait on their servers and on real-time rules, so
# they run side by side (about 9 minutes on 2 cores, against 20 one after another).
mvn -B -T 4 verify "$@"
