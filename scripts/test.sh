#!/usr/bin/env bash
# The one command that runs every test: makes sure Redis and PostgreSQL are reachable (starting or
# installing them when needed, see scripts/services.sh), then runs the Maven build with all tests.
set -euo pipefail
cd "$(dirname "$0")/.."
. scripts/services.sh
exec mvn -B verify "$@"
