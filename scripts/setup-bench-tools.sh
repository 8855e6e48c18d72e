#!/usr/bin/env bash
# Installs the servers that benchmarks compare against (the MLflow tracking server, with the PostgreSQL driver it
# needs) into <repo>/.venv/bench: a venv of its own, apart from the test tools in .venv, but under the .venv/ that git
# and eslint already ignore (MLflow ships ~240 .js files that `eslint .` would otherwise lint). Safe to re-run: it
# reinstalls only when requirements-bench-tools.txt changes.
set -euo pipefail

repo_root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
requirements="$repo_root/requirements-bench-tools.txt"
venv="$repo_root/.venv/bench"
stamp="$venv/.bench-tools.sha256"
python="${PYTHON:-python3}"

tools=(mlflow)

log() { printf 'setup-bench-tools: %s\n' "$*"; }

tools_present() {
  local tool
  for tool in "${tools[@]}"; do [[ -x "$venv/bin/$tool" ]] || return 1; done
  "$venv/bin/python" -c 'import psycopg2' 2>/dev/null
}

want_sha="$(sha256sum "$requirements" | cut -d' ' -f1)"

# A venv whose interpreter vanished (e.g. a removed pyenv version) must be rebuilt, not trusted.
if [[ -x "$venv/bin/python" ]] && ! "$venv/bin/python" -c '' 2>/dev/null; then
  log "existing $venv has a broken interpreter; recreating it"
  rm -rf "$venv"
fi

if [[ -f "$stamp" && "$(cat "$stamp")" == "$want_sha" ]]; then
  if tools_present; then
    log "up to date ($venv, requirements sha256 ${want_sha:0:12})"
    exit 0
  fi
  # pip would call the damaged install satisfied and leave the missing pieces missing.
  log "$venv lacks some of ${tools[*]} or psycopg2; recreating it"
  rm -rf "$venv"
fi

if [[ ! -x "$venv/bin/python" ]]; then
  log "creating venv $venv with $("$python" --version 2>&1)"
  if ! "$python" -m venv "$venv"; then
    # Debian ships venv without ensurepip unless python3-venv is installed; bootstrap pip with the system pip instead.
    log "python3 -m venv failed; retrying without ensurepip and bootstrapping pip from the system pip"
    rm -rf "$venv"
    "$python" -m venv --without-pip "$venv"
    if ! "$python" -m pip --python "$venv/bin/python" install --quiet pip; then
      log "error: no way to get pip into the venv; install python3-venv (Debian/Ubuntu) and re-run" >&2
      rm -rf "$venv"
      exit 1
    fi
  fi
fi

log "installing $(basename "$requirements") into $venv (a few minutes the first time)"
"$venv/bin/python" -m pip install --disable-pip-version-check --quiet --requirement "$requirements"

if ! tools_present; then
  log "error: mlflow or psycopg2 is missing from $venv after install" >&2
  exit 1
fi

printf '%s\n' "$want_sha" > "$stamp"
log "done: mlflow (with psycopg2) is in $venv/bin"
