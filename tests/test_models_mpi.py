"""Models against real measurements: jobs launched by `commchar run` with real mpirun."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from commchar.models import fit_points
from commchar.models.core_distance_policy import keep_one_state
from commchar.models.validation import holdout_errors
from commchar.store import Store

pytestmark = pytest.mark.mpi

COMMCHAR = [sys.executable, "-m", "commchar"]


def commchar_run(db: Path, library: str, ops: str, sizes: str, np_: str, *env: str,
                 max_time: str = "0.1", extra: tuple[str, ...] = ()) -> None:
    cmd = [*COMMCHAR, "run", "--library", library, "--ops", ops, "--sizes", sizes, "--np", np_,
           "--db", str(db), "--max-time", max_time, *extra]
    for item in env:
        cmd += ["--env", item]
    proc = subprocess.run(cmd, capture_output=True, text=True, timeout=900,
                          env={**os.environ, "COLUMNS": "120"})
    assert proc.returncode == 0, proc.stderr[-2000:]


# The knob set to a size that is not a power of two; refinement pins S to the byte.
# UCX switches to rendezvous at UCX_RNDV_THRESH itself. Open MPI's eager limit counts
# its header ("Maximum size (in bytes, including header) of short messages", ompi_info;
# ob1 sends eagerly up to btl_eager_limit - sizeof(mca_pml_ob1_hdr_t)): the header is
# 56 B on x86-64 (v4.1), the same for every limit, so S = limit - 55. Over the tcp BTL
# the eager limit is the rendezvous threshold; over vader (shared memory) a blocking
# send above ob1's 256-byte inline limit waits for the receiver whatever the limit
# (S = 257, see docs/models.md).
OB1_HEADER_BYTES = 56
TCP = "OMPI_MCA_btl=self,tcp"
KNOBS = [
    ("mpich", ("UCX_RNDV_THRESH={}",), 12000, 12000),
    ("openmpi", (TCP, "OMPI_MCA_btl_tcp_eager_limit={}"), 12000, 12000 - OB1_HEADER_BYTES + 1),
    ("openmpi", (TCP, "OMPI_MCA_btl_tcp_eager_limit={}"), 5000, 5000 - OB1_HEADER_BYTES + 1),
]


@pytest.mark.parametrize("library,env,limit,expected", KNOBS, ids=[f"{k[0]}-{k[2]}" for k in KNOBS])
def test_rendezvous_threshold_is_the_library_knob_to_the_byte(tmp_path, library, env, limit, expected):
    db = tmp_path / "rndv.db"
    commchar_run(db, library, "rndv", "1K:64K", "2", *(e.format(limit) for e in env),
                 extra=("--refine-budget", "300"))
    with Store(db, create=False) as store:
        points = store.points()
    assert any(p["refined"] for p in points) and not all(p["refined"] for p in points)
    model = fit_points(points)["libraries"][library]["loggp_partial"]
    assert model["receiver_delay_us"] == 200.0  # recorded by the kernel in each point's extra
    assert (model["S"], model["S_interval"]) == (expected, [expected, expected + 1]), \
        sorted((p["n_bytes"], round(p["t_us"])) for p in points)


def test_refinement_resumes_and_can_be_turned_off(tmp_path):
    """A budget too small to finish leaves S bracketed loosely; each --resume goes on
    from the stored points without measuring them again, until S is pinned."""
    knob = (TCP, f"OMPI_MCA_btl_tcp_eager_limit={12000}")
    off = tmp_path / "off.db"
    commchar_run(off, "openmpi", "rndv", "1K:64K", "2", *knob, extra=("--no-refine",))
    with Store(off, create=False) as store:
        points = store.points()
    assert not any(p["refined"] for p in points)
    assert fit_points(points)["libraries"]["openmpi"]["loggp_partial"]["S_interval"] == [8193, 16385]

    db = tmp_path / "resume.db"
    commchar_run(db, "openmpi", "rndv", "1K:64K", "2", *knob, extra=("--refine-budget", "0.5"))
    seen: dict[int, float] = {}
    for _ in range(6):
        with Store(db, create=False) as store:
            points = store.points()
        now = {p["point_id"]: p["t_us"] for p in points}
        assert {k: now[k] for k in seen} == seen  # nothing stored was measured again
        assert len(now) > len(seen)  # each invocation refined a round further
        seen = now
        interval = fit_points(points)["libraries"]["openmpi"]["loggp_partial"]["S_interval"]
        if interval[1] - interval[0] == 1:
            break
        proc = subprocess.run([*COMMCHAR, "run", "--db", str(db), "--resume", "1"],
                              capture_output=True, text=True, timeout=900)
        assert proc.returncode == 0, proc.stderr[-2000:]
    assert interval == [12000 - OB1_HEADER_BYTES + 1, 12000 - OB1_HEADER_BYTES + 2]


@pytest.mark.slow
def test_held_out_sizes_and_p_are_predicted(tmp_path):
    db = tmp_path / "ho.db"
    for library in ("openmpi", "mpich"):
        commchar_run(db, library, "pingpong:send,bcast,allreduce:sum,allreduce:nop", "0:64K", "2,3,4",
                     max_time="0.03")
    with Store(db, create=False) as store:
        points = store.points()
    # Held-out sizes are scored where the ranks have cores of their own (p = 2 here): a fit
    # that shares its collective laws with the time-shared p = 4 (milliseconds where p = 2
    # takes a microsecond) would score the scheduler, not the model. The target is a
    # median under 5%, checked against a model-free interpolation between the measured
    # neighbours of each held-out size, which says how noisy the points themselves are.
    sizes = holdout_errors(points, every=3, oversubscribed="exclude")
    print(json.dumps({k: sizes[k] for k in ("overall", "by_kind", "neighbour_floor")}))
    assert set(sizes["by_kind"]) == {"held-out sizes"}
    floor = sizes["neighbour_floor"]
    assert sizes["by_kind"]["held-out sizes"]["median"] <= max(0.05, 3 * floor), sizes["by_kind"]
    # p = 3, 4 are oversubscribed on this 2-core machine: predicting p = 3 needs p = 4 in the
    # fit, and time-shared cores make the check loose.
    by_p = holdout_errors(points, every=3, hold_p=[3], oversubscribed="include")
    print(json.dumps({k: by_p[k] for k in ("overall", "by_kind", "neighbour_floor")}))
    assert set(by_p["by_kind"]) == {"held-out sizes", "held-out p"}
    assert by_p["by_kind"]["held-out p"]["median"] < 0.6, by_p["by_kind"]
    # Default policy: the time-shared p are left out wherever p = 2 ran on dedicated cores,
    # so the model predicts the dedicated points it was fitted on.
    model = fit_points(points)
    over = {pt["p"] for pt in points if pt["oversubscribed"]}
    if over:
        assert model["provenance"]["oversubscribed_excluded"]
        for library in ("openmpi", "mpich"):
            bcast = model["libraries"][library]["operations"]["bcast"]
            assert bcast["p_range"][1] < min(over) and "oversubscribed_p" not in bcast


@pytest.mark.parametrize("library", ["mpich", "openmpi"])
def test_every_pingpong_mode_fits_its_own_measurements(tmp_path, library):
    """A default run of every ping-pong mode (default sizes and precision, refinement on): each
    model predicts its own measured medians with a median error under 3% and none off by
    10%, and the errors the fit stores say the same."""
    db = tmp_path / "p.db"
    commchar_run(db, library, "pingpong", "0:4M", "2", max_time="0.3",
                 extra=("--refine-budget", "8"))
    with Store(db, readonly=True) as store:
        points = store.points()
    model = fit_points(points, held_out_every=None)
    operations = model["libraries"][library]["operations"]
    # the points measured while the host held the cores in another state are another machine's:
    # the fit leaves them out (docs/method.md, "Where the ranks' cores are"), and so does this check
    kept = {id(pt) for pt in keep_one_state(points)[0]}
    modes = sorted(k for k in operations if k.startswith("pingpong:"))
    assert len(modes) >= 5, modes
    by_key: dict[str, list[dict]] = {}
    for pt in points:
        by_key.setdefault(f"{pt['op']}:{pt['variant']}", []).append(pt)
    import numpy as np

    from commchar.modelfile import ModelFile

    view = ModelFile.from_dict(model)
    for key in modes:
        pts = [pt for pt in by_key[key] if pt["valid"] and id(pt) in kept]
        spikes = {(o["n_bytes"], o["t_us"]) for o in operations[key]["fit"]["outliers"]}
        pts = [pt for pt in pts if (pt["n_bytes"], pt["t_us"]) not in spikes]
        err = np.array([abs(view.time(library, key, pt["n_bytes"], 2).t_us - pt["t_us"]) / pt["t_us"]
                        for pt in pts])
        worst = pts[int(np.argmax(err))]["n_bytes"]
        assert np.median(err) < 0.03, (key, float(np.median(err)), operations[key]["fit"]["selection"])
        assert err.max() <= 0.10, (key, float(err.max()), worst, operations[key]["fit"]["selection"])
        stored = operations[key]["errors"]["in_sample"]
        assert stored["points"] == err.size and stored["max"] == pytest.approx(err.max(), rel=1e-6)
        # the replay's per-message costs come from the means
        assert "mean" in operations[key]
    # the regimes were chosen by the points' own noise (their CIs), not by BIC; on a busy machine
    # a partition may miss a size's CI by a little ("noise, closest"), and the bars above still hold
    rule = model["libraries"][library]["operations"]["pingpong:send"]["fit"]["selection"]["rule"]
    assert rule in ("noise", "noise, closest"), rule
