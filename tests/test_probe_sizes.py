"""bench/probe_sizes.py: on a store whose probes went past the adaptive rule's sizes, LogGP's G
from every size and from those up to 1 MiB, and what the first-touch extension asks for."""

from __future__ import annotations

import re
import sys

from commchar.statistics import summarize
from commchar.store import Store

from test_adaptive_oracle import load

MiB = 1 << 20
SIZES = [0, 1, 16, 256, 4096, 65536, MiB, 4 * MiB]


def _store(path, slope_above_1m: float, touch_at_4m: float = 4e-4) -> None:
    """One grid-like run of the probes: LogGP's gap 100 ps a byte up to 1 MiB, `slope_above_1m`
    us a byte beyond; a first touch costing 0.4 ns a byte at every size but 4 MiB
    (`touch_at_4m` us a byte there)."""
    with Store(path) as store:
        run_id = store.create_run("0.1.0", {"hostname": "test"}, {"np": [2], "libraries": ["lib"]})
        job = store.create_job(run_id, "lib", 2, ["mpirun"], {}, False)

        def add(op: str, variant: str, n: int, t: float, extra: dict) -> None:
            samples = [t * (1 + 1e-4 * i) for i in range(10)]
            point = {"op": op, "variant": variant, "p": 2, "n_bytes": n, "samples_us": samples,
                     "valid": True, "extra": extra}
            store.add_point(run_id, job, "lib", point, summarize(samples), oversubscribed=False, ci_rel=0.001)

        for n in SIZES:
            gap = 0.1 + 1e-4 * min(n, MiB) + slope_above_1m * max(0, n - MiB)
            add("loggp", "", n, 0.2 + 1e-4 * n, {"prtt1_us": 0.4 + 2e-4 * n, "gap_us": gap,
                                                  "o_s_us": 0.1, "o_r_us": 0.1})
            add("rndv", "", n, 500.0 if n >= 65536 else 0.3, {"delay_us": 500.0})
        for k in range(6):
            n = 64 * 1024 * 4 ** k
            add("touch", "resident", n, 1e-4 * n, {})
            add("touch", "fresh", n, (1e-4 + (touch_at_4m if n == 4 * MiB else 4e-4)) * n, {})
        store.set_run_status(run_id, "complete")


def test_the_probes_sizes_beyond_the_rule_are_reported(tmp_path, capsys):
    bench = load("probe_sizes")
    _store(tmp_path / "same.db", 1e-4)  # G the same above 1 MiB
    _store(tmp_path / "steeper.db", 2e-4)  # twice as steep above 1 MiB
    argv = sys.argv
    try:
        sys.argv = ["probe_sizes", str(tmp_path / "same.db"), str(tmp_path / "steeper.db"),
                    "--reference", str(tmp_path / "same.db")]
        assert bench.main() == 0
    finally:
        sys.argv = argv
    out = capsys.readouterr().out
    same, steeper = re.findall(r"G ([\d.]+) ps/B from every size, ([\d.]+) up to 1 MiB", out)
    assert float(same[0]) == float(same[1]) == 100.0
    assert float(steeper[0]) > 105.0 and float(steeper[1]) == 100.0  # the 4 MiB point's slope, left out
    # a first touch settled at 0.4 ns a byte: nothing more asked for, at either floor
    assert out.count("touch: ns a byte at 1 MiB 0.400, 4 MiB 0.400, 16 MiB 0.400, 64 MiB 0.400") == 2
    assert out.count("asks after 4 MiB, default floor: nothing, after 4 MiB, largest floor: nothing,"
                     " after 16 MiB, default floor: nothing, after 16 MiB, largest floor: nothing") == 2
    assert re.search(r"over 2 runs: from every size median [\d.]+%, worst [\d.]+%; up to 1 MiB median 0\.0%", out)


def test_a_missing_store_is_one_line_and_exit_2(tmp_path, capsys):
    bench = load("probe_sizes")
    argv = sys.argv
    try:
        sys.argv = ["probe_sizes", str(tmp_path / "none.db")]
        assert bench.main() == 2
    finally:
        sys.argv = argv
    assert capsys.readouterr().err.strip() == f"probe_sizes: no database {tmp_path / 'none.db'}"


def test_a_first_touch_still_moving_at_4_mib_asks_for_16(tmp_path, capsys):
    bench = load("probe_sizes")
    _store(tmp_path / "moving.db", 1e-4, touch_at_4m=6e-4)  # 0.4, 0.6, 0.4 ns a byte at 1, 4, 16 MiB
    argv = sys.argv
    try:
        sys.argv = ["probe_sizes", str(tmp_path / "moving.db")]
        assert bench.main() == 0
    finally:
        sys.argv = argv
    out = capsys.readouterr().out
    assert "after 4 MiB, default floor: 16 MiB, after 4 MiB, largest floor: 16 MiB" in out
