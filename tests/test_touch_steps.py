"""bench/touch_steps.py: on stores whose first-touch probe went past 4 MiB, the cost per byte
at each size and what the adaptive rule's extension asks for after 4 and 16 MiB."""

from __future__ import annotations

import sys

from commchar.statistics import summarize
from commchar.store import Store

from test_adaptive_oracle import load

MiB = 1 << 20


def _store(path, per_byte_at_4m: float = 4e-4) -> None:
    """One grid-like run of the first-touch probe, 64 KiB to 64 MiB: resident 0.1 ns a byte,
    a first touch 0.4 ns a byte more at every size but 4 MiB (`per_byte_at_4m` us a byte)."""
    with Store(path) as store:
        run_id = store.create_run("0.1.0", {"hostname": "test"}, {"np": [2], "libraries": ["lib"]})
        job = store.create_job(run_id, "lib", 2, ["mpirun"], {}, False)
        for k in range(6):
            n = 64 * 1024 * 4 ** k
            extra = per_byte_at_4m if n == 4 * MiB else 4e-4
            for variant, t in (("resident", 1e-4 * n), ("fresh", (1e-4 + extra) * n)):
                samples = [t * (1 + 1e-4 * i) for i in range(10)]
                point = {"op": "touch", "variant": variant, "p": 2, "n_bytes": n, "samples_us": samples,
                         "valid": True, "extra": {}}
                store.add_point(run_id, job, "lib", point, summarize(samples), oversubscribed=False,
                                ci_rel=0.001)
        store.set_run_status(run_id, "complete")


def _main(bench, *argv: str) -> int:
    saved = sys.argv
    try:
        sys.argv = ["touch_steps", *argv]
        return bench.main()
    finally:
        sys.argv = saved


def test_a_settled_first_touch_asks_for_nothing_past_4_mib(tmp_path, capsys):
    bench = load("touch_steps")
    _store(tmp_path / "settled.db")
    assert _main(bench, str(tmp_path / "settled.db")) == 0
    out = capsys.readouterr().out
    assert "touch: ns a byte at 1 MiB 0.400, 4 MiB 0.400, 16 MiB 0.400, 64 MiB 0.400" in out
    assert ("asks after 4 MiB, default floor: nothing, after 4 MiB, largest floor: nothing,"
            " after 16 MiB, default floor: nothing, after 16 MiB, largest floor: nothing") in out
    assert ("over 1 runs: after 4 MiB the rule asks for 16 MiB in 0 (default floor) and 0 (largest floor);"
            " the cost per byte at 16 MiB against 4 MiB: median +0.0%") in out


def test_a_first_touch_still_moving_at_4_mib_asks_for_16(tmp_path, capsys):
    bench = load("touch_steps")
    _store(tmp_path / "moving.db", per_byte_at_4m=6e-4)  # 0.4, 0.6, 0.4 ns a byte at 1, 4, 16 MiB
    assert _main(bench, str(tmp_path / "moving.db")) == 0
    out = capsys.readouterr().out
    assert "after 4 MiB, default floor: 16 MiB, after 4 MiB, largest floor: 16 MiB" in out
    assert "asks for 16 MiB in 1 (default floor) and 1 (largest floor)" in out
    assert "median -33.3%" in out


def test_a_missing_store_is_one_line_and_exit_2(tmp_path, capsys):
    bench = load("touch_steps")
    assert _main(bench, str(tmp_path / "none.db")) == 2
    assert capsys.readouterr().err.strip() == f"touch_steps: no database {tmp_path / 'none.db'}"
