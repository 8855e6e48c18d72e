#!/bin/sh
# Runs once, when the postgres container initializes an empty data volume (/docker-entrypoint-initdb.d).
# Creates the service's role and database, and Temporal's role; Temporal's two databases (temporal,
# temporal_visibility) are created by the temporal-schema job as that role, which may therefore create
# databases. Passwords reach SQL as psql variables (:'name' quotes them), never spliced into the text. No `set
# -eu`: the image sources (rather than runs) an init script that lost its executable bit, and the options
# would leak into its own entrypoint; psql's ON_ERROR_STOP and the checks below fail the init instead.
: "${ASSAY_DB_PASSWORD:?set ASSAY_DB_PASSWORD}"
: "${TEMPORAL_DB_PASSWORD:?set TEMPORAL_DB_PASSWORD}"

psql -v ON_ERROR_STOP=1 --username "$POSTGRES_USER" --dbname postgres \
  -v assay_password="$ASSAY_DB_PASSWORD" \
  -v temporal_password="$TEMPORAL_DB_PASSWORD" <<'SQL'
CREATE ROLE assay LOGIN PASSWORD :'assay_password';
CREATE DATABASE assay OWNER assay;
CREATE ROLE temporal LOGIN CREATEDB PASSWORD :'temporal_password';
SQL
