"""Where ranks run: the hosts a job may use, how ranks are placed on them, and
whether the ranks of a measurement shared a host (on-node) or not (off-node).

A host file lists hosts with their slots; under Slurm the allocation does.
Ranks are placed `block` (fill a host's slots before the next host) or
`cyclic` (one rank per host in turn). Point-to-point operations involve ranks
0 and 1, so on several hosts they are measured twice: once with both ranks on
one host and once across hosts; collectives run once, placed by the run's
policy. What the kernel reports (MPI_Get_processor_name of every rank) is
checked against the plan, so a point's locality is what happened.
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass
from pathlib import Path

from commchar.errors import UsageError

POLICIES = ("block", "cyclic")
ON_NODE, OFF_NODE = "on-node", "off-node"
PAIR_KINDS = ("p2p", "loggp")  # operations between ranks 0 and 1 only


@dataclass(frozen=True)
class Host:
    name: str
    slots: int


def read_hostfile(path: Path) -> list[Host]:
    """The hosts of an Open MPI ("host slots=4") or MPICH ("host:4") host file, in order;
    a host named twice has its slots added."""
    try:
        text = path.read_text()
    except OSError as exc:
        raise UsageError(f"--hostfile: cannot read {path}: {exc.strerror}") from None
    except UnicodeDecodeError:
        raise UsageError(f"--hostfile: {path} is not a text file") from None
    slots: dict[str, int] = {}
    for number, line in enumerate(text.splitlines(), start=1):
        line = line.split("#", 1)[0].strip()
        if not line:
            continue
        match = re.search(r"slots\s*=\s*(\d+)", line) or re.search(r":(\d+)\s*$", line)
        name = re.split(r"[\s:]", line, maxsplit=1)[0]
        count = int(match.group(1)) if match else 1
        if not name or count < 1:
            raise UsageError(f"--hostfile: {path} line {number}: '{line}' is not 'host slots=N' or 'host:N'")
        slots[name] = slots.get(name, 0) + count
    return [Host(name, count) for name, count in slots.items()]


def slurm_hosts(environ: dict[str, str] | None = None) -> list[Host] | None:
    """The nodes of the Slurm allocation this process runs in (their names are not needed:
    srun places by count), or None outside one."""
    env = os.environ if environ is None else environ
    nodes = env.get("SLURM_JOB_NUM_NODES") or env.get("SLURM_NNODES")
    if not nodes or not nodes.isdigit():
        return None
    per_node: list[int] = []
    # SLURM_JOB_CPUS_PER_NODE: "2(x3),1" means three nodes of 2 and one of 1
    for part in (env.get("SLURM_JOB_CPUS_PER_NODE") or "").split(","):
        match = re.fullmatch(r"(\d+)(?:\(x(\d+)\))?", part.strip())
        if match:
            per_node += [int(match.group(1))] * int(match.group(2) or 1)
    if len(per_node) != int(nodes):
        per_node = [1] * int(nodes)
    return [Host(f"node{i}", slots) for i, slots in enumerate(per_node)]


def rank_hosts(hosts: list[Host], p: int, policy: str) -> list[str]:
    """The host of each of p ranks under `policy`, as mpirun and srun place them (past the
    slots, block wraps around the hosts again)."""
    if policy not in POLICIES:
        raise UsageError(f"--placement: '{policy}' is not one of {', '.join(POLICIES)}")
    if policy == "cyclic":
        return [hosts[r % len(hosts)].name for r in range(p)]
    order = [h.name for h in hosts for _ in range(h.slots)]
    return [order[r % len(order)] for r in range(p)]


def locality(kind: str, ranks: list[str]) -> str:
    """on-node when the ranks an operation involves share one host, else off-node."""
    involved = ranks[:2] if kind in PAIR_KINDS else ranks
    return ON_NODE if len(set(involved)) <= 1 else OFF_NODE


def hosts_used(ranks: list[str]) -> list[str]:
    """The distinct hosts of a placement, in first-use order."""
    return list(dict.fromkeys(ranks))


def other_policy(policy: str) -> str:
    return POLICIES[1 - POLICIES.index(policy)]
