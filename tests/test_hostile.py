"""Hostile inputs: every verb against a directory of bad files and values.

Each case runs `commchar` in a child under a memory limit and a timeout and
must end in one line on stderr and a non-zero exit, never a traceback, and
leave any store it only reads byte for byte as it was. The cases run a few at
a time (the command line's start-up dominates), then each is asserted alone.
"""

from __future__ import annotations

import hashlib
import json
import sqlite3
import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import numpy as np
import pytest

from _stores import store_with_points

MEMORY_LIMIT = 2 * 2**30  # bytes of address space: a 3.7 GB range cannot fit
TIMEOUT_S = 60
REPO = Path(__file__).resolve().parents[1]
EXAMPLE_MODEL = REPO / "examples" / "ap3000-mpi.json"


def _model(path: Path, edit) -> None:  # type: ignore[no-untyped-def]
    data = json.loads(EXAMPLE_MODEL.read_text())
    edit(data)
    path.write_text(json.dumps(data))


def _nested(depth: int) -> str:
    return '{"a":' * depth + "1" + "}" * depth


def make_hostile_inputs(d: Path) -> None:
    """The bad inputs, item by item."""
    huge = "9" * 5000
    (d / "binary").write_bytes(b"\x00\x01\xff\xfebinary\x00" * 64)
    (d / "empty").write_bytes(b"")
    (d / "text.db").write_text("not a database, only text\n" * 100)
    # models
    _model(d / "bigint.json", lambda m: m["libraries"]["mpi"]["operations"]["bcast"]["segments"][0]
           .__setitem__("t_s", 10**400))
    (d / "bigint-digits.json").write_text(EXAMPLE_MODEL.read_text().replace('"version": 1', f'"version": {huge}', 1))
    (d / "deep.json").write_text(EXAMPLE_MODEL.read_text().replace(
        '"format"', f'"unknown": {_nested(900)}, "format"', 1))
    _model(d / "p1e300.json", lambda m: [op.__setitem__("p_range", [2, 1e300])
                                         for op in m["libraries"]["mpi"]["operations"].values() if "p_range" in op])
    # points
    header = "library,op,p,n_bytes,t_us,extra\n"
    (d / "deep-extra.csv").write_text(header + f'x,pingpong,2,0,1,"{_nested(60000)}"\nx,pingpong,2,8,2,\n'
                                      .replace('"a"', '""a""'))
    (d / "bigint-extra.csv").write_text(header + f'x,pingpong,2,0,1,"{{""k"": {huge}}}"\nx,pingpong,2,8,2,\n')
    (d / "n1e308.csv").write_text(header + "x,pingpong,2,0,1,\nx,pingpong,2,1e308,2,\n")
    (d / "bigint.json-points").write_text(f'[{{"op": "pingpong", "p": 2, "n_bytes": {huge}, "t_us": 1}}]')
    # stores
    store_with_points(d / "good.db")
    sqlite3.connect(d / "foreign.db").executescript("CREATE TABLE x (y); INSERT INTO x VALUES (1);")
    store_with_points(d / "newer.db")
    with sqlite3.connect(d / "newer.db") as db:
        db.execute("UPDATE meta SET value = '99' WHERE key = 'schema_version'")
    store_with_points(d / "badjson.db")
    with sqlite3.connect(d / "badjson.db") as db:
        db.execute("UPDATE runs SET options_json = '{not json'")
        db.execute("UPDATE points SET extra_json = '[[[' WHERE id = 1")
    store_with_points(d / "corrupt.db", sizes=400)
    with sqlite3.connect(d / "corrupt.db") as db:
        page_size = db.execute("PRAGMA page_size").fetchone()[0]
        pages = db.execute("PRAGMA page_count").fetchone()[0]
    with (d / "corrupt.db").open("r+b") as fh:  # pages after the schema's, where the points are
        for page in range(pages // 3, pages - 1):
            fh.seek(page * page_size)
            fh.write(b"\xa5" * page_size)
    for name in ("good.db", "foreign.db", "newer.db", "badjson.db", "corrupt.db"):
        assert not (d / f"{name}-wal").exists()
    (d / "cycle.goal").write_text("num_ranks 1\nrank 0 {\n  a: calc 1\n  b: calc 2\n  a requires b\n"
                                  "  b requires a\n}\n")
    make_import_and_trace_inputs(d)


def make_import_and_trace_inputs(d: Path) -> None:
    """The bad imports, traces and outputs that need files."""
    # 1. 8000 distinct ping-pong sizes: a quadratic regime search would need GiBs
    (d / "sizes8000.csv").write_text("library,op,p,n_bytes,t_us\n" + "".join(
        f"x,pingpong,2,{8 * k},{2 + 8e-3 * k:.4f}\n" for k in range(8000)))
    # 2-4. peer tools' files with sizes, process counts and bandwidths a store cannot hold
    osu = "# OSU MPI Latency Test v7.4\n# Size          Avg Latency(us)\n"
    (d / "osu-huge-size.txt").write_text(osu + "0    1.50\n99999999999999999999999999999999    2.00\n")
    (d / "osu-zero-latency.txt").write_text(osu + "0    0.00\n8    0.00\n")
    (d / "osu-zero-bw.txt").write_text("# OSU MPI Bandwidth Test v7.4\n# Size      Bandwidth (MB/s)\n"
                                       "1    0.00\n2    0.00\n")
    imb = ("#----\n# Benchmarking Bcast\n# #processes = {p}\n#----\n"
           "       #bytes #repetitions  t_min[usec]  t_max[usec]  t_avg[usec]\n"
           "            0         1000         0.03         0.04         0.03\n"
           "        {n}         1000         1.00         1.20         1.10\n")
    (d / "imb-huge-p.txt").write_text(imb.format(p=3037000500, n=8))
    (d / "imb-huge-bytes.txt").write_text(imb.format(p=4, n=10**30))
    from commchar.interop.importer import import_files  # a store holding points of time 0.00 (invalid)

    import_files(d / "zero.db", "osu", [str(d / "osu-zero-latency.txt")], "openmpi")
    # 5. a trace whose messages were edited to 2^56 bytes
    from commchar.trace import format as fmt
    from commchar.trace.synthetic import exchange_program

    exchange_program(d / "trace-2e56", iterations=4)
    for path in (d / "trace-2e56").glob("rank-*.cctrace"):
        raw = path.read_bytes()
        records = np.frombuffer(raw, dtype=fmt.RECORD_DTYPE, offset=fmt.HEADER_BYTES).copy()
        for column in ("bytes", "bytes2"):
            records[column][records[column] > 0] = 2**56
        path.write_bytes(raw[:fmt.HEADER_BYTES] + records.tobytes())
    (d / "loggp.json").write_text(json.dumps({"format": "commchar-model", "version": 1, "libraries": {
        "mpich": {"operations": {}, "loggp": {"L": 2.0, "o_s": 0.5, "o_r": 0.75, "g": 0.1, "G": 0.001}}}}))


# (id, arguments with {d} for the directory, the store the verb only reads or None)
CASES = [
    # 1. ranges built before any limit
    ("predict-huge-p-range", ["predict", str(EXAMPLE_MODEL), "bcast", "--n", "1K", "--p", "2:1000000000000"], None),
    ("advise-huge-p-range", ["advise", str(EXAMPLE_MODEL), "--p", "2:1000000000000"], None),
    ("run-sizes-step-1", ["run", "--db", "{d}/new1.db", "--sizes", "0:64M:+1"], None),
    ("run-np-huge-range", ["run", "--db", "{d}/new1.db", "--np", "2:1000000000000"], None),
    # 3. refused before the launcher
    ("run-np-1e30", ["run", "--db", "{d}/new1.db", "--np", "1" + "0" * 30], None),
    ("run-np-100000", ["run", "--db", "{d}/new1.db", "--np", "100000", "--ops", "barrier"], None),
    ("run-max-reps-beyond-kernel", ["run", "--db", "{d}/new1.db", "--max-reps", "1000000000"], None),
    ("run-np-0", ["run", "--db", "{d}/new1.db", "--np", "0", "--ops", "barrier"], None),
    ("run-binary-hostfile", ["run", "--db", "{d}/new1.db", "--hostfile", "{d}/binary", "--ops", "barrier"], None),
    # 5. concurrency refused up front
    ("run-library-twice", ["run", "--db", "{d}/new1.db", "--library", "mpich,mpich"], None),
    # 6. read-only verbs and the store policy
    ("export-foreign", ["export", "--db", "{d}/foreign.db"], "foreign.db"),
    ("export-empty", ["export", "--db", "{d}/empty"], "empty"),
    ("export-binary", ["export", "--db", "{d}/binary"], "binary"),
    ("runs-text", ["runs", "--db", "{d}/text.db"], "text.db"),
    ("runs-newer", ["runs", "--db", "{d}/newer.db"], "newer.db"),
    ("export-newer", ["export", "--db", "{d}/newer.db"], "newer.db"),
    ("report-newer", ["report", "--db", "{d}/newer.db", "-o", "{d}/r.html"], "newer.db"),
    ("fit-foreign", ["fit", "--db", "{d}/foreign.db"], "foreign.db"),
    ("resume-missing-db", ["run", "--db", "{d}/missing.db", "--resume", "1"], None),
    # 9. tracebacks
    ("runs-corrupt", ["runs", "--db", "{d}/corrupt.db"], "corrupt.db"),
    ("fit-corrupt", ["fit", "--db", "{d}/corrupt.db"], "corrupt.db"),
    ("report-corrupt", ["report", "--db", "{d}/corrupt.db", "-o", "{d}/r.html"], "corrupt.db"),
    ("export-corrupt", ["export", "--db", "{d}/corrupt.db", "--samples"], "corrupt.db"),
    ("runs-bad-json-column", ["runs", "--db", "{d}/badjson.db"], "badjson.db"),
    ("export-bad-json-column", ["export", "--db", "{d}/badjson.db", "--format", "json"], "badjson.db"),
    ("fit-bad-json-column", ["fit", "--db", "{d}/badjson.db"], "badjson.db"),
    ("predict-bigint-model", ["predict", "{d}/bigint.json", "bcast", "--n", "8", "--p", "4"], None),
    ("predict-bigint-digits", ["predict", "{d}/bigint-digits.json", "bcast", "--n", "8", "--p", "4"], None),
    ("advise-deep-model", ["advise", "{d}/deep.json"], None),
    ("predict-binary-model", ["predict", "{d}/binary", "bcast", "--n", "8", "--p", "4"], None),
    ("fit-deep-extra", ["fit", "--csv", "{d}/deep-extra.csv"], None),
    ("fit-bigint-extra", ["fit", "--csv", "{d}/bigint-extra.csv", "-o", "{d}/bigint-extra-model.json"], None),
    ("fit-n-1e308", ["fit", "--csv", "{d}/n1e308.csv"], None),
    ("fit-bigint-json", ["fit", "--json", "{d}/bigint.json-points"], None),
    ("fit-binary-csv", ["fit", "--csv", "{d}/binary", "-o", "{d}/b.json"], None),
    ("advise-p-range-1e300", ["advise", "{d}/p1e300.json"], None),
    # 10. simulator
    ("simulate-negative-n", ["simulate", "--collective", "bcast:binomial", "--n", "-5", "--p", "4"], None),
    ("simulate-saturated", ["simulate", "--collective", "bcast:binomial", "--n", "16G", "--p", "4",
                            "--G", "1e9"], None),
    ("simulate-goal-cycle", ["simulate", "--goal", "{d}/cycle.goal"], None),
    # 11. minor
    ("run-sizes-empty", ["run", "--db", "{d}/new1.db", "--sizes", ""], None),
    ("predict-negative-time", ["predict", str(EXAMPLE_MODEL), "(0-5)*bcast", "--n", "8", "--p", "4"], None),
    # imports, traces and outputs: one case per row
    ("fit-8000-sizes", ["fit", "--csv", "{d}/sizes8000.csv", "--call-costs", "off"], None),
    ("import-osu-huge-size", ["import", "osu", "{d}/osu-huge-size.txt", "--db", "{d}/new2.db",
                              "--library", "openmpi"], None),
    ("import-imb-huge-p", ["import", "imb", "{d}/imb-huge-p.txt", "--db", "{d}/new2.db", "--library", "mpich"],
     None),
    ("import-imb-huge-bytes", ["import", "imb", "{d}/imb-huge-bytes.txt", "--db", "{d}/new2.db",
                               "--library", "mpich"], None),
    ("import-osu-zero-bandwidth", ["import", "osu", "{d}/osu-zero-bw.txt", "--db", "{d}/new2.db",
                                   "--library", "openmpi"], None),
    ("report-zero-times", ["report", "--db", "{d}/zero.db", "-o", "{d}/zero.html"], "zero.db"),
    ("fit-zero-times", ["fit", "--db", "{d}/zero.db"], "zero.db"),
    ("replay-2e56-bytes", ["replay", "--dir", "{d}/trace-2e56", "--model", "{d}/loggp.json"], None),
    ("trace-dir-proc", ["trace", "--db", "{d}/new2.db", "--library", "mpich", "--trace-dir", "/proc",
                        "--", "/bin/true"], None),
    ("trace-np-100000", ["trace", "--db", "{d}/new2.db", "--library", "mpich", "--np", "100000",
                         "--", "/bin/true"], None),
    ("app-jacobi-iterations", ["app", "jacobi", "--db", "{d}/new2.db", "--iterations", "99999999999999"], None),
    ("predict-infinite", ["predict", str(EXAMPLE_MODEL), "1e308*bcast(1e308)", "--n", "1K", "--p", "4"], None),
    ("predict-infinite-json", ["predict", str(EXAMPLE_MODEL), "1e308*bcast(1e308)", "--n", "1K", "--p", "4",
                               "--json"], None),
    ("advise-p-2-10000", ["advise", str(EXAMPLE_MODEL), "--p", "2:10000"], None),
    ("export-dev-full", ["export", "--db", "{d}/good.db", "-o", "/dev/full"], "good.db"),
    ("fit-dev-full", ["fit", "--db", "{d}/good.db", "-o", "/dev/full", "--call-costs", "off"], "good.db"),
    ("report-dev-full", ["report", "--db", "{d}/good.db", "-o", "/dev/full"], "good.db"),
    ("export-model-dev-full", ["export-model", str(EXAMPLE_MODEL), "--to", "loggopsim", "-o", "/dev/full"], None),
    ("simulate-goal-dev-full", ["simulate", "--collective", "bcast:binomial", "--n", "1K", "--p", "4",
                                "--emit-goal", "/dev/full"], None),
]

# Inputs that are odd but valid: they must simply work.
SUCCEEDS = {"fit-bigint-extra",  # `extra` is free-form: a 5000-digit integer in it is read as a float
            "report-zero-times"}  # points of time 0.00 are wrong results, off the log axes

EXPECT_IN_MESSAGE = {
    "run-np-100000": "--force-np",
    "runs-newer": "newer commchar",
    "export-foreign": "not a commchar store",
    "export-empty": "empty file",
    "resume-missing-db": "does not exist",
    "simulate-goal-cycle": "a (rank 0) requires b (rank 0) requires a (rank 0)",
    "simulate-saturated": "exceed what the simulator can represent",
    "run-library-twice": "given twice",
    "fit-8000-sizes": "8000 distinct sizes, more than the 512",
    "import-osu-huge-size": "osu-huge-size.txt: line 4: size",
    "import-imb-huge-p": "#processes must be from 1 to 2147483647",
    "import-imb-huge-bytes": "larger than 9007199254740992",
    "import-osu-zero-bandwidth": "a bandwidth of 0.00 at 1 B gives no time",
    "fit-zero-times": "every point (2) is marked invalid",
    "replay-2e56-bytes": "72057594037927936 bytes, more than the 1099511627776",
    "trace-dir-proc": "--trace-dir: cannot make a folder in /proc",
    "trace-np-100000": "--force-np",
    "app-jacobi-iterations": "--iterations must be from 1 to 1073741824",
    "predict-infinite": "is not a finite number",
    "predict-infinite-json": "is not a finite number",
    "advise-p-2-10000": "9999 process counts, more than the 256",
    "export-dev-full": "cannot write /dev/full: no space left on device",
    "fit-dev-full": "cannot write /dev/full: no space left on device",
    "report-dev-full": "cannot write /dev/full: no space left on device",
    "export-model-dev-full": "cannot write /dev/full: no space left on device",
    "simulate-goal-dev-full": "cannot write /dev/full: no space left on device",
}


def _digest(path: Path) -> str | None:
    return hashlib.sha256(path.read_bytes()).hexdigest() if path.is_file() else None


def _run(args: list[str]) -> subprocess.CompletedProcess[str]:
    limited = ["prlimit", f"--as={MEMORY_LIMIT}", sys.executable, "-m", "commchar", *args]
    return subprocess.run(limited, capture_output=True, text=True, timeout=TIMEOUT_S, stdin=subprocess.DEVNULL)


@pytest.fixture(scope="module")
def outcomes(tmp_path_factory: pytest.TempPathFactory) -> dict[str, tuple]:
    d = tmp_path_factory.mktemp("hostile")
    make_hostile_inputs(d)
    before = {name: _digest(d / name) for _, _, name in CASES if name}
    listing = sorted(p.name for p in d.iterdir())
    jobs = {case: [a.replace("{d}", str(d)) for a in args] for case, args, _ in CASES}
    with ThreadPoolExecutor(max_workers=6) as pool:
        results = dict(zip(jobs, pool.map(_run, jobs.values())))
    return {case: (results[case], before.get(read), _digest(d / read) if read else None, listing,
                   sorted(p.name for p in d.iterdir()))
            for case, _, read in CASES}


@pytest.mark.parametrize("case", [c[0] for c in CASES])
def test_hostile_input_is_one_line_and_a_failure_or_works(outcomes: dict[str, tuple], case: str) -> None:
    result, before, after, _, _ = outcomes[case]
    assert "Traceback" not in result.stderr, result.stderr[-3000:]
    if case in SUCCEEDS:
        assert result.returncode == 0, result.stderr
        return
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1, result.stderr[-3000:]
    assert result.returncode not in (0, -9), (result.returncode, result.stderr)
    assert lines[0].startswith("commchar: error: "), lines[0]
    if case in EXPECT_IN_MESSAGE:
        assert EXPECT_IN_MESSAGE[case] in lines[0]
    assert before == after, "a verb that only reads changed the store"


def test_refused_verbs_create_no_file(outcomes: dict[str, tuple]) -> None:
    *_, listed_before, listed_after = next(iter(outcomes.values()))
    assert "missing.db" not in listed_after and "new1.db" not in listed_after
    assert "new2.db" not in listed_after  # a refused import, trace or app stores nothing, not even a run
    assert not [name for name in listed_after if name.endswith(("-wal", "-shm", "-journal"))]
