"""Failures that only happen across hosts, read from a job's stderr and said in one
line naming the host and the cause: ssh refused or unanswered, a host that cannot
be reached, a library that finds no network path between two hosts.

The launchers bury these under pages of advice (Open MPI) or a stack of
process-manager errors (Hydra); the one line ssh or the library wrote first is
the one that says what happened.
"""

from __future__ import annotations

import re

_SSH_CONNECT = re.compile(r"ssh: connect to host (\S+) port (\d+): (.+?)\s*$", re.M)
_SSH_RESOLVE = re.compile(r"ssh: Could not resolve hostname (\S+?):\s*(.+?)\s*$", re.M)
_SSH_DENIED = re.compile(r"(?:\S+@)?(\S+?): Permission denied \((.+?)\)", re.M)
_UCX_NO_TRANSPORT = re.compile(
    r"\[[\d.]+\] \[([^:\]]+):\d+:\d+\].*UCX\s+ERROR\s+(no usable transports/devices.*?)\s*$", re.M)
_OMPI_UNREACHABLE = re.compile(r"unable to reach each other for\s+MPI communications", re.M)
_OMPI_PROCESS_HOST = re.compile(r"Process \d+ \(\[\[[\d,]+\],\d+\]\) is on host: (\S+)")
_OMPI_BTLS = re.compile(r"BTLs attempted: (.+?)\s*$", re.M)
# MPICH's own stack when UCX found no device; UCX's line naming the host went to stdout
# and may be lost with the rank.
_MPICH_UCX_INIT = re.compile(r"MPIDI_UCX_init_local\(\d+\):.*MPIDI_UCX_init_local (.+?)\)\s*$", re.M)
_HYDRA_CONNECT = re.compile(r'unable to connect from "([^"]+)" to "([^"]+)" \(([^)]+)\)')

_SSH_CAUSES = {
    "Connection refused": "ssh connection refused (no sshd listening on port {port})",
    "No route to host": "unreachable (no route to host)",
    "Connection timed out": "unreachable (ssh connection timed out)",
    "Network is unreachable": "unreachable (network is unreachable)",
}


def ssh_failure(stderr: str) -> str | None:
    """One line naming the host ssh could not reach, resolve or log in to, or None: a
    job that shows one cannot start (Hydra then waits for that host for ever)."""
    match = _SSH_CONNECT.search(stderr)
    if match:
        host, port, cause = match.groups()
        said = _SSH_CAUSES.get(cause, f"ssh could not connect ({cause})").format(port=port)
        return f"host {host}: {said}"
    match = _SSH_RESOLVE.search(stderr)
    if match:
        return f"host {match.group(1)}: ssh cannot resolve the name ({match.group(2)})"
    match = _SSH_DENIED.search(stderr)
    if match:
        return f"host {match.group(1)}: ssh login refused (permission denied: {match.group(2)})"
    return None


def diagnose(stderr: str, hosts: list[str] | None = None) -> str | None:
    """One line naming the host and the cause of a cross-host failure in `stderr`, or
    None when it shows none. `hosts`: the job's hosts, named when the text names none."""
    said = ssh_failure(stderr)
    if said:
        return said
    match = _UCX_NO_TRANSPORT.search(stderr)
    if match:
        return (f"host {match.group(1)}: the library has no network transport to the other hosts"
                f" (UCX: {match.group(2)})")
    match = _MPICH_UCX_INIT.search(stderr)
    if match and hosts:
        return (f"host{'s' if len(hosts) > 1 else ''} {', '.join(hosts)}: the library has no network"
                f" transport to the other hosts (UCX could not open its device: {match.group(1)})")
    if _OMPI_UNREACHABLE.search(stderr):
        hosts = list(dict.fromkeys(_OMPI_PROCESS_HOST.findall(stderr)))
        btls = _OMPI_BTLS.search(stderr)
        tried = f" (transports tried: {btls.group(1)})" if btls else ""
        return (f"host{'s' if len(hosts) > 1 else ''} {' and '.join(hosts) or '?'}: Open MPI has no"
                f" transport between the hosts{tried}")
    match = _HYDRA_CONNECT.search(stderr)
    if match:
        return (f"host {match.group(1)}: cannot connect back to the launcher on {match.group(2)}"
                f" ({match.group(3)}; set HYDRA_IFACE to the interface the hosts reach)")
    return None
