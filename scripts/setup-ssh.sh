#!/usr/bin/env bash
# Installs OpenSSH: the client the Slurm provider submits through (ASSAY_SLURM_SSH), and the server its tests
# start on a loopback port as the login node (test/support/sshd.ts). Safe to re-run: it does nothing once
# both are there.
set -euo pipefail

[[ -x /usr/sbin/sshd ]] && command -v ssh >/dev/null && command -v ssh-keygen >/dev/null && exit 0
if [[ "$(id -u)" != 0 ]]; then
  echo "setup-ssh: sshd or ssh is missing; install them as root: apt-get install -y openssh-server openssh-client" >&2
  exit 1
fi
echo "setup-ssh: installing openssh-server and openssh-client" >&2
apt-get update -qq
# The package's service is not needed: the tests start their own sshd with their own config.
DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends openssh-server openssh-client >/dev/null
