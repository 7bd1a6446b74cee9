#!/usr/bin/env bash
# Emulated hosts on one machine, for tests and demos of multi-host runs (root needed).
#
#   scripts/emulated-hosts.sh up DIR [HOSTS [RATE]]   build HOSTS (2-4, default 2) hosts, links shaped to RATE (default 1gbit)
#   scripts/emulated-hosts.sh down DIR                tear down what `up DIR` built (safe to repeat)
#
# Each host is a network namespace with its own hostname (a UTS namespace, so
# MPI_Get_processor_name tells the hosts apart), an interface eth0 joined to a
# bridge through a veth pair whose sending side is shaped with tc tbf, and its
# own sshd listening on its address with keys made for DIR alone. The bridge
# holds the first address of the subnet and every host routes through it, so
# mpirun or mpiexec running outside the namespaces reaches them and is reached
# back. `up` writes into DIR:
#   hostfile   one line per host, "ADDRESS slots=CORES" (commchar reads it for every library)
#   env        KEY=VALUE lines for the launchers: ssh with DIR's keys for Open MPI's plm
#              and MPICH's Hydra, TCP pinned to eth0 for both (UCX_TLS=tcp: UCX would
#              otherwise reach the other "host" through shared memory on the same machine)
#   hosts      ADDRESS NAME NAMESPACE per host
# A failure part way tears down what was built; `down` is what a test's finalizer calls.
set -euo pipefail

die() { echo "emulated-hosts: $*" >&2; exit 1; }

[ $# -ge 2 ] || die "usage: $0 up DIR [HOSTS [RATE]] | down DIR"
action=$1
dir=$(realpath -m "$2")
# A short tag from DIR keeps names unique when several sets exist (interface names: 15 chars).
tag=$(printf %s "$dir" | md5sum | cut -c1-4)
bridge="ccbr$tag"

down() {
  local pidfile ns
  for pidfile in "$dir"/sshd-*.pid; do
    [ -f "$pidfile" ] || continue
    kill "$(cat "$pidfile")" 2>/dev/null || true
    rm -f "$pidfile"
  done
  for ns in $(ip netns list 2>/dev/null | awk '{print $1}' | grep "^cc$tag-h" || true); do
    # Anything still running inside (an orphaned rank) must not outlive the host.
    for pid in $(ip netns pids "$ns" 2>/dev/null || true); do kill -9 "$pid" 2>/dev/null || true; done
    ip netns delete "$ns" 2>/dev/null || true
  done
  ip link delete "$bridge" 2>/dev/null || true
}

case "$action" in
  down) down; exit 0 ;;
  up) ;;
  *) die "unknown action '$action' (up, down)" ;;
esac

hosts=${3:-2}
rate=${4:-1gbit}
[[ "$hosts" =~ ^[2-4]$ ]] || die "HOSTS must be 2, 3 or 4 (got '$hosts')"
[ "$(id -u)" = 0 ] || die "building network namespaces needs root"
for tool in ip tc unshare ssh ssh-keygen; do
  command -v "$tool" >/dev/null 2>&1 || die "'$tool' is not installed (scripts/ensure-deps.sh hosts)"
done
[ -x /usr/sbin/sshd ] || die "/usr/sbin/sshd is not installed (scripts/ensure-deps.sh hosts)"

# A /24 nobody routes yet, picked from the tag so parallel sets differ.
octet=$(( (0x$tag % 200) + 20 ))
for _ in $(seq 200); do
  ip -4 route | grep -q "^10\.250\.$octet\." || break
  octet=$(( (octet - 19) % 200 + 20 ))
done
net="10.250.$octet"

mkdir -p "$dir" /run/sshd
trap 'status=$?; [ $status = 0 ] || { down; echo "emulated-hosts: setup failed; torn down" >&2; }' EXIT

ip link add "$bridge" type bridge
ip addr add "$net.1/24" dev "$bridge"
ip link set "$bridge" up

rm -f "$dir/id_ed25519" "$dir/id_ed25519.pub" "$dir/host_ed25519" "$dir/host_ed25519.pub"
ssh-keygen -q -t ed25519 -N '' -C "commchar emulated hosts" -f "$dir/id_ed25519"
ssh-keygen -q -t ed25519 -N '' -C "commchar emulated host key" -f "$dir/host_ed25519"
cp "$dir/id_ed25519.pub" "$dir/authorized_keys"
chmod 600 "$dir/authorized_keys"

cat > "$dir/ssh_config" <<EOF
Host *
  User root
  IdentityFile $dir/id_ed25519
  IdentitiesOnly yes
  StrictHostKeyChecking no
  UserKnownHostsFile /dev/null
  BatchMode yes
  ConnectTimeout 5
  LogLevel ERROR
EOF
# Both launchers take one program as their remote shell; it must be called "ssh" for Open MPI.
cat > "$dir/ssh" <<EOF
#!/bin/sh
exec ssh -F $dir/ssh_config "\$@"
EOF
chmod 755 "$dir/ssh"

cores=$(nproc)
: > "$dir/hostfile"
: > "$dir/hosts"
for i in $(seq "$hosts"); do
  ns="cc$tag-h$i"
  name="cchost$i-$tag"
  address="$net.$((i + 1))"
  ip netns add "$ns"
  ip link add "cc${tag}v$i" type veth peer name "cc${tag}p$i" netns "$ns"
  ip link set "cc${tag}v$i" master "$bridge" up
  ip -n "$ns" link set "cc${tag}p$i" name eth0
  ip -n "$ns" addr add "$address/24" dev eth0
  ip -n "$ns" link set lo up
  ip -n "$ns" link set eth0 up
  ip -n "$ns" route add default via "$net.1"
  # The host's link, both ways: what it sends and what it receives pass at RATE. The
  # bucket holds 4 ms at 1 Gbit/s: with less, a loaded machine's late timers idle the
  # link (a 64 KiB bucket gave 57 MB/s of 125). A full bucket lets a message's first
  # 512 KiB through at once, which moves t(n) down by a constant and leaves the slope,
  # the asymptotic bandwidth, alone for messages above 512 KiB.
  ip netns exec "$ns" tc qdisc add dev eth0 root tbf rate "$rate" burst 512kb latency 50ms
  tc qdisc add dev "cc${tag}v$i" root tbf rate "$rate" burst 512kb latency 50ms

  cat > "$dir/sshd_config-h$i" <<EOF
ListenAddress $address
Port 22
HostKey $dir/host_ed25519
PidFile $dir/sshd-h$i.pid
AuthorizedKeysFile $dir/authorized_keys
PermitRootLogin prohibit-password
PasswordAuthentication no
KbdInteractiveAuthentication no
UsePAM no
StrictModes no
AcceptEnv *
LogLevel ERROR
EOF
  ip netns exec "$ns" unshare --uts -- sh -c "hostname $name && exec /usr/sbin/sshd -f $dir/sshd_config-h$i -E $dir/sshd-h$i.log" \
    || die "sshd did not start on $address (see $dir/sshd-h$i.log)"
  echo "$address slots=$cores" >> "$dir/hostfile"
  echo "$address $name $ns" >> "$dir/hosts"
done

# sshd forks into the background; wait until each answers a command.
for i in $(seq "$hosts"); do
  address="$net.$((i + 1))"
  ok=0
  for _ in $(seq 50); do
    if "$dir/ssh" "$address" true 2>/dev/null; then ok=1; break; fi
    sleep 0.1
  done
  [ $ok = 1 ] || die "ssh to emulated host $address does not answer (see $dir/sshd-h$i.log)"
done

cat > "$dir/env" <<EOF
OMPI_MCA_plm_rsh_agent=$dir/ssh
OMPI_MCA_btl_tcp_if_include=$net.0/24
OMPI_MCA_oob_tcp_if_include=$net.0/24
HYDRA_LAUNCHER=ssh
HYDRA_LAUNCHER_EXEC=$dir/ssh
HYDRA_IFACE=$bridge
UCX_TLS=tcp
UCX_NET_DEVICES=eth0
EOF
echo "emulated-hosts: $hosts hosts on $net.0/24 at $rate, in $dir"
