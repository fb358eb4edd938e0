#!/usr/bin/env bash
# Local Postgres and Redis for the demo and for running the apps by hand.
# Tests do not use this script: they start throwaway servers of their own
# (test/support), so a developer's demo data never meets a test run.
#
#   scripts/services.sh start    install what is missing (root only), start both, reuse what answers
#   scripts/services.sh stop     stop what this script started
#   scripts/services.sh status   one line per service; exit 3 if either is down
#   scripts/services.sh env      export lines for DATABASE_URL and REDIS_URL
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
DATA="$ROOT/.data"
PG_PORT="${SB_PG_PORT:-54329}"
REDIS_PORT="${SB_REDIS_PORT:-63799}"
REDIS_DIR="$DATA/redis"
REDIS_PID="$REDIS_DIR/redis.pid"
REDIS_LOG="$REDIS_DIR/redis.log"
REDIS_PORT_FILE="$REDIS_DIR/redis.port"
DATABASE_URL="postgres://switchboard@127.0.0.1:$PG_PORT/switchboard"
REDIS_URL="redis://127.0.0.1:$REDIS_PORT"
IS_ROOT=0
[ "$(id -u)" -eq 0 ] && IS_ROOT=1

say() { printf '%s\n' "$*"; }
warn() { printf 'services: %s\n' "$*" >&2; }
die() {
  warn "$*"
  exit 1
}

for port in "$PG_PORT" "$REDIS_PORT"; do
  if ! [[ "$port" =~ ^[0-9]+$ ]] || ((port < 1 || port > 65535)); then
    die "invalid port '$port' (SB_PG_PORT / SB_REDIS_PORT)"
  fi
done

# Polls "$@" every 0.1 s for at most $1 seconds.
wait_until() {
  local deadline=$((SECONDS + $1))
  shift
  until "$@"; do
    ((SECONDS < deadline)) || return 1
    sleep 0.1
  done
}

show_log_tail() {
  [ -f "$1" ] && tail -n 15 "$1" | sed 's/^/    /' >&2
  return 0
}

# Runs in a subshell because a failed /dev/tcp redirection must not end the script.
tcp_open() { (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null; }

# --- Postgres ----------------------------------------------------------------

# pg_config first (the version the machine was set up with), then Debian's
# per-version directories, which are not on PATH, newest first, then PATH. A
# directory counts only if it has the server: pg_config from libpq-dev can
# name a version whose server is not installed.
find_pg_bin() {
  local dir
  local -a candidates=()
  if command -v pg_config >/dev/null 2>&1; then candidates+=("$(pg_config --bindir 2>/dev/null || true)"); fi
  if [ -d /usr/lib/postgresql ]; then
    while IFS= read -r dir; do candidates+=("/usr/lib/postgresql/$dir/bin"); done \
      < <(find /usr/lib/postgresql -mindepth 1 -maxdepth 1 -printf '%f\n' | grep -E '^[0-9]+$' | sort -rn || true)
  fi
  if command -v initdb >/dev/null 2>&1; then candidates+=("$(dirname "$(command -v initdb)")"); fi
  for dir in "${candidates[@]}"; do
    if [ -n "$dir" ] && [ -x "$dir/initdb" ] && [ -x "$dir/pg_ctl" ] && [ -x "$dir/postgres" ]; then
      printf '%s\n' "$dir"
      return 0
    fi
  done
  return 1
}

PG_BIN="$(find_pg_bin || true)"

pg_tool() {
  if [ -n "$PG_BIN" ] && [ -x "$PG_BIN/$1" ]; then
    printf '%s\n' "$PG_BIN/$1"
  else
    command -v "$1" 2>/dev/null || true
  fi
}

pg_answering() {
  local pg_isready
  pg_isready="$(pg_tool pg_isready)"
  if [ -n "$pg_isready" ]; then
    "$pg_isready" -q -h 127.0.0.1 -p "$PG_PORT" -t 1
  else
    tcp_open "$PG_PORT"
  fi
}

# Postgres refuses to run as root, so as root the cluster belongs to the
# `postgres` system user. cd / because pg_ctl fails in a directory that user cannot read.
as_pg() {
  if ((IS_ROOT)); then
    (cd / && runuser -u postgres -- "$@")
  else
    "$@"
  fi
}

ensure_pg_user() {
  ((IS_ROOT)) || return 0
  id -u postgres >/dev/null 2>&1 && return 0
  useradd --system --user-group --no-create-home --shell /usr/sbin/nologin postgres
}

# The cluster lives in .data/postgres, unless the repository sits where the
# postgres user cannot reach it (a clone under /root): then it lives under
# /var/lib/switchboard, in a directory named after the repository path.
resolve_pg_home() {
  PG_HOME="$DATA"
  if ((IS_ROOT)) && id -u postgres >/dev/null 2>&1; then
    if ! (cd / && runuser -u postgres -- test -x "$ROOT") 2>/dev/null; then
      PG_HOME="/var/lib/switchboard/$(printf '%s' "$ROOT" | cksum | cut -d' ' -f1)"
    fi
  fi
  PG_DATA="$PG_HOME/postgres"
  PG_LOG="$PG_HOME/postgres.log"
}

# Port our own cluster runs on, from postmaster.pid, or nothing if it is not running.
pg_running_port() {
  [ -n "$PG_BIN" ] && [ -f "$PG_DATA/postmaster.pid" ] || return 1
  as_pg "$PG_BIN/pg_ctl" -D "$PG_DATA" status >/dev/null 2>&1 || return 1
  sed -n 4p "$PG_DATA/postmaster.pid"
}

pg_major() { "$PG_BIN/postgres" --version | awk '{print $3}' | grep -oE '^[0-9]+'; }

init_pg_cluster() {
  if [ -f "$PG_DATA/PG_VERSION" ]; then
    local have want
    have="$(cat "$PG_DATA/PG_VERSION")"
    want="$(pg_major)"
    [ "$have" = "$want" ] || die "$PG_DATA was created by Postgres $have but the server here is $want: remove it (data is lost) or install Postgres $have"
    return 0
  fi
  say "postgres: initialising $PG_DATA"
  mkdir -p "$PG_HOME"
  if ((IS_ROOT)); then
    install -d -o postgres -g postgres -m 700 "$PG_DATA"
    touch "$PG_LOG" && chown postgres:postgres "$PG_LOG"
  else
    install -d -m 700 "$PG_DATA"
  fi
  # Trust is safe only because the server listens on 127.0.0.1 alone.
  # --locale=C works with UTF8 everywhere; a UTF-8 locale may not be generated.
  as_pg "$PG_BIN/initdb" -D "$PG_DATA" -A trust -U postgres -E UTF8 --locale=C >>"$PG_LOG" 2>&1 ||
    { show_log_tail "$PG_LOG"; die "initdb failed (log: $PG_LOG)"; }
}

psql_at() {
  local psql
  psql="$(pg_tool psql)"
  [ -n "$psql" ] || return 2
  "$psql" "$1" -X -q -t -A -v ON_ERROR_STOP=1 -c "$2"
}

# The role is a superuser because the compose file's postgres image makes it
# one: migrations that work in one setup then work in the other.
ensure_pg_database() {
  local admin="postgres://postgres@127.0.0.1:$PG_PORT/postgres"
  if psql_at "$DATABASE_URL" 'select 1' >/dev/null 2>&1; then return 0; fi
  psql_at "$admin" "do \$\$ begin
      if not exists (select from pg_roles where rolname = 'switchboard') then create role switchboard login superuser; end if;
    end \$\$" >/dev/null 2>&1 || return 1
  if [ -z "$(psql_at "$admin" "select 1 from pg_database where datname = 'switchboard'")" ]; then
    psql_at "$admin" 'create database switchboard owner switchboard' >/dev/null || return 1
  fi
}

start_postgres() {
  local running_port
  # Before resolve_pg_home: where the cluster lives depends on what this user can reach.
  pg_answering || ensure_pg_user
  resolve_pg_home
  if pg_answering; then
    if running_port="$(pg_running_port)" && [ "$running_port" = "$PG_PORT" ]; then
      say "postgres: already running on 127.0.0.1:$PG_PORT"
    else
      say "postgres: something already answers on 127.0.0.1:$PG_PORT; reusing it"
    fi
  else
    init_pg_cluster
    if running_port="$(pg_running_port)"; then
      die "postgres: the cluster in $PG_DATA already runs on port $running_port, not $PG_PORT: run '$0 stop' first or set SB_PG_PORT=$running_port"
    fi
    say "postgres: starting on 127.0.0.1:$PG_PORT"
    # No unix socket: its path would have to be writable by the postgres user
    # and short enough for sun_path, and everything here uses TCP anyway.
    as_pg "$PG_BIN/pg_ctl" -D "$PG_DATA" -l "$PG_LOG" -W \
      -o "-p $PG_PORT -c listen_addresses=127.0.0.1 -c unix_socket_directories=''" start >/dev/null ||
      { show_log_tail "$PG_LOG"; die "postgres failed to start (log: $PG_LOG)"; }
    wait_until 30 pg_answering ||
      { show_log_tail "$PG_LOG"; die "postgres did not accept connections within 30 s (log: $PG_LOG)"; }
  fi
  ensure_pg_database ||
    die "postgres on 127.0.0.1:$PG_PORT does not accept $DATABASE_URL and the role/database could not be created (needs trust auth for postgres@127.0.0.1)"
}

stop_postgres() {
  resolve_pg_home
  if pg_running_port >/dev/null; then
    as_pg "$PG_BIN/pg_ctl" -D "$PG_DATA" -m fast -w -t 30 stop >/dev/null
    say "postgres: stopped"
  else
    say "postgres: not running from $PG_DATA; nothing to stop"
  fi
}

status_postgres() {
  resolve_pg_home
  local running_port
  if running_port="$(pg_running_port)"; then
    say "postgres: running on 127.0.0.1:$running_port (pid $(head -n 1 "$PG_DATA/postmaster.pid"), data $PG_DATA)"
    [ "$running_port" = "$PG_PORT" ]
  elif pg_answering; then
    say "postgres: answering on 127.0.0.1:$PG_PORT (not started by this script)"
  else
    say "postgres: stopped (127.0.0.1:$PG_PORT)"
    return 1
  fi
}

# --- Redis -------------------------------------------------------------------

redis_answering() {
  if command -v redis-cli >/dev/null 2>&1; then
    [ "$(redis-cli -h 127.0.0.1 -p "$REDIS_PORT" ping 2>/dev/null)" = "PONG" ]
  else
    # redis-cli ships in redis-tools; speak the inline protocol instead.
    (
      exec 3<>"/dev/tcp/127.0.0.1/$REDIS_PORT" || exit 1
      printf 'PING\r\n' >&3
      IFS= read -r -t 2 reply <&3 || exit 1
      [[ "$reply" == "+PONG"* ]]
    ) 2>/dev/null
  fi
}

# Our redis: the pid in the pid file is alive and is a redis-server.
redis_own_pid() {
  local pid
  [ -f "$REDIS_PID" ] || return 1
  pid="$(cat "$REDIS_PID")"
  [[ "$pid" =~ ^[0-9]+$ ]] && kill -0 "$pid" 2>/dev/null || return 1
  grep -q redis "/proc/$pid/comm" 2>/dev/null || return 1
  printf '%s\n' "$pid"
}

redis_own_port() { cat "$REDIS_PORT_FILE" 2>/dev/null || printf '%s\n' "$REDIS_PORT"; }

warn_unless_noeviction() {
  command -v redis-cli >/dev/null 2>&1 || return 0
  local policy
  policy="$(redis-cli -h 127.0.0.1 -p "$REDIS_PORT" config get maxmemory-policy 2>/dev/null | sed -n 2p || true)"
  # BullMQ loses jobs silently when Redis evicts keys.
  if [ -n "$policy" ] && [ "$policy" != noeviction ]; then
    warn "redis on 127.0.0.1:$REDIS_PORT has maxmemory-policy $policy; BullMQ needs noeviction"
  fi
}

start_redis() {
  local pid
  if pid="$(redis_own_pid)" && [ "$(redis_own_port)" != "$REDIS_PORT" ]; then
    die "redis: the server started from $REDIS_DIR (pid $pid) runs on port $(redis_own_port), not $REDIS_PORT: run '$0 stop' first or set SB_REDIS_PORT=$(redis_own_port)"
  fi
  if redis_answering; then
    if redis_own_pid >/dev/null; then
      say "redis: already running on 127.0.0.1:$REDIS_PORT"
    else
      say "redis: something already answers on 127.0.0.1:$REDIS_PORT; reusing it"
    fi
    warn_unless_noeviction
    return 0
  fi
  mkdir -p "$REDIS_DIR"
  printf '%s\n' "$REDIS_PORT" >"$REDIS_PORT_FILE"
  say "redis: starting on 127.0.0.1:$REDIS_PORT"
  # Nothing is persisted: queues are rebuilt from Postgres by the recovery sweep.
  redis-server --port "$REDIS_PORT" --bind 127.0.0.1 --daemonize yes \
    --pidfile "$REDIS_PID" --logfile "$REDIS_LOG" --dir "$REDIS_DIR" \
    --save '' --appendonly no --maxmemory-policy noeviction ||
    { show_log_tail "$REDIS_LOG"; die "redis-server failed to start (log: $REDIS_LOG)"; }
  wait_until 15 redis_answering ||
    { show_log_tail "$REDIS_LOG"; die "redis did not answer PING within 15 s (log: $REDIS_LOG)"; }
}

stop_redis() {
  local pid
  if pid="$(redis_own_pid)"; then
    kill -TERM "$pid"
    wait_until 15 eval '! kill -0 '"$pid"' 2>/dev/null' || die "redis (pid $pid) did not stop within 15 s"
    rm -f "$REDIS_PID" "$REDIS_PORT_FILE"
    say "redis: stopped"
  else
    say "redis: not running from $REDIS_DIR; nothing to stop"
  fi
}

status_redis() {
  local pid
  if pid="$(redis_own_pid)"; then
    say "redis: running on 127.0.0.1:$(redis_own_port) (pid $pid, dir $REDIS_DIR)"
    [ "$(redis_own_port)" = "$REDIS_PORT" ]
  elif redis_answering; then
    say "redis: answering on 127.0.0.1:$REDIS_PORT (not started by this script)"
  else
    say "redis: stopped (127.0.0.1:$REDIS_PORT)"
    return 1
  fi
}

# --- Installation ------------------------------------------------------------

# Installs only what a service that is not already answering needs.
ensure_installed() {
  local -a missing=()
  if [ -z "$PG_BIN" ] && ! pg_answering; then missing+=(postgresql); fi
  if ! command -v redis-server >/dev/null 2>&1 && ! redis_answering; then missing+=(redis-server); fi
  ((${#missing[@]} == 0)) && return 0
  if ! ((IS_ROOT)) || ! command -v apt-get >/dev/null 2>&1; then
    die "missing ${missing[*]}: run \`sudo apt-get install -y ${missing[*]}\` (Debian/Ubuntu), then '$0 start' again"
  fi
  say "installing ${missing[*]} with apt-get"
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -q >/dev/null
  apt-get install -y -q --no-install-recommends "${missing[@]}" >/dev/null
  PG_BIN="$(find_pg_bin || true)"
  if [ -z "$PG_BIN" ] && ! pg_answering; then die "postgresql was installed but its server binaries were not found"; fi
}

# --- Commands ----------------------------------------------------------------

case "${1:-}" in
  start)
    ensure_installed
    start_postgres
    start_redis
    say "ready: eval \"\$($0 env)\""
    ;;
  stop)
    stop_postgres
    stop_redis
    ;;
  status)
    code=0
    status_postgres || code=3
    status_redis || code=3
    exit "$code"
    ;;
  env)
    say "export DATABASE_URL=$DATABASE_URL"
    say "export REDIS_URL=$REDIS_URL"
    ;;
  *)
    printf 'usage: %s start|stop|status|env\n' "$0" >&2
    exit 2
    ;;
esac
