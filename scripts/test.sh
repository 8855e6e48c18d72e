#!/usr/bin/env bash
# The whole test suite: unit tests, then integration tests against real PostgreSQL, PGlite and the test
# servers. Installs what it needs first (idempotent), so it is the one command on a fresh machine after `npm
# ci`.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

bash scripts/setup-test-tools.sh
bash scripts/setup-search-worker.sh
# The Python SDK's dev venv (.venv-sdk): pytest, mypy, ruff, build and sdk/python itself, editable.
bash scripts/setup-python-sdk.sh
bash scripts/setup-browser.sh
# The local provider's sandbox (bubblewrap and its user): the embedded services under test use it.
bash scripts/setup-local-sandbox.sh
bash scripts/ensure-postgres.sh
# The Slurm provider's tests submit to a real single-node cluster on this host.
bash scripts/setup-slurm.sh
# The service serves the built UI; this rebuilds it only when its sources changed.
node scripts/build-web.ts
# The local provider's instances run `assay run` from this bundle (src/compute/runner-bundle.ts), as a
# deployment does.
node scripts/build-runner.ts

# Files run in parallel, each with its own database and ports; `node` here is the project's Node 24.
tap="$(mktemp)"
trap 'rm -f "$tap"' EXIT
status=0
# Node expands the glob itself (including **); bash must not.
if [[ -n "${TEST_FILES:-}" ]]; then read -ra files <<< "$TEST_FILES"; else files=('test/**/*.test.ts'); fi
node --test --test-concurrency="${TEST_CONCURRENCY:-3}" --test-timeout=600000 \
  --test-reporter=spec --test-reporter-destination=stdout \
  --test-reporter=tap --test-reporter-destination="$tap" \
  "${files[@]}" || status=$?

passed=$(grep -E '^# pass ' "$tap" | awk '{print $3}')
failed=$(grep -E '^# fail ' "$tap" | awk '{print $3}')
# A test cancelled because its suite's hook failed did not pass either.
cancelled=$(grep -E '^# cancelled ' "$tap" | awk '{print $3}')
failed=$(( ${failed:-0} + ${cancelled:-0} ))
skipped=$(grep -E '^# skipped ' "$tap" | awk '{print $3}')
echo "${passed:-0} passed, ${failed:-0} failed, ${skipped:-0} skipped"
if [[ "${skipped:-0}" != 0 ]]; then
  echo "test.sh: skipped tests are not allowed to count as passing" >&2
  status=1
fi
exit "$status"
