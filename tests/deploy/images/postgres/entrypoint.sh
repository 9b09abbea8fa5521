#!/bin/sh
# First start: a cluster owned by POSTGRES_USER (password auth over TCP), then POSTGRES_DB.
# PGPORT and LISTEN (default 127.0.0.1) place it on the host network without a clash.
set -eu
if [ ! -s "$PGDATA/PG_VERSION" ]; then
  pwfile=$(mktemp)
  printf '%s\n' "$POSTGRES_PASSWORD" >"$pwfile"
  initdb --username="$POSTGRES_USER" --pwfile="$pwfile" --auth-host=scram-sha-256 \
         --auth-local=trust --encoding=UTF8 --locale=C.UTF-8 >/dev/null
  rm -f "$pwfile"
  echo "CREATE DATABASE \"$POSTGRES_DB\" OWNER \"$POSTGRES_USER\";" \
    | postgres --single -D "$PGDATA" postgres >/dev/null
fi
exec postgres -D "$PGDATA" -p "$PGPORT" -c "listen_addresses=${LISTEN:-127.0.0.1}" \
     -k /var/run/postgresql
