# Sourced by the setup scripts: one way to build a project-local venv from a pinned requirements file.
#   ensure_pip_venv NAME VENV REQUIREMENTS CHECK
# CHECK is a command that succeeds when everything the requirements should give is there. The venv is rebuilt
# when its interpreter is broken or when the stamped requirements hash matches but CHECK fails (pip would call
# a damaged install satisfied); it is reinstalled only when the requirements file changes.

ensure_pip_venv() {
  local name="$1" venv="$2" requirements="$3" check="$4"
  local stamp="$venv/.requirements.sha256" python="${PYTHON:-python3}" want_sha
  log() { printf '%s: %s\n' "$name" "$*"; }
  want_sha="$(sha256sum "$requirements" | cut -d' ' -f1)"

  # A venv whose interpreter vanished (e.g. a removed pyenv version) must be rebuilt, not trusted.
  if [[ -x "$venv/bin/python" ]] && ! "$venv/bin/python" -c '' 2>/dev/null; then
    log "existing $venv has a broken interpreter; recreating it"
    rm -rf "$venv"
  fi
  if [[ -f "$stamp" && "$(cat "$stamp")" == "$want_sha" ]]; then
    if "$check"; then
      log "up to date ($venv, requirements sha256 ${want_sha:0:12})"
      return 0
    fi
    log "$venv lacks part of $(basename "$requirements"); recreating it"
    rm -rf "$venv"
  fi
  if [[ ! -x "$venv/bin/python" ]]; then
    log "creating venv $venv with $("$python" --version 2>&1)"
    if ! "$python" -m venv "$venv"; then
      # Debian ships venv without ensurepip unless python3-venv is installed; bootstrap pip with the system
      # pip instead.
      log "python3 -m venv failed; retrying without ensurepip and bootstrapping pip from the system pip"
      rm -rf "$venv"
      "$python" -m venv --without-pip "$venv"
      if ! "$python" -m pip --python "$venv/bin/python" install --quiet pip; then
        log "error: no way to get pip into the venv; install python3-venv (Debian/Ubuntu) and re-run" >&2
        rm -rf "$venv"
        return 1
      fi
    fi
  fi
  log "installing $(basename "$requirements") into $venv (a few minutes the first time)"
  "$venv/bin/python" -m pip install --disable-pip-version-check --quiet --requirement "$requirements"
  if ! "$check"; then
    log "error: $venv still lacks part of $(basename "$requirements") after install" >&2
    return 1
  fi
  printf '%s\n' "$want_sha" > "$stamp"
  log "done: $venv"
}
