#!/usr/bin/env bash
# A Slurm cluster on emulated hosts (scripts/emulated-hosts.sh up DIR first; root needed).
#
#   scripts/emulated-slurm.sh up DIR      munged and slurmctld here, one slurmd on each host of DIR
#   scripts/emulated-slurm.sh down DIR    stop them (safe to repeat)
#
# Everything lives in DIR/slurm: the configuration, the munge key and socket, state,
# spool and logs; nothing in /etc is read or written. Use the cluster with
#   SLURM_CONF=DIR/slurm/slurm.conf salloc --nodes 2 ... / sbatch ... / srun ...
# Each slurmd runs in its host's network namespace under its host's name, so the ranks
# it starts are where mpirun would have started them.
set -euo pipefail

die() { echo "emulated-slurm: $*" >&2; exit 1; }
[ $# -ge 2 ] || die "usage: $0 up|down DIR"
action=$1
dir=$(realpath -m "$2")
s="$dir/slurm"

down() {
  local pidfile
  for pidfile in "$s"/slurmd-*.pid "$s"/slurmctld.pid "$s"/munged.pid; do
    [ -f "$pidfile" ] || continue
    kill "$(cat "$pidfile")" 2>/dev/null || true
    rm -f "$pidfile"
  done
}

case "$action" in
  down) down; exit 0 ;;
  up) ;;
  *) die "unknown action '$action' (up, down)" ;;
esac

[ "$(id -u)" = 0 ] || die "running slurmctld and slurmd needs root"
[ -f "$dir/hosts" ] || die "$dir has no emulated hosts (scripts/emulated-hosts.sh up $dir first)"
for tool in munged slurmctld slurmd srun salloc; do
  command -v "$tool" >/dev/null 2>&1 || die "'$tool' is not installed (scripts/ensure-deps.sh hosts)"
done
trap 'status=$?; [ $status = 0 ] || { down; echo "emulated-slurm: setup failed; stopped (logs in $s)" >&2; }' EXIT

mkdir -p "$s/state"
bridge_address=$(head -1 "$dir/hosts" | awk '{print $1}' | sed 's/\.[0-9]*$/.1/')
cores=$(nproc)

dd if=/dev/urandom of="$s/munge.key" bs=1024 count=1 status=none
chmod 400 "$s/munge.key"
munged --force --key-file="$s/munge.key" --socket="$s/munge.sock" --pid-file="$s/munged.pid" \
  --log-file="$s/munged.log" --seed-file="$s/munged.seed"

# A port of slurmctld's own, so a second cluster (or a real one) does not collide.
port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("", 0)); print(s.getsockname()[1])')
{
  echo "ClusterName=commchar"
  echo "SlurmctldHost=$(hostname)($bridge_address)"
  echo "SlurmctldPort=$port"
  echo "SlurmdPort=6818"
  echo "AuthType=auth/munge"
  echo "AuthInfo=socket=$s/munge.sock"
  echo "CredType=cred/munge"
  echo "SlurmUser=root"
  echo "SlurmdUser=root"
  echo "StateSaveLocation=$s/state"
  echo "SlurmdSpoolDir=$s/spool-%n"
  echo "SlurmctldPidFile=$s/slurmctld.pid"
  echo "SlurmdPidFile=$s/slurmd-%n.pid"
  echo "SlurmctldLogFile=$s/slurmctld.log"
  echo "SlurmdLogFile=$s/slurmd-%n.log"
  echo "ProctrackType=proctrack/linuxproc"
  echo "TaskPlugin=task/none"
  echo "SelectType=select/cons_tres"
  echo "SelectTypeParameters=CR_Core"
  # MPICH's own PMI client speaks the PMI-1 wire protocol, which Slurm's pmi2 plugin serves.
  echo "MpiDefault=pmi2"
  echo "ReturnToService=2"
  echo "SchedulerType=sched/builtin"
  echo "JobCompType=jobcomp/none"
  echo "AccountingStorageType=accounting_storage/none"
  echo "SlurmdTimeout=30"
  echo "InactiveLimit=0"
  echo "KillWait=5"
  while read -r address name _; do
    echo "NodeName=$name NodeAddr=$address CPUs=$cores State=UNKNOWN"
  done < "$dir/hosts"
  echo "PartitionName=hosts Nodes=ALL Default=YES MaxTime=INFINITE State=UP OverSubscribe=NO"
} > "$s/slurm.conf"

slurmctld -f "$s/slurm.conf" -i
i=0
while read -r address name ns; do
  i=$((i + 1))
  mkdir -p "$s/spool-$name"
  # Into the host's network and name (those of its sshd), but not its mount namespace:
  # `ip netns exec` mounts a fresh /sys there, without the cgroups slurmd needs.
  nsenter --net="/run/netns/$ns" --uts="/proc/$(cat "$dir/sshd-h$i.pid")/ns/uts" \
    slurmd -f "$s/slurm.conf" -N "$name" || die "slurmd did not start on $name (see $s/slurmd-$name.log)"
done < "$dir/hosts"

# Ready when every node is idle.
count=$(wc -l < "$dir/hosts")
for _ in $(seq 100); do
  idle=$(SLURM_CONF="$s/slurm.conf" sinfo -h -N -t idle -o %N 2>/dev/null | wc -l)
  [ "$idle" = "$count" ] && { echo "emulated-slurm: $count nodes idle ($s/slurm.conf)"; exit 0; }
  sleep 0.2
done
die "the nodes did not come up idle in 20 s: $(SLURM_CONF="$s/slurm.conf" sinfo -h -N -o '%N %T' | tr '\n' ' ')"
