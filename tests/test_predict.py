"""Predictions from the shipped AP3000 model, checked against values computed by hand."""

from __future__ import annotations

import json
import re
import math
import subprocess
import sys
from pathlib import Path

import pytest

from commchar.cli import main
from commchar.errors import ModelError, UsageError
from commchar.modelfile import load, parse_expr
from commchar.predict import parse_composition, parse_n_values, parse_p_values, predict

EXAMPLE = Path(__file__).resolve().parents[1] / "examples" / "ap3000-mpi.json"


@pytest.fixture(scope="module")
def ap3000():
    return load(EXAMPLE)


def t(result, expr, n, p):
    [estimate] = [e for e in result.estimates if e.expr == expr and e.n == n and e.p == p]
    return estimate.t_us


# --- single operations (published.md Tables 1 to 4) ----------------------------

def test_single_operations_by_hand(ap3000):
    r = predict(ap3000, ["bcast", "pingpong:ssend", "reduce_scatter", "scan", "alltoall"], [1024], [8])
    # bcast (Table 2): 69*log2(8) + 0.0162*log2(8)*1024 = 207 + 49.7664 = 256.7664 us
    assert t(r, "bcast", 1024, 8) == pytest.approx(256.7664, rel=1e-12)
    # Ssend (Table 1): 75 + 0.0171*1024 = 75 + 17.5104 = 92.5104 us
    assert t(r, "pingpong:ssend", 1024, 8) == pytest.approx(92.5104, rel=1e-12)
    # reduce_scatter (Table 4): (279*3 - 57) + (0.0147*3 + 0.0262 + 0.0046*3 + 0.0049)*1024
    #   = 780 + 0.089*1024 = 780 + 91.136 = 871.136 us
    assert t(r, "reduce_scatter", 1024, 8) == pytest.approx(871.136, rel=1e-12)
    # scan (Table 4): (70*8 + 38) + (0.0145*8 + 0.0116 + 0.0071*8 - 0.0079)*1024
    #   = 598 + 0.1765*1024 = 598 + 180.736 = 778.736 us
    assert t(r, "scan", 1024, 8) == pytest.approx(778.736, rel=1e-12)
    # alltoall (Table 3): 89*8 + (0.0291 + 0.000884*8)*1024 = 712 + 0.036172*1024 = 749.040128 us
    assert t(r, "alltoall", 1024, 8) == pytest.approx(749.040128, rel=1e-12)


def test_point_to_point_modes(ap3000):
    r = predict(ap3000, ["pingpong", "pingpong:bsend", "pingpong:rsend"], [4096], [2])
    # Send 69 + 0.0162*4096 = 135.3552; Bsend 84 + 0.0213*4096 = 171.2448; Rsend = Send
    assert t(r, "pingpong", 4096, 2) == pytest.approx(135.3552)
    assert t(r, "pingpong:bsend", 4096, 2) == pytest.approx(171.2448)
    assert t(r, "pingpong:rsend", 4096, 2) == pytest.approx(135.3552)
    row = r.rows[0]
    # Send and Rsend tie; Bsend is (171.2448 - 135.3552)/171.2448 = 20.958% dearer
    assert row.cheapest == "pingpong = pingpong:rsend"
    assert row.margin_pct == pytest.approx(100 * (171.2448 - 135.3552) / 171.2448)


# --- compositions ---------------------------------------------------------------

def test_reduce_plus_scatter_by_hand(ap3000):
    r = predict(ap3000, ["reduce+scatter", "reduce_scatter"], [1024], [8])
    # reduce: (90*3 - 15) + (0.0171*3 + 0.0037 + 0.0051*3 - 0.0037)*1024 = 255 + 0.0666*1024 = 323.1984
    # scatter: (58 + 53*8) + 0.0209*3^-0.3830*1024 = 482 + 0.0209*0.6565544*1024 = 482 + 14.0511
    scatter = 482 + 0.0209 * 3 ** -0.3830 * 1024
    assert scatter == pytest.approx(496.0511, abs=1e-4)
    assert t(r, "reduce+scatter", 1024, 8) == pytest.approx(323.1984 + scatter, rel=1e-12)
    row = r.rows[0]
    # 819.2495 vs 871.136: reduce+scatter is 5.96% cheaper (published conclusion)
    assert row.cheapest == "reduce+scatter"
    assert row.margin_pct == pytest.approx(100 * (871.136 - (323.1984 + scatter)) / 871.136, rel=1e-9)


def test_gather_bcast_with_their_own_n_and_n_8p(ap3000):
    exprs = ["allgather", "gather(8*p)+bcast(8*p)"]
    r = predict(ap3000, exprs, parse_n_values("8*p"), [2, 8, 12])
    # p = 8, n = 64 (one double per process):
    #   allgather: 95*8 - 24 + (0.0239 + 0.00279*3)*64 = 736 + 0.03227*64 = 738.06528
    #   gather: 1/(0.0135 - 0.00296*3) + 0.0252*3^-0.1473*64 = 216.4502 + 1.3717
    #   bcast: 69*3 + 0.0162*3*64 = 207 + 3.1104 = 210.1104
    gather = 1 / 0.00462 + 0.0252 * 3 ** -0.1473 * 64
    assert t(r, "allgather", 64, 8) == pytest.approx(738.06528, rel=1e-12)
    assert t(r, "gather(8*p)+bcast(8*p)", 64, 8) == pytest.approx(gather + 210.1104, rel=1e-12)
    # p = 2, n = 16: allgather 95*2 - 24 + (0.0239 + 0.00279)*16 = 166.42704
    assert t(r, "allgather", 16, 2) == pytest.approx(166.42704, rel=1e-12)
    # n = 8p rows: 16, 64, 96 bytes; gather+bcast is cheaper for one double per process
    assert [row.n for row in r.rows] == [16, 64, 96]
    assert all(row.cheapest == "gather(8*p)+bcast(8*p)" for row in r.rows)
    tied = predict(ap3000, ["allgather", "gather+bcast", "gather(8*p)+bcast(8*p)"], ["8*p"], [8])
    assert tied.rows[0].cheapest == "gather+bcast = gather(8*p)+bcast(8*p)"
    assert predict(ap3000, ["bcast", "bcast(8*p)"], ["8*p"], [8]).rows[0].cheapest == "tie"


def test_a_part_with_its_own_n_ignores_the_row_n(ap3000):
    r = predict(ap3000, ["bcast(1024)"], [0, 5, 99999], [8])
    assert {round(e.t_us, 6) for e in r.estimates} == {256.7664}


def test_repeat_count_alltoall_as_p_scatters(ap3000):
    # alltoall of n per pair = p scatters of n*p: at n=8, p=4 -> 4*scatter(32)
    #   scatter(32) at p=4: 58 + 53*4 + 0.0209*2^-0.3830*32 = 270 + 0.0209*0.7670*32 = 270.5130
    r = predict(ap3000, ["alltoall", "p*scatter(8*p)"], [8], [4])
    assert t(r, "p*scatter(8*p)", 8, 4) == pytest.approx(4 * (270 + 0.0209 * 2 ** -0.3830 * 32), rel=1e-12)
    # alltoall(8) at p=4: 89*4 + (0.0291 + 0.000884*4)*8 = 356 + 0.032636*8 = 356.261088
    assert t(r, "alltoall", 8, 4) == pytest.approx(356.261088, rel=1e-12)
    parts = r.estimates[1].parts
    assert parts[0].count == 4 and parts[0].prediction.n == 32


def test_extrapolation_warns(ap3000):
    r = predict(ap3000, ["bcast"], [2**21], [16])
    [estimate] = r.estimates
    assert estimate.extrapolated
    assert any("p=16 is outside the fitted p range [2, 12]" in w for w in r.warnings)
    assert any("n=2097152 is outside the fitted n range" in w for w in r.warnings)
    # still predicted from the law: 69*4 + 0.0162*4*2^21
    assert estimate.t_us == pytest.approx(69 * 4 + 0.0162 * 4 * 2**21)


def test_json_objects(ap3000):
    r = predict(ap3000, ["bcast", "reduce+bcast"], "1K,8*p", [4])
    rows = r.as_json()
    assert {(o["expr"], o["n"], o["p"]) for o in rows} == {
        ("bcast", 1024, 4), ("bcast", 32, 4), ("reduce+bcast", 1024, 4), ("reduce+bcast", 32, 4)}
    for o in rows:
        assert {"expr", "n", "p", "t_us", "library", "extrapolated"} <= set(o)


# --- several libraries -------------------------------------------------------------

def two_libraries(tmp_path):
    d = json.loads(EXAMPLE.read_text())
    other = json.loads(json.dumps(d["libraries"]["mpi"]))
    # a faster copy without scan
    other["operations"]["bcast"]["segments"][0]["t_s"] = "30*log2(p)"
    del other["operations"]["scan:sum"]
    d["libraries"]["fast"] = other
    path = tmp_path / "two.json"
    path.write_text(json.dumps(d))
    return path


def test_every_library_is_predicted_unless_one_is_named(tmp_path):
    model = load(two_libraries(tmp_path))
    r = predict(model, ["bcast"], [0], [8])
    assert [(e.library, e.t_us) for e in r.estimates] == [("mpi", 207.0), ("fast", 90.0)]
    only = predict(model, ["bcast"], [0], [8], library="fast")
    assert [e.library for e in only.estimates] == ["fast"]
    skipped = predict(model, ["scan"], [0], [8])
    assert skipped.libraries == ["mpi"] and "fast" in skipped.skipped
    with pytest.raises(ModelError, match="unknown operation 'scan'"):
        predict(model, ["scan"], [0], [8], library="fast")


# --- input parsing -----------------------------------------------------------------

def test_value_lists_and_ranges():
    assert parse_n_values("1K:1M") == [2.0**k for k in range(10, 21)]
    assert parse_n_values("0:8") == [0, 1, 2, 4, 8]
    assert parse_n_values("3:100") == [3, 4, 8, 16, 32, 64, 100]
    assert parse_n_values("0:10:3") == [0, 3, 6, 9]
    assert parse_n_values("1Ki,1.5K,2M,1Gi") == [1024, 1536, 2**21, 2**30]
    assert parse_n_values("8*p, min(p, 3)") == [parse_expr("8*p"), parse_expr("min(p, 3)")]
    assert parse_p_values("2:12") == list(range(2, 13))
    assert parse_p_values("12,2,4:16:*2") == [2, 4, 8, 12, 16]


@pytest.mark.parametrize("text, parser, needle", [
    ("1Q", parse_n_values, "not a number"),
    ("8*q", parse_n_values, "unknown name 'q'"),
    ("10:1", parse_n_values, "ends below its start"),
    ("1:10:0", parse_n_values, "step"),
    ("0:1G:1", parse_n_values, "more than 10000 values"),
    ("1,,2", parse_n_values, "empty item"),
    ("0", parse_p_values, "integer >= 1"),
    ("2.5", parse_p_values, "integer >= 1"),
])
def test_bad_values(text, parser, needle):
    with pytest.raises(UsageError, match=re.escape(needle)):
        parser(text)


@pytest.mark.parametrize("text, needle", [
    ("bcast+", "empty operation"),
    ("bcast(", "unbalanced '('"),
    ("bcast)", "unbalanced ')'"),
    ("p-1*pingpong", "in parentheses"),
    ("2 bcast", "expected '*'"),
    ("bcast(os.system('x'))", "n of bcast"),
    ("Bcast", "is not an operation"),
])
def test_bad_compositions(text, needle):
    with pytest.raises(UsageError, match=re.escape(needle)):
        parse_composition(text)


def test_composition_text():
    c = parse_composition(" gather( 8*p ) + bcast(8*p) ")
    assert c.text == "gather(8*p)+bcast(8*p)"
    assert [str(part) for part in c.parts] == ["gather(8*p)", "bcast(8*p)"]
    assert str(parse_composition("(p-1)*pingpong(1K)".replace("1K", "1024")).parts[0]) == "(p - 1)*pingpong(1024)"


# --- command line ------------------------------------------------------------------

def run_cli(capsys, *args):
    code = main(["predict", *map(str, args)])
    out, err = capsys.readouterr()
    return code, out, err


def test_cli_table(capsys):
    code, out, err = run_cli(capsys, EXAMPLE, "allgather", "gather+bcast", "--n", "8*p", "--p", "8")
    assert code == 0 and err == ""
    assert "738.1" in out and "427.9" in out and "gather+bcast" in out and "42.0%" in out


def test_cli_json(capsys):
    code, out, err = run_cli(capsys, EXAMPLE, "bcast", "--n", "1K", "--p", "8", "--json")
    assert code == 0
    [row] = json.loads(out)
    assert row["expr"] == "bcast" and row["n"] == 1024 and row["p"] == 8
    assert row["t_us"] == pytest.approx(256.7664)


def test_cli_extrapolation_warning_on_stderr(capsys):
    code, out, err = run_cli(capsys, EXAMPLE, "bcast", "--n", "1K", "--p", "64", "--json")
    assert code == 0 and json.loads(out)[0]["extrapolated"] is True
    assert "warning" in err and "p=64 is outside the fitted p range" in err


@pytest.mark.parametrize("args, needle", [
    (["teleport"], "unknown operation 'teleport'"),
    (["bcast+"], "empty operation"),
    (["bcast(8*q)"], "unknown name 'q'"),
    (["bcast", "--library", "pvm"], "no library 'pvm'"),
])
def test_cli_errors_are_one_line_exit_2(capsys, args, needle):
    code, out, err = run_cli(capsys, EXAMPLE, *args, "--n", "8", "--p", "4")
    assert code == 2
    assert err.count("\n") == 1 and needle in err, err


def test_cli_bad_model_files(capsys, tmp_path):
    d = json.loads(EXAMPLE.read_text())
    d["libraries"]["mpi"]["operations"]["bcast"]["segments"][0]["t_s"] = "__import__('os').system('touch pwned')"
    unsafe = tmp_path / "unsafe.json"
    unsafe.write_text(json.dumps(d))
    code, out, err = run_cli(capsys, unsafe, "bcast", "--n", "8", "--p", "4")
    assert code == 2 and err.count("\n") == 1
    assert "libraries.mpi.operations.bcast.segments[0].t_s: unexpected character" in err
    assert not (tmp_path / "pwned").exists() and not Path("pwned").exists()
    d["libraries"]["mpi"]["operations"]["bcast"]["segments"] = []
    missing = tmp_path / "missing.json"
    missing.write_text(json.dumps(d))
    code, out, err = run_cli(capsys, missing, "bcast", "--n", "8", "--p", "4")
    assert code == 2 and "bcast.segments: expected a non-empty list" in err
    code, out, err = run_cli(capsys, tmp_path / "none.json", "bcast", "--n", "8", "--p", "4")
    assert code == 2 and "cannot read model file" in err


def test_cli_as_a_real_process():
    result = subprocess.run([sys.executable, "-m", "commchar", "predict", str(EXAMPLE), "reduce+scatter",
                             "reduce_scatter", "--n", "1K", "--p", "8", "--json"],
                            capture_output=True, text=True, timeout=120)
    assert result.returncode == 0, result.stderr
    rows = {o["expr"]: o["t_us"] for o in json.loads(result.stdout)}
    assert rows["reduce_scatter"] == pytest.approx(871.136)
    assert rows["reduce+scatter"] < rows["reduce_scatter"]
    bad = subprocess.run([sys.executable, "-m", "commchar", "predict", str(EXAMPLE), "nope", "--n", "1", "--p", "2"],
                         capture_output=True, text=True, timeout=120)
    assert bad.returncode == 2 and len(bad.stderr.strip().splitlines()) == 1
    assert "Traceback" not in bad.stderr
    assert math.isfinite(rows["reduce_scatter"])


# --- fuzzing the command-line inputs ------------------------------------------------

from hypothesis import given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402

from commchar.errors import CommcharError  # noqa: E402

_MODEL = load(EXAMPLE)
_COMPOSITION_ALPHABET = "abcdegilnoprstu_:+*()p0123456789 -/^,.$'"


@settings(max_examples=600, deadline=None, database=None)
@given(st.text(alphabet=_COMPOSITION_ALPHABET, max_size=60))
def test_fuzz_compositions_only_raise_one_line_commchar_errors(text):
    model = _MODEL
    try:
        composition = parse_composition(text)
        composition.check(model, "mpi")
        composition.time(model, "mpi", 64, 4)
    except CommcharError as exc:
        assert "\n" not in str(exc)


@settings(max_examples=400, deadline=None, database=None)
@given(st.text(alphabet="0123456789.:,*+-pKMGie ()", max_size=30))
def test_fuzz_values_only_raise_usage_errors(text):
    for parser in (parse_n_values, parse_p_values):
        try:
            values = parser(text)
        except UsageError as exc:
            assert "\n" not in str(exc)
            continue
        assert len(values) <= 10000
