#!/usr/bin/env bash
# Installs the search worker (search-worker/: the Python sampler of random, sobol and tpe sweeps) into
# <repo>/.venv-search from its pinned requirements. `npm start` and scripts/test.sh run it; safe to re-run: it
# reinstalls only when search-worker/requirements.txt changes, and returns at once otherwise. `npm start` goes
# on when it fails: the service then starts without the sampler, and those sweeps answer 503.
set -euo pipefail

# --for-start (npm start): nothing to do when `assay server` will not start it, by the settings it reads.
is_off() { case "${1,,}" in off | false | 0 | no) return 0 ;; *) return 1 ;; esac; }
if [[ "${1:-}" == --for-start ]] && { is_off "${ASSAY_ORCHESTRATOR:-on}" || is_off "${ASSAY_WORKER:-on}" ||
  is_off "${ASSAY_SEARCH_WORKER:-embedded}" || [[ -n "${ASSAY_SEARCH_PYTHON:-}" ]]; }; then
  exit 0
fi

repo_root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
source "$repo_root/scripts/lib/pip-venv.sh"
venv="$repo_root/.venv-search"

sampler_present() {
  "$venv/bin/python" -c 'import optuna, scipy, numpy, temporalio' 2>/dev/null
}

ensure_pip_venv setup-search-worker "$venv" "$repo_root/search-worker/requirements.txt" sampler_present
