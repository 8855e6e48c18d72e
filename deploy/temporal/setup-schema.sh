#!/bin/sh
# One-shot (temporal-schema service, temporalio/admin-tools image): creates Temporal's two PostgreSQL
# databases if missing and brings both schemas up to the version this admin-tools image ships. Every step is
# idempotent:
# `create` accepts an existing database, `setup-schema -v 0.0` leaves a newer version alone, and
# `update-schema` applies only the versions not yet recorded. Run it again after changing the image tags to
# upgrade the schema (docs/production.md).
# temporal-sql-tool reads its connection from SQL_PLUGIN, SQL_HOST, SQL_PORT, SQL_USER and SQL_PASSWORD.
set -eu
: "${SQL_PASSWORD:?set SQL_PASSWORD}"
export SQL_PLUGIN="${SQL_PLUGIN:-postgres12}"
export SQL_HOST="${SQL_HOST:-postgres}"
export SQL_PORT="${SQL_PORT:-5432}"
export SQL_USER="${SQL_USER:-temporal}"
schema=/etc/temporal/schema/postgresql/v12

setup() {
  db=$1
  versioned=$2
  echo "temporal-schema: $db"
  temporal-sql-tool --db "$db" create
  temporal-sql-tool --db "$db" setup-schema -v 0.0
  temporal-sql-tool --db "$db" update-schema -d "$versioned"
}

setup "${DBNAME:-temporal}" "$schema/temporal/versioned"
setup "${VISIBILITY_DBNAME:-temporal_visibility}" "$schema/visibility/versioned"
echo "temporal-schema: done"
