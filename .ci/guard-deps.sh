#!/usr/bin/env bash
# What the guard's integration tests need beyond the machine's PostgreSQL: real clients nobody here wrote.
# psql and pgbench come with the PostgreSQL client packages; psycopg2 is Debian's python3-psycopg2.
# Idempotent and quick when everything is there already.
set -euo pipefail
missing=()
/usr/bin/python3 -c 'import psycopg2' >/dev/null 2>&1 || missing+=(python3-psycopg2)
command -v pgbench >/dev/null 2>&1 || missing+=(postgresql-client)
command -v psql >/dev/null 2>&1 || missing+=(postgresql-client)
if [ "${#missing[@]}" -gt 0 ]; then
  echo "guard-deps: installing ${missing[*]}"
  apt-get install -y "${missing[@]}" >/dev/null 2>&1 || { apt-get update >/dev/null && apt-get install -y "${missing[@]}" >/dev/null; }
fi
