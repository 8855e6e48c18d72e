#!/usr/bin/env bash
# Makes sure the PostgreSQL the tests use answers at 127.0.0.1:5432, starting the machine's cluster if it is
# down.
set -euo pipefail
host=127.0.0.1 port=5432
ready() { pg_isready -q -h "$host" -p "$port" 2>/dev/null || (exec 3<>"/dev/tcp/$host/$port") 2>/dev/null; }
if ready; then exit 0; fi
if [[ -n "${TEST_DATABASE_URL:-}" ]]; then
  echo "ensure-postgres: TEST_DATABASE_URL is set; not starting a local cluster" >&2
  exit 0
fi
if command -v pg_ctlcluster >/dev/null 2>&1 && [[ -d /etc/postgresql ]]; then
  version=$(ls /etc/postgresql | sort -V | tail -n 1)
  echo "ensure-postgres: PostgreSQL is down; starting cluster $version/main"
  pg_ctlcluster --skip-systemctl-redirect "$version" main start
  for _ in $(seq 1 30); do ready && exit 0; sleep 1; done
fi
echo "ensure-postgres: no PostgreSQL at $host:$port. Start one (trust auth, user postgres) or set TEST_DATABASE_URL." >&2
exit 1
