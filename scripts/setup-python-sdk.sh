#!/usr/bin/env bash
# The Python SDK's dev venv, ./.venv-sdk: the pinned tools of requirements-python-sdk.txt (pytest, mypy, ruff,
# build, the model generator) and ./sdk/python installed editable, so tests import the working tree. Safe to
# re-run: the tools are reinstalled only when the requirements file changes, the SDK only when its
# pyproject.toml does.
set -euo pipefail

repo_root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
source "$repo_root/scripts/lib/pip-venv.sh"
venv="$repo_root/.venv-sdk"

tools_present() {
  local tool
  for tool in pytest mypy ruff; do [[ -x "$venv/bin/$tool" ]] || return 1; done
  "$venv/bin/python" -c 'import build, httpx, yaml, sklearn' 2>/dev/null
}

ensure_pip_venv setup-python-sdk "$venv" "$repo_root/requirements-python-sdk.txt" tools_present

stamp="$venv/.sdk-pyproject.sha256"
want="$(sha256sum "$repo_root/sdk/python/pyproject.toml" | cut -d' ' -f1)"
if [[ ! -f "$stamp" || "$(cat "$stamp")" != "$want" ]] || ! "$venv/bin/python" -c 'import assay' 2>/dev/null; then
  echo "setup-python-sdk: installing ./sdk/python (editable) into $venv"
  # --no-deps --no-build-isolation: its dependencies and hatchling are pinned in the requirements above.
  "$venv/bin/python" -m pip install --disable-pip-version-check --quiet --no-deps --no-build-isolation \
    --editable "$repo_root/sdk/python"
  printf '%s\n' "$want" > "$stamp"
fi
