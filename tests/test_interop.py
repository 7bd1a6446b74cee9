"""Peer tools' numbers in and out: OSU and IMB output files (written by the real
programs on this machine, tests/data/peers/README.md) imported, fitted, reported and
predicted; a fitted model exported as SimGrid/SMPI and LogGOPSim parameters."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from commchar.cli import main
from commchar.interop import imb, osu
from commchar.interop.importer import import_files
from commchar.interop.loggopsim import loggopsim_params
from commchar.interop.p2pcost import read
from commchar.interop.simgrid import smpi_config
from commchar.modelfile import ModelFile
from commchar.store import Store

PEERS = Path(__file__).parent / "data" / "peers"
OSU74 = PEERS / "osu-7.4-openmpi.txt"
OSU53 = PEERS / "osu-5.3-openmpi.txt"
IMB = PEERS / "imb-2021.11-openmpi.txt"
IMB_OFF_CACHE = PEERS / "imb-2021.11-openmpi-off_cache.txt"
COLLECTIVES = {"barrier", "bcast", "scatter", "gather", "allgather", "alltoall", "reduce", "allreduce",
               "reduce_scatter"}


def cli(capsys, *args):
    code = main([str(a) for a in args])
    out, err = capsys.readouterr()
    return code, out, err


def _row(path: Path, title: str, size: int) -> list[str]:
    """The fixture's line for `size` in the block titled `title` (read independently of the parser)."""
    block = path.read_text().split(title, 1)[1]
    for line in block.splitlines()[1:]:
        if line.split() and line.split()[0] == str(size):
            return line.split()
    raise AssertionError(f"{size} not in {title}")


def test_osu_74_every_benchmark_and_percentile_columns():
    parsed = osu.parse(OSU74, p=2)
    assert parsed.tool == "osu" and parsed.version == "7.4"
    ops = {pt.op for pt in parsed.points}
    assert {"pingpong", "bw", "bibw"} | COLLECTIVES <= ops
    lat = next(pt for pt in parsed.points if pt.op == "pingpong" and pt.n_bytes == 1024)
    row = _row(OSU74, "OSU MPI Latency Test", 1024)
    assert lat.t_us == float(row[1]) and lat.extra["percentiles"] == {
        "p50": float(row[2]), "p90": float(row[3]), "p99": float(row[4])}
    assert "mean" in lat.statistic and "not a median" in lat.statistic
    # bandwidth becomes the time of one message of the window (MB = 1e6 B)
    bw = next(pt for pt in parsed.points if pt.op == "bw" and pt.n_bytes == 65536)
    assert bw.t_us == pytest.approx(65536 / float(_row(OSU74, "OSU MPI Bandwidth Test", 65536)[1]))
    bibw = next(pt for pt in parsed.points if pt.op == "bibw" and pt.n_bytes == 65536)
    assert bibw.t_us == pytest.approx(2 * 65536 / float(_row(OSU74, "Bi-Directional Bandwidth Test", 65536)[1]))
    # -f columns: per-rank min and max, iterations; scatter's size is per rank
    sc = next(pt for pt in parsed.points if pt.op == "scatter" and pt.extra["tool_size_bytes"] == 1024)
    row = _row(OSU74, "OSU MPI Scatter Latency Test", 1024)
    assert sc.n_bytes == 2048 and sc.p == 2 and sc.t_us == float(row[1])
    assert sc.extra["rank_min_us"] == float(row[2]) and sc.extra["rank_max_us"] == float(row[3])
    assert sc.reps == int(row[4])
    barrier = [pt for pt in parsed.points if pt.op == "barrier"]
    assert len(barrier) == 1 and barrier[0].n_bytes == 0


def test_osu_programs_without_a_commchar_operation_are_named_not_misread(tmp_path):
    mixed = tmp_path / "mixed.txt"
    # a one-sided program's block after the fixture's last one: its lines are not that program's
    mixed.write_text(OSU74.read_text() + "\n# OSU MPI_Get latency Test v7.4\n# Size          Latency (us)\n"
                     "1                       3.20\n")
    parsed = osu.parse(mixed, p=2)
    assert len(parsed.points) == len(osu.parse(OSU74, p=2).points)
    assert any("MPI_Get latency" in name for name in parsed.skipped)


def test_osu_53_and_collectives_need_p():
    parsed = osu.parse(OSU53, p=2)
    assert parsed.version == "5.3" and {"pingpong", "bw", "bibw"} | COLLECTIVES <= {pt.op for pt in parsed.points}
    with pytest.raises(Exception, match="give --np"):
        osu.parse(OSU53, p=None)


def test_imb_mpi1_blocks():
    parsed = imb.parse(IMB)
    assert parsed.tool == "imb" and parsed.version.startswith("2021")
    ops = {pt.op for pt in parsed.points}
    assert {"pingpong"} | COLLECTIVES <= ops
    assert "PingPing" in parsed.skipped and "Sendrecv" in parsed.skipped
    ar = next(pt for pt in parsed.points if pt.op == "allreduce" and pt.n_bytes == 1024)
    row = _row(IMB, "Benchmarking Allreduce", 1024)
    assert (ar.reps, ar.extra["rank_min_us"], ar.t_us, ar.extra["rank_avg_us"]) == (
        int(row[1]), float(row[2]), float(row[3]), float(row[4]))
    ag = next(pt for pt in parsed.points if pt.op == "allgather" and pt.extra["tool_size_bytes"] == 1024)
    assert ag.n_bytes == 2048 and ag.p == 2


@pytest.mark.parametrize("tool, path, library", [("osu", OSU74, "openmpi"), ("imb", IMB, "openmpi")])
def test_import_fit_report_predict(tmp_path, capsys, tool, path, library):
    db, model = tmp_path / "peer.db", tmp_path / "model.json"
    code, out, err = cli(capsys, "import", tool, path, "--library", library, "--np", 2, "--db", db)
    assert code == 0, err
    assert "means, not medians" in " ".join(out.split())
    label = f"{library}-{tool}"
    with Store(db, readonly=True) as store:
        points = store.points()
        assert {pt["library"] for pt in points} == {label}
        assert all(pt["extra"]["source"]["tool"] == tool and "mean" in pt["extra"]["source"]["statistic"]
                   for pt in points)
        assert all(pt["t_mean_us"] == pt["t_us"] and not pt["precision_met"] for pt in points)
        run = store.runs()[0]
        assert run["status"] == "complete" and run["options"]["import"]["statistic"] == "mean"
    code, out, err = cli(capsys, "fit", "--db", db, "--call-costs", "off", "-o", model)
    assert code == 0, err
    assert "means, not medians" in " ".join(out.split())
    data = json.loads(model.read_text())
    lib = data["libraries"][label]
    assert "pingpong:send" in lib["operations"] and "allreduce:sum" in lib["operations"]
    assert "means, not medians" in lib["imported_from"]
    code, out, err = cli(capsys, "predict", model, "allreduce", "--n", "1K", "--p", 2)
    assert code == 0, err
    assert "means, not medians" in " ".join(out.split())
    report = tmp_path / "report.html"
    code, out, err = cli(capsys, "report", "--db", db, "-o", report)
    assert code == 0, err
    html = report.read_text()
    assert f"{tool.upper()} " in html and "means]" in html and "not medians" in html


def test_imb_off_cache_points_are_cache_cold_and_fitted_apart(tmp_path, capsys):
    parsed = imb.parse(IMB_OFF_CACHE)
    assert {pt.cache for pt in parsed.points} == {"cold"}
    assert all(pt.extra["tool_cache"] == "-off_cache 16" for pt in parsed.points)
    assert {pt.cache for pt in imb.parse(IMB).points} == {"warm"}
    db, model = tmp_path / "peer.db", tmp_path / "model.json"
    code, out, err = cli(capsys, "import", "imb", IMB_OFF_CACHE, IMB, "--library", "openmpi", "--db", db)
    assert code == 2 and "import the cache-cold files on their own" in err and len(err.strip().splitlines()) == 1
    code, out, err = cli(capsys, "import", "imb", IMB_OFF_CACHE, "--library", "openmpi", "--db", db)
    assert code == 0, err
    with Store(db, readonly=True) as store:
        assert {pt["cache"] for pt in store.points()} == {"cold"}
    code, out, err = cli(capsys, "fit", "--db", db, "--call-costs", "off", "-o", model)
    assert code == 0, err
    assert "openmpi-imb cache-cold" in json.loads(model.read_text())["libraries"]


def test_bad_peer_files_are_one_line_errors(tmp_path, capsys):
    db = tmp_path / "x.db"
    junk = tmp_path / "junk.txt"
    junk.write_text("hello\nworld\n")
    code, out, err = cli(capsys, "import", "osu", junk, "--library", "openmpi", "--db", db)
    assert code == 2 and "no OSU benchmark output" in err and len(err.strip().splitlines()) == 1
    code, out, err = cli(capsys, "import", "imb", junk, "--library", "openmpi", "--db", db)
    assert code == 2 and "no IMB benchmark output" in err
    broken = tmp_path / "broken.txt"
    broken.write_text(OSU74.read_text().replace("\n8 ", "\n8 x", 1) if "\n8 " in OSU74.read_text()
                      else "# OSU MPI Latency Test v7.4\n# Size       Avg Latency(us)\n8 abc\n")
    code, out, err = cli(capsys, "import", "osu", broken, "--library", "openmpi", "--db", db)
    assert code == 2 and "line" in err
    code, out, err = cli(capsys, "import", "osu", tmp_path / "missing.txt", "--library", "openmpi", "--db", db)
    assert code == 2 and "no such file" in err
    code, out, err = cli(capsys, "import", "osu", OSU74, OSU74, "--library", "openmpi", "--np", 2, "--db", db)
    assert code == 2 and "already read" in err
    assert not db.exists() or Store(db, readonly=True).points() == []  # a bad file stores nothing


def _model(loggp: bool) -> ModelFile:
    lib = {"version": "test", "operations": {"pingpong:send": {"kind": "p2p", "segments": [
        {"n_min": 0, "n_max": 4096, "t_s": "1.5", "t_b": "0.0004"},
        {"n_min": 8192, "n_max": None, "t_s": "6", "t_b": "0.0001"}]}}}
    if loggp:
        lib["loggp"] = {"L": 0.6, "o_s": 0.3, "o_r": 0.4, "g": 0.2, "G": 0.0001, "O": 0.00002, "S": 8192}
    return ModelFile.from_dict({"format": "commchar-model", "version": 1, "libraries": {"lib": lib}})


def _sections(value: str) -> list[list[float]]:
    return sorted([float(x) for x in part.split(":")] for part in value.split(";"))


def _smpi_section(sections: list[list[float]], n: float) -> list[float]:
    """SimGrid's rule (Configuring SimGrid, smpi/os): the section with the largest boundary below n,
    the first one for sizes below every boundary."""
    chosen = sections[0]
    for section in sections:
        if n > section[0]:
            chosen = section
    return chosen[1:]


@pytest.mark.parametrize("loggp", [True, False])
def test_smpi_parameters_reproduce_the_model(loggp):
    model = _model(loggp)
    config = smpi_config(read(model, None))
    lat = _sections(config.options["smpi/lat-factor"])
    bw = _sections(config.options["smpi/bw-factor"])
    for n in (0, 8, 1024, 4096, 8192, 65536, 1 << 22):
        t = (_smpi_section(lat, n)[0] * config.link_latency_us
             + n * 1e6 / (config.link_bandwidth_Bps * _smpi_section(bw, n)[0]))
        if loggp:
            os_ = _smpi_section(_sections(config.options["smpi/os"]), n)
            or_ = _smpi_section(_sections(config.options["smpi/or"]), n)
            t += (os_[0] + os_[1] * n + or_[0] + or_[1] * n) * 1e6
        assert t == pytest.approx(model.time("lib", "pingpong:send", n, 2).t_us, rel=1e-6), n
    assert ("smpi/send-is-detached-thresh" in config.options) == loggp
    assert config.platform_link().startswith('<link id="link" bandwidth="')


def test_loggopsim_parameters(tmp_path, capsys):
    params = loggopsim_params(read(_model(True), None))
    assert params.values == {"L": 600, "o": 350, "g": 200, "G": pytest.approx(0.1), "O": 0, "S": 8192}
    path = tmp_path / "m.json"
    path.write_text(json.dumps(_model(True).data))
    code, out, err = cli(capsys, "export-model", path, "--to", "loggopsim")
    assert code == 0 and out.split() == ["--LogGOPS_L=600", "--LogGOPS_o=350", "--LogGOPS_g=200",
                                         "--LogGOPS_G=0.1", "--LogGOPS_O=0", "--LogGOPS_S=8192"]
    assert "mean of o_s" in err
    code, out, err = cli(capsys, "export-model", path, "--to", "smpi")
    assert code == 0 and "--cfg=smpi/lat-factor:0:" in out and "--cfg=smpi/os:0:" in out
    code, out, err = cli(capsys, "export-model", path, "--to", "smpi", "--library", "nope")
    assert code == 2 and "no library 'nope'" in err
