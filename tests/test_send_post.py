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
    (the default) and with the measured post, the model's posts set to the copy and half
    the o_s of their size (whether a real post costs less than the PRTT's o_s depends on
    where the ranks' cores lie): the second is faster, the first as without a post."""
    library, folder = one_built_library
    db = tmp_path / "t.db"
    traced = subprocess.run([sys.executable, "-m", "commchar", "trace", "--db", str(db), "--library", library.name,
                             "--np", "2", "--", str(folder / "halo2d"), "--bytes", "256", "--iterations", "500"],
                            capture_output=True, text=True, timeout=120)
    assert traced.returncode == 0, traced.stderr
    model = tmp_path / "m.json"
    _fitted_post(library.name, tmp_path / "m.db", model, "64,256,1K")
    doc = json.loads(model.read_text())
    loggp = doc["libraries"][library.name]["loggp"]

    def half_post(n: int) -> float:
        """The copy a post holds, (n-1)O, and half the o_s of the regime that prices n."""
        regime = next(r for r in reversed(loggp["regimes"]) if r["n_min"] <= n)
        return round((n - 1) * float(regime.get("O", loggp["O"])) + float(regime["o_s"]) / 2, 6)

    loggp["send_post"]["steps"] = [[n, half_post(n)] for n, _ in loggp["send_post"]["steps"]]
    model.write_text(json.dumps(doc))
    without = tmp_path / "without.json"
    loggp.pop("send_post")
    without.write_text(json.dumps(doc))
    capsys.readouterr()
    makespans = {}
    for name, path, posted in (("blocking", model, "blocking"), ("measured", model, "measured"),
                               ("no post", without, "measured")):
        assert main(["replay", "--db", str(db), "--trace", "1", "--model", str(path), "--noise", "off",
                     "--posted-sends", posted, "--json"]) == 0
        out = json.loads(capsys.readouterr().out)
        assert out["posted_sends"] == posted
        makespans[name] = out["predictions"]["loggps"]["makespan"]
    assert makespans["measured"] < makespans["blocking"] == makespans["no post"], (makespans, library.name, loggp.get("S"))


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
