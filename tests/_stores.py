"""Small stores written through the Store API, for tests that need no MPI."""

from __future__ import annotations

from pathlib import Path

from commchar.statistics import summarize
from commchar.store import Store


def store_with_points(path: Path, library: str = "openmpi", sizes: int = 40) -> None:
    """A store of one run: pingpong and bcast at p = 2 and 4, `sizes` sizes each."""
    with Store(path) as store:
        run_id = store.create_run("0.1.0", {"hostname": "test"}, {"np": [2, 4], "libraries": [library]})
        for p in (2, 4):
            job = store.create_job(run_id, library, p, ["mpirun"], {}, False)
            for op in ("pingpong", "bcast") if p == 2 else ("bcast",):
                for k in range(sizes):
                    n = 8 * k
                    samples = [1.0 + 0.01 * n * p + 0.001 * i for i in range(20)]
                    point = {"op": op, "variant": "send" if op == "pingpong" else "", "p": p,
                             "n_bytes": n, "samples_us": samples, "valid": True, "extra": {}}
                    store.add_point(run_id, job, library, point, summarize(samples),
                                    oversubscribed=False, ci_rel=0.001)
        store.set_run_status(run_id, "complete")
