#!/usr/bin/env bash
# Makes sure the services the tests talk to are reachable and exports their addresses:
#   REDEYE_REDIS_URL     (default redis://127.0.0.1:6379)
#   REDEYE_POSTGRES_URL  (default jdbc:postgresql://127.0.0.1:5432/postgres?user=postgres)
#   REDEYE_PG_BIN        (the PostgreSQL server binaries the fault tests start a private server with)
#   REDEYE_PGBOUNCER     (the pgbouncer binary PgBouncerTest starts a private PgBouncer with)
#   REDEYE_DYNAMODB_URL  (dynalite, the open-source DynamoDB server, on a free port: http://127.0.0.1:PORT)
#   REDEYE_DYNALITE_HOME (where dynalite is installed, for tests that start private dynalite processes)
#   REDEYE_CHROMIUM, REDEYE_CHROMEDRIVER (Debian's chromium and its driver, for the dashboard's browser tests)
# An address already set in the environment is used as it is. Otherwise the local default is probed,
# started when installed but stopped, and installed from the distribution's packages when missing
# (needs root and apt-get). Source it:  . scripts/services.sh
# Nothing here prints a password.

redeye_log() { echo "[services] $*" >&2; }

redeye_tcp_open() { # host port
  (exec 3<>"/dev/tcp/$1/$2") 2>/dev/null && return 0 || return 1
}

redeye_wait_tcp() { # host port seconds
  local i
  for ((i = 0; i < $3 * 10; i++)); do
    redeye_tcp_open "$1" "$2" && return 0
    sleep 0.1
  done
  return 1
}

redeye_apt_install() {
  if ! command -v apt-get >/dev/null 2>&1; then
    redeye_log "apt-get not found: install $* yourself or set the service URL variables"
    return 1
  fi
  if [ -z "${REDEYE_APT_UPDATED:-}" ]; then
    DEBIAN_FRONTEND=noninteractive apt-get update -qq >&2 || true
    REDEYE_APT_UPDATED=1
  fi
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "$@" >&2
}

redeye_ensure_redis() {
  if [ -n "${REDEYE_REDIS_URL:-}" ]; then
    redeye_log "Redis: using REDEYE_REDIS_URL from the environment"
    return 0
  fi
  if ! redeye_tcp_open 127.0.0.1 6379; then
    if ! command -v redis-server >/dev/null 2>&1; then
      redeye_log "Redis: not installed, installing redis-server"
      redeye_apt_install redis-server || return 1
    fi
    redeye_log "Redis: starting redis-server on 127.0.0.1:6379"
    redis-server --daemonize yes --bind 127.0.0.1 --port 6379 --save "" --appendonly no >&2 || return 1
    redeye_wait_tcp 127.0.0.1 6379 20 || { redeye_log "Redis: did not come up"; return 1; }
  fi
  export REDEYE_REDIS_URL="redis://127.0.0.1:6379"
  redeye_log "Redis: $REDEYE_REDIS_URL"
}

redeye_pg_works() { # host port
  command -v psql >/dev/null 2>&1 || return 1
  PGCONNECT_TIMEOUT=3 psql -h "$1" -p "$2" -U postgres -d postgres -tAc 'select 1' >/dev/null 2>&1
}

# The server binaries (initdb, postgres) that store-postgres's fault tests run a private server with, even when
# the shared server is elsewhere; exported as REDEYE_PG_BIN. Also PgBouncer, which store-postgres's PgBouncerTest
# runs a private instance of (transaction pooling mode, in front of the test server); exported as REDEYE_PGBOUNCER.
redeye_ensure_pgbouncer() {
  if [ -n "${REDEYE_PGBOUNCER:-}" ]; then
    return 0
  fi
  if ! command -v pgbouncer >/dev/null 2>&1 && [ ! -x /usr/sbin/pgbouncer ]; then
    redeye_log "PgBouncer: not installed, installing pgbouncer (PgBouncerTest needs it)"
    redeye_apt_install pgbouncer || return 1
  fi
  if [ -x /usr/sbin/pgbouncer ]; then
    REDEYE_PGBOUNCER=/usr/sbin/pgbouncer
  else
    REDEYE_PGBOUNCER=$(command -v pgbouncer)
  fi
  export REDEYE_PGBOUNCER
}

redeye_ensure_postgres_bin() {
  redeye_ensure_pgbouncer || redeye_log "PgBouncer: not available; PgBouncerTest will say how to provide it"
  if [ -n "${REDEYE_PG_BIN:-}" ]; then
    return 0
  fi
  if ! ls /usr/lib/postgresql/*/bin/initdb >/dev/null 2>&1 && ! command -v initdb >/dev/null 2>&1; then
    redeye_log "PostgreSQL: server binaries not installed, installing postgresql (the fault tests need them)"
    redeye_apt_install postgresql || return 1
  fi
  if ls /usr/lib/postgresql/*/bin/initdb >/dev/null 2>&1; then
    REDEYE_PG_BIN=$(ls -d /usr/lib/postgresql/*/bin | sort -V | tail -1)
  else
    REDEYE_PG_BIN=$(dirname "$(command -v initdb)")
  fi
  export REDEYE_PG_BIN
}

redeye_ensure_postgres() {
  redeye_ensure_postgres_bin || redeye_log "PostgreSQL: no server binaries; the fault tests will say how to provide them"
  if [ -n "${REDEYE_POSTGRES_URL:-}" ]; then
    redeye_log "PostgreSQL: using REDEYE_POSTGRES_URL from the environment"
    return 0
  fi
  if redeye_pg_works 127.0.0.1 5432; then
    export REDEYE_POSTGRES_URL="jdbc:postgresql://127.0.0.1:5432/postgres?user=postgres"
    redeye_log "PostgreSQL: 127.0.0.1:5432"
    return 0
  fi
  # A cluster installed but stopped: start it.
  if command -v pg_ctlcluster >/dev/null 2>&1 && [ -d /etc/postgresql ] && [ -n "$(ls /etc/postgresql 2>/dev/null)" ]; then
    local v
    v=$(ls /etc/postgresql | sort -V | tail -1)
    redeye_log "PostgreSQL: starting cluster $v/main"
    pg_ctlcluster --skip-systemctl-redirect "$v" main start >&2 2>&1 || true
    redeye_wait_tcp 127.0.0.1 5432 30 || true
    if redeye_pg_works 127.0.0.1 5432; then
      export REDEYE_POSTGRES_URL="jdbc:postgresql://127.0.0.1:5432/postgres?user=postgres"
      redeye_log "PostgreSQL: 127.0.0.1:5432"
      return 0
    fi
  fi
  # Otherwise a private trust-auth cluster on a free port.
  if ! ls /usr/lib/postgresql/*/bin/initdb >/dev/null 2>&1; then
    redeye_log "PostgreSQL: not installed, installing postgresql"
    redeye_apt_install postgresql || return 1
  fi
  local bin port dir runas
  bin=$(ls -d /usr/lib/postgresql/*/bin | sort -V | tail -1)
  port=55432
  while redeye_tcp_open 127.0.0.1 "$port"; do port=$((port + 1)); done
  dir=$(mktemp -d /tmp/redeye-pg.XXXXXX)
  runas=""
  if [ "$(id -u)" = 0 ]; then
    id postgres >/dev/null 2>&1 || useradd -r -m postgres
    chown postgres "$dir"
    runas="runuser -u postgres --"
  fi
  redeye_log "PostgreSQL: private cluster in $dir on 127.0.0.1:$port"
  $runas "$bin/initdb" -D "$dir/data" -U postgres --auth=trust >/dev/null || return 1
  $runas "$bin/pg_ctl" -D "$dir/data" -l "$dir/log" -o "-p $port -k $dir -c listen_addresses=127.0.0.1" -w start >&2 || return 1
  export REDEYE_POSTGRES_URL="jdbc:postgresql://127.0.0.1:$port/postgres?user=postgres"
  redeye_log "PostgreSQL: 127.0.0.1:$port"
}

# ---------------------------------------------------------------------------------------------- dynalite
# dynalite (npm, Apache-2.0) is installed with npm into .redeye-services/dynalite of this checkout (gitignored)
# and started on a free port by scripts/dynalite.js. Its pid and port are recorded there; a dynalite started by
# an earlier run is reused only when that pid is alive and its command line is our launcher on our folder.
# Where Node.js is missing and apt-get is not available: install Node.js 18 or newer (https://nodejs.org),
# or point REDEYE_DYNAMODB_URL at any DynamoDB endpoint (it must accept the tests' dummy credentials).
# Stop a dynalite started by sourcing this file with: redeye_stop_dynalite

REDEYE_ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
REDEYE_DYNALITE_DIR="$REDEYE_ROOT/.redeye-services/dynalite"
REDEYE_DYNALITE_VERSION="4.0.0"

redeye_dynalite_ours() { # pid: is it our launcher serving our folder?
  [ -n "$1" ] && kill -0 "$1" 2>/dev/null || return 1
  tr '\0' ' ' < "/proc/$1/cmdline" 2>/dev/null | grep -qF "scripts/dynalite.js $REDEYE_DYNALITE_DIR "
}

redeye_stop_dynalite() {
  local pid
  pid=$(cat "$REDEYE_DYNALITE_DIR/dynalite.pid" 2>/dev/null) || return 0
  if redeye_dynalite_ours "$pid"; then
    kill "$pid" 2>/dev/null && redeye_log "dynalite: stopped pid $pid"
  fi
  rm -f "$REDEYE_DYNALITE_DIR/dynalite.pid" "$REDEYE_DYNALITE_DIR/dynalite.port"
}

redeye_ensure_dynamodb() {
  if [ -n "${REDEYE_DYNAMODB_URL:-}" ]; then
    redeye_log "DynamoDB: using REDEYE_DYNAMODB_URL from the environment"
    [ -d "$REDEYE_DYNALITE_DIR/node_modules/dynalite" ] && export REDEYE_DYNALITE_HOME="$REDEYE_DYNALITE_DIR"
    return 0
  fi
  local pid port
  pid=$(cat "$REDEYE_DYNALITE_DIR/dynalite.pid" 2>/dev/null || true)
  port=$(cat "$REDEYE_DYNALITE_DIR/dynalite.port" 2>/dev/null || true)
  if [ -n "$port" ] && redeye_dynalite_ours "$pid" && redeye_tcp_open 127.0.0.1 "$port"; then
    export REDEYE_DYNAMODB_URL="http://127.0.0.1:$port" REDEYE_DYNALITE_HOME="$REDEYE_DYNALITE_DIR"
    redeye_log "DynamoDB: reusing our dynalite (pid $pid) at $REDEYE_DYNAMODB_URL"
    return 0
  fi
  if ! command -v node >/dev/null 2>&1 || ! command -v npm >/dev/null 2>&1; then
    redeye_log "DynamoDB: Node.js/npm not found, installing nodejs and npm"
    redeye_apt_install nodejs npm || { redeye_log "DynamoDB: install Node.js 18+ or set REDEYE_DYNAMODB_URL"; return 1; }
  fi
  if [ ! -f "$REDEYE_DYNALITE_DIR/node_modules/dynalite/cli.js" ]; then
    redeye_log "DynamoDB: installing dynalite@$REDEYE_DYNALITE_VERSION with npm into $REDEYE_DYNALITE_DIR"
    mkdir -p "$REDEYE_DYNALITE_DIR"
    npm install --prefix "$REDEYE_DYNALITE_DIR" --no-audit --no-fund --loglevel=error \
      "dynalite@$REDEYE_DYNALITE_VERSION" >&2 || return 1
  fi
  # Port 0: the kernel picks a free port (a probed "free" port can be taken by then); dynalite prints it.
  # --createTableMs 0 etc.: tables are ACTIVE at once (else every test waits for the table's status).
  nohup node "$REDEYE_ROOT/scripts/dynalite.js" "$REDEYE_DYNALITE_DIR" --host 127.0.0.1 --port 0 \
    --createTableMs 0 --deleteTableMs 0 --updateTableMs 0 > "$REDEYE_DYNALITE_DIR/dynalite.log" 2>&1 &
  pid=$!
  echo "$pid" > "$REDEYE_DYNALITE_DIR/dynalite.pid"
  port=""
  local i
  for ((i = 0; i < 300; i++)); do
    port=$(sed -n 's/^Dynalite listening at: http:\/\/[^:]*:\([0-9][0-9]*\).*/\1/p' "$REDEYE_DYNALITE_DIR/dynalite.log")
    [ -n "$port" ] && break
    kill -0 "$pid" 2>/dev/null || break
    sleep 0.1
  done
  if [ -z "$port" ] || ! redeye_wait_tcp 127.0.0.1 "$port" 10; then
    redeye_log "DynamoDB: dynalite did not come up (see $REDEYE_DYNALITE_DIR/dynalite.log)"
    redeye_stop_dynalite
    return 1
  fi
  echo "$port" > "$REDEYE_DYNALITE_DIR/dynalite.port"
  export REDEYE_DYNAMODB_URL="http://127.0.0.1:$port" REDEYE_DYNALITE_HOME="$REDEYE_DYNALITE_DIR"
  export REDEYE_DYNALITE_STARTED="$pid"
  redeye_log "DynamoDB: dynalite (pid $pid) at $REDEYE_DYNAMODB_URL"
}

# ---------------------------------------------------------------------------------------------- chromium
# redeye-dashboard's browser tests drive Debian's chromium through chromium-driver (Selenium is given both paths,
# so it downloads nothing).
redeye_ensure_chromium() {
  if [ -n "${REDEYE_CHROMIUM:-}" ] && [ -n "${REDEYE_CHROMEDRIVER:-}" ]; then
    redeye_log "Chromium: using REDEYE_CHROMIUM and REDEYE_CHROMEDRIVER from the environment"
    return 0
  fi
  if ! command -v chromium >/dev/null 2>&1 || ! command -v chromedriver >/dev/null 2>&1; then
    redeye_log "Chromium: not installed, installing chromium and chromium-driver (the dashboard's browser tests)"
    redeye_apt_install chromium chromium-driver || return 1
  fi
  export REDEYE_CHROMIUM="$(command -v chromium)" REDEYE_CHROMEDRIVER="$(command -v chromedriver)"
  redeye_log "Chromium: $REDEYE_CHROMIUM, $REDEYE_CHROMEDRIVER"
}

redeye_ensure_redis || redeye_log "Redis: could not be provided; Redis tests will say how to provide it"
redeye_ensure_postgres || redeye_log "PostgreSQL: could not be provided; PostgreSQL tests will say how to provide it"
redeye_ensure_dynamodb || redeye_log "DynamoDB: could not be provided; DynamoDB tests will say how to provide it"
redeye_ensure_chromium || redeye_log "Chromium: could not be provided; the dashboard's browser tests will say how to provide it"
