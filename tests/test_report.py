"""Tests of `commchar report` on a fixture database written through the real store.

The fixture's times follow known Hockney and log2(p) laws with lognormal noise,
so what the report must find (the protocol switch, the O(p) scan, the crash,
the wrong result, the oversubscribed p) is known in advance. The browser test
on a real measured run is in test_report_browser.py.
"""

from __future__ import annotations

import json
import math
import re
import time
from html.parser import HTMLParser
from pathlib import Path

import numpy as np
import pytest

from commchar.cli import main
from commchar.statistics import relative_ci_halfwidth, summarize
from commchar.store import Store

HOSTILE = "Open MPI <script>alert(1)</script> $\\alpha$ & 'q' \"x\""
P2P_SIZES = [0] + [1 << k for k in range(0, 21, 2)]
COLL_SIZES = [0] + [1 << k for k in range(3, 21, 3)]
ROUNDING = {"scatter": "p", "gather": "p", "allgather": "p", "reduce_scatter": "8p"}


def _p2p_time(lib: str, variant: str, n: int) -> float:
    # Two regimes: eager up to 16 KiB, rendezvous above (a known threshold).
    slow = 1.4 if lib == "mpich" else 1.0
    extra = {"send": 0.0, "bsend": 0.4, "ssend": 0.3, "rsend": 0.0, "isend": 0.1}[variant]
    if n <= 16384:
        return slow * (0.5 + extra + 0.0002 * n)
    return slow * (4.0 + extra + 0.0001 * n)


def _coll_time(lib: str, op: str, variant: str, n: int, p: int) -> float:
    lg = math.log2(p)
    slow = 0.8 if lib == "mpich" else 1.0
    if op == "scan":  # linear in p: worse than the best-known O(log p)
        return slow * (1.0 * p + 0.0003 * p * n)
    compute = 0.0001 * lg * n if variant == "sum" else 0.0
    return slow * (1.0 + 2.0 * lg + 0.0002 * lg * n + compute)


def _sizes(op: str, p: int) -> list[int]:
    if op == "barrier":
        return [0]
    quantum = {"p": p, "8p": 8 * p}.get(ROUNDING.get(op, ""), 8 if op in ("reduce", "allreduce", "scan") else 1)
    return sorted({-(-n // quantum) * quantum for n in COLL_SIZES})


def make_fixture_db(path: Path, *, version: str = "Open MPI v4.1.4", seed: int = 7,
                    libraries: tuple[str, ...] = ("openmpi", "mpich"), ps: tuple[int, ...] = (2, 3, 4)) -> int:
    """A run of each library at each p; the first library reports `version`."""
    rng = np.random.default_rng(seed)
    with Store(path) as store:
        run_id = store.create_run("0.1.0", {"hostnames": ["node<1>"], "cpu_model": "Test CPU", "cores": 2},
                                  {"np": [2, 3, 4], "precision": 0.01})
        for lib in libraries:
            for p in ps:
                job = store.create_job(run_id, lib, p, ["mpirun", "-np", str(p), "kernel"], {}, p > 2 + 1)
                store.record_job_header(job, {
                    "mpi_library_version": version if lib == libraries[0] else "MPICH 4.0.2",
                    "mpi_version": "3.1", "hosts": ["node<1>"] * p, "timer": "clock_gettime",
                    "timer_resolution_ns": 20.0, "timer_cost_ns": 19.0, "compiler": "gcc 12.2.0",
                    "options": {"precision": 0.01}})
                plan: list[tuple[str, str, int]] = []
                if p == 2:
                    plan += [("pingpong", v, n) for v in ("send", "bsend", "ssend", "rsend", "isend")
                             for n in P2P_SIZES]
                    plan += [("bw", "", n) for n in P2P_SIZES]
                for op in ("barrier", "bcast", "scatter", "gather", "allgather", "alltoall"):
                    plan += [(op, "", n) for n in _sizes(op, p)]
                for op in ("reduce", "allreduce", "reduce_scatter", "scan"):
                    plan += [(op, v, n) for v in ("sum", "nop") for n in _sizes(op, p)]
                for op, variant, n in plan:
                    if lib == "mpich" and op == "alltoall" and p == 4 and n == COLL_SIZES[-1]:
                        store.add_failure(run_id, lib, op, variant, p, n, "crash",
                                          "rank 1 exited on signal 11 (Segmentation fault)")
                        continue
                    base = (_p2p_time(lib, variant, n) if op == "pingpong" else
                            _p2p_time(lib, "send", n) * 0.8 if op == "bw" else
                            _coll_time(lib, op, variant, n, p))
                    noise = 0.5 if (op == "bcast" and n == 8 and lib == "openmpi") else 0.02
                    samples = (base * rng.lognormal(0.0, noise, size=40)).tolist()
                    wrong = lib == "openmpi" and op == "allreduce" and variant == "sum" and n == 64 and p == 3
                    point = {"op": op, "variant": variant, "p": p, "n_bytes": n, "samples_us": samples,
                             "batch": 1, "precision_target": 0.01, "precision_met": noise < 0.1,
                             "valid": not wrong, "error": "rank 1: byte 17 is 0x3f, expected 0x40" if wrong else "",
                             "sync": "barrier", "extra": {}}
                    summary = summarize(samples)
                    store.add_point(run_id, job, lib, point, summary, oversubscribed=p > 2 + 1,
                                    ci_rel=relative_ci_halfwidth(summary))
                store.finish_job(job, 0)
        store.set_run_status(run_id, "complete")
    return run_id


class _Tags(HTMLParser):
    """Every element and attribute name in a page, to prove no injected markup survived."""

    def __init__(self) -> None:
        super().__init__()
        self.tags: list[str] = []
        self.attrs: list[str] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.tags.append(tag)
        self.attrs.extend(name for name, _ in attrs)


@pytest.fixture(scope="module")
def fixture_db(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("report") / "fixture.db"
    make_fixture_db(path)
    return path


@pytest.fixture(scope="module")
def small_db(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("report") / "small.db"
    make_fixture_db(path, ps=(2, 3))
    return path


@pytest.fixture(scope="module")
def fixture_report(fixture_db: Path, tmp_path_factory: pytest.TempPathFactory) -> tuple[str, float]:
    out = tmp_path_factory.mktemp("out") / "report.html"
    start = time.perf_counter()
    # p = 4 is oversubscribed: include it in the fits so the laws in p have three process counts.
    assert main(["report", "--db", str(fixture_db), "-o", str(out), "--oversubscribed", "include"]) == 0
    return out.read_text(encoding="utf-8"), time.perf_counter() - start


def _findings(page: str) -> str:
    section = page[page.index('<section id="findings">'):]
    return section[:section.index("</section>")]


def test_report_has_every_figure_and_table(fixture_report: tuple[str, float]) -> None:
    page, _ = fixture_report
    for lib in ("openmpi", "mpich"):
        for title in (f"{lib}: point-to-point latency vs size, by send mode (p = 2)",
                      f"{lib}: point-to-point bandwidth vs size (p = 2)",
                      f"{lib}: collective latency vs size at each p",
                      f"{lib}: collective latency vs p, short and long message",
                      f"{lib}: aggregated bandwidth of the collectives",
                      f"{lib}: point-to-point parameters and metrics",
                      f"{lib}: collective laws in p", f"{lib}: peak aggregated metrics",
                      f"{lib}: transfer-to-computation ratio r_cc(p)",
                      f"{lib}: cost in us at 8 B, 1 KiB and 1 MiB by p"):
            assert title in page, title
    assert "Comparison: ping-pong latency" in page and "Comparison: collective time ratio" in page
    assert page.count("<svg") == 12  # 5 per library and 2 comparisons
    assert "Environment, provenance and method" in page and "Test CPU" in page
    # Self-contained: no script, no stylesheet link, nothing fetched (only in-page #anchors).
    assert "<script" not in page and "<link" not in page and "@import" not in page
    assert not re.findall(r'(?:src|href)="(?!#)', page)
    assert "http" not in re.sub(r'xmlns(:\w+)?="http://www\.w3\.org/[^"]*"', "", page)
    # Inline SVGs share one document: ids must be unique and every reference must resolve.
    ids = re.findall(r' id="([^"]+)"', page)
    assert len(ids) == len(set(ids))
    refs = set(re.findall(r'href="#([^"]+)"', page)) | set(re.findall(r"url\(#([^)]+)\)", page))
    assert refs and refs <= set(ids)


def test_findings_name_the_known_faults(fixture_report: tuple[str, float]) -> None:
    text = _findings(fixture_report[0])
    assert "mpich: 1 crash failure(s): alltoall at n = 256 KiB, p = 4" in text
    assert "openmpi returned wrong results at 1 point(s): allreduce:sum at n = 64 B, p = 3" in text
    assert "ran oversubscribed (p = 4 on 2 cores)" in text
    assert re.search(r"The model was fitted with them for \w+.* \(p = 4\)", text)
    assert re.search(r"openmpi: the standard send changes protocol regime at 64 KiB \(previous regime up to 16 KiB\)",
                     text)
    assert re.search(r"openmpi: scan:sum has a law in p worse than the best-known algorithm&#x27;s: t_s\(p\) = "
                     r"[0-9.]+\*p [-+] [0-9.e-]+ is O\(p\)", text)
    assert "openmpi: unusual variance at" in text and "bcast at n = 8 B" in text
    assert "did not reach the precision target" in text
    # mpich is 1.4x slower point-to-point by construction; openmpi 1.25x slower in collectives.
    assert re.search(r"n ≤ 1 KiB: openmpi is faster than mpich \(the reference\) in \d+ and slower in \d+ of \d+",
                     text)


def test_comparison_table_says_who_is_faster(fixture_report: tuple[str, float]) -> None:
    page = fixture_report[0]
    # By construction mpich is 1.4x slower point to point and 1.25x faster in collectives;
    # collectives are compared at p = 3, the largest p not oversubscribed.
    row = re.search(r"<tr><td>pingpong:send</td><td[^>]*>2</td><td>openmpi ([0-9.]+)× faster", page)
    assert row and 1.3 < float(row.group(1)) < 1.5
    row = re.search(r"<tr><td>bcast</td><td[^>]*>3</td><td>mpich ([0-9.]+)× faster", page)
    assert row and 1.15 < float(row.group(1)) < 1.35


def test_hostile_strings_are_escaped(tmp_path: Path) -> None:
    db = tmp_path / "hostile.db"
    make_fixture_db(db, version=HOSTILE, libraries=("open$mpi$<b>x</b>", "mpich"), ps=(2, 3))
    out = tmp_path / "report.html"
    assert main(["report", "--db", str(db), "-o", str(out)]) == 0
    page = out.read_text(encoding="utf-8")
    assert "<script>alert(1)</script>" not in page and "<b>x</b>" not in page
    assert "Open MPI &lt;script&gt;alert(1)&lt;/script&gt; $\\alpha$ &amp; &#x27;q&#x27; &quot;x&quot;" in page
    assert "open$mpi$&lt;b&gt;x&lt;/b&gt;: point-to-point latency vs size" in page
    assert "node&lt;1&gt;" in page and "node<1>" not in page
    parser = _Tags()
    parser.feed(page)
    assert "script" not in parser.tags and "b" not in parser.tags
    assert not [a for a in parser.attrs if a.startswith("on")]


def test_figures_are_written_for_papers(small_db: Path, tmp_path: Path) -> None:
    figures = tmp_path / "figs"
    assert main(["report", "--db", str(small_db), "-o", str(tmp_path / "r.html"),
                 "--run", "1", "--format", "pdf", "--figures-dir", str(figures)]) == 0
    written = sorted(figures.glob("*.pdf"))
    assert [p.stem for p in written if p.stem.startswith("p2p-latency")] == ["p2p-latency-mpich",
                                                                          "p2p-latency-openmpi"]
    assert len(written) == 12 and all(p.read_bytes().startswith(b"%PDF") for p in written)


def test_report_reads_a_model_file(small_db: Path, tmp_path: Path) -> None:
    from commchar.models import fit_points

    with Store(small_db) as store:
        model = fit_points([pt for pt in store.points() if pt["library"] == "openmpi"])
    path = tmp_path / "model.json"
    path.write_text(json.dumps(model))
    out = tmp_path / "r.html"
    assert main(["report", "--db", str(small_db), "--model", str(path), "-o", str(out)]) == 0
    page = out.read_text(encoding="utf-8")
    assert f"openmpi: from the model file {path}" in page
    assert "mpich: fitted on the fly by commchar.models" in page


@pytest.mark.parametrize("setup, args, message", [
    (None, [], "does not exist"),
    ("empty", [], "has no measured point, no application run and no predicted trace"),
    ("no-points", [], "has no measured point"),
    ("fixture", ["--run", "9"], "no run 9 in"),
    ("fixture", ["--model", "MISSING"], "cannot read model file"),
    ("fixture", ["--model", "NOTJSON"], "is not valid JSON"),
    ("fixture", ["--figures-dir", "x"], "--figures-dir needs --format"),
])
def test_bad_input_is_one_line_and_exit_2(tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                          setup: str | None, args: list[str], message: str) -> None:
    db = tmp_path / "x.db"
    if setup == "empty":
        Store(db).close()
    elif setup == "no-points":
        with Store(db) as store:
            store.create_run("0.1.0", {}, {})
    elif setup == "fixture":
        make_fixture_db(db, libraries=("openmpi",), ps=(2,))
    (tmp_path / "bad.json").write_text("{not json")
    args = [a.replace("MISSING", str(tmp_path / "none.json")).replace("NOTJSON", str(tmp_path / "bad.json"))
            for a in args]
    assert main(["report", "--db", str(db), "-o", str(tmp_path / "r.html"), *args]) == 2
    err = capsys.readouterr().err.strip()
    assert err.startswith("commchar: error:") and message in err and "\n" not in err


def test_default_leaves_oversubscribed_points_out_of_the_fit_but_shows_them(fixture_db: Path) -> None:
    from commchar.report import ReportOptions, build_report

    report = build_report(ReportOptions(str(fixture_db)))
    text = _findings(report.html)
    assert "ran oversubscribed (p = 4 on 2 cores)" in text
    assert "The model leaves them out of" in text and "fitted with them" not in text
    openmpi = next(e for e in report.entities if e.label == "openmpi")
    bcast = openmpi.model.operation("bcast")
    assert bcast["p_range"] == [2, 3] and "oversubscribed_p" not in bcast
    # the measured p = 4 points are still drawn (hollow markers) and tabulated
    assert 4 in openmpi.ps("bcast") and "p = 4" in report.html


def test_tables_show_the_metrics_the_fit_computed(small_db: Path) -> None:
    """One source of truth: the peak and r_cc cells are the model file's `metrics`."""
    from commchar.report import ReportOptions, build_report
    from commchar.report.units import Rates

    report = build_report(ReportOptions(str(small_db)))
    openmpi = next(e for e in report.entities if e.label == "openmpi")
    op = openmpi.model.operation("allreduce:sum")
    peak = op["metrics"]["peak"]
    assert op["metrics"]["aggregate_factor"] == "2(p-1)"
    peaks = next(t for t in report.tables if t.slug == "peaks-openmpi")
    row = next(r for r in peaks.rows if r[0] == "allreduce:sum")
    assert row[1] == f"{Rates('si').bandwidth(peak['Bw_pag'] * 1e6)} (p={peak['Bw_pag_p']})"
    rcc = next(t for t in report.tables if t.slug == "rcc-openmpi")
    row = next(r for r in rcc.rows if r[0] == "allreduce")
    assert row[1] == f"{op['metrics']['per_p']['2']['r_cc']:.3g}"


def test_a_model_without_metrics_gets_them_from_the_models_functions(small_db: Path, tmp_path: Path) -> None:
    from commchar.models import fit_points
    from commchar.models.metrics import peak_metrics
    from commchar.report import ReportOptions, build_report
    from commchar.report.units import Rates

    with Store(small_db) as store:
        model = fit_points([pt for pt in store.points() if pt["library"] == "openmpi"])
    bcast = model["libraries"]["openmpi"]["operations"]["bcast"]
    laws = bcast["laws"]
    expected = peak_metrics("bcast", lambda p: 0 * p + float(laws["t_s"]["params"]["a"]) + float(
        laws["t_s"]["params"].get("b", 0)) * _f(laws["t_s"]["form"], p),
        lambda p: 0 * p + float(laws["t_b"]["params"]["a"]) + float(
        laws["t_b"]["params"].get("b", 0)) * _f(laws["t_b"]["form"], p), [2, 3], "si")
    for entry in model["libraries"]["openmpi"]["operations"].values():
        entry.pop("metrics", None)  # as a hand-written model
    path = tmp_path / "hand.json"
    path.write_text(json.dumps(model))
    report = build_report(ReportOptions(str(small_db), model_path=str(path)))
    peaks = next(t for t in report.tables if t.slug == "peaks-openmpi")
    row = next(r for r in peaks.rows if r[0] == "bcast")
    assert row[1] == f"{Rates('si').bandwidth(expected['Bw_pag'] * 1e6)} (p={expected['Bw_pag_p']})"


def _f(form: str, p: np.ndarray) -> np.ndarray:
    p = np.asarray(p, dtype=float)
    return {"const": 0 * p, "log": np.log2(p), "linear": p, "plogp": p * np.log2(p), "quadratic": p * p}[form]


def test_reference_library_is_chosen_and_named(small_db: Path, tmp_path: Path,
                                               capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "r.html"
    assert main(["report", "--db", str(small_db), "-o", str(out)]) == 0
    page = out.read_text(encoding="utf-8")
    assert "Reference of the comparison: <strong>mpich</strong> (first in run, then name order" in page
    assert "openmpi against mpich (the reference)" in page
    assert main(["report", "--db", str(small_db), "-o", str(out), "--reference", "openmpi"]) == 0
    page = out.read_text(encoding="utf-8")
    assert "Reference of the comparison: <strong>openmpi</strong> (chosen with --reference)" in page
    assert "mpich against openmpi (the reference)" in page
    assert re.search(r"mpich is faster than openmpi \(the reference\) in \d+", _findings(page))
    capsys.readouterr()
    assert main(["report", "--db", str(small_db), "-o", str(out), "--reference", "lam"]) == 2
    err = capsys.readouterr().err.strip()
    assert "--reference lam: no such library in the report (have: mpich, openmpi)" in err and "\n" not in err


def test_a_per_byte_cost_that_rises_with_size_is_called_a_cache_regime_not_a_protocol() -> None:
    from commchar.report.adapters import ModelView
    from commchar.report.dataset import Entity
    from commchar.report.findings import thresholds

    segments = [{"n_min": 0, "n_max": 8192, "t_s": "0.5", "t_b": "0.0003"},      # eager
                {"n_min": 16384, "n_max": 524288, "t_s": "2", "t_b": "0.00005"},  # rendezvous
                {"n_min": 1048576, "n_max": None, "t_s": "0", "t_b": "0.00009"}]  # out of cache
    view = ModelView("lib", {"operations": {"pingpong:send": {"kind": "p2p", "segments": segments}}}, "test")
    entity = Entity("lib", "lib", {}, [], [], [], model=view)
    texts = [f.text for f in thresholds(entity)]
    assert "changes protocol regime at 16 KiB" in texts[0]
    assert "changes regime at 1 MiB" in texts[1] and "outgrowing a cache" in texts[1]


def test_a_default_variant_stored_bare_is_evaluated_and_an_unevaluable_regime_is_no_traceback() -> None:
    from commchar.report.adapters import model_views
    from commchar.report.dataset import Entity
    from commchar.report.findings import thresholds

    segments = [{"n_min": 0, "n_max": 4096, "t_s": "1", "t_b": "0.001"},
                {"n_min": 8192, "n_max": None, "t_s": "5", "t_b": "1/(p-2)"}]  # infinite at p = 2
    model = {"format": "commchar-model", "version": 1, "units": {"time": "us", "size": "B"},
             "libraries": {"lib": {"operations": {"pingpong": {"kind": "p2p", "segments": segments}}}}}
    view = model_views(model, "test")[0]["lib"]
    assert view.operation("pingpong:send") is view.data["operations"]["pingpong"]
    assert view.time("pingpong:send", 1000, 2) == pytest.approx(2.0)
    assert view.time("pingpong:send", 1 << 20, 2) is None
    texts = [f.text for f in thresholds(Entity("lib", "lib", {}, [], [], [], model=view))]
    assert len(texts) == 1 and "changes protocol regime at 8 KiB" in texts[0]


def test_a_point_the_model_misses_by_more_than_10_percent_is_a_red_finding_and_errors_top_the_report() -> None:
    from commchar.report import accuracy_table
    from commchar.report.adapters import model_views
    from commchar.report.dataset import Entity
    from commchar.report.findings import ORDER, model_misses
    from commchar.report.html import PAGE

    segments = [{"n_min": 0, "n_max": None, "t_s": "1", "t_b": "0.001"}]
    errors = {"in_sample": {"median": 0.02, "max": 0.12, "points": 3, "over_10pct": 1,
                            "worst": {"n_bytes": 2000, "p": 2, "t_us": 3.4, "predicted_us": 3.0}},
              "held_out": {"median": 0.05, "max": 0.05, "points": 1, "over_10pct": 0, "every": 3}}
    model = {"format": "commchar-model", "version": 1, "units": {"time": "us", "size": "B"},
             "libraries": {"lib": {"operations": {"pingpong:send": {"kind": "p2p", "segments": segments,
                                                                    "errors": errors}}}}}
    view = model_views(model, "test")[0]["lib"]
    points = [{"op": "pingpong", "variant": "send", "p": 2, "n_bytes": n, "t_us": t, "valid": True,
               "oversubscribed": False} for n, t in ((0, 1.0), (1000, 2.05), (2000, 3.4))]
    found = model_misses(Entity("lib", "lib", {}, [], points, [], model=view))
    assert len(found) == 1 and found[0].category == "model"
    assert "misses 1 of its 3 measured point(s) by more than 10%" in found[0].text
    assert "n = 1.953 KiB, p = 2: model 3 us vs measured 3.4 us (-12%)" in found[0].text, found[0].text
    assert ORDER.index("model") < ORDER.index("threshold")
    assert re.search(r"\.tag-model \{ background: #c62828", PAGE.template)  # red, as failures
    table = accuracy_table([Entity("lib", "lib", {}, [], points, [], model=view)])
    assert table is not None
    assert table.rows[0] == ["lib", "pingpong:send", "2.0%", "12.0% at 1.953 KiB", "1", "5.0%", "5.0%", "-", "-"]


def test_an_exchange_the_simulator_misses_is_a_red_finding() -> None:
    from commchar.report.adapters import model_views
    from commchar.report.dataset import Entity
    from commchar.report.findings import exchange_misses

    segments = [{"n_min": 0, "n_max": None, "t_s": "1", "t_b": "0.001"}]

    def entity(rows: list[dict], excess: dict | None = None) -> Entity:
        loggp = {"L": 0, "o_s": 0.1, "o_r": 0.08, "g": 0.1, "G": 1e-4, "S": 8192,
                 "receive_copy": {"statistic": "mean", "sizes": rows}, "exchange_excess": excess}
        model = {"format": "commchar-model", "version": 1, "units": {"time": "us", "size": "B"},
                 "libraries": {"lib": {"operations": {"pingpong:send": {"kind": "p2p", "segments": segments}},
                                       "loggp": loggp}}}
        return Entity("lib", "lib", {}, [], [], [], model=model_views(model, "test")[0]["lib"])

    rows = [{"n": 1, "exchange_us": 0.24, "model_us": 0.18, "loggopsim_us": 0.18},
            {"n": 4096, "exchange_us": 1.10, "model_us": 1.05, "loggopsim_us": 1.23},
            {"n": 8192, "exchange_us": 2.0, "model_us": 2.3, "loggopsim_us": 2.3}]
    (found,) = exchange_misses(entity(rows))
    assert found.category == "model"
    assert "misses 2 of the 3 exchange size(s) measured by more than 10%" in found.text
    # the largest miss first
    assert found.text.index("n = 1 B: replayed 0.18 us vs measured 0.24 us (-25%)") < found.text.index("n = 8 KiB")
    assert exchange_misses(entity(rows[1:2])) == []
    # two sizes missed alike are both named
    (found,) = exchange_misses(entity([rows[0], rows[0] | {"n": 2}]))
    assert "misses 2 of the 2" in found.text
    assert "inherit it (the model file's loggp.receive_copy)" in found.text
    # a model that charges the excess to each Sendrecv says so; Isend/Irecv exchanges still miss
    (found,) = exchange_misses(entity(rows, {"statistic": "mean", "steps": [[1, 0.06], [4096, 0.05]]}))
    assert "charges each MPI_Sendrecv and MPI_Sendrecv_replace" in found.text
    assert "exchanges by Isend and Irecv at these sizes inherit the miss" in found.text


def test_the_report_opens_with_each_models_accuracy(small_db: Path) -> None:
    from commchar.report import ReportOptions, build_report

    page = build_report(ReportOptions(db=str(small_db))).html
    assert page.index('id="accuracy"') < page.index('id="findings"')
    assert "held-out median" in page
