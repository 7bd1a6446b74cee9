"""`commchar replay` on synthetic traces (no MPI): measured against LogGPS and LogGP,
breakdowns, charged and expanded collectives, the store, and one-line errors."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from commchar.cli import main
from commchar.trace import format as fmt
from commchar.trace.synthetic import T_INIT_NS, exchange_program, write_rank

LOGGP = {"L": 2.0, "o_s": 0.5, "o_r": 0.75, "g": 0.1, "G": 0.001, "S": 65536}


@pytest.fixture
def model(tmp_path: Path) -> Path:
    path = tmp_path / "m.json"
    ops = {"allreduce:sum": {"segments": [{"n_min": 8, "n_max": 4096, "t_s": 3.0, "t_b": 0.001}],
                             "p_range": [2, 2]}}
    path.write_text(json.dumps({"format": "commchar-model", "version": 1,
                                "libraries": {"mpich": {"operations": ops, "loggp": LOGGP}}}))
    return path


def _replay_json(capsys, *args: str) -> dict:
    capsys.readouterr()
    assert main(["replay", *args, "--json"]) == 0
    return json.loads(capsys.readouterr().out)


def _late_receiver(directory: Path, n: int) -> None:
    """Rank 0 sends n bytes at once; rank 1 computes 50 us first. Measured: 60 us each."""
    directory.mkdir()
    for rank in range(2):
        rec = np.zeros(1, dtype=fmt.RECORD_DTYPE)
        if rank == 0:
            rec["call"], rec["peer"], rec["bytes"] = fmt.CALL_IDS["Send"], 1, n
            rec["t_start"] = rec["t_end"] = T_INIT_NS
        else:
            rec["call"], rec["peer"], rec["bytes2"], rec["aux"] = fmt.CALL_IDS["Recv"], 0, n, 0
            rec["t_start"] = rec["t_end"] = T_INIT_NS + 50_000
        write_rank(directory / f"rank-{rank}.cctrace", rank, 2, rec, t_finalize_ns=T_INIT_NS + 60_000)


def test_loggps_waits_for_the_rendezvous_and_loggp_does_not(capsys, tmp_path: Path, model: Path):
    _late_receiver(tmp_path / "t", 100_000)
    doc = _replay_json(capsys, "--dir", str(tmp_path / "t"), "--model", str(model))
    assert doc["format"] == "commchar-replay" and doc["trace"]["p"] == 2
    assert doc["measured"]["ranks"] == [60.0, 60.0]
    gps, gp = doc["predictions"]["loggps"], doc["predictions"]["loggp"]
    assert gps["rendezvous_messages"] == 1 and gp["rendezvous_messages"] == 0
    # LogGPS: the sender waits for the match at 50 us plus the clear-to-send (L); then computes 60 us
    assert gps["ranks"][0]["predicted"] == pytest.approx(52.0 + 60.0)
    assert gp["ranks"][0]["predicted"] == pytest.approx(0.5 + 60.0)
    sender = gps["ranks"][0]
    assert sender["sync_wait"] == pytest.approx(50.0 - 2.5)  # the message was there at o_s + L
    for prediction in (gps, gp):
        for r in prediction["ranks"]:
            assert r["compute"] + r["communication"] + r["sync_wait"] == pytest.approx(r["predicted"])
            assert r["error_pct"] == pytest.approx(100 * (r["predicted"] - r["measured"]) / r["measured"])
    # a CPU twice as fast halves the computation
    fast = _replay_json(capsys, "--dir", str(tmp_path / "t"), "--model", str(model), "--compute-scale", "0.5")
    assert fast["predictions"]["loggp"]["ranks"][0]["compute"] == pytest.approx(30.0)


def test_a_message_landing_ahead_in_its_page_is_charged_and_counted(capsys, tmp_path: Path, model: Path):
    """The late receiver's buffer 16 bytes ahead of the sender's in their pages: the model's
    misaligned_copy (2 ps a byte from 4 KiB) is charged to the receiver, and said."""
    n = 100_000
    placed = lambda at: n | ((fmt.PAGE_KNOWN | at) << fmt.SIZE_BITS)  # noqa: E731
    for name, (src, dst) in (("ahead", (16, 32)), ("behind", (32, 16)), ("next_line", (16, 96))):
        _late_receiver(tmp_path / name, n)
        for rank, column, at in ((0, "bytes", src), (1, "bytes2", dst)):
            path = tmp_path / name / f"rank-{rank}.cctrace"
            raw = bytearray(path.read_bytes())
            rec = np.frombuffer(raw, dtype=fmt.RECORD_DTYPE, offset=fmt.HEADER_BYTES)
            rec[column][0] = placed(at)
            path.write_bytes(bytes(raw))
    with_skew = json.loads(model.read_text())
    with_skew["libraries"]["mpich"]["loggp"]["misaligned_copy"] = {
        "per_byte": 2e-6, "steps": [[4096, 2e-6]], "skew_bytes": 16, "slow_ahead": [1, 31]}
    skew_model = tmp_path / "skew.json"
    skew_model.write_text(json.dumps(with_skew))
    ahead = _replay_json(capsys, "--dir", str(tmp_path / "ahead"), "--model", str(skew_model))
    behind = _replay_json(capsys, "--dir", str(tmp_path / "behind"), "--model", str(skew_model))
    plain = _replay_json(capsys, "--dir", str(tmp_path / "ahead"), "--model", str(model))
    assert ahead["misaligned_copies"] == {"messages": 1, "time": pytest.approx(0.2)}
    assert behind["misaligned_copies"]["messages"] == plain["misaligned_copies"]["messages"] == 0
    for key in ("loggps", "loggp"):
        receiver = [doc["predictions"][key]["ranks"][1] for doc in (ahead, behind, plain)]
        assert receiver[0]["predicted"] == pytest.approx(receiver[2]["predicted"] + 0.2)
        assert receiver[0]["communication"] == pytest.approx(receiver[2]["communication"] + 0.2)
        assert receiver[1]["predicted"] == pytest.approx(receiver[2]["predicted"])
    assert main(["replay", "--dir", str(tmp_path / "ahead"), "--model", str(skew_model)]) == 0
    said = " ".join(capsys.readouterr().out.split())  # the terminal wraps the line
    assert "1 copy (a message received, an all-to-all's block) landed a few bytes ahead of where it left" in said
    # 80 bytes ahead, the same place in the next line: fast in the class within 31 bytes,
    # slow in a class by the line, which leaves out a whole line ahead
    assert _replay_json(capsys, "--dir", str(tmp_path / "next_line"), "--model",
                        str(skew_model))["misaligned_copies"]["messages"] == 0
    copy = with_skew["libraries"]["mpich"]["loggp"]["misaligned_copy"]
    copy |= {"slow_ahead": [1, 255], "line_bytes": 64}
    skew_model.write_text(json.dumps(with_skew))
    for name, messages in (("next_line", 1), ("ahead", 1), ("behind", 0)):
        doc = _replay_json(capsys, "--dir", str(tmp_path / name), "--model", str(skew_model))
        assert doc["misaligned_copies"]["messages"] == messages, name
    copy["line_bytes"] = 0
    skew_model.write_text(json.dumps(with_skew))
    assert main(["replay", "--dir", str(tmp_path / "ahead"), "--model", str(skew_model)]) != 0
    assert "misaligned_copy.line_bytes" in capsys.readouterr().err


def test_a_message_whose_sender_wrote_its_buffer_is_charged_and_counted(capsys, tmp_path: Path, model: Path):
    """The send's written code picks the model's written_send excess, charged to the receiver:
    the whole buffer per byte, its ends alone at the step's own excess, nothing unwritten."""
    n = 100_000
    for name, code in (("whole", fmt.WRITTEN_WHOLE), ("ends", fmt.WRITTEN_ENDS), ("unwritten", 0)):
        _late_receiver(tmp_path / name, n)
        for rank, column, high in ((0, "bytes", fmt.PAGE_KNOWN | (code << fmt.WRITTEN_SHIFT) | 16),
                                   (1, "bytes2", fmt.PAGE_KNOWN | 16)):
            path = tmp_path / name / f"rank-{rank}.cctrace"
            raw = bytearray(path.read_bytes())
            rec = np.frombuffer(raw, dtype=fmt.RECORD_DTYPE, offset=fmt.HEADER_BYTES)
            rec[column][0] = n | (high << fmt.SIZE_BITS)
            path.write_bytes(bytes(raw))
    doc = json.loads(model.read_text())
    doc["libraries"]["mpich"]["loggp"]["written_send"] = {
        "ends": {"per_byte": 1e-5, "steps": [[4096, 1e-5]]},  # 0.04096 us a message
        "whole": {"per_byte": 3e-6, "steps": [[4096, 3e-6]]}}  # 0.3 us at 100 kB
    written = tmp_path / "written.json"
    written.write_text(json.dumps(doc))
    got = {name: _replay_json(capsys, "--dir", str(tmp_path / name), "--model", str(written))
           for name in ("whole", "ends", "unwritten")}
    plain = _replay_json(capsys, "--dir", str(tmp_path / "whole"), "--model", str(model))
    assert got["whole"]["written_sends"] == {"messages": 1, "time": pytest.approx(0.3)}
    assert got["ends"]["written_sends"] == {"messages": 1, "time": pytest.approx(0.04096)}
    assert got["unwritten"]["written_sends"]["messages"] == plain["written_sends"]["messages"] == 0
    for key in ("loggps", "loggp"):
        base = plain["predictions"][key]["ranks"][1]["predicted"]
        assert got["whole"]["predictions"][key]["ranks"][1]["predicted"] == pytest.approx(base + 0.3)
        assert got["ends"]["predictions"][key]["ranks"][1]["predicted"] == pytest.approx(base + 0.04096)
        assert got["unwritten"]["predictions"][key]["ranks"][1]["predicted"] == pytest.approx(base)
    assert main(["replay", "--dir", str(tmp_path / "whole"), "--model", str(written)]) == 0
    said = " ".join(capsys.readouterr().out.split())
    assert "1 message left a send buffer the program had written since its last send" in said


def test_the_flow_level_copies_a_message_when_the_receiver_turns_to_it(
        capsys, tmp_path: Path, model: Path):
    _late_receiver(tmp_path / "t", 100_000)
    args = ("--dir", str(tmp_path / "t"), "--model", str(model))
    free = _replay_json(capsys, *args)
    flow = _replay_json(capsys, *args, "--congestion", "flow")
    assert (free["congestion_model"], flow["congestion_model"]) == ("none", "flow")
    stream = 99_999 * LOGGP["G"]
    # the receiver computes 50 us first, then copies the bytes (o_r + (s-1)G) at either
    # level: a flow is the receiver's copy, as long alone as LogGP's receive
    free_gp, flow_gp = free["predictions"]["loggp"]["ranks"], flow["predictions"]["loggp"]["ranks"]
    assert free_gp[1]["predicted"] == pytest.approx(50 + 0.75 + stream + 10)
    assert flow_gp == free_gp
    assert flow["predictions"]["loggps"]["ranks"] == free["predictions"]["loggps"]["ranks"]


def test_collectives_charged_from_the_model_or_expanded(capsys, tmp_path: Path, model: Path):
    exchange_program(tmp_path / "t", p=2, iterations=40, allreduce_every=10)
    charged = _replay_json(capsys, "--dir", str(tmp_path / "t"), "--model", str(model))
    [sig] = charged["signatures"]
    assert (sig["call"], sig["p"], sig["n"], sig["calls"], sig["mode"]) == ("allreduce", 2, 64, 4, "charged")
    assert sig["cost_us"] == pytest.approx(3.0 + 0.001 * 64)
    assert sig["algorithm"].startswith("allreduce:")
    expanded = _replay_json(capsys, "--dir", str(tmp_path / "t"), "--model", str(model),
                            "--collectives", "expanded", "--emit-goal", str(tmp_path / "t.goal"))
    assert expanded["signatures"][0]["mode"] == "expanded"
    assert expanded["predictions"]["loggps"]["makespan"] != charged["predictions"]["loggps"]["makespan"]
    assert (tmp_path / "t.goal").read_text().startswith("num_ranks 2")
    # the phase mark splits each rank's time in two, measured and predicted
    rank0 = charged["predictions"]["loggps"]["ranks"][0]
    assert [ph["level"] for ph in rank0["phases"]] == [None, 1]
    assert sum(ph["predicted"] for ph in rank0["phases"]) == pytest.approx(rank0["predicted"])
    assert sum(ph["measured"] for ph in rank0["phases"]) == pytest.approx(rank0["measured"])


def test_a_charged_collective_pays_the_measured_mean_or_the_mean_fit(capsys, tmp_path: Path, model: Path):
    """A program's loop pays the sum of its calls: the charged cost is the measured mean
    where the model has one at the call's n and p, else the mean fit's T(n, p) where the
    operation has one, the median fit's where it has none."""
    exchange_program(tmp_path / "t", p=2, iterations=40, allreduce_every=10)
    data = json.loads(model.read_text())
    data["libraries"]["mpich"]["operations"]["allreduce:sum"]["mean"] = {
        "segments": [{"n_min": 8, "n_max": 32, "t_s": 9.0, "t_b": 0.5},
                     {"n_min": 33, "n_max": 4096, "t_s": 4.0, "t_b": 0.002}]}
    with_mean = tmp_path / "mean.json"
    with_mean.write_text(json.dumps(data))
    [sig] = _replay_json(capsys, "--dir", str(tmp_path / "t"), "--model", str(with_mean))["signatures"]
    assert (sig["n"], sig["mode"]) == (64, "charged")
    assert sig["cost_us"] == pytest.approx(4.0 + 0.002 * 64)
    [median] = _replay_json(capsys, "--dir", str(tmp_path / "t"), "--model", str(model))["signatures"]
    assert median["cost_us"] == pytest.approx(3.0 + 0.001 * 64)
    # where the model's runs measured the call's size at its p, their mean, not the fit's
    data["libraries"]["mpich"]["operations"]["allreduce:sum"]["mean"]["measured"] = [
        {"p": 2, "steps": [[8, 4.5], [64, 4.7], [4096, 12.0]]}]
    with_mean.write_text(json.dumps(data))
    [sig] = _replay_json(capsys, "--dir", str(tmp_path / "t"), "--model", str(with_mean))["signatures"]
    assert (sig["cost_us"], sig["cost_basis"]) == (pytest.approx(4.7), "measured")
    assert median["cost_basis"] == "fit"


def test_a_signature_the_model_lacks_is_expanded_and_said(capsys, tmp_path: Path, model: Path):
    directory = tmp_path / "t"
    directory.mkdir()
    for rank in range(2):
        rec = np.zeros(1, dtype=fmt.RECORD_DTYPE)
        rec["call"], rec["bytes"], rec["bytes2"] = fmt.CALL_IDS["Bcast"], 512, 512
        rec["t_start"] = rec["t_end"] = T_INIT_NS + 1000
        write_rank(directory / f"rank-{rank}.cctrace", rank, 2, rec, t_finalize_ns=T_INIT_NS + 2000)
    doc = _replay_json(capsys, "--dir", str(directory), "--model", str(model))
    assert doc["signatures"][0]["mode"] == "expanded"
    assert any("no bcast" in w for w in doc["warnings"])
    text_args = ["replay", "--dir", str(directory), "--model", str(model)]
    capsys.readouterr()
    assert main(text_args) == 0
    out = capsys.readouterr().out
    assert "LogGPS" in out and "sync wait" in out and "warning: the model has no bcast" in out


@pytest.mark.parametrize("measured", [True, False], ids=["beside-measurements", "traces-alone"])
def test_a_stored_trace_keeps_its_prediction(capsys, tmp_path: Path, model: Path, measured: bool):
    from commchar.store import Store
    from commchar.store.trace_predictions import predictions
    from commchar.store.traces import RankRow, add_rank, begin_trace, finish_trace

    from test_report import make_fixture_db

    from commchar.report import ReportOptions, build_report

    _late_receiver(tmp_path / "t", 100)
    db = tmp_path / "c.db"
    if measured:
        make_fixture_db(db, libraries=("mpich",), ps=(2,))
    with Store(db) as store:
        tid = begin_trace(store, commchar_version="test", library="mpich", p=2, program=["./app"],
                          launcher_cmd=["mpirun"], env={}, oversubscribed=False)
        for rank in range(2):
            add_rank(store, tid, RankRow(rank, "host", 60_000, 1, True, None, {}),
                     tmp_path / "t" / f"rank-{rank}.cctrace")
        finish_trace(store, tid, status="complete", exit_status=0, wall_s=0.1)
    doc = _replay_json(capsys, "--db", str(db), "--trace", str(tid), "--model", str(model))
    assert doc["trace"]["id"] == tid and doc["model"]["library"] == "mpich"
    with Store(db) as store:
        [saved] = predictions(store)
    assert saved["trace_id"] == tid and saved["result"]["predictions"] == doc["predictions"]
    # the report shows it: the study's table and the breakdown figure
    page = build_report(ReportOptions(str(db))).html
    assert "Traced programs: measured and predicted" in page
    assert f"Measured and predicted: trace {tid} (./app)" in page and 'id="fig-replay-1-breakdown"' in page


@pytest.mark.parametrize("args, needle", [
    ([], "exactly one of --dir D and --trace ID"),
    (["--dir", "{tmp}/missing"], "cannot read trace directory"),
    (["--dir", "{tmp}/t", "--collectives", "expanded", "--compute-scale", "-1"], "compute-scale"),
    (["--dir", "{tmp}/t", "--emit-goal", "{tmp}/x.goal"], "--collectives expanded"),
    (["--dir", "{tmp}/t", "--library", "openmpi"], "no library 'openmpi'"),
    (["--trace", "1", "--db", "{tmp}/none.db"], "does not exist"),
])
def test_bad_inputs_give_one_line(capsys, tmp_path: Path, model: Path, args: list[str], needle: str):
    _late_receiver(tmp_path / "t", 8)
    capsys.readouterr()
    code = main(["replay", "--model", str(model), *[a.format(tmp=tmp_path) for a in args]])
    err = capsys.readouterr().err.strip()
    assert code != 0 and len(err.splitlines()) == 1 and needle in err, err


def test_a_truncated_trace_is_one_line(capsys, tmp_path: Path, model: Path):
    _late_receiver(tmp_path / "t", 8)
    path = tmp_path / "t" / "rank-1.cctrace"
    path.write_bytes(path.read_bytes()[:-20])
    capsys.readouterr()
    assert main(["replay", "--dir", str(tmp_path / "t"), "--model", str(model)]) != 0
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and "rank-1.cctrace: truncated or corrupt" in err


@pytest.mark.mpi
@pytest.mark.parametrize("name", ["openmpi", "mpich"])
def test_a_traced_program_is_replayed(capsys, tmp_path: Path, model: Path, mpi_libraries, name: str):
    """End to end: a real program traced with p = 2, stored, replayed from the store."""
    import subprocess
    import sys

    found = {lib.name: lib for lib in mpi_libraries}
    if name not in found:
        pytest.fail(f"{name} not installed: `make setup` installs both libraries")
    program = tmp_path / "replay_mix"
    source = Path(__file__).resolve().parent / "programs" / "replay_mix.c"
    subprocess.run([found[name].mpicc, "-std=c11", "-O1", "-o", str(program), str(source)],
                   check=True, capture_output=True, timeout=120)
    db = tmp_path / "t.db"
    traced = subprocess.run([sys.executable, "-m", "commchar", "trace", "--db", str(db), "--library", name,
                             "--np", "2", "--timeout", "120", "--", str(program), "6", "100", "200000"],
                            capture_output=True, text=True, timeout=180)
    assert traced.returncode == 0, traced.stderr
    assert "replay_mix: 6 iterations" in traced.stdout
    doc = _replay_json(capsys, "--db", str(db), "--trace", "1", "--model", str(model), "--library", "mpich")
    gps, gp = doc["predictions"]["loggps"], doc["predictions"]["loggp"]
    assert doc["trace"]["p"] == 2 and all(t > 0 for t in doc["measured"]["ranks"])
    # 6 x 200 kB per direction and phase: rendezvous under LogGPS, eager under LogGP
    assert gps["rendezvous_messages"] == 12 and gp["rendezvous_messages"] == 0
    assert [s["call"] for s in doc["signatures"]] == ["allreduce"] and doc["signatures"][0]["calls"] == 6
    for r in gps["ranks"]:
        assert [ph["level"] for ph in r["phases"]] == [None, 1, 2]
        assert r["compute"] > 6 * 100  # the busy loops, at least
        assert r["compute"] + r["communication"] + r["sync_wait"] == pytest.approx(r["predicted"])


def test_the_nodes_detours_are_drawn_by_seed_and_the_median_run_is_the_answer(capsys, tmp_path: Path):
    """A model with a noise section: every replay draws --noise-runs seeds and keeps the run of
    the median time; the same request gives the same answer, --noise off none, and the
    detours slow a program of messages alone. Measured at p = 2, they are in the costs of a
    message already: a replay of 4 ranks draws half of each rank's, one of 2 ranks none."""
    exchange_program(tmp_path / "t", p=4, iterations=400, sizes=(64,), compute_ns=0)
    noise = {"by_p": [{"p": 2, "rank_seconds": 1.0, "rate_per_s": 2000.0, "fraction": 0.05,
                       "bins": [[16.0, 2000.0, 25.0]]}]}
    path = tmp_path / "noisy.json"
    path.write_text(json.dumps({"format": "commchar-model", "version": 1,
                                "libraries": {"mpich": {"operations": {}, "loggp": LOGGP | {"noise": noise}}}}))
    args = ("--dir", str(tmp_path / "t"), "--model", str(path))
    doc = _replay_json(capsys, *args)
    again = _replay_json(capsys, *args)
    quiet = _replay_json(capsys, *args, "--noise", "off")
    three = _replay_json(capsys, *args, "--noise-runs", "3")
    drawn = doc["noise"]
    assert drawn["runs"] == 5 and drawn["measured_p"] == 2 and drawn["held_ranks"] == 2
    assert drawn["measured_fraction"] == pytest.approx(0.05) and drawn["fraction"] == pytest.approx(0.025)
    spans = drawn["makespans"]["loggps"]
    assert spans == sorted(spans) and spans[0] < spans[-1]
    assert doc["predictions"]["loggps"]["makespan"] == pytest.approx(spans[2])
    for key in ("loggps", "loggp"):
        assert again["predictions"][key]["ranks"] == doc["predictions"][key]["ranks"]
    assert quiet["noise"] is None and three["noise"]["runs"] == 3
    slower = doc["predictions"]["loggps"]["makespan"] / quiet["predictions"]["loggps"]["makespan"] - 1
    assert 0.01 < slower < 0.08
    # two ranks: the costs hold both ranks' detours, nothing is drawn, one run answers
    exchange_program(tmp_path / "two", iterations=400, sizes=(64,), compute_ns=0)
    two = ("--dir", str(tmp_path / "two"), "--model", str(path))
    held, plain = _replay_json(capsys, *two), _replay_json(capsys, *two, "--noise", "off")
    assert held["noise"]["runs"] == 1 and held["noise"]["fraction"] == 0.0
    assert held["predictions"]["loggps"]["ranks"] == plain["predictions"]["loggps"]["ranks"]
    capsys.readouterr()
    assert main(["replay", *args, "--noise-runs", "0"]) == 2
    assert "--noise-runs must be a whole number from 1 to 99" in capsys.readouterr().err
