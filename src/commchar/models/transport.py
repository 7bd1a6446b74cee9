"""What a library's transport does with the bytes of a rendezvous message.

LogGOPS charges the per-byte overhead O at both ends of every message. On one
host both Debian libraries move a rendezvous message with a single copy made
by the receiver, so the sender's CPU is free while the bytes move:

- Open MPI 4.1, btl/vader: above the eager limit the receiver reads the
  sender's buffer with process_vm_readv (`btl_vader_single_copy_mechanism`
  "cma", the default wherever ptrace permits it), then returns a FIN.
- MPICH 4.0, ch4:ucx: UCX's rendezvous over shared memory uses the cma
  transport's get_zcopy, again a read by the receiver.

Between hosts over TCP both libraries copy at each end, as LogGOPS assumes.
The measurement that shows it: a traced program whose non-blocking 1 MiB
exchange overlaps computation was over-predicted by 20% in that phase with
copies at both ends and by 2 to 4% with the receiver's alone
(docs/models.md, "Who copies a rendezvous message").
"""

from __future__ import annotations

from commchar.store.locality import split_label

SINGLE_COPY_ON_NODE = ("openmpi", "mpich")


def rendezvous_copy(label: str) -> tuple[str, str | None]:
    """('receiver' | 'both', a note saying why) for a fitted library such as
    "mpich" (one host) or "mpich off-node" (ranks on different hosts)."""
    library, locality = split_label(label)
    if locality == "off-node":
        return "both", "ranks on different hosts: rendezvous bytes copied at both ends (TCP)"
    if library in SINGLE_COPY_ON_NODE:
        return "receiver", None
    return "both", f"{library}: no single-copy rule known, rendezvous bytes charged at both ends"
