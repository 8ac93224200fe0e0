#!/usr/bin/env bash
# Bring up a throwaway single-node Slurm cluster on this machine (Debian's slurm-wlm and munge),
# for the job-array test of `drop7 screen --emit-slurm`. Everything lives under $SLURM_DIR
# (default /tmp/drop7-slurm); `scripts/slurm-single-node.sh stop` shuts it down.
# Needs root (it starts munged, slurmctld and slurmd) and installs the packages if missing.
set -euo pipefail
DIR=${SLURM_DIR:-/tmp/drop7-slurm}
CONF=$DIR/etc/slurm.conf
if [ "${1:-start}" = stop ]; then
  # Only the daemons this script started: their PIDs are in $DIR/run (a machine that is a
  # real Slurm node keeps its own slurmd, slurmctld and munged running).
  for p in slurmd slurmctld munged; do
    f=$DIR/run/$p.pid
    if [ -s "$f" ]; then
      pid=$(cat "$f")
      # the PID must still be that daemon (not a recycled PID)
      if [ "$(cat "/proc/$pid/comm" 2>/dev/null)" = "$p" ]; then kill "$pid" 2>/dev/null || true; fi
      rm -f "$f"
    fi
  done
  exit 0
fi
if ! command -v slurmctld >/dev/null || ! command -v munged >/dev/null; then
  DEBIAN_FRONTEND=noninteractive apt-get install -y -q slurm-wlm munge >/dev/null
fi
mkdir -p "$DIR"/{etc,spool/ctld,spool/d,log,run,munge}
HOST=$(hostname -s)
CPUS=$(nproc)
MEM=$(( $(awk '/MemTotal/ {print $2}' /proc/meminfo) / 1024 - 1024 ))
cat > "$CONF" <<CONF
ClusterName=drop7test
SlurmctldHost=$HOST
SlurmUser=root
SlurmdUser=root
AuthType=auth/munge
CryptoType=crypto/munge
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
SchedulerType=sched/backfill
SelectType=select/cons_tres
SelectTypeParameters=CR_CPU
ReturnToService=2
StateSaveLocation=$DIR/spool/ctld
SlurmdSpoolDir=$DIR/spool/d
SlurmctldPidFile=$DIR/run/slurmctld.pid
SlurmdPidFile=$DIR/run/slurmd.pid
SlurmctldLogFile=$DIR/log/slurmctld.log
SlurmdLogFile=$DIR/log/slurmd.log
MpiDefault=none
NodeName=$HOST CPUs=$CPUS RealMemory=$MEM State=UNKNOWN
PartitionName=main Nodes=$HOST Default=YES MaxTime=INFINITE State=UP
CONF
# munge: a fresh key, the daemon on its own socket
if [ ! -s /etc/munge/munge.key ]; then
  mkdir -p /etc/munge && dd if=/dev/urandom bs=1 count=1024 of=/etc/munge/munge.key 2>/dev/null
fi
chown -R munge:munge /etc/munge 2>/dev/null || true
chmod 400 /etc/munge/munge.key
mkdir -p /run/munge /var/lib/munge /var/log/munge
chown munge:munge /run/munge /var/lib/munge /var/log/munge 2>/dev/null || true
# A daemon already running (a real node's) is used, never restarted or stopped; one this
# script starts has its PID in $DIR/run, which is what `stop` ends.
if ! pgrep -x munged >/dev/null; then
  runuser -u munge -- /usr/sbin/munged
  for _ in $(seq 20); do [ -s /run/munge/munged.pid ] && break; sleep 0.1; done
  cp /run/munge/munged.pid "$DIR/run/munged.pid" 2>/dev/null || pgrep -n -x munged > "$DIR/run/munged.pid"
fi
export SLURM_CONF=$CONF
# slurmctld and slurmd write their PIDs to $DIR/run (SlurmctldPidFile, SlurmdPidFile above).
pgrep -x slurmctld >/dev/null || slurmctld -f "$CONF"
pgrep -x slurmd >/dev/null || slurmd -f "$CONF"
for _ in $(seq 30); do
  if sinfo -h -o %T 2>/dev/null | grep -qE 'idle|mixed|alloc'; then
    echo "SLURM_CONF=$CONF"; exit 0
  fi
  sleep 1
done
echo "slurm did not come up; see $DIR/log" >&2
sinfo >&2 || true
exit 1
