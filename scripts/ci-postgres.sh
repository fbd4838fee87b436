#!/usr/bin/env bash
# Runs a command with a throwaway PostgreSQL server and DSH_FS_TEST_PG pointing at it:
#
#   scripts/ci-postgres.sh npx vitest run test/postgres
#
# Installs PostgreSQL from Debian packages when it is missing (as root), starts a cluster in a
# temporary directory as an unprivileged user on a free port (socket directory inside the
# temporary directory too), and stops and removes it on exit whatever the command did.
set -euo pipefail

if [ "$#" -eq 0 ]; then
  echo "usage: $0 COMMAND [ARGS...]" >&2
  exit 2
fi

find_bin() { ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V | tail -n 1; }
PGBIN="${PGBIN:-$(find_bin)}"
if [ -z "$PGBIN" ] || [ ! -x "$PGBIN/initdb" ]; then
  if [ "$(id -u)" -ne 0 ]; then
    echo "$0: PostgreSQL is not installed and this is not root; install the postgresql package" >&2
    exit 1
  fi
  apt-get update -qq
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq postgresql >/dev/null
  PGBIN="$(find_bin)"
fi

TMP="$(mktemp -d "${TMPDIR:-/tmp}/dsh-fs-pg.XXXXXX")"
# PostgreSQL refuses to run as root: as root, the cluster belongs to nobody.
if [ "$(id -u)" -eq 0 ]; then
  chown nobody "$TMP"
  as_owner() { runuser -u nobody -- "$@"; }
else
  as_owner() { "$@"; }
fi

cleanup() {
  status=$?
  if [ -f "$TMP/data/postmaster.pid" ]; then as_owner "$PGBIN/pg_ctl" -D "$TMP/data" -m immediate -w stop >/dev/null 2>&1 || true; fi
  rm -rf "$TMP"
  exit "$status"
}
trap cleanup EXIT INT TERM

PORT="$(node -e "const s = require('net').createServer().listen(0, '127.0.0.1', () => { console.log(s.address().port); s.close(); })")"

as_owner "$PGBIN/initdb" -D "$TMP/data" -U postgres -A trust -E UTF8 --locale=C.UTF-8 --no-sync >"$TMP/initdb.log" 2>&1 || {
  cat "$TMP/initdb.log" >&2
  exit 1
}
# fsync off: a throwaway cluster; max_connections covers the multi-process test and the pools.
as_owner "$PGBIN/pg_ctl" -D "$TMP/data" -l "$TMP/server.log" -w -t 60 \
  -o "-p $PORT -k $TMP -c listen_addresses=127.0.0.1 -c fsync=off -c max_connections=100" start >/dev/null || {
  cat "$TMP/server.log" >&2
  exit 1
}

export DSH_FS_TEST_PG="postgresql://postgres@127.0.0.1:$PORT/postgres"
echo "$0: PostgreSQL $("$PGBIN/postgres" --version | awk '{print $3}') on port $PORT" >&2
"$@"
