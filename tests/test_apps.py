"""The applications commchar ships (apps/): their answers, the sweep verb that runs
them into the store (traced, resumable, failures recorded), their prediction and
their report sections. Real mpirun with every library present (marker mpi);
small sizes."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from commchar.apps.sweep import CaseFailed
from commchar.cli import main
from commchar.errors import InputError
from commchar.store import Store

from _apps import run_app


@pytest.mark.mpi
@pytest.mark.parametrize("p", [1, 2])
def test_both_programs_verify_their_answers(built_apps, p: int) -> None:
    for library, directory in built_apps:
        jacobi = [(48, exchange) for exchange in ("allgather", "direct", "butterfly")] if p > 1 \
            else [(36, "allgather")]
        for n, exchange in jacobi:
            result = run_app(library, p, [str(directory / "jacobi"), "--n", str(n), "--exchange", exchange])
            assert result["verified"] and result["p"] == p and result["N"] == n
            assert result["max_error"] < 1e-6 and result["iterations"] > 10
            assert set(result["phases_s"]) == {"distribution", "computation", "communication"}
            assert result["elapsed_s"] >= max(result["phases_s"].values()) > 0
        for n, fragment in ((17, 0), (64, 0), (63, 64)):
            argv = [str(directory / "gauss"), "--n", str(n)]
            argv += ["--fragment", str(fragment)] if fragment else []
            result = run_app(library, p, argv)
            assert result["verified"] and result["residual"] < 1e-9, (library.name, n, fragment)
            assert result["largest_message_bytes"] == (fragment or 8 * (n + 1))


@pytest.mark.mpi
def test_a_run_says_where_ranks_0_and_1s_cores_were_and_its_trace_does_not_show_the_probe(
        one_built_library, tmp_path: Path) -> None:
    library, directory = one_built_library
    for app, args in (("jacobi", ["--n", "32"]), ("gauss", ["--n", "16", "--core-distance", "--fragment", "64"])):
        argv = [str(directory / app), *args, *(["--core-distance"] if app == "jacobi" else [])]
        result = run_app(library, 2, argv)
        before, after = result["core_rtt_ns"]
        assert result["verified"] and before > 0 and after > 0, result
        assert all(v > 0 for v in result["core_copy_ns"]), result
        # one rank has no other to time a line with: nothing said
        alone = run_app(library, 1, argv)
        assert "core_rtt_ns" not in alone and "core_copy_ns" not in alone
    # the probe goes through the PMPI names: the tracer sees the program's own calls only
    db = tmp_path / "t.db"
    done = subprocess.run([sys.executable, "-m", "commchar", "trace", "--db", str(db), "--library", library.name,
                           "--np", "2", "--", str(directory / "jacobi"), "--n", "32", "--core-distance"],
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr

    from commchar.store.traces import extract_trace, traces
    from commchar.trace import read_trace
    from commchar.trace.format import CALL_NAMES

    with Store(db) as store:
        (row,) = traces(store)
        calls = {CALL_NAMES[int(c)] for rank in read_trace(extract_trace(store, row["id"], tmp_path / "x")).ranks
                 for c in rank.records["call"]}
    assert "Allgather" in calls and not calls & {"Comm_split", "Comm_split_type", "Win_allocate_shared", "Win_free"}


@pytest.mark.mpi
def test_a_wrong_answer_or_bad_input_fails_clearly(one_built_library) -> None:
    library, directory = one_built_library
    with pytest.raises(CaseFailed) as wrong:
        run_app(library, 2, [str(directory / "gauss"), "--n", "32"], {"COMMCHAR_APP_FAULT": "wrong"})
    assert wrong.value.kind == "wrong-answer" and "residual" in wrong.value.message
    with pytest.raises(CaseFailed) as refused:
        run_app(library, 2, [str(directory / "jacobi"), "--n", "33"])
    assert refused.value.kind == "crash" and "multiple of the process count" in refused.value.message
    # a bad number reads as every commchar C number does (kernels/common/cc_parse.c)
    for flag, value, message in (("--iterations", "5x", "'5x' is not a whole number in [1, 1073741824]"),
                                 ("--tolerance", "-1", "'-1' is not a number in (0, inf)")):
        with pytest.raises(CaseFailed) as bad:
            run_app(library, 1, [str(directory / "jacobi"), "--n", "8", flag, value])
        assert f"{flag}: {message}" in bad.value.message


def _cases(db: Path) -> list[dict]:
    with Store(db) as store:
        return store.app_runs()


def _cases_so_far(db: Path) -> list[dict]:
    """The cases of a store another process may still be creating (file there, tables not yet)."""
    try:
        return _cases(db)
    except InputError:
        return []


@pytest.fixture(scope="module")
def gauss_db(built_apps, tmp_path_factory) -> tuple[str, Path]:
    """One sweep: Gaussian elimination N = 16, whole and fragmented rows, 3 untraced runs and
    one traced each."""
    library = built_apps[0][0].name
    db = tmp_path_factory.mktemp("apps") / "apps.db"
    args = ["app", "gauss", "--db", str(db), "--library", library, "--sizes", "16", "--np", "2",
            "--reps", "3", "--configs", "original,fragmented", "--fragment", "56"]
    assert main(args) == 0
    return library, db


@pytest.mark.mpi
def test_sweep_stores_untraced_times_and_a_traced_run_and_records_failures(gauss_db, capsys) -> None:
    library, db = gauss_db
    cases = _cases(db)
    assert {(c["config"], c["n"]) for c in cases} == {("original", 16), ("fragmented", 16)}
    for case in cases:
        traced = [r for r in case["results"] if "trace_id" in r]
        assert case["reps"] == 3 and len(case["results"]) == 4 and len(traced) == 1
        assert case["trace"] == {"ids": [traced[0]["trace_id"]], "median": traced[0]["trace_id"]}
        # the case's time is its untraced runs' median: the tracer's own work is not the program's
        times = sorted(r["elapsed_s"] for r in case["results"] if "trace_id" not in r)
        assert case["elapsed_s"] == times[1]

    os.environ["COMMCHAR_APP_FAULT"] = "wrong"
    try:
        assert main(["app", "jacobi", "--db", str(db), "--library", library, "--sizes", "8,16",
                     "--np", "2", "--reps", "1", "--exchange", "allgather", "--no-trace"]) == 0
    finally:
        del os.environ["COMMCHAR_APP_FAULT"]
    with Store(db) as store:
        failures = [f for f in store.failures() if f["op"] == "app:jacobi"]
        run_id = store.runs()[-1]["id"]
        assert store.app_done_keys(run_id) == {(library, "jacobi", "allgather", n, 2) for n in (8, 16)}
    assert sorted(f["n_bytes"] for f in failures) == [8, 16]
    assert {f["kind"] for f in failures} == {"wrong-answer"}
    out = capsys.readouterr().out
    assert "wrong-answer" in out and "[red]" not in out  # styled, never markup printed raw


@pytest.mark.mpi
def test_an_interrupted_sweep_resumes_without_redoing_finished_cases(built_apps, tmp_path: Path) -> None:
    library = built_apps[0][0].name
    db = tmp_path / "resume.db"
    argv = [sys.executable, "-m", "commchar", "app", "jacobi", "--db", str(db), "--library",
            library, "--sizes", "8,16,32,64", "--np", "1", "--reps", "1", "--exchange", "allgather",
            "--no-trace"]
    process = subprocess.Popen(argv, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline and process.poll() is None:
        if db.exists() and _cases_so_far(db):
            break
        time.sleep(0.05)
    process.send_signal(signal.SIGTERM)
    _, stderr = process.communicate(timeout=60)
    first = _cases(db)
    assert first, "no case finished before the deadline"
    if process.returncode == 0:
        pytest.skip("the sweep finished before it could be interrupted")
    assert process.returncode == 130 and "--resume 1" in stderr
    assert main(["app", "jacobi", "--db", str(db), "--resume", "1"]) == 0
    after = {(c["config"], c["n"]): c for c in _cases(db)}
    assert len(after) == 4
    for case in first:  # kept as they were: not run again
        again = after[(case["config"], case["n"])]
        assert (again["id"], again["created_at"], again["results"]) == \
            (case["id"], case["created_at"], case["results"])
    with Store(db) as store:
        assert store.run(1)["status"] == "complete"


@pytest.mark.mpi
def test_prediction_under_loggps_and_loggp_and_the_report(gauss_db, tmp_path: Path) -> None:
    """S = 64 B: whole rows of N = 16 (up to 136 B) reach it, 56-byte fragments never do."""
    library, db = gauss_db
    model = {"format": "commchar-model", "version": 1, "libraries": {library: {
        "operations": {"pingpong:send": {"n_range": [0, 1048576], "segments": [
            {"n_min": 0, "n_max": None, "t_s": "1", "t_b": "0.001"}]}},
        "loggp": {"L": 1.0, "o_s": 0.5, "o_r": 0.5, "g": 0.5, "G": 0.001, "S": 64}}}}
    path = tmp_path / "m.json"
    path.write_text(json.dumps(model))
    assert main(["app", "predict", "--db", str(db), "--model", str(path)]) == 0
    with Store(db) as store:
        cases = {c["config"]: c for c in store.app_runs()}
        predictions = {(p["app_run_id"], p["model"]): p
                       for p in store.app_predictions(c["id"] for c in cases.values())}
    whole = {m: predictions[(cases["original"]["id"], m)] for m in ("loggps", "loggp")}
    pieces = {m: predictions[(cases["fragmented"]["id"], m)] for m in ("loggps", "loggp")}
    # 16 pivot rows of 17..2 doubles, 10 of at least 64 B, then 16 solved values of 8 B
    assert whole["loggps"]["messages"] == {"count": 32, "largest_bytes": 136, "S": 64.0,
                                           "at_least_S": 10}
    assert pieces["loggps"]["messages"]["at_least_S"] == 0
    assert whole["loggps"]["rendezvous_messages"] > 0 == whole["loggp"]["rendezvous_messages"]
    assert pieces["loggps"]["predicted_s"] == pieces["loggp"]["predicted_s"]
    for case, found in ((cases["original"], whole), (cases["fragmented"], pieces)):
        for prediction in found.values():
            # the untraced runs' time, the traced run's beside it
            assert prediction["measured_s"] == pytest.approx(case["elapsed_s"])
            assert prediction["traced_s"] > 0 and prediction["cores"] in ("same", "other", "unknown")
    for prediction in (*whole.values(), *pieces.values()):
        assert prediction["measured_s"] > 0 and prediction["predicted_s"] > 0
        assert len(prediction["ranks"]) == 2
        for rank in prediction["ranks"]:
            parts = rank["computation_s"] + rank["communication_s"] + rank["wait_s"]
            assert parts == pytest.approx(rank["total_s"], rel=1e-6)
    # predicted once: a second call finds nothing to do
    assert main(["app", "predict", "--db", str(db), "--model", str(path)]) == 0

    from commchar.report import ReportOptions, build_report

    report = build_report(ReportOptions(str(db)))
    assert "Application: Gaussian elimination" in report.html
    table = next(t for t in report.tables if t.slug == f"apps-gauss-{library}")
    rows = {row[1].split(" ")[0]: row for row in table.rows}
    assert table.rows[0][1] == "fragmented (56 B)" or table.rows[1][1] == "fragmented (56 B)"
    assert rows["original"][10] == "10 of 32" and rows["fragmented"][10].startswith("0 of ")
    assert "no message reaches S" in rows["fragmented"][11]
    assert "messages reach S" in rows["original"][11]
    assert any(f.slug == f"apps-gauss-breakdown-{library}" for f in report.figures)


def test_a_case_is_measured_by_its_untraced_runs_in_the_models_state_of_the_cores() -> None:
    from commchar.apps.estimate import ModelChoice, measured_time
    from commchar.core_distance import split

    def model(rtt: float | None) -> ModelChoice:
        record = split([(rtt, rtt * 1.01)] * 50).to_dict() if rtt else None
        return ModelChoice("m.json", "lib", "m.json@0:charged", None, record)

    traced = {"trace_id": 9, "elapsed_s": 0.5, "core_rtt_ns": [66.0, 67.0]}
    runs = [{"elapsed_s": e, "core_rtt_ns": rtt} for e, rtt in
            ((1.0, [330.0, 320.0]), (2.0, [66.0, 67.0]), (3.0, [67.0, 66.0]), (4.0, [330.0, 325.0]))]
    case = {"results": [traced, *runs]}
    assert measured_time(case, model(66.0)) == (2.5, "same")      # the traced run is not a time
    assert measured_time(case, model(325.0)) == (2.5, "same")     # 1.0 and 4.0
    assert measured_time(case, model(880.0)) == (2.5, "other")    # none there: every untraced run
    assert measured_time(case, model(None)) == (2.5, "unknown")
    assert measured_time({"results": [traced]}, model(66.0)) is None  # traced runs only: the trace's


def test_a_case_is_predicted_from_its_runs_in_the_models_state_of_the_cores() -> None:
    from commchar.apps.estimate import ModelChoice, chosen_run
    from commchar.core_distance import split

    def model(rtt: float | None) -> ModelChoice:
        record = split([(rtt, rtt * 1.01)] * 50).to_dict() if rtt else None
        return ModelChoice("m.json", "lib", "m.json@0:charged", None, record)

    runs = [(1, 1.0, [330.0, 320.0]), (2, 2.0, [330.0, 325.0]), (3, 3.0, [66.0, 67.0]), (4, 4.0, [67.0, 66.0]),
            (5, 5.0, [66.0, 67.0])]
    case = {"trace": {"ids": [r[0] for r in runs], "median": 3},
            "results": [{"trace_id": t, "elapsed_s": e, "core_rtt_ns": rtt} for t, e, rtt in runs]}
    # the median of the runs in the model's state, not of all
    assert chosen_run(case, model(66.0)) == (4, "same")
    assert chosen_run(case, model(325.0)) == (1, "same")
    # no run in the model's state: the case's median, said to be another state's
    assert chosen_run(case, model(880.0)) == (3, "other")
    # the model or the runs do not say: the case's median
    assert chosen_run(case, model(None)) == (3, "unknown")
    unsaid = {**case, "results": [{"trace_id": t, "elapsed_s": e} for t, e, _ in runs]}
    assert chosen_run(unsaid, model(66.0)) == (3, "unknown")


def test_jacobi_section_computes_the_studys_quantities(tmp_path: Path) -> None:
    """Speedup T(1)/T(p), efficiency speedup/p and overhead communication/elapsed, from the
    stored medians; the prediction's error against the traced time (no MPI needed)."""
    from commchar.report.apps import jacobi_rows, load, sections

    db = tmp_path / "j.db"
    times = {1: (0.8, 0.01), 2: (0.5, 0.2), 4: (0.4, 0.25)}  # p: (elapsed, communication)
    with Store(db) as store:
        run_id = store.create_run("test", {}, {"kind": "app", "app": "jacobi"})
        for p, (elapsed, comm) in times.items():
            case_id = store.add_app_run(run_id, {
                "library": "lib", "app": "jacobi", "config": "allgather", "n": 64, "p": p,
                "oversubscribed": p > 2, "elapsed_s": elapsed,
                "phases_s": {"distribution": 0.01, "computation": elapsed - comm - 0.01,
                             "communication": comm},
                "results": [{"elapsed_s": elapsed}], "launcher_cmd": [], "env": {}})
            store.add_app_prediction(case_id, "m.json@x", "loggps", {
                "measured_s": elapsed * 1.1, "predicted_s": elapsed, "predicted_overhead": 0.5,
                "ranks": []})
    rows = {r.p: r for r in jacobi_rows(load(db, None))}
    for p, (elapsed, comm) in times.items():
        assert rows[p].speedup == pytest.approx(times[1][0] / elapsed)
        assert rows[p].efficiency == pytest.approx(times[1][0] / elapsed / p)
        assert rows[p].overhead == pytest.approx(comm / elapsed)
        assert rows[p].predicted == elapsed and rows[p].measured == pytest.approx(elapsed * 1.1)
    assert rows[4].oversubscribed and not rows[2].oversubscribed
    figures, tables = [], []
    out = sections(db, None, lambda f: figures.append(f) or "", lambda t: tables.append(t) or "")
    assert [anchor for anchor, *_ in out] == ["apps-jacobi"]
    assert figures[0].slug == "apps-jacobi-lib-allgather" and tables[0].slug == "apps-jacobi"
    assert tables[0].rows[2][3] == "4*" and tables[0].rows[1][12] == f"{100 * (1 / 1.1 - 1):+.1f}%"


def test_cases_the_program_would_refuse_are_said_and_a_sweep_of_none_is_refused(tmp_path: Path,
                                                                                 capsys) -> None:
    from commchar.apps.cases import AppSweepOptions, impossible

    options = AppSweepOptions(app="jacobi", sizes=[8, 12], np=[2, 3], configs=["butterfly"])
    assert impossible(options) == {"N = 8 is not a multiple of p = 3": 1,
                                   "the butterfly needs a power-of-two p, not 3": 1}
    db = tmp_path / "none.db"
    assert main(["app", "jacobi", "--db", str(db), "--np", "3", "--sizes", "8",
                 "--exchange", "butterfly"]) == 2
    err = capsys.readouterr().err.strip()
    assert "no requested case can run" in err and "\n" not in err
    assert not db.exists()


@pytest.mark.parametrize("argv", [
    ["app", "gauss", "--library", "am", "--sizes", "256"],
    ["trace", "--library", "am", "--np", "2", "--", "/bin/true"],
])
def test_mpi_programs_refuse_the_active_message_layer_as_their_library(tmp_path: Path, capsys,
                                                                      argv: list[str]) -> None:
    db = tmp_path / "am.db"
    assert main([*argv[:2], "--db", str(db), *argv[2:]] if argv[0] == "app"
                else [argv[0], "--db", str(db), *argv[1:]]) == 2
    assert "'am' not found here" in capsys.readouterr().err
    assert not db.exists()


@pytest.fixture(scope="module")
def p3_db(built_apps, tmp_path_factory) -> tuple[str, Path, Path]:
    """Jacobi (allgather and direct exchanges) and Gaussian elimination on 3 ranks, traced (oversubscribed
    on a 2-core machine: flagged), and a model fitted from a short measurement at p = 2."""
    library = built_apps[0][0].name
    tmp = tmp_path_factory.mktemp("p3")
    db, measured, model = tmp / "apps.db", tmp / "m.db", tmp / "model.json"
    common = ["--db", str(db), "--library", library, "--sizes", "24", "--np", "3", "--reps", "1"]
    assert main(["app", "jacobi", *common, "--exchange", "allgather,direct"]) == 0
    assert main(["app", "gauss", *common, "--configs", "original"]) == 0
    assert main(["run", "--db", str(measured), "--library", library, "--ops", "loggp,allreduce,allgather",
                 "--np", "2", "--sizes", "8,1K,16K", "--precision", "0.2", "--max-time", "0.05",
                 "--timeout", "60"]) == 0
    assert main(["fit", "--db", str(measured), "-o", str(model)]) == 0
    return library, db, model


def _predictions(db: Path, key_part: str) -> dict[tuple[str, str], dict]:
    with Store(db) as store:
        cases = {c["id"]: c for c in store.app_runs()}
        return {(cases[p["app_run_id"]]["config"], p["model"]): p
                for p in store.app_predictions(cases) if p["model_key"].endswith(key_part)}


@pytest.mark.mpi
@pytest.mark.parametrize("collectives", ["charged", "expanded"])
def test_three_ranks_are_traced_replayed_and_predicted(p3_db, collectives: str, capsys) -> None:
    """p = 3: the allgather and allreduce run by the libraries' algorithms at a p that is not a
    power of two (folded recursive doubling, Bruck), charged or expanded."""
    import math

    from commchar.simulate import selection
    from commchar.simulate.replay import ReplayRequest, replay
    from commchar.store.traces import extract_trace

    library, db, model = p3_db
    assert main(["app", "predict", "--db", str(db), "--model", str(model), "--collectives", collectives]) == 0
    out = capsys.readouterr().out
    assert "not predicted" not in out and "3*" in out  # oversubscribed, flagged
    predictions = _predictions(db, f":{collectives}")
    assert set(predictions) == {(config, m) for config in ("allgather", "direct", "original")
                                for m in ("loggps", "loggp")}
    for prediction in predictions.values():
        assert math.isfinite(prediction["predicted_s"]) and prediction["predicted_s"] > 0
        assert prediction["measured_s"] > 0 and len(prediction["ranks"]) == 3
    # the model has allgather and allreduce (fitted at p = 2): charged, they cost its T(n, 3)
    assert collectives in predictions[("allgather", "loggps")]["collectives"]
    with Store(db) as store:
        case = next(c for c in store.app_runs() if c["config"] == "allgather")
        directory = extract_trace(store, case["trace"]["median"], db.parent / f"trace-{collectives}")
    doc = replay(ReplayRequest(directory, str(model), library, collectives="expanded"))
    rows = [r for r in doc["signatures"] if r["p"] == 3]
    assert {r["call"] for r in rows} >= {"allgather"}
    for row in rows:  # the library's choice, simulated as such
        assert row["algorithm"] == selection.choose(library, row["call"].removesuffix("v"), row["n"], 3)


@pytest.mark.mpi
def test_a_case_that_cannot_be_predicted_is_listed_and_the_others_go_on(p3_db, capsys, monkeypatch) -> None:
    import sqlite3

    monkeypatch.setenv("COLUMNS", "400")  # the table's rows on one line each

    library, db, model = p3_db
    with Store(db) as store:
        cases = {c["config"]: c for c in store.app_runs()}
    connection = sqlite3.connect(db)
    def spoil(case: dict, sql: str) -> None:  # every run's trace: the prediction may take any
        for trace_id in case["trace"]["ids"]:
            connection.execute(sql, (trace_id,))

    with connection:
        spoil(cases["direct"], "UPDATE trace_ranks SET file_zlib = zeroblob(16) WHERE trace_id = ?")
    capsys.readouterr()
    assert main(["app", "predict", "--db", str(db), "--model", str(model), "--again"]) == 0
    out = capsys.readouterr().out
    assert "2 cases predicted" in out and "1 could not be" in out
    assert f"not predicted: {library} jacobi direct N=24 p=3: trace" in " ".join(out.split())
    listed = [line for line in out.splitlines() if "│ direct" in line]  # the table's row, not the old figures
    assert listed and "not predicted" in listed[0] and "–" in listed[0]
    assert "corrupt" in out
    # a trace whose rank files are gone from the store (its phases left): one line too
    with connection:
        spoil(cases["allgather"], "DELETE FROM trace_ranks WHERE trace_id = ?")
    assert main(["app", "predict", "--db", str(db), "--model", str(model), "--again"]) == 0
    out = " ".join(capsys.readouterr().out.split())
    assert "1 cases predicted" in out and "2 could not be" in out and "has no rank files" in out
    # no case predictable at all: one line, a failing exit
    with connection:
        for case in cases.values():
            spoil(case, "UPDATE trace_ranks SET file_zlib = zeroblob(16) WHERE trace_id = ?")
    connection.close()
    other = model.parent / "other.json"  # another model file: nothing predicted from it before
    other.write_text(model.read_text())
    assert main(["app", "predict", "--db", str(db), "--model", str(other)]) == 1
    err = capsys.readouterr().err.strip()
    assert err.startswith("commchar: error: no case could be predicted (3 tried") and "\n" not in err
