#!/usr/bin/env bash
# A single-node Slurm on this host for the Slurm provider's tests (test/orchestration/slurm-provider.test.ts):
# Debian's slurm-wlm and munge, one node (this host) in one partition `debug`. Idempotent and quick when the
# cluster is already up: it rewrites nothing that is unchanged, restarts nothing that answers. Needs root
# (the daemons and /etc/slurm); a machine without systemd as PID 1 is fine (the daemons are started here).
set -euo pipefail

log() { printf 'setup-slurm: %s\n' "$*" >&2; }

if [[ $EUID -ne 0 ]]; then
  log "must run as root (it installs packages and starts slurmctld, slurmd and munged)"
  exit 1
fi

if ! command -v slurmctld >/dev/null || ! command -v slurmd >/dev/null || ! command -v munged >/dev/null \
  || ! command -v sbatch >/dev/null; then
  log "installing slurm-wlm and munge (once)"
  apt-get update -qq
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq slurm-wlm munge >/dev/null
fi

host="$(hostname -s)"
cpus="$(nproc)"
# What the node offers jobs: the machine's memory less a margin for the OS and the service under test.
total_mb="$(free -m | awk '/^Mem:/ {print $2}')"
memory_mb=$((total_mb > 2048 ? total_mb - 1024 : total_mb / 2))

# munge: the shared key authenticates the daemons and the commands to each other.
if [[ ! -s /etc/munge/munge.key ]]; then
  log "creating /etc/munge/munge.key"
  install -d -o munge -g munge -m 0700 /etc/munge
  dd if=/dev/urandom of=/etc/munge/munge.key bs=1 count=1024 status=none
  chown munge:munge /etc/munge/munge.key
  chmod 0400 /etc/munge/munge.key
fi
install -d -o munge -g munge -m 0755 /run/munge
install -d -o munge -g munge -m 0700 /var/lib/munge /var/log/munge
if ! munge -n </dev/null 2>/dev/null | unmunge >/dev/null 2>&1; then
  log "starting munged"
  runuser -u munge -- /usr/sbin/munged
  for _ in $(seq 50); do munge -n </dev/null 2>/dev/null | unmunge >/dev/null 2>&1 && break; sleep 0.1; done
fi

# One node, one partition. linuxproc and task/none need no cgroup setup (a container has none to give);
# config_overrides: the node is what this file says, never drained for a mismatch the host cannot help.
# Without slurmdbd, sacct knows nothing: MinJobAge keeps a finished job visible to squeue and scontrol for an
# hour, which is where the provider looks first.
conf="$(cat <<EOF
# Written by scripts/setup-slurm.sh: a single-node test cluster.
ClusterName=assay-test
SlurmctldHost=$host(127.0.0.1)
SlurmUser=slurm
AuthType=auth/munge
CredType=cred/munge
MpiDefault=none
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
ReturnToService=2
SlurmctldPidFile=/run/slurmctld.pid
SlurmdPidFile=/run/slurmd.pid
SlurmdSpoolDir=/var/spool/slurmd
StateSaveLocation=/var/spool/slurmctld
SlurmctldLogFile=/var/log/slurm/slurmctld.log
SlurmdLogFile=/var/log/slurm/slurmd.log
SlurmdParameters=config_overrides
SchedulerType=sched/backfill
SchedulerParameters=sched_interval=2
SelectType=select/cons_tres
SelectTypeParameters=CR_Core
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
JobCompType=jobcomp/none
MinJobAge=3600
KillWait=5
InactiveLimit=0
Waittime=0
OverTimeLimit=0
NodeName=$host NodeAddr=127.0.0.1 CPUs=$cpus RealMemory=$memory_mb State=UNKNOWN
PartitionName=debug Nodes=$host Default=YES MaxTime=INFINITE State=UP OverSubscribe=FORCE:8
EOF
)"
install -d -m 0755 /etc/slurm
changed=false
if [[ ! -f /etc/slurm/slurm.conf ]] || [[ "$(cat /etc/slurm/slurm.conf)" != "$conf" ]]; then
  log "writing /etc/slurm/slurm.conf (node $host, $cpus CPUs, $memory_mb MiB)"
  printf '%s\n' "$conf" >/etc/slurm/slurm.conf
  chmod 0644 /etc/slurm/slurm.conf
  changed=true
fi
install -d -o slurm -g slurm -m 0755 /var/spool/slurmctld /var/log/slurm
install -d -m 0755 /var/spool/slurmd

alive() { [[ -f "$1" ]] && kill -0 "$(cat "$1")" 2>/dev/null; }

if $changed; then
  # A running daemon with another configuration is restarted; its jobs' state survives in StateSaveLocation.
  for pidfile in /run/slurmd.pid /run/slurmctld.pid; do
    if alive "$pidfile"; then
      kill "$(cat "$pidfile")" 2>/dev/null || true
      for _ in $(seq 50); do alive "$pidfile" || break; sleep 0.1; done
    fi
  done
fi
# A daemon found dead is started; one that was still exiting when first looked at is started on a later look.
start_daemons() {
  if ! alive /run/slurmctld.pid; then
    log "starting slurmctld"
    /usr/sbin/slurmctld
  fi
  if ! alive /run/slurmd.pid; then
    log "starting slurmd"
    /usr/sbin/slurmd
  fi
}
start_daemons

# The node registers within seconds; one left DOWN or DRAIN (an earlier unclean stop) is resumed.
for i in $(seq 120); do
  state="$(sinfo --noheader --nodes="$host" --format=%T 2>/dev/null | head -n1 || true)"
  case "$state" in
    idle* | mixed* | allocated* | completing*) exit 0 ;;
    down* | drain* | drained* | fail*)
      if ((i % 10 == 1)); then
        log "node $host is $state: resuming it"
        scontrol update nodename="$host" state=resume 2>/dev/null || true
      fi
      ;;
  esac
  if ((i % 4 == 0)); then start_daemons; fi
  sleep 0.5
done
log "the node $host did not become idle within 60 s (state: ${state:-none}); see /var/log/slurm/"
exit 1
