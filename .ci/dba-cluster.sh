#!/usr/bin/env bash
# The DBA tools' own PostgreSQL 15 cluster (issue 26): pg_stat_statements preloaded, hypopg installed from
# Debian, on port 5440 (DBA_PORT), trust auth on 127.0.0.1 only. The machine's service on 5432 is untouched.
# Idempotent and fast: a running cluster is left as it is; `stop` as the first argument stops it.
set -euo pipefail
PORT="${DBA_PORT:-5440}"
DIR="${DBA_CLUSTER_DIR:-/var/tmp/pgagent-dba}"
BIN="/usr/lib/postgresql/15/bin"
RUN_AS=()
if [ "$(id -u)" = 0 ]; then RUN_AS=(runuser -u postgres --); fi

if [ "${1:-}" = stop ]; then
  [ -f "$DIR/postmaster.pid" ] && "${RUN_AS[@]}" "$BIN/pg_ctl" -D "$DIR" -m fast stop || true
  exit 0
fi

if [ ! -f /usr/share/postgresql/15/extension/hypopg.control ]; then
  if [ "$(id -u)" = 0 ]; then
    (apt-get install -y -q postgresql-15-hypopg >/dev/null 2>&1 || { apt-get update -q >/dev/null && apt-get install -y -q postgresql-15-hypopg >/dev/null; }) \
      || echo "dba-cluster: postgresql-15-hypopg could not be installed; index advice tests run without it" >&2
  else
    echo "dba-cluster: hypopg absent and not root: apt-get install -y postgresql-15-hypopg" >&2
  fi
fi

if "$BIN/pg_isready" -h 127.0.0.1 -p "$PORT" -q; then exit 0; fi

if [ ! -f "$DIR/PG_VERSION" ]; then
  mkdir -p "$DIR"
  [ "$(id -u)" = 0 ] && chown postgres:postgres "$DIR"
  chmod 700 "$DIR"
  "${RUN_AS[@]}" "$BIN/initdb" -D "$DIR" -U postgres --auth=trust -E UTF8 --no-sync >/dev/null
  cat >>"$DIR/postgresql.conf" <<CONF
listen_addresses = '127.0.0.1'
port = $PORT
unix_socket_directories = '$DIR'
shared_preload_libraries = 'pg_stat_statements'
pg_stat_statements.track = all
max_connections = 100
shared_buffers = 32MB
fsync = off
synchronous_commit = off
full_page_writes = off
autovacuum = off
CONF
fi
"${RUN_AS[@]}" "$BIN/pg_ctl" -D "$DIR" -l "$DIR/server.log" -w -t 30 start >/dev/null
"$BIN/pg_isready" -h 127.0.0.1 -p "$PORT" -q
echo "dba-cluster: PostgreSQL 15 on 127.0.0.1:$PORT ($DIR)"
