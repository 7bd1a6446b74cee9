"""What a measurement job's end means for its points: a pure function of what the runner saw.

A job reads the kernel's lines until they end, the job stays silent past the timeout,
lingers after its last point, runs its ranks on the wrong hosts, or cannot start on a
host ssh did not reach (stopped before its first line). `classify` turns
that into one verdict: every point stored; a launch error (the job measured nothing,
and relaunching would fail the same way); or the one point that was in flight, to be
recorded as failed with a kind and a reason while the others are measured again.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Generic, Hashable, TypeVar

from commchar.measure.launch import describe_exit

P = TypeVar("P", bound=Hashable)

# how the reading of a job's lines ended
OUTCOMES = ("ended", "measured", "lingered", "timeout", "misplaced", "unreachable")


@dataclass(frozen=True)
class JobEnd(Generic[P]):
    """What the runner saw of one job."""

    points: list[P]  # what the job was to measure, in order
    stored: set[P]  # what it stored (or recorded as unsupported)
    in_flight: P | None  # the point the kernel began and did not finish
    outcome: str  # one of OUTCOMES
    kernel_error: str  # the kernel's own error line, or ""
    exit_status: int  # the job's exit status (negative: the signal that ended it)
    stderr_tail: str  # the last lines of its stderr
    across_hosts: str | None  # the cause when hosts could not reach each other
    timeout_s: float  # the silence a job is allowed


@dataclass(frozen=True)
class Verdict(Generic[P]):
    """The job's points: `failed` is recorded with `kind` and `reason`; a `launch_error`
    fails the job's remaining points without another launch."""

    failed: P | None = None
    kind: str | None = None
    reason: str | None = None
    launch_error: str | None = None


def _cause(end: JobEnd[P]) -> tuple[str, str]:
    """(kind, reason) of a job that did not finish its plan cleanly."""
    if end.outcome == "timeout":
        reason = f"no output for {end.timeout_s:g} s: killed"
        if end.across_hosts:
            reason += f" ({end.across_hosts})"  # Hydra waits forever for a host ssh never reached
        return "timeout", reason
    reason = end.kernel_error or f"job exited with {describe_exit(end.exit_status)}"
    if end.across_hosts:
        reason = end.across_hosts  # the cause, rather than what the library made of it
    elif end.stderr_tail and not end.kernel_error:
        reason += f": {end.stderr_tail}"
    return "crash", reason


def classify(end: JobEnd[P]) -> Verdict[P]:
    """The verdict on the job's points (see the module's doc)."""
    complete = not (set(end.points) - end.stored)
    if complete and end.outcome in ("ended", "measured", "lingered"):
        return Verdict()  # lingered: stopped after its last point (ranks across
        # hosts can hang in MPI_Finalize); everything it measured is stored
    if end.outcome == "misplaced":
        return Verdict(launch_error=f"placement: {end.kernel_error}")
    if end.outcome == "unreachable":
        return Verdict(launch_error=f"{end.across_hosts}: stopped at launch")
    kind, reason = _cause(end)
    in_flight = end.in_flight
    if in_flight is None and not end.stored:
        return Verdict(launch_error=f"{kind}: {reason}")
    if in_flight is None and complete:
        return Verdict()  # every point is stored: the job failed on its way out
    if in_flight is None:
        # Ended between points without finishing the plan: the next point never began.
        in_flight = next(pt for pt in end.points if pt not in end.stored)
    return Verdict(failed=in_flight, kind=kind, reason=reason)
