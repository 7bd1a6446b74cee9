"""Acceptance: a report of a real run (real runner, real mpirun) opened in real headless chromium.

The page must load with no console error and no network request, every figure
must be an SVG with a non-empty box and drawn content, and a screenshot is kept
(in the test's tmp dir and at /tmp/report-screenshot.png for a person to look at).
"""

from __future__ import annotations

import re
import shutil
from pathlib import Path

import pytest

from commchar.cli import main
from commchar.measure.libraries import discover
from commchar.store import Store

pytestmark = [pytest.mark.mpi, pytest.mark.slow, pytest.mark.browser]

CHROMIUM = shutil.which("chromium") or "/usr/bin/chromium"
CHROMIUM_FLAGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
                  "--disable-background-networking", "--disable-component-update", "--disable-sync"]
# Small but covering every figure and table: send modes, bandwidth, LogGP/LogGPS,
# rooted and unrooted collectives, a reduction with and without arithmetic.
OPS = ("pingpong:send,pingpong:ssend,bw,barrier,bcast,allgather,alltoall,reduce,allreduce:sum,"
       "scan:sum,rndv,loggp")
SHOT = Path("/tmp/report-screenshot.png")

FIGURE_BOXES = """() => Array.from(document.querySelectorAll('figure')).map(f => {
    const svg = f.querySelector('svg');
    const box = svg ? svg.getBoundingClientRect() : {width: 0, height: 0};
    return {id: f.id, width: box.width, height: box.height,
            drawn: svg ? svg.querySelectorAll('path, use').length : 0,
            caption: (f.querySelector('figcaption') || {}).textContent || ''};
})"""


@pytest.fixture(scope="module")
def real_run(tmp_path_factory: pytest.TempPathFactory) -> Path:
    if not (shutil.which("mpirun.openmpi") or shutil.which("mpirun.mpich") or shutil.which("mpirun")):
        pytest.skip("no MPI launcher installed")
    db = tmp_path_factory.mktemp("real") / "run.db"
    mp = pytest.MonkeyPatch()
    mp.setenv("OMPI_ALLOW_RUN_AS_ROOT", "1")
    mp.setenv("OMPI_ALLOW_RUN_AS_ROOT_CONFIRM", "1")
    try:
        # the MPI libraries found (PVM, found too when installed, has neither these send
        # modes nor LogGP: tests/test_pvm.py reports it)
        mpi = ",".join(lib.name for lib in discover())
        assert main(["run", "--db", str(db), "--library", mpi, "--np", "2,3", "--sizes", "0:16K:x4",
                     "--max-time", "0.02", "--ops", OPS]) == 0
    finally:
        mp.undo()
    return db


def test_real_report_loads_in_chromium(real_run: Path, tmp_path: Path) -> None:
    if not Path(CHROMIUM).exists():
        pytest.skip("chromium is not installed (make browser)")
    sync_api = pytest.importorskip("playwright.sync_api")
    out = tmp_path / "report.html"
    assert main(["report", "--db", str(real_run), "-o", str(out)]) == 0
    page_html = out.read_text(encoding="utf-8")
    with Store(real_run) as store:
        libraries = sorted({p["library"] for p in store.points()})
    assert libraries, "the run measured nothing"
    expected = len(libraries) * 5 + (2 if len(libraries) > 1 else 0)
    assert page_html.count("<figure") == expected

    console: list[str] = []
    requests: list[str] = []
    with sync_api.sync_playwright() as pw:
        context = pw.chromium.launch_persistent_context(
            str(tmp_path / "profile"), executable_path=CHROMIUM, headless=True, args=CHROMIUM_FLAGS,
            viewport={"width": 1200, "height": 900})
        try:
            page = context.new_page()
            page.on("console", lambda m: console.append(f"{m.type}: {m.text}") if m.type in ("error", "warning") else None)
            page.on("pageerror", lambda e: console.append(f"pageerror: {e}"))
            page.on("request", lambda r: requests.append(r.url) if not r.url.startswith("file://") else None)
            page.goto(out.as_uri(), wait_until="load")
            figures = page.evaluate(FIGURE_BOXES)
            title = page.title()
            page.screenshot(path=str(tmp_path / "report.png"), full_page=True)
        finally:
            context.close()
    shutil.copyfile(tmp_path / "report.png", SHOT)

    assert console == [] and requests == []
    assert title == "commchar report"
    assert len(figures) == expected
    for fig in figures:
        assert fig["width"] > 300 and fig["height"] > 200, fig
        assert fig["drawn"] > 20, fig  # axes, ticks, markers and lines, not an empty frame
        assert fig["caption"].strip(), fig
    for lib in libraries:
        ids = {f["id"] for f in figures}
        for kind in ("p2p-latency", "p2p-bandwidth", "coll-size", "coll-p", "aggbw"):
            assert f"fig-{kind}-{lib}" in ids
        assert f"{lib}: point-to-point parameters and metrics" in page_html
        # LogGP/LogGPS come from the fitted model; a model the reader rejected is named in a note.
        assert (f"{lib}: LogGP / LogGPS parameters" in page_html
                or re.search(r"fitted on the fly from .* was rejected", page_html))
    assert (tmp_path / "report.png").stat().st_size > 50_000
