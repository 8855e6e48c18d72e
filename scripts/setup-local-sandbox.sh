#!/usr/bin/env bash
# Sets up the local compute provider's sandbox (docs/production.md, "The local provider's sandbox"):
# bubblewrap, and the unprivileged system user sandboxed commands run as (ASSAY_LOCAL_RUN_AS, default
# assay-run: no login shell, no home). `npm start` and scripts/test.sh run it; safe to re-run, it changes
# nothing that is already there. Not root: it says what an operator must do, and exits 0 (the service then
# runs `local` without the sandbox, for admins' runs only).
set -euo pipefail

# --for-start (npm start): nothing to do when the service will not use the sandbox.
if [[ "${1:-}" == --for-start ]] && { [[ "${ASSAY_COMPUTE:-local}" != local ]] || [[ "${ASSAY_LOCAL_SANDBOX:-auto}" == off ]]; }; then
  exit 0
fi

user="${ASSAY_LOCAL_RUN_AS:-assay-run}"
have_bwrap() { command -v bwrap >/dev/null 2>&1; }
have_user() { getent passwd "$user" >/dev/null 2>&1; }

if [[ "$(id -u)" != 0 ]]; then
  if have_bwrap && have_user; then exit 0; fi
  echo "setup-local-sandbox: not root, so the local provider's sandbox is not set up; commands of managed runs on" >&2
  echo "  local would run as the service's own user, for admins only. An operator sets it up with:" >&2
  echo "    sudo bash scripts/setup-local-sandbox.sh     # installs bubblewrap, creates the user $user" >&2
  echo "  and runs the service as root (it starts each command as $user in the sandbox)." >&2
  exit 0
fi

if ! have_bwrap; then
  if command -v apt-get >/dev/null 2>&1; then
    echo "setup-local-sandbox: installing bubblewrap" >&2
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq bubblewrap >/dev/null ||
      { apt-get update -qq >/dev/null && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq bubblewrap >/dev/null; }
  else
    echo "setup-local-sandbox: install bubblewrap with this system's package manager" >&2
    exit 1
  fi
fi

if ! have_user; then
  echo "setup-local-sandbox: creating the system user $user" >&2
  nologin="$(command -v nologin || echo /usr/sbin/nologin)"
  useradd --system --user-group --no-create-home --home-dir /nonexistent --shell "$nologin" "$user"
fi
