"""Where a message lands in its page (commchar.models.misaligned_copy) from `skew`
points: the fit, its model-file field, the report's finding, and the kernel's probe
under real mpirun."""

from __future__ import annotations

import json

import pytest

from commchar.cli import main
from commchar.modelfile.model import ModelError
from commchar.modelfile.schema import _validate_steps
from commchar.models.misaligned_copy import misaligned_copy_section
from _model_data import loggp_findings

KIB = 1024
SIZES = (4 * KIB, 32 * KIB, 256 * KIB, 1024 * KIB)


def _points(slow_from: int, factor: float) -> list[dict]:
    """A ping-pong of 1 us + 4e-5 us a byte, `factor` times it from `slow_from` on when the
    receive buffers lie ahead."""
    points = []
    for n in SIZES:
        aligned = 1.0 + 4e-5 * n
        for variant, t in (("aligned", aligned), ("ahead", factor * aligned if n >= slow_from else aligned)):
            points.append({"op": "skew", "variant": variant, "n_bytes": n, "t_us": t, "t_mean_us": t,
                           "valid": True})
    return points


def _finding(section: dict | None) -> list[str]:
    return loggp_findings("misaligned_copy", section, "further into its page")


def test_the_excess_of_a_misaligned_copy_per_size_and_its_finding():
    skipped: list[str] = []
    section = misaligned_copy_section(_points(32 * KIB, 4.0), skipped, "lib")
    assert skipped == [] and section is not None
    assert section["skew_bytes"] == 16 and section["statistic"] == "mean"
    assert section["slow_ahead"] == [1, 31]
    assert [row["n"] for row in section["sizes"]] == list(SIZES)
    # nothing at 4 KiB, three times the aligned time more from 32 KiB on
    assert section["steps"][0] == [4 * KIB, 0.0]
    for n, per_byte in section["steps"][1:]:
        assert per_byte * n == pytest.approx(3.0 * (1.0 + 4e-5 * n), rel=1e-3)
    _validate_steps(section, "libraries.lib.loggp.misaligned_copy")
    (text,) = _finding(section)
    assert "16 bytes further into its page" in text and "4.0 times as much at 1 MiB" in text
    assert "from 32 KiB" in text and "`commchar replay` charges it" in text
    # a machine where the place in the line costs nothing says nothing
    assert _finding(misaligned_copy_section(_points(32 * KIB, 1.05), [], "lib")) == []
    with pytest.raises(ModelError, match="misaligned_copy.slow_ahead"):
        _validate_steps(section | {"slow_ahead": [31, 1]}, "libraries.lib.loggp.misaligned_copy")
    with pytest.raises(ModelError, match="misaligned_copy.slow_ahead"):
        _validate_steps(section | {"slow_ahead": [1, 4096]}, "libraries.lib.loggp.misaligned_copy")
    with pytest.raises(ModelError, match="misaligned_copy.steps"):
        _validate_steps({"per_byte": 1e-4, "steps": [[32 * KIB, 1e-4], [4 * KIB, 1e-4]]},
                        "libraries.lib.loggp.misaligned_copy")


def _next_line(points: list[dict], factor: float) -> list[dict]:
    """`skew:ahead80` beside `points`: the aligned time, `factor` times it from 32 KiB on."""
    return [pt | {"variant": "ahead80", "t_us": pt["t_us"] * (factor if pt["n_bytes"] >= 32 * KIB else 1.0),
                  "t_mean_us": pt["t_mean_us"] * (factor if pt["n_bytes"] >= 32 * KIB else 1.0)}
            for pt in points if pt["variant"] == "aligned"]


def test_the_slow_class_is_the_line_where_the_next_lines_place_pays_as_well():
    ahead = _points(32 * KIB, 1.08)
    # an Intel Xeon's: 80 ahead pays what 16 ahead does
    section = misaligned_copy_section(ahead + _next_line(ahead, 1.07), [], "lib")
    assert section["slow_ahead"] == [1, 255] and section["line_bytes"] == 64
    assert [row["n"] for row in section["next_line"]] == [32 * KIB, 256 * KIB, 1024 * KIB]
    # two places of the class, two draws of its cost: each step their mean
    for n, per_byte in section["steps"]:
        expected = 0.0 if n < 32 * KIB else (0.08 + 0.07) / 2 * (1.0 + 4e-5 * n)
        assert per_byte * n == pytest.approx(expected, rel=1e-3, abs=1e-9)
    _validate_steps(section, "libraries.lib.loggp.misaligned_copy")
    # the AMD EPYC's: 80 ahead as fast as aligned, or a little slower
    for factor in (1.0, 1.02):
        section = misaligned_copy_section(ahead + _next_line(ahead, factor), [], "lib")
        assert section["slow_ahead"] == [1, 31] and "line_bytes" not in section
        # 80 ahead is no place of that class: 16 ahead's excess alone
        assert section["steps"][1][1] * 32 * KIB == pytest.approx(0.08 * (1.0 + 4e-5 * 32 * KIB), rel=1e-3)
    # without the variant, or where 16 ahead pays nothing, the class within 31 bytes
    assert "next_line" not in misaligned_copy_section(ahead, [], "lib")
    flat = _points(32 * KIB, 1.0)
    assert "line_bytes" not in misaligned_copy_section(flat + _next_line(flat, 1.07), [], "lib")
    for bad in (0, 4097, 64.5, "64"):
        with pytest.raises(ModelError, match="misaligned_copy.line_bytes"):
            _validate_steps(section | {"line_bytes": bad}, "libraries.lib.loggp.misaligned_copy")


def test_a_message_to_oneself_keeps_its_own_excess_where_it_was_measured():
    # the library's copy to itself pays nothing for where it lands, its copy between ranks does
    own = [pt | {"variant": "self_" + pt["variant"], "t_us": 1.0, "t_mean_us": 1.0}
           for pt in _points(32 * KIB, 4.0)]
    skipped: list[str] = []
    section = misaligned_copy_section(_points(32 * KIB, 4.0) + own, skipped, "lib")
    assert skipped == [] and section is not None
    assert [n for n, _ in section["self"]["steps"]] == list(SIZES)
    assert all(per_byte == 0.0 for _, per_byte in section["self"]["steps"])
    assert section["steps"][1][1] > 0.0
    _validate_steps(section["self"], "libraries.lib.loggp.misaligned_copy.self")
    # a run without the self variants: no `self`, and nothing said
    skipped = []
    assert "self" not in misaligned_copy_section(_points(32 * KIB, 4.0), skipped, "lib") and skipped == []
    # one of them alone: left out, and why
    section = misaligned_copy_section(_points(32 * KIB, 4.0) + own[::2], skipped, "lib")
    assert "self" not in section and len(skipped) == 1 and "skew:self_ahead" in skipped[0]


def test_only_one_variant_measured_gives_no_section():
    skipped: list[str] = []
    only_aligned = [pt for pt in _points(32 * KIB, 4.0) if pt["variant"] == "aligned"]
    assert misaligned_copy_section(only_aligned, skipped, "lib") is None and "skew" in skipped[0]


@pytest.mark.mpi
def test_a_real_run_measures_both_places_and_the_model_keeps_them(mpi_libraries, tmp_path, capsys):
    library = mpi_libraries[0]
    db, model = tmp_path / "s.db", tmp_path / "model.json"
    assert main(["run", "--db", str(db), "--library", library.name, "--np", "2", "--ops", "skew,pingpong:send",
                 "--max-time", "0.05", "--precision", "0.1"]) == 0
    assert main(["fit", "--db", str(db), "-o", str(model)]) == 0
    capsys.readouterr()
    lib = json.loads(model.read_text())["libraries"][library.name]
    copy = (lib.get("loggp") or lib["loggp_partial"])["misaligned_copy"]
    # the probe's own sizes, every variant verified and paired at each, to the other rank and
    # to oneself
    assert [row["n"] for row in copy["sizes"]] == list(SIZES)
    assert all(row["ahead_us"] > 0 and row["aligned_us"] > 0 for row in copy["sizes"])
    assert [row["n"] for row in copy["self"]["sizes"]] == list(SIZES)
    assert all(row["self_ahead_us"] > 0 and row["self_aligned_us"] > 0 for row in copy["self"]["sizes"])
    # and 80 ahead, from 32 KiB, which chose the class
    assert [row["n"] for row in copy["next_line"]] == list(SIZES[1:])
    assert copy["slow_ahead"] in ([1, 31], [1, 255])
    assert "skew:aligned" not in lib["operations"]  # a probe of the LogGP section, not a curve
