#!/bin/sh
# Temporal's schema on PostgreSQL, run by docker-compose.yml's temporal-schema step in the
# temporalio/admin-tools image: create each database once, set up version 0 on a new one,
# then apply every versioned upgrade (a no-op when up to date). Safe to run on every `up`.
set -eu
: "${POSTGRES_SEEDS:?}" "${POSTGRES_USER:?}" "${SQL_PASSWORD:?}"
port="${DB_PORT:-5432}"
schemas=/etc/temporal/schema/postgresql/v12

sql() {
  db="$1"
  shift
  temporal-sql-tool --plugin postgres12 --ep "$POSTGRES_SEEDS" -p "$port" \
    -u "$POSTGRES_USER" --db "$db" "$@"
}

for name in temporal temporal_visibility; do
  dir=temporal
  [ "$name" = temporal_visibility ] && dir=visibility
  # `create` refuses an existing database: that is the upgrade case, not an error (a real
  # failure, PostgreSQL unreachable say, fails update-schema below).
  sql "$name" create || echo "database $name exists"
  # Version 0 only where no schema_version row exists yet.
  sql "$name" setup-schema -v 0.0 || echo "schema of $name already set up"
  sql "$name" update-schema -d "$schemas/$dir/versioned"
done
echo "Temporal schema up to date"
