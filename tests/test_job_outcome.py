"""The pure verdict on a measurement job's end (commchar.measure.job_outcome.classify)."""

from __future__ import annotations

import signal
from typing import Any

import pytest

from commchar.measure.job_outcome import JobEnd, Verdict, classify

POINTS = ["a", "b", "c"]


def end(**kw: Any) -> JobEnd[str]:
    base: dict[str, Any] = dict(points=POINTS, stored=set(), in_flight=None, outcome="ended", kernel_error="",
                exit_status=0, stderr_tail="", across_hosts=None, timeout_s=60.0)
    return JobEnd(**{**base, **kw})


@pytest.mark.parametrize("outcome", ["ended", "measured", "lingered"])
def test_every_point_stored_is_a_success(outcome: str):
    assert classify(end(stored=set(POINTS), outcome=outcome, exit_status=-9)) == Verdict()


def test_a_job_that_measured_nothing_is_a_launch_error():
    got = classify(end(exit_status=1, stderr_tail="mpirun: not found"))
    assert got == Verdict(launch_error="crash: job exited with exit code 1: mpirun: not found")
    assert classify(end(outcome="timeout", exit_status=-int(signal.SIGTERM), timeout_s=5)) == \
        Verdict(launch_error="timeout: no output for 5 s: killed")


def test_the_point_in_flight_fails_with_the_kernels_own_error_first():
    got = classify(end(stored={"a"}, in_flight="b", kernel_error="MPI_Bcast failed", exit_status=1,
                       stderr_tail="noise"))
    assert got == Verdict(failed="b", kind="crash", reason="MPI_Bcast failed")


def test_a_job_ending_between_points_fails_the_next_one():
    got = classify(end(stored={"a"}, exit_status=1))
    assert got.failed == "b" and got.kind == "crash" and got.launch_error is None


def test_hosts_that_cannot_reach_each_other_are_the_cause():
    got = classify(end(stored={"a"}, in_flight="b", exit_status=1, stderr_tail="x",
                       across_hosts="host n2 unreachable"))
    assert got.reason == "host n2 unreachable"
    got = classify(end(stored={"a"}, in_flight="b", outcome="timeout", across_hosts="ssh hangs"))
    assert got == Verdict(failed="b", kind="timeout", reason="no output for 60 s: killed (ssh hangs)")


def test_misplaced_ranks_and_a_failure_on_the_way_out():
    assert classify(end(outcome="misplaced", kernel_error="ranks on one host")) == \
        Verdict(launch_error="placement: ranks on one host")
    # every point stored, then killed for silence: nothing to record
    assert classify(end(stored=set(POINTS), outcome="timeout")) == Verdict()


def test_a_launch_that_ssh_could_not_make_is_a_launch_error_naming_the_host():
    got = classify(end(outcome="unreachable", exit_status=-int(signal.SIGTERM),
                       across_hosts="host n2: unreachable (no route to host)"))
    assert got == Verdict(launch_error="host n2: unreachable (no route to host): stopped at launch")
