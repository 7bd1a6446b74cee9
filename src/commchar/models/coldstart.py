"""A program's first sends, from the kernel's `coldstart` points (cc_ops_coldstart.c).

Each point is one fresh job in which ranks 0 and 1 sent n bytes to each other in
turn, the receiver waiting, and kept every send's duration in order. A library
whose first messages cost more (MPICH's shared-memory cells fault their pages in
on first use) shows a run of slow sends and then the warm ones. Per rank and
size the fit finds where that run ends (the split of the durations into a head
and a tail that fits two levels best, in absolute deviations so one stall does
not move it) and whether the head is slower than the tail beyond the tail's
own scatter. Only some sizes show a run: MPICH's smallest messages fit the part
of a cell every process has touched at start (64 B here), and its rendezvous
messages leave their bytes in place. The sizes with a run of at least MIN_RUN
sends give:

- messages: how many sends of a rank are cold (the median over their ranks);
- min_bytes: the largest size probed below them without a run (0: none), so a
  send of at most that many bytes is warm (it still takes its cell of the run:
  the simulator counts it, sim/src/cold_start.rs);
- o_s + O_s n: what each cold send costs its sender beyond a warm one (per size,
  the mean over the ranks' cold sends after the first, the highest 2% left out as
  stalls: a program pays each, MPICH's cells alternating between two costs;
  fitted over n without negative terms);
- first_us: what a rank's first send costs beyond that (the median over sizes and
  ranks): a one-time cost of the path, paid once by every program;
- o_r + O_r n: what each costs its receiver, from rank 0's round trips: half of
  what a cold round adds beyond its two sends' excess.

No cold run at all, or one shorter than MIN_RUN sends at every size (a first
message's one-time cost), gives no parameters (params_ None): the simulator then
charges a program's first sends like any other.

Each point also timed the pair's first rendezvous messages (RENDEZVOUS_KEYS: rank
0's sends to rank 1, then rank 1's to rank 0): rendezvous_first_us is what the
first costs beyond the later ones (the median over the points), and
rendezvous_reverse_us what the first the other way costs; both are charged,
once per pair of ranks, whether or not the eager sends show a cold run.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np
from scipy.optimize import nnls

from commchar.errors import InputError
from commchar.models._base import Estimator, number_in

COLD_KEYS = ("cold_send_us_rank0", "cold_send_us_rank1")
ROUND_KEY = "cold_round_us_rank0"  # rank 0's send start to its reply's arrival
# the pair's first rendezvous sends, each way in turn (cc_ops_coldstart.c)
RENDEZVOUS_KEYS = ("rendezvous_send_us_rank0", "rendezvous_send_us_rank1")
# A shorter run is one first message (Open MPI's: 6 to 270 us across sizes in the probe,
# 8 us in a traced program): a one-time cost of that size's path, not the run of cold
# sends a program keeps meeting (MPICH's 64), and charging it misleads more than it helps.
MIN_RUN = 4
MAX_SENDS = 4096  # the kernel probes 192; the split costs the square of what a point holds


def _tail_min(probed: int) -> int:
    """The shortest warm tail a split may leave (a quarter of the sends)."""
    return max(4, probed // 4)


def _split(d: np.ndarray, tail_min: int) -> int:
    """The first index of the tail in the best two-level fit of `d` (L1); 0: no head."""
    best, best_cost = 0, float(np.abs(d - np.median(d)).sum())
    for c in range(1, d.size - tail_min + 1):
        head, tail = d[:c], d[c:]
        cost = float(np.abs(head - np.median(head)).sum() + np.abs(tail - np.median(tail)).sum())
        if cost < best_cost:
            best, best_cost = c, cost
    return best


def cold_run(d: np.ndarray, sigmas: float = 3.0) -> tuple[int, float]:
    """(sends in the cold run, the warm send's time, us) of one rank's durations in
    order; the run is 0 sends long when its head is not slower than the tail's scatter."""
    tail_min = _tail_min(d.size)
    if d.size < 2 * tail_min:
        return 0, float(np.median(d)) if d.size else 0.0
    c = _split(d, tail_min)
    warm = float(np.median(d[c:]))
    if c == 0:
        return 0, warm
    scatter = 1.4826 * float(np.median(np.abs(d[c:] - warm)))
    excess = float(np.median(d[:c])) - warm
    return (c, warm) if excess > sigmas * scatter and excess > 0.0 else (0, warm)


STALLS = 0.02  # the share of the highest cold costs taken for stalls, not the cells' cost


def _paid_mean(pool: np.ndarray) -> float:
    """The mean a program pays per cold message: every cost of the run (MPICH's cells
    alternate between two), less the highest STALLS share (a timer tick or a page fault
    of the kernel's own, which a probe of a few hundred sends meets once or twice); the
    median of a handful."""
    pool = pool[np.isfinite(pool)]
    if pool.size == 0:
        return 0.0
    if pool.size < 8:
        return float(np.median(pool))
    kept = np.sort(pool)[: pool.size - max(1, int(round(STALLS * pool.size)))]
    return float(kept.mean())


@dataclass
class _Probe:
    """One coldstart point's durations (us, in order) and what each rank's split found."""
    n: int
    series: list[np.ndarray]  # each rank's sends
    rounds: np.ndarray | None  # rank 0's round trips, when both ranks' sends are there
    sends: list[int]  # each rank's cold run length
    warm: list[float]  # each rank's warm send

    def summary(self, excess: tuple[float, float | None] | None) -> dict[str, Any]:
        out: dict[str, Any] = {"n": self.n, "sends": self.sends, "warm_us": [round(w, 4) for w in self.warm]}
        if excess is not None:
            out["excess_us"], out["receive_excess_us"] = excess
        return out


def _excess(probe: _Probe, messages: int) -> tuple[float, float | None]:
    """(a cold send's cost to its sender, to its receiver) beyond warm ones, us, at one size,
    the ranks' first sends left to first_us. The receiver's: half of what a cold round trip
    adds beyond its two sends' excess."""
    series, warm, rounds = probe.series, probe.warm, probe.rounds
    send = _paid_mean(np.concatenate([d[1:messages] - w for d, w in zip(series, warm)]))
    if rounds is None or rounds.size <= messages or any(d.size < rounds.size for d in series):
        return round(send, 4), None
    warm_round = float(np.median(rounds[messages:]))
    sends = np.sum([d[:messages] - w for d, w in zip(series, warm)], axis=0)
    receive = _paid_mean(((rounds[1:messages] - warm_round) - sends[1:]) / 2)
    return round(send, 4), round(receive, 4)


def _first(probes: list[_Probe], excess: list[tuple[float, float | None]]) -> float:
    """A rank's first send's cost beyond a cold one's (us): the median over sizes and ranks."""
    extra = [float(d[0] - w - send) for pr, (send, _) in zip(probes, excess)
             for d, w in zip(pr.series, pr.warm) if d.size]
    return round(max(float(np.median(extra)), 0.0), 4) if extra else 0.0


def _rendezvous_first(points: list[dict]) -> dict[str, float] | None:
    """{rendezvous_first_us, rendezvous_reverse_us}: each way's first rendezvous send less
    the quickest later one, the median over the points; None without those timings."""
    firsts: list[list[float]] = [[], []]
    for pt in points:
        extra = pt["extra"] if isinstance(pt.get("extra"), dict) else {}
        for way, key in enumerate(RENDEZVOUS_KEYS):
            sends = extra.get(key)
            try:
                d = np.asarray(sends, dtype=float) if isinstance(sends, list) else np.empty(0)
            except (TypeError, ValueError):
                continue
            if d.size >= 2 and np.all(np.isfinite(d)):
                firsts[way].append(float(d[0] - d[1:].min()))
    if not firsts[0] or not firsts[1]:
        return None
    return {"rendezvous_first_us": round(max(float(np.median(firsts[0])), 0.0), 4),
            "rendezvous_reverse_us": round(max(float(np.median(firsts[1])), 0.0), 4)}


def _affine_nonnegative(n: np.ndarray, cost: list[float]) -> tuple[float, float]:
    """a + b n fitted to per-size costs with a, b >= 0 (rounded for the model file)."""
    y = np.maximum(np.asarray(cost, dtype=float), 0.0)
    if np.unique(n).size > 1:
        (a, b), _ = nnls(np.column_stack([np.ones_like(n), n]), y)
    else:
        a, b = float(y.mean()), 0.0
    return round(float(a), 6), float(f"{b:.6g}")


class ColdStartModel(Estimator):
    """Cold-start parameters from `coldstart` point dicts.

    Fitted: params_ ({messages, o_s, O_s, o_r, O_r, first_us, min_bytes, max_bytes}: a count,
    us, us/B, us, us/B, us, bytes, bytes; None when no size shows a cold run), rendezvous_
    ({rendezvous_first_us, rendezvous_reverse_us}, us; None when the points did not time
    them), runs_ (per size: n, each rank's cold run length
    and warm send, and what a cold send costs its sender and its receiver), notes_.
    """

    _parameter_constraints = {"sigmas": number_in(1.0, 10.0)}

    def __init__(self, sigmas: float = 3.0) -> None:
        self.sigmas = sigmas

    def fit(self, points: list[dict]) -> "ColdStartModel":
        self._validate_params()
        probes: list[_Probe] = []
        for pt in points:
            extra: dict = pt["extra"] if isinstance(pt.get("extra"), dict) else {}
            try:
                series = [np.asarray(extra[k], dtype=float)[:MAX_SENDS] for k in COLD_KEYS
                          if isinstance(extra.get(k), list) and extra[k]]
                rounds = extra.get(ROUND_KEY)
                rounds = np.asarray(rounds, dtype=float)[:MAX_SENDS] if isinstance(rounds, list) else None
            except (TypeError, ValueError):
                continue  # not numbers: not the kernel's
            if pt.get("op") != "coldstart" or not series or not pt.get("valid", True):
                continue
            found = [cold_run(d[np.isfinite(d)], self.sigmas) for d in series]
            probes.append(_Probe(int(pt["n_bytes"]), series, rounds if len(series) == 2 else None,
                                 [c for c, _ in found], [w for _, w in found]))
        if not probes:
            raise InputError("ColdStartModel: no valid 'coldstart' points with their send durations")
        notes: list[str] = []
        params: dict[str, Any] | None = None
        excess: list[tuple[float, float | None]] | None = None
        with_run = [max(pr.sends) >= MIN_RUN for pr in probes]
        if sum(c >= MIN_RUN for pr in probes for c in pr.sends) < 2:
            with_run = [False] * len(probes)  # one rank's run at one size: too little to charge
        cold = [pr for pr, run in zip(probes, with_run) if run]
        if cold:
            messages = max(int(round(float(np.median([c for pr in cold for c in pr.sends])))), MIN_RUN)
            excess = [_excess(pr, messages) for pr in cold]
            n = np.array([pr.n for pr in cold], dtype=float)
            o_s, big_o_s = _affine_nonnegative(n, [send for send, _ in excess])
            o_r, big_o_r = _affine_nonnegative(n, [receive or 0.0 for _, receive in excess])
            smallest = min(pr.n for pr in cold)
            warm_below = [pr.n for pr in probes if pr.n < smallest and max(pr.sends) < MIN_RUN]
            params = {"messages": messages, "o_s": o_s, "O_s": big_o_s, "o_r": o_r, "O_r": big_o_r,
                      "first_us": _first(cold, excess), "min_bytes": max(warm_below, default=0),
                      "max_bytes": int(n.max())}
            probed = min(d.size for pr in cold for d in pr.series)
            if messages >= probed - _tail_min(probed):  # the split found no longer run
                notes.append(f"the cold run lasts {messages} of the {probed} sends probed: "
                             "it may be longer")
            if all(receive is None for _, receive in excess):
                notes.append("no round trips recorded: the receivers' part is taken as 0")
            warm_sizes = sorted(pr.n for pr in probes if max(pr.sends) < MIN_RUN)
            if warm_sizes:
                notes.append(f"no cold run at {', '.join(map(str, warm_sizes))} B")
        elif any(c for pr in probes for c in pr.sends):
            first = [float(d[0] - w) for pr in probes for d, w in zip(pr.series, pr.warm) if d.size]
            longest = max(c for pr in probes for c in pr.sends)
            notes.append(f"only the first {longest} send(s) cost more ({min(first):.3g} to "
                         f"{max(first):.3g} us beyond warm across sizes and ranks): a one-time cost "
                         f"of the size's path, not a run of cold sends, so not charged")
        else:
            notes.append("no cold start: the first sends cost what warm ones do")
        costs = iter(excess or [])
        runs = [pr.summary(next(costs) if run else None) for pr, run in zip(probes, with_run)]
        self.rendezvous_ = _rendezvous_first([pt for pt in points if pt.get("op") == "coldstart"
                                              and pt.get("valid", True)])
        self.params_ = params
        self.runs_ = runs
        self.notes_ = notes
        return self
