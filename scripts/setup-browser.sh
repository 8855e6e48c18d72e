#!/usr/bin/env bash
# Installs the browser the web UI's tests drive (Debian's chromium; playwright-core cannot download one
# here). Safe to re-run: it does nothing once /usr/bin/chromium exists.
set -euo pipefail

[[ -x /usr/bin/chromium ]] && exit 0
if [[ "$(id -u)" != 0 ]]; then
  echo "setup-browser: /usr/bin/chromium is missing; install it as root: apt-get install -y chromium" >&2
  exit 1
fi
echo "setup-browser: installing chromium" >&2
apt-get update -qq
DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends chromium >/dev/null
