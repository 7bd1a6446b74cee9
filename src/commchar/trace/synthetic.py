"""Synthetic traces (docs/trace-format.md), written without MPI: for tests of the
replay and for its benchmark, where a program of a million calls is needed in
a second rather than a traced run.

`exchange_program` builds, with numpy and no per-call Python loop, pairs of
ranks that alternately compute and exchange messages of cycling sizes (so a
model's S makes some eager and some rendezvous), with an optional Allreduce
every few iterations and a Pcontrol phase mark halfway.
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np

from commchar.trace import format as fmt

SEND, RECV, ALLREDUCE = fmt.CALL_IDS["Send"], fmt.CALL_IDS["Recv"], fmt.CALL_IDS["Allreduce"]
T_INIT_NS = 1_000_000
ALLREDUCE_BYTES = 64  # exchange_program's Allreduce


def write_rank(path: Path, rank: int, size: int, records: np.ndarray, *, t_finalize_ns: int,
               t_init_ns: int = T_INIT_NS, host: str = "synthetic", library: str = "synthetic") -> None:
    """Writes one finalized rank file holding `records` (an array of RECORD_DTYPE)."""
    header = np.zeros(1, dtype=fmt.HEADER_DTYPE)
    header["magic"], header["version"], header["record_bytes"] = fmt.MAGIC, fmt.VERSION, fmt.RECORD_BYTES
    header["rank"], header["size"] = rank, size
    header["t_init_ns"], header["t_finalize_ns"] = t_init_ns, t_finalize_ns
    header["records"], header["flags"] = len(records), fmt.FLAG_FINALIZED
    header["host"], header["library"] = host.encode(), library.encode()
    with path.open("wb") as out:
        out.write(header.tobytes())
        out.write(np.ascontiguousarray(records, dtype=fmt.RECORD_DTYPE).tobytes())


def exchange_program(directory: Path, *, p: int = 2, iterations: int, sizes: tuple[int, ...] = (1024, 262_144),
                     compute_ns: int = 2000, call_ns: int = 500, allreduce_every: int = 0,
                     phase_mark: bool = True) -> int:
    """Writes rank-<r>.cctrace for p ranks (p even): in each iteration the even rank
    of each pair computes, sends, then receives the reply; the odd one receives,
    computes, replies. Returns the number of calls written."""
    if p < 2 or p % 2:
        raise ValueError("exchange_program needs an even p >= 2")
    directory.mkdir(parents=True, exist_ok=True)
    it = np.arange(iterations, dtype=np.int64)
    size = np.asarray(sizes, dtype=np.uint64)[it % len(sizes)]
    per_iter = 2 + (1 if allreduce_every else 0)
    total = 0
    for rank in range(p):
        peer, even = rank ^ 1, rank % 2 == 0
        rec = np.zeros((iterations, per_iter), dtype=fmt.RECORD_DTYPE)
        first, second = (SEND, RECV) if even else (RECV, SEND)
        rec["call"][:, 0], rec["call"][:, 1] = first, second
        rec["peer"][:, :2] = peer
        for col, call in ((0, first), (1, second)):
            if call == SEND:
                rec["bytes"][:, col] = size
            else:
                rec["bytes2"][:, col] = size
                rec["aux"][:, col], rec["aux2"][:, col] = peer, 0
        step = per_iter * call_ns + 2 * compute_ns
        start = T_INIT_NS + it * step
        rec["t_start"][:, 0] = start + compute_ns
        rec["t_start"][:, 1] = start + 2 * compute_ns + call_ns
        if allreduce_every:
            rec["call"][:, 2] = ALLREDUCE
            rec["bytes"][:, 2] = rec["bytes2"][:, 2] = ALLREDUCE_BYTES
            rec["aux"][:, 2] = 1
            rec["t_start"][:, 2] = start + 2 * compute_ns + 2 * call_ns
        rec["t_end"] = rec["t_start"] + call_ns
        flat = rec.reshape(-1)
        if allreduce_every:
            keep = np.ones((iterations, per_iter), dtype=bool)
            keep[:, 2] = (it % allreduce_every) == allreduce_every - 1
            flat = flat[keep.reshape(-1)]
        if phase_mark and iterations > 1:
            half = int(np.searchsorted(flat["t_start"], T_INIT_NS + (iterations // 2) * step))
            mark = np.zeros(1, dtype=fmt.RECORD_DTYPE)
            mark["call"], mark["aux"] = fmt.PCONTROL, 1
            mark["t_start"] = mark["t_end"] = T_INIT_NS + (iterations // 2) * step
            flat = np.concatenate([flat[:half], mark, flat[half:]])
        total += len(flat)
        write_rank(directory / f"rank-{rank}.cctrace", rank, p, flat,
                   t_finalize_ns=int(T_INIT_NS + iterations * step + compute_ns))
    return total


def write_allreduce_costs(path: Path, p: int, cost_us: float = 5.0) -> Path:
    """Writes a replay-costs file (docs/trace-format.md) charging exchange_program's
    Allreduce on p ranks `cost_us`, for a replay with --collectives charged."""
    path.write_text(json.dumps({"format": "commchar-replay-costs", "unit": "us", "collectives": [
        {"call": "allreduce", "p": p, "n": ALLREDUCE_BYTES, "cost": cost_us}]}))
    return path
