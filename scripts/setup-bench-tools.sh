#!/usr/bin/env bash
# Installs what benchmarks compare against (the MLflow tracking server, with the PostgreSQL driver it needs;
# Optuna and scikit-learn for bench/sweeps.ts's training task and baselines) into <repo>/.venv/bench: a venv
# of its own, apart from the test tools in .venv, but under the .venv/ that git and eslint already ignore
# (MLflow ships ~240 .js files that `eslint .` would otherwise lint). Safe to re-run: it reinstalls only when
# requirements-bench-tools.txt changes.
set -euo pipefail

repo_root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
source "$repo_root/scripts/lib/pip-venv.sh"
venv="$repo_root/.venv/bench"

tools_present() {
  [[ -x "$venv/bin/mlflow" ]] && "$venv/bin/python" -c 'import psycopg2, optuna, sklearn' 2>/dev/null
}

ensure_pip_venv setup-bench-tools "$venv" "$repo_root/requirements-bench-tools.txt" tools_present
