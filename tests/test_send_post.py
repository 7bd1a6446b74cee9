"""What a non-blocking send costs to post (commchar.models.send_post): the model entry from
`post` points, its validation, and the kernel's probe under real mpirun."""

from __future__ import annotations

import json
import sqlite3
import subprocess
import sys

import pytest

from commchar.cli import main
from commchar.modelfile.model import ModelError
from commchar.modelfile.schema import _validate_call_means
from commchar.models.send_post import send_post_section
from _model_data import loggp_findings


def test_each_sizes_mean_post_is_kept_in_size_order():
    points = [{"op": "post", "variant": "", "n_bytes": n, "t_us": t, "t_mean_us": 1.1 * t, "valid": True}
              for n, t in ((4096, 0.9), (256, 0.3), (65536, 0.2))]
    points.append({"op": "post", "variant": "", "n_bytes": 256, "t_us": 0.5, "valid": False})
    points.append({"op": "loggp", "variant": "", "n_bytes": 256, "t_us": 0.7, "valid": True})
    skipped: list[str] = []
    section = send_post_section(points, skipped, "lib")
    assert skipped == [] and section is not None
    assert section["steps"] == [[256, 0.33], [4096, 0.99], [65536, 0.22]]
    assert section["statistic"] == "mean" and section["max_bytes"] == 65536
    assert send_post_section(points[-2:], skipped, "lib") is None and skipped == ["lib post: no valid point"]


def test_the_schema_refuses_posts_out_of_size_order():
    with pytest.raises(ModelError, match="send_post.steps"):
        _validate_call_means({"steps": [[4096, 0.9], [256, 0.3]]}, "libraries.lib.loggp.send_post")


def _fitted_post(library: str, db, model, sizes: str) -> dict:
    """A quick run of the post probe and LogGP's at `sizes`, fitted into `model`: its
    loggp section's send_post entry."""
    assert main(["run", "--db", str(db), "--library", library, "--np", "2",
                 "--ops", "post,loggp,rndv,pingpong:send", "--sizes", sizes,
                 "--max-time", "0.05", "--precision", "0.1"]) == 0
    assert main(["fit", "--db", str(db), "-o", str(model)]) == 0
    lib = json.loads(model.read_text())["libraries"][library]
    return (lib.get("loggp") or lib["loggp_partial"])["send_post"]


@pytest.mark.mpi
def test_a_real_run_gives_the_model_each_sizes_post(mpi_libraries, tmp_path, capsys):
    """The probe times bursts of eight MPI_Isend calls, unbatched: each returns with its
    request open, sooner than the blocking ping-pong's half round trip, which also waits
    for the message to arrive and the reply."""
    for library in mpi_libraries:
        db, model = tmp_path / f"{library.name}.db", tmp_path / f"{library.name}.json"
        post = _fitted_post(library.name, db, model, "256,4K")
        capsys.readouterr()
        assert [n for n, _ in post["steps"]] == [256, 4096]
        assert all(us > 0 for _, us in post["steps"])
        with sqlite3.connect(db) as con:
            rows = con.execute("SELECT op, n_bytes, batch, t_us FROM points WHERE valid = 1").fetchall()
        assert sorted((n, batch) for op, n, batch, _ in rows if op == "post") == [(256, 1), (4096, 1)]
        half_rtt = {n: t for op, n, _, t in rows if op == "pingpong"}
        assert post["steps"][0][1] < half_rtt[256], library.name


def test_a_replay_charges_the_post_only_when_asked(one_built_library, tmp_path, capsys):
    """A traced halo exchange of 256 B replayed with the blocking send's cost for its Isends
    (the default) and with the measured post: MPICH posts in less than o_s + (s-1)O (0.13 to
    0.37 us against 0.19 to 0.47 here, as the ranks' cores lie), so the second is faster."""
    library, folder = one_built_library
    db = tmp_path / "t.db"
    traced = subprocess.run([sys.executable, "-m", "commchar", "trace", "--db", str(db), "--library", library.name,
                             "--np", "2", "--", str(folder / "halo2d"), "--bytes", "256", "--iterations", "500"],
                            capture_output=True, text=True, timeout=120)
    assert traced.returncode == 0, traced.stderr
    for attempt in (1, 2):  # one run's post may lie above its blocking cost on a loaded machine
        model = tmp_path / f"m{attempt}.json"
        _fitted_post(library.name, tmp_path / f"m{attempt}.db", model, "64,256,1K")
        capsys.readouterr()
        makespans = {}
        for posted in ("blocking", "measured"):
            assert main(["replay", "--db", str(db), "--trace", "1", "--model", str(model), "--noise", "off",
                         "--posted-sends", posted, "--json"]) == 0
            doc = json.loads(capsys.readouterr().out)
            assert doc["posted_sends"] == posted
            makespans[posted] = doc["predictions"]["loggps"]["makespan"]
        if makespans["measured"] < makespans["blocking"]:
            break
    assert makespans["measured"] < makespans["blocking"], makespans


def _findings(section: dict | None) -> list[str]:
    return loggp_findings("send_post", section, "MPI_Isend of")


def test_a_large_isend_that_posts_as_fast_as_a_small_one_is_a_finding():
    # MPICH's posts of this machine: 0.15 us at 8 B, 1.5 at 8 KiB (the copy), 0.26 from 16 KiB
    section = {"statistic": "mean", "steps": [[8, 0.148], [8192, 1.501], [16384, 0.261], [262144, 0.256]]}
    (text,) = _findings(section)
    assert "MPI_Isend of 256 KiB returns in 0.256 us" in text and "one of 8 B takes (0.148 us" in text
    # a post that still copies its bytes at the largest size, a largest size below 64 KiB, none
    assert _findings({"steps": [[8, 0.148], [262144, 20.0]]}) == []
    assert _findings({"steps": [[8, 0.148], [32768, 0.2]]}) == []
    assert _findings(None) == []
