"""`commchar replay` with a model's concurrency section: pairs exchanging at once on one
host share the node's copy bandwidth (synthetic traces, no MPI)."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from commchar.cli import main
from commchar.trace import format as fmt
from commchar.trace.synthetic import T_INIT_NS, write_rank

LOGGP = {"L": 2.0, "o_s": 0.5, "o_r": 0.75, "g": 0.1, "G": 0.001}  # 1 GB/s a pair, all eager
M = 1_000_001  # bytes a message: 10^6 after its first


def _model(path: Path, g_node: float | None) -> Path:
    lib: dict = {"operations": {}, "loggp": LOGGP}
    if g_node is not None:
        lib["concurrency"] = {"G_node": g_node, "B_node": 1 / g_node, "c_node": 0.0}
    path.write_text(json.dumps({"format": "commchar-model", "version": 1, "libraries": {"mpich": lib}}))
    return path


def _pairs(directory: Path, k: int, hosts: list[str]) -> None:
    """Ranks i < k each send M bytes to rank i + k at once; every rank ends at 5 ms."""
    directory.mkdir()
    p = 2 * k
    for rank in range(p):
        rec = np.zeros(1, dtype=fmt.RECORD_DTYPE)
        if rank < k:
            rec["call"], rec["peer"], rec["bytes"] = fmt.CALL_IDS["Send"], rank + k, M
        else:
            rec["call"], rec["peer"], rec["bytes2"], rec["aux"] = fmt.CALL_IDS["Recv"], rank - k, M, rank - k
        rec["t_start"] = rec["t_end"] = T_INIT_NS
        write_rank(directory / f"rank-{rank}.cctrace", rank, p, rec, t_finalize_ns=T_INIT_NS + 5_000_000,
                   host=hosts[rank])


def _receivers(capsys, trace: Path, model: Path, *extra: str) -> tuple[dict, list[float]]:
    capsys.readouterr()
    assert main(["replay", "--dir", str(trace), "--model", str(model), "--json", *extra]) == 0
    doc = json.loads(capsys.readouterr().out)
    ranks = doc["predictions"]["loggp"]["ranks"]
    return doc, [r["predicted"] for r in ranks[len(ranks) // 2:]]


@pytest.mark.parametrize("k", [1, 2, 4])
def test_pairs_on_one_host_take_the_larger_of_their_own_gap_and_the_nodes_share(capsys, tmp_path, k):
    g_node = 0.0004  # 2.5 GB/s for the node: two pairs fit, four do not
    _pairs(tmp_path / "t", k, ["n0"] * (2 * k))
    doc, got = _receivers(capsys, tmp_path / "t", _model(tmp_path / "m.json", g_node))
    assert doc["congestion_model"] == "flow" and doc["node"]["nodes"] == 1
    bytes_moved = M - 1
    # the receiver's copy: o_r + (s-1)G alone, at least its share of the node (c_node = 0)
    copy = max(LOGGP["o_r"] + bytes_moved * LOGGP["G"], k * bytes_moved * g_node)
    want = LOGGP["o_s"] + LOGGP["L"] + copy + 5000.0  # then the 5 ms computation
    assert got == pytest.approx([want] * k, rel=1e-9)
    # without the section the pairs never meet: one pair's time whatever k
    plain, alone = _receivers(capsys, tmp_path / "t", _model(tmp_path / "plain.json", None))
    assert plain["congestion_model"] == "none" and plain["node"] is None
    assert alone == pytest.approx([LOGGP["o_s"] + LOGGP["L"] + bytes_moved * LOGGP["G"] + LOGGP["o_r"]
                                   + 5000.0] * k, rel=1e-9)


def test_pairs_on_hosts_of_their_own_share_nothing_and_links_model_warns(capsys, tmp_path):
    g_node = 0.0004
    model = _model(tmp_path / "m.json", g_node)
    _pairs(tmp_path / "t", 4, ["a", "b", "c", "d", "a", "b", "c", "d"])  # each pair on its own host
    doc, got = _receivers(capsys, tmp_path / "t", model)
    assert doc["node"]["nodes"] == 4
    one_pair = LOGGP["o_s"] + LOGGP["L"] + (M - 1) * LOGGP["G"] + LOGGP["o_r"] + 5000.0
    assert got == pytest.approx([one_pair] * 4, rel=1e-9)
    doc, _ = _receivers(capsys, tmp_path / "t", model, "--congestion", "on")
    assert doc["node"] is None and any("concurrency" in w for w in doc["warnings"])
