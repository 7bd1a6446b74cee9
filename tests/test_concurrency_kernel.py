"""The kernel's mbw operation through `commchar run`: every pair verified, odd p, the
aggregate in `extra`, and a corrupted byte caught (real MPI jobs)."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

from commchar.store import Store

pytestmark = pytest.mark.mpi

FAST = ["--precision", "0.05", "--max-time", "0.1", "--timeout", "60", "--no-refine"]


def commchar(*args, env=None):
    result = subprocess.run([sys.executable, "-m", "commchar", *map(str, args)], capture_output=True,
                            text=True, timeout=600, env={**os.environ, **(env or {})})
    assert result.returncode == 0, result.stderr[-2000:]


def test_mbw_pairs_are_verified_at_even_and_odd_p_and_report_the_aggregate(tmp_path, mpi_libraries):
    db = tmp_path / "m.db"
    libs = ",".join(lib.name for lib in mpi_libraries)
    commchar("run", "--db", db, "--library", libs, "--ops", "mbw", "--sizes", "0,8,64K", "--np", "2,3",
             *FAST, env={"COMMCHAR_INJECT_FAULT": "corrupt@mbw:65536"})
    with Store(db, readonly=True) as store:
        points = store.points()
    for lib in mpi_libraries:
        mine = {(pt["p"], pt["n_bytes"]): pt for pt in points if pt["library"] == lib.name}
        assert sorted(mine) == [(p, n) for p in (2, 3) for n in (0, 8, 65536)], lib.name
        for (p, n), pt in mine.items():
            if n == 65536:  # the injected fault: one received byte flipped in the middle of a window
                assert not pt["valid"] and "expected" in pt["invalid_reason"], pt
                continue
            assert pt["valid"], pt
            extra = pt["extra"]
            assert extra["pairs"] == 1 and extra["window"] == 64
            assert pt["t_us"] > 0
            if n:
                assert extra["aggregate_mb_s"] == pytest.approx(n / pt["t_us"], rel=0.2)
            # the odd rank out and the receivers are not timed
            assert extra["rank_median_us"][1:] == [0] * (p - 1)
