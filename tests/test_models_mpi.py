"""Models against real measurements: jobs launched by `commchar run` with real mpirun."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from commchar.models import LogGPModel, fit_points
from commchar.models.validation import holdout_errors
from commchar.store import Store

pytestmark = pytest.mark.mpi

COMMCHAR = [sys.executable, "-m", "commchar"]
RNDV_SIZES = [2**k for k in range(10, 19)]  # 1 KiB .. 256 KiB, the runner's "1K:256K"


def commchar_run(db: Path, library: str, ops: str, sizes: str, np_: str, *env: str,
                 max_time: str = "0.1") -> None:
    cmd = [*COMMCHAR, "run", "--library", library, "--ops", ops, "--sizes", sizes, "--np", np_,
           "--db", str(db), "--max-time", max_time]
    for item in env:
        cmd += ["--env", item]
    proc = subprocess.run(cmd, capture_output=True, text=True, timeout=900,
                          env={**os.environ, "COLUMNS": "120"})
    assert proc.returncode == 0, proc.stderr[-2000:]


# Open MPI's shared-memory BTL (vader) returns an eager fragment only when the
# receiver polls, so its sends wait for a late receiver from 512 B whatever the
# eager limit; over the tcp BTL the eager limit is the rendezvous threshold.
KNOBS = [
    ("openmpi", ("OMPI_MCA_btl=self,tcp", "OMPI_MCA_btl_tcp_eager_limit={}"), 8192),
    ("openmpi", ("OMPI_MCA_btl=self,tcp", "OMPI_MCA_btl_tcp_eager_limit={}"), 32768),
    ("mpich", ("UCX_RNDV_THRESH={}",), 8192),
    ("mpich", ("UCX_RNDV_THRESH={}",), 65536),
]


@pytest.mark.parametrize("library,env,limit", KNOBS, ids=[f"{k[0]}-{k[2]}" for k in KNOBS])
def test_detected_rendezvous_threshold_follows_the_library_knob(tmp_path, library, env, limit):
    db = tmp_path / "rndv.db"
    commchar_run(db, library, "rndv", "1K:256K", "2", *(e.format(limit) for e in env))
    with Store(db, create=False) as store:
        points = store.points()
    model = LogGPModel().fit(points)
    assert model.delay_us_ == 2000.0  # recorded by the kernel in each point's extra
    S = model.params_["S"]
    assert S is not None, [(p["n_bytes"], p["t_us"]) for p in points]
    # within one size step of the knob (the limit may or may not count the match header)
    assert abs(RNDV_SIZES.index(S) - RNDV_SIZES.index(limit)) <= 1, (S, limit)


@pytest.mark.slow
def test_held_out_sizes_and_p_are_predicted(tmp_path):
    db = tmp_path / "ho.db"
    for library in ("openmpi", "mpich"):
        commchar_run(db, library, "pingpong:send,bcast,allreduce:sum,allreduce:nop", "0:64K", "2,3,4",
                     max_time="0.03")
    with Store(db, create=False) as store:
        points = store.points()
    # p = 3, 4 are oversubscribed on this 2-core machine: predicting them needs them in the fit.
    result = holdout_errors(points, every=3, hold_p=[3], oversubscribed="include")
    print(json.dumps({k: result[k] for k in ("overall", "by_kind", "neighbour_floor")}))
    assert set(result["by_kind"]) == {"held-out sizes", "held-out p"}
    # The target is a median under 5%. On 2 cores shared with other jobs
    # (p = 3, 4 oversubscribed) the measurements themselves are noisier than
    # that, so the check is relative to a model-free interpolation between the
    # measured neighbours of each held-out size, and loose for held-out p.
    floor = result["neighbour_floor"]
    assert result["by_kind"]["held-out sizes"]["median"] <= max(0.05, 3 * floor), result["by_kind"]
    assert result["by_kind"]["held-out p"]["median"] < 0.6, result["by_kind"]
    # Default policy: the time-shared p are left out wherever p = 2 ran on dedicated cores,
    # so the model predicts the dedicated points it was fitted on.
    model = fit_points(points)
    over = {pt["p"] for pt in points if pt["oversubscribed"]}
    if over:
        assert model["provenance"]["oversubscribed_excluded"]
        for library in ("openmpi", "mpich"):
            bcast = model["libraries"][library]["operations"]["bcast"]
            assert bcast["p_range"][1] < min(over) and "oversubscribed_p" not in bcast
