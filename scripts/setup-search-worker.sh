#!/usr/bin/env bash
# Installs the search worker (search-worker/: the Python sampler of random, sobol and tpe sweeps) into
# <repo>/.venv-search from its pinned requirements. `npm start` and scripts/test.sh run it; safe to re-run: it
# reinstalls only when search-worker/requirements.txt changes, and returns at once otherwise.
set -euo pipefail

repo_root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
source "$repo_root/scripts/lib/pip-venv.sh"
venv="$repo_root/.venv-search"

sampler_present() {
  "$venv/bin/python" -c 'import optuna, scipy, numpy, temporalio' 2>/dev/null
}

ensure_pip_venv setup-search-worker "$venv" "$repo_root/search-worker/requirements.txt" sampler_present
