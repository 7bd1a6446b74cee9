"""Copies once a rank's message buffers outgrow its caches (commchar.models.copy_footprint)
from `footprint` points: the fit, its model-file field and the report's finding; and under
real mpirun the kernel's probe and the tracer's buffer_bytes, which the replay charges by."""

from __future__ import annotations

import json
import sqlite3
import subprocess
import sys
from contextlib import closing

import pytest

from commchar.cli import main
from commchar.modelfile.model import ModelError
from commchar.modelfile.schema import _validate_copy_footprint
from commchar.models.copy_footprint import copy_footprint_section
from commchar.store import Store
from commchar.store.traces import extract_trace, traces
from commchar.trace import read_trace
from _model_data import loggp_findings

KIB, MIB = 1024, 1024 * 1024
N = 256 * KIB
STRIDE = 2 * (N + 4096)  # one pair of buffers, each on pages of its own past its offset
FOOTPRINTS = {"x4": 4 * STRIDE, "x16": 16 * STRIDE, "x64": 64 * STRIDE}


def _points(times: dict[str, float], exchange: float = 20.0) -> tuple[list[dict], list[dict]]:
    """The footprint points of `times` (us by variant) at 256 KiB, and the one-pair exchange."""
    footprint = [{"op": "footprint", "variant": v, "n_bytes": N, "t_us": t, "t_mean_us": t, "valid": True,
                  "cache_region_bytes": FOOTPRINTS[v]} for v, t in times.items()]
    pair = [{"op": "exchange", "variant": "sendrecv", "n_bytes": N, "t_us": exchange, "t_mean_us": exchange,
             "valid": True}]
    return footprint, pair


def _finding(section: dict | None) -> list[str]:
    return loggp_findings("copy_footprint", section, "cycles through many buffers")


def test_the_cost_per_byte_by_footprint_and_its_finding():
    skipped: list[str] = []
    section = copy_footprint_section(*_points({"x4": 21.6, "x16": 24.0, "x64": 54.0}), skipped, "lib")
    assert skipped == [] and section is not None and section["statistic"] == "mean"
    (size,) = section["by_size"]
    # 0 at the one-pair exchange's own buffers, then (t - 20 us) / n at each footprint
    assert size["n"] == N and size["steps"][0] == [2 * N, 0.0]
    assert [f for f, _ in size["steps"][1:]] == sorted(FOOTPRINTS.values())
    for (f, per_byte), t in zip(size["steps"][1:], (21.6, 24.0, 54.0)):
        assert per_byte * N == pytest.approx(t - 20.0, rel=1e-4)
    assert [row["variant"] for row in section["sizes"]] == ["x4", "x16", "x64"]
    _validate_copy_footprint(section, "libraries.lib.loggp.copy_footprint")
    (text,) = _finding(section)
    assert "an exchange of 256 KiB" in text and "2.70 times" in text and "1.08 times" in text
    assert "`commchar replay` charges" in text
    # a machine whose caches hold every probe's buffers says nothing
    assert _finding(copy_footprint_section(*_points({"x4": 20.1, "x16": 20.4, "x64": 21.0}), [], "lib")) == []


def test_a_noisy_point_is_pooled_with_its_neighbour_not_carried_to_every_larger_footprint():
    # 8 MiB measured quicker than 2 MiB: the increasing fit pools the two, and 32 MiB keeps its own
    section = copy_footprint_section(*_points({"x4": 24.0, "x16": 22.0, "x64": 54.0}), [], "lib")
    assert section is not None
    values = [v for _, v in section["by_size"][0]["steps"]]
    assert values[0] == 0.0 and values == sorted(values)
    assert values[1] == pytest.approx(values[2], rel=1e-6)
    assert values[1] * N == pytest.approx(3.0, rel=1e-4)
    assert values[3] * N == pytest.approx(34.0, rel=1e-4)
    # a point quicker than the one-pair exchange costs nothing, never less
    quicker = copy_footprint_section(*_points({"x4": 19.0}), [], "lib")
    assert quicker is not None and quicker["by_size"][0]["steps"] == [[2 * N, 0.0], [FOOTPRINTS["x4"], 0.0]]


def test_each_size_keeps_its_own_curve():
    footprint, pair = [], []
    for n, base, extra in ((64 * KIB, 6.0, 1.0), (N, 20.0, 2.0)):
        pair.append({"op": "exchange", "variant": "sendrecv", "n_bytes": n, "t_us": base, "t_mean_us": base,
                     "valid": True})
        for k, variant in ((4, "x4"), (16, "x16"), (64, "x64")):
            t = base + extra * k / 4
            footprint.append({"op": "footprint", "variant": variant, "n_bytes": n, "t_us": t, "t_mean_us": t,
                              "valid": True, "cache_region_bytes": 2 * k * n})
    section = copy_footprint_section(footprint, pair, [], "lib")
    assert section is not None
    assert [size["n"] for size in section["by_size"]] == [64 * KIB, N]
    for size, extra in zip(section["by_size"], (1.0, 2.0)):
        n = size["n"]
        assert size["steps"] == [[2 * n, 0.0]] + [[2 * k * n, pytest.approx(extra * k / 4 / n, rel=1e-4)]
                                                  for k in (4, 16, 64)]


@pytest.mark.parametrize("by_size", [[], [{"n": 8, "steps": [[2 * MIB, 1e-6], [MIB, 2e-6]]}],
                                     [{"n": 8, "steps": [[MIB, -1e-6]]}], [{"n": 8, "steps": []}],
                                     [{"n": 8, "steps": [[MIB, 0.0]]}, {"n": 4, "steps": [[MIB, 0.0]]}], "x"])
def test_a_malformed_section_is_refused(by_size):
    with pytest.raises(ModelError, match="copy_footprint.by_size"):
        _validate_copy_footprint({"statistic": "mean", "by_size": by_size}, "libraries.lib.loggp.copy_footprint")


def test_the_exchange_the_model_charges_is_the_baseline_and_the_loop_beside_them_stands_in():
    # footprint's own one-pair loop fell high (its buffers' placement): the probe the model's
    # exchange is fitted from is the baseline, so the replay's charge at 2 MiB is the 21.6 us
    # measured there, not the exchange's 20 us
    footprint, pair = _points({"x4": 21.6}, exchange=20.0)
    footprint.append({"op": "footprint", "variant": "x1", "n_bytes": N, "t_us": 25.0, "t_mean_us": 25.0,
                      "valid": True, "cache_region_bytes": STRIDE})
    section = copy_footprint_section(footprint, pair, [], "lib")
    assert section is not None and [row["variant"] for row in section["sizes"]] == ["x4"]
    assert section["sizes"][0]["one_pair_us"] == 20.0
    assert section["by_size"][0]["steps"][1][1] * N == pytest.approx(1.6, rel=1e-4)
    # a run without the exchange at that size: the loop over one pair beside them
    section = copy_footprint_section(footprint, [], [], "lib")
    assert section is not None and section["sizes"][0]["one_pair_us"] == 25.0
    assert section["by_size"][0]["steps"][1][1] == 0.0


def test_messages_to_oneself_keep_curves_of_their_own():
    # the self variants against the exchange to oneself, the others against the exchange:
    # neither path's points move the other's curve, and neither loop over one pair counts
    footprint, pair = _points({"x4": 21.6, "x16": 24.0}, exchange=20.0)
    pair.append({"op": "exchange", "variant": "self", "n_bytes": N, "t_us": 5.0, "t_mean_us": 5.0, "valid": True})
    for variant, t in (("x1", 25.0), ("self_x1", 5.2), ("self_x4", 5.6), ("self_x16", 6.0)):
        footprint.append({"op": "footprint", "variant": variant, "n_bytes": N, "t_us": t, "t_mean_us": t,
                          "valid": True, "cache_region_bytes": FOOTPRINTS.get(variant[5:], STRIDE)})
    section = copy_footprint_section(footprint, pair, [], "lib")
    assert section is not None
    (between,), (to_self,) = section["by_size"], section["self_by_size"]
    assert [v * N for _, v in between["steps"][1:]] == [pytest.approx(1.6, rel=1e-4), pytest.approx(4.0, rel=1e-4)]
    assert [v * N for _, v in to_self["steps"][1:]] == [pytest.approx(0.6, rel=1e-4), pytest.approx(1.0, rel=1e-4)]
    assert [row["variant"] for row in section["sizes"]] == ["x4", "x16", "self_x4", "self_x16"]
    (text,) = _finding(section)
    assert "spanning 2.031 MiB: 1.08 times; 8.125 MiB: 1.20 times as much" in text
    assert "a rank's messages to itself: 2.031 MiB: 1.12 times; 8.125 MiB: 1.20 times." in text
    assert section["sizes"][2]["one_pair_us"] == 5.0
    _validate_copy_footprint(section, "libraries.lib.loggp.copy_footprint")
    # self_x1 stands in where the run lacks the exchange to oneself
    section = copy_footprint_section(footprint, pair[:1], [], "lib")
    assert section is not None and section["self_by_size"][0]["steps"][1][1] * N == pytest.approx(0.4, rel=1e-4)
    # self points alone, with no baseline of their own: no self curves, the others' stand
    without = [pt for pt in footprint if pt["variant"] != "self_x1"]
    section = copy_footprint_section(without, pair[:1], [], "lib")
    assert section is not None and "self_by_size" not in section and section["by_size"] == [between]
    with pytest.raises(ModelError, match="copy_footprint.self_by_size"):
        _validate_copy_footprint({**section, "self_by_size": []}, "libraries.lib.loggp.copy_footprint")


def test_footprints_every_size_took_within_the_noise_at_are_held_by_the_caches():
    # 128 KiB over four pairs (1 MiB a rank) took 2% over its one pair; 256 KiB over four
    # (2 MiB) 40%: 256 KiB's curve is 0 up to 1 MiB, then rises to its own first point,
    # where a line from its one pair's 512 KiB would have charged 1 MiB half of it
    footprint, pair = _points({"x4": 28.0, "x16": 30.0}, exchange=20.0)
    small = 128 * KIB
    pair.append({"op": "exchange", "variant": "sendrecv", "n_bytes": small, "t_us": 10.0, "t_mean_us": 10.0,
                 "valid": True})
    footprint.append({"op": "footprint", "variant": "x4", "n_bytes": small, "t_us": 10.2, "t_mean_us": 10.2,
                      "valid": True, "cache_region_bytes": MIB})
    section = copy_footprint_section(footprint, pair, [], "lib")
    assert section is not None and section["held_bytes"] == MIB and "self_held_bytes" not in section
    low, high = section["by_size"]
    assert low["n"] == small and low["steps"] == [[2 * small, 0.0], [MIB, 0.0]]
    assert [f for f, _ in high["steps"]] == [2 * N, MIB, FOOTPRINTS["x4"], FOOTPRINTS["x16"]]
    assert [v * N for _, v in high["steps"]] == [0.0, 0.0, pytest.approx(8.0, rel=1e-4),
                                                 pytest.approx(10.0, rel=1e-4)]
    _validate_copy_footprint(section, "libraries.lib.loggp.copy_footprint")
    (text,) = _finding(section)
    assert "Up to 1 MiB a rank every size's probe took within the host's noise of one pair" in text
    # a model file may hold the bytes as a whole-number float; the report says the same
    (as_float,) = _finding({**section, "held_bytes": float(MIB)})
    assert as_float == text
    with pytest.raises(ModelError, match="copy_footprint.held_bytes"):
        _validate_copy_footprint({**section, "held_bytes": -1}, "libraries.lib.loggp.copy_footprint")
    # the smallest footprint measured already costs more than the noise: nothing is held
    footprint[-1] = {**footprint[-1], "t_us": 11.0, "t_mean_us": 11.0}
    section = copy_footprint_section(footprint, pair, [], "lib")
    assert section is not None and "held_bytes" not in section
    assert section["by_size"][1]["steps"][1] == [FOOTPRINTS["x4"], pytest.approx(8.0 / N, rel=1e-4)]
    (text,) = _finding(section)
    assert "Up to" not in text
    # every footprint within the noise: every curve 0
    section = copy_footprint_section(*_points({"x4": 20.4, "x16": 20.8}), [], "lib")
    assert section is not None and section["held_bytes"] == FOOTPRINTS["x16"]
    assert [v for _, v in section["by_size"][0]["steps"]] == [0.0, 0.0, 0.0]


def test_without_the_one_pair_exchange_there_is_no_section():
    footprint, _ = _points({"x4": 21.6})
    skipped: list[str] = []
    assert copy_footprint_section(footprint, [], skipped, "lib") is None
    assert "exchange:sendrecv" in skipped[0]


@pytest.mark.mpi
def test_a_real_run_cycles_through_the_buffers_and_the_model_keeps_the_cost(mpi_libraries, tmp_path, capsys,
                                                                             monkeypatch):
    library = mpi_libraries[0]
    db, model = tmp_path / "s.db", tmp_path / "model.json"
    # one self point corrupted: verified like the others, and left out of the curves
    monkeypatch.setenv("COMMCHAR_INJECT_FAULT", "corrupt@footprint:self_x16:65536")
    assert main(["run", "--db", str(db), "--library", library.name, "--np", "2", "--ops",
                 "footprint,exchange:sendrecv", "--sizes", "64K", "--max-time", "0.05", "--precision", "0.1",
                 "--no-refine"]) == 0
    assert main(["fit", "--db", str(db), "-o", str(model)]) == 0
    capsys.readouterr()
    lib = json.loads(model.read_text())["libraries"][library.name]
    section = (lib.get("loggp") or lib["loggp_partial"])["copy_footprint"]
    # each variant verified, its rank cycling through 4, 16 and 64 pairs of 64 KiB buffers,
    # against the same loop over one pair
    stride = 2 * (64 * KIB + 4096)
    assert [(row["variant"], row["footprint_bytes"]) for row in section["sizes"]] == [
        ("x4", 4 * stride), ("x16", 16 * stride), ("x64", 64 * stride), ("self_x4", 4 * stride),
        ("self_x64", 64 * stride)]
    assert [f for f, _ in section["self_by_size"][0]["steps"]] == [2 * 64 * KIB, 4 * stride, 64 * stride]
    assert all(row["footprint_us"] > 0 and row["one_pair_us"] > 0 for row in section["sizes"])
    assert "footprint:x4" not in lib["operations"]  # a probe of the LogGP section, not a curve
    with closing(sqlite3.connect(db)) as conn:
        one_pair = conn.execute("SELECT cache_region_bytes, valid FROM points WHERE op = 'footprint'"
                                " AND variant IN ('x1', 'self_x1') ORDER BY variant").fetchall()
        corrupted = conn.execute("SELECT valid FROM points WHERE op = 'footprint' AND variant = 'self_x16'").fetchall()
    assert one_pair == [(stride, 1), (stride, 1)] and corrupted == [(0,)]


def test_the_tracer_counts_each_message_buffer_once(one_built_library, tmp_path):
    """halo2d on a 1 x 2 grid: four receive and four send buffers of n bytes a rank, used
    every iteration; the header's buffer_bytes holds them once each (and the few bytes of
    the program's own reductions)."""
    library, folder = one_built_library
    n = 64 * KIB
    db = tmp_path / "t.db"
    result = subprocess.run([sys.executable, "-m", "commchar", "trace", "--db", str(db), "--library", library.name,
                             "--np", "2", "--", str(folder / "halo2d"), "--bytes", str(n), "--iterations", "50"],
                            capture_output=True, text=True, timeout=120)
    assert result.returncode == 0, result.stderr
    with Store(db) as store:
        (row,) = traces(store)
        directory = extract_trace(store, row["id"], tmp_path / "extracted")
    for rank in read_trace(directory).ranks:
        assert 8 * n <= rank.buffer_bytes < 8 * n + 4096, rank.buffer_bytes
        assert not rank.buffers_floor
