"""The gap between two segments that holds the library's rendezvous threshold S is closed at S
for the series whose messages are n bytes (no MPI: synthetic points through fit_points)."""

from __future__ import annotations

import pytest

from commchar.errors import UsageError
from commchar.measure.operations import OPERATIONS
from commchar.modelfile import ModelFile
from commchar.models import fit_points
from commchar.models.collective import CollectiveModel
from commchar.models.regimes import SegmentedHockneyModel
from commchar.segment_gaps import close_at
from commchar.vocabulary import COLLECTIVES, SPLIT_COLLECTIVES, switches_at_threshold

S = 8256  # MPICH's first rendezvous size here: 8192 B of payload and a 64 B header
SIZES = [1024, 2048, 4096, 8192, 16384, 32768, 65536]  # no size between 8192 and 16384


def _time(n: int) -> float:
    """Eager below S, a rendezvous's handshake from S on."""
    return 0.5 + 1e-4 * n if n < S else 2.0 + 1.5e-4 * n


def _point(op: str, variant: str, n: int, t: float, **extra: float) -> dict:
    return {"library": "lib", "op": op, "variant": variant, "p": 2, "n_bytes": n, "t_us": t,
            "ci_lo_us": 0.995 * t, "ci_hi_us": 1.005 * t, "reps": 100, "valid": True,
            "oversubscribed": False, "extra": dict(extra)}


def _points(probe: bool) -> list[dict]:
    pts = [_point(op, variant, n, _time(n)) for op, variant in
           (("pingpong", "send"), ("exchange", "self"), ("put", "fence"), ("alltoall", ""), ("gather", ""))
           for n in SIZES]
    if probe:  # the rndv probe: the send returns at once below S, waits for the late receiver from S on
        pts += [_point("rndv", "", n, 0.3 if n < S else 200.5, delay_us=200.0) for n in (4096, S - 1, S, 16384)]
    return pts


def test_close_at_ends_the_lower_segment_before_the_threshold_and_starts_the_upper_at_it():
    segments = [{"n_min": 0.0, "n_max": 8192.0}, {"n_min": 10033.0, "n_max": 65536.0}]
    assert close_at(segments, (8252, 8266)) == (0, 8251, 8266)
    assert [(s["n_min"], s["n_max"]) for s in segments] == [(0.0, 8265.0), (8266.0, 65536.0)]
    # the upper segment starts before the bracket's high end: the switch is its first size
    segments = [{"n_min": 0.0, "n_max": 8192.0}, {"n_min": 8260.0, "n_max": 65536.0}]
    assert close_at(segments, (8252, 8266)) == (0, 8251, 8260)
    assert segments[0]["n_max"] == 8259.0
    # no gap holds it: a segment covers the threshold, or the gap lies elsewhere
    for bounds in ([(0.0, 16384.0), (32768.0, 65536.0)], [(0.0, 1024.0), (2048.0, 4096.0)]):
        segments = [{"n_min": a, "n_max": b} for a, b in bounds]
        assert close_at(segments, (8256, 8256)) is None
        assert [(s["n_min"], s["n_max"]) for s in segments] == bounds


def test_a_size_past_the_threshold_is_priced_by_the_rendezvous_segment_where_the_probe_found_it():
    closed, open_gap = (ModelFile.from_dict(fit_points(_points(probe))) for probe in (True, False))
    for key in ("pingpong:send", "alltoall"):
        # 9000 B lies nearer 8192 than 16384 B: without S it took the eager line (held within the
        # gap's ends); with S it is a rendezvous, as measured
        assert closed.time("lib", key, 9000, 2).t_us == pytest.approx(_time(9000), rel=0.02), key
        assert open_gap.time("lib", key, 9000, 2).t_us < 0.5 * _time(9000), key
        assert closed.time("lib", key, S - 1, 2).t_us == pytest.approx(_time(S - 1), rel=0.02), key
    op = fit_points(_points(True))["libraries"]["lib"]["operations"]["pingpong:send"]
    # the file says so: the eager segment ends at S - 1, the rendezvous one starts at S, and the
    # breakpoint is the probe's bracket (the last size that did not wait, the first that did)
    assert [(s["n_min"], s["n_max"]) for s in op["segments"]] == [(1024, S - 1), (S, None)]
    assert op["breakpoints"] == [{"after": S - 1, "at": S}]
    # the series whose messages are not n bytes keep the nearer bound: a message to oneself,
    # one-sided operations, a collective whose n is split among the ranks
    for key in ("exchange:self", "put:fence", "gather"):
        assert closed.time("lib", key, 9000, 2).t_us == pytest.approx(open_gap.time("lib", key, 9000, 2).t_us), key


def test_the_collectives_that_split_n_among_the_ranks_are_those_measured_per_rank():
    per_rank = {name for name, op in OPERATIONS.items()
                if op.kind == "collective" and op.unit in ("per_rank", "double_per_rank") and op.transport == "mpi"}
    assert set(SPLIT_COLLECTIVES) == per_rank
    assert not switches_at_threshold("bcast", "", [2, 4])
    assert switches_at_threshold("bcast", "", [2])
    assert not switches_at_threshold("allgather", "", [2])
    assert switches_at_threshold("pingpong", "ssend", [2]) and not switches_at_threshold("exchange", "self", [2])
    assert set(SPLIT_COLLECTIVES) <= set(COLLECTIVES)


@pytest.mark.parametrize("threshold", [(0, 8), (9, 8), (8.5, 9), "8256", (True, 8)])
def test_a_threshold_that_is_no_bracket_of_sizes_is_refused(threshold):
    for estimator in (SegmentedHockneyModel(threshold=threshold), CollectiveModel(threshold=threshold)):
        with pytest.raises(UsageError, match="threshold"):
            estimator.fit(*([[1, 2, 4], [1.0, 1.1, 1.2]] if isinstance(estimator, SegmentedHockneyModel)
                            else [[1, 2, 4], [2, 2, 2], [1.0, 1.1, 1.2]]))


def test_no_segment_holds_sizes_on_both_sides_of_the_threshold():
    # one straight line through every size, eager and rendezvous alike (Open MPI's ping-pong at
    # 256 and 512 B lay on one): without S one segment fits it; with S the fit splits it there
    n = [16, 32, 64, 128, 256, 512, 1024, 2048]
    t = [0.15 + 1e-4 * x for x in n]
    noise = [0.005] * len(n)
    plain = SegmentedHockneyModel(min_sizes=1).fit(n, t, noise=noise)
    assert len(plain.segments_) == 1
    split = SegmentedHockneyModel(min_sizes=1, threshold=(257, 257)).fit(n, t, noise=noise)
    assert [(s["n_min"], s["n_max"]) for s in split.segments_] == [(16, 256), (257, 2048)]
    assert split.breakpoints_ == [{"after": 256, "at": 257}]
    assert split.predict([256, 512]) == pytest.approx([0.15 + 0.0256, 0.15 + 0.0512])
    # sizes inside the bracket belong to either side: only those below its low end and those
    # from its high end on are kept apart
    wide = SegmentedHockneyModel(min_sizes=1, threshold=(200, 600)).fit(n, t, noise=noise)
    assert all(not (s["n_min"] < 200 and s["n_max"] >= 600) for s in wide.segments_)
