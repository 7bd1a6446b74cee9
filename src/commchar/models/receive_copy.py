"""The receiver's copy of an eager message that is already there (`O_r` of each
eager entry of `loggp.regimes`), from the kernel's `exchange:isend2` and
`exchange:isend` points (a halo's burst), else its `exchange:sendrecv` points.

A ping-pong measures o_s + L + o_r + (n-1)G and cannot say which CPU pays for
the bytes: the sender copying them into the shared buffer, the receiver
copying them out, or both at once, one cell behind the other. LogGOPSim's
rule (the receiver busy o_r + max((n-1)O, (n-1)G) from the first byte) is the
pipelined answer, so a simultaneous exchange costs each rank its own send
copy and then the whole stream of the other's message again: about twice the
one-way per-byte cost. Measured, MPICH's 4 KiB `MPI_Sendrecv` between two
ranks costs 1.6 times a one-way message, not twice (1.10 against 0.68 us).

PLogP gives the receiver its own o_r(n). The exchange is what measures it
where it matters: each rank sends, and then takes in a message whose bytes
have arrived while it sent. In the simulator that costs

    X(n) = o_s + o_r + max((n-1)(O + O_r), L + (n-1)max(O, G))

(L the regime's own where it has one) per exchange (engine.rs `held_back`: a receiver free at the first byte still
ends as LogGOPSim says, so every ping-pong keeps its time). Per regime, over
its eager sizes (n < S) whose bytes cost at least the regime's overheads
((n-1)max(O, G) >= o_s + o_r: below, the exchange's own fixed cost, which O_r
does not model, would decide it), the exchange's times (the regimes'
statistic) are fitted as o_s + o_r + k(n-1) with the regime's own o_s + o_r
(relative least squares), and O_r = k - O, what the exchange adds to the
sender's own copy, kept within [0, max(O, G)]: from a one-way time (the
receiver copies nothing the stream has not brought) to LogGOPSim's (it copies
all of it again), so every ping-pong keeps its segment's time. A regime with
fewer than two such sizes measured keeps LogGOPSim's rule, as every rendezvous
message does, unless that rule charges the exchange at its largest eager size
measured more than it took: there O_r is what that exchange leaves after the
regime's o_s + o_r and O (within the same bounds), so that the model does not
overcharge its own measurement (a fixed cost of the exchange beyond the
overheads only raises it towards LogGOPSim's).

The single exchange cannot tell O_r where its bytes cost no more than the
stream: with O + O_r below max(O, G) the exchange is L + (n-1)max(O, G) after
the overheads whatever O_r is, and an exchange that took more than that held
the fit at its bound max(O, G) (MPICH 4.0.2 on an Intel Xeon guest: 1.19 to
1.37 us at 4 KiB against 1.16 there). A halo's second message each way is
taken in after the rank's own sends, its bytes there: `exchange:isend2` less
`exchange:isend` (two and one messages each way, each rank's MPI_Irecv's, then
its MPI_Isend's, then MPI_Waitall) is what one more message each way costs the
two CPUs, o_s + o_r + (n-1)(O + O_r). Where a regime has such sizes whose bytes
cost at least its overheads, that difference is fitted as o_s + o_r + k(n-1)
(relative least squares) and O_r = k - O, within the same bounds, whatever
the single exchange says (MPICH there: 0.84 us at 4 KiB, O_r 0.8e-4 us/B
against 1.5e-4 from the single exchange; a 2-D halo of 4 KiB at p = 2 was
predicted 16% slow with the single exchange's O_r). The single exchange's time
beyond the model is then its excess at every size (below).

The exchanges are taken only where the host held ranks 0 and 1 in the state of
the ping-pong the regimes come from (commchar.core_distance): an exchange of
another state is another machine's, and beside this one's ping-pong it would
give a copy of neither (a run whose exchanges all lay 300 ns apart and whose
ping-pongs 70 ns apart measured an exchange of 1 B at 0.51 us against a
one-way 0.13).

`loggp.receive_copy` shows the fit beside what it was fitted to: per eager size
measured, the exchange's time, X(n) as the model charges it, and LogGOPSim's
o_s + (n-1)O + o_r + (n-1)max(O, G) (the receiver busy sending when the message
comes).

Below the sizes O_r is fitted at, the exchange costs more than X(n) by an
amount of its own: two ranks sending and receiving at once through the same
shared cells (MPICH 4.0.2 here: 0.21 against 0.18 us at 1 to 64 B, 0.30 against
0.27 at 256 B; Open MPI 4.1.4: 0.21 against 0.16 at 1 B). A ping-pong does not
show it, and a model that leaves it out predicts its own exchange short.
`loggp.exchange_excess` keeps it per eager size measured below those O_r is
fitted at, exchange less X(n) (at least 0), 0 at the sizes O_r is fitted at (but
where the fit held O_r at its bound, or the regime has none, the excess too: the
model cannot reach those exchanges), and at
each rendezvous size measured the exchange less the model's rendezvous exchange
(rendezvous_table: no exchange is fitted there, and Open MPI's vader copies a large
message's first 32 KiB twice through its cells where the rule counts one pull). The
replay charges each MPI_Sendrecv and MPI_Sendrecv_replace that both sends and receives
the excess of its size (sim/src/exchange_excess.rs).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from commchar.core_distance import in_main_state_of, point_pairs, rtt_pair
from commchar.models.excess import TIME_KEYS
from commchar.models.regimes import segment_index
from commchar.segment_gaps import by_rendezvous

OP, VARIANT = "exchange", "sendrecv"
# the halo's burst: one and two messages each way (MPI_Irecv's, MPI_Isend's, MPI_Waitall)
ONE_EACH_WAY, TWO_EACH_WAY = "isend", "isend2"


def in_state_of(exchanges: list[dict], pingpongs: list[dict]) -> list[dict]:
    """The exchange points measured in the main state of the `pingpong:send` points' core
    distance (all of them where either side has no round trips)."""
    reference = point_pairs(pt for pt in pingpongs if pt.get("variant") == "send" and pt.get("valid", True))
    if not reference:
        return exchanges
    paired = [(pt, rtt_pair(pt.get("extra"))) for pt in exchanges]
    measured = [pair for _, pair in paired if pair is not None]
    in_main = iter(in_main_state_of(reference, measured))
    return [pt for pt, pair in paired if pair is None or next(in_main)]


def exchange_times(points: list[dict], statistic: str, variant: str = VARIANT) -> dict[int, float]:
    """{n: time (us)} of the valid `exchange:<variant>` points, by the regimes' statistic
    (the median where a point has no mean)."""
    key = TIME_KEYS[statistic]
    out: dict[int, float] = {}
    for pt in points:
        if pt.get("op") != OP or pt.get("variant") != variant or not pt.get("valid", True):
            continue
        n, t = pt.get("n_bytes"), pt.get(key)
        if not isinstance(t, (int, float)) or not np.isfinite(t) or t <= 0:
            t = pt.get("t_us")
        if isinstance(n, int) and n > 0 and isinstance(t, (int, float)) and np.isfinite(t) and t > 0:
            out[n] = float(t)
    return out


def second_message_times(points: list[dict], statistic: str) -> dict[int, float]:
    """{n: us} what a second message each way added to a halo-style exchange: `exchange:isend2`
    less `exchange:isend` at each size both measured where it is positive."""
    two, one = exchange_times(points, statistic, TWO_EACH_WAY), exchange_times(points, statistic, ONE_EACH_WAY)
    return {n: two[n] - one[n] for n in sorted(two.keys() & one.keys()) if two[n] > one[n]}


def _eager_by_regime(regimes: list[dict[str, Any]], times: dict[int, float], S: float | None
                     ) -> list[list[int]]:
    """The eager sizes measured (n < S), sorted, each under the regime that prices it (the
    model file's rule: the covering regime, in a gap the one with the nearest bound)."""
    sizes = sorted(n for n in times if not by_rendezvous(n, S))
    grouped: list[list[int]] = [[] for _ in regimes]
    for n, i in zip(sizes, segment_index(regimes, sizes) if sizes else []):
        grouped[int(i)].append(n)
    return grouped


def _fixed_and_stream(regime: dict[str, Any]) -> tuple[float, float]:
    """A regime's overheads o_s + o_r and its stream's time per byte, max(O, G)."""
    return float(regime["o_s"]) + float(regime["o_r"]), max(float(regime["O"]), float(regime["G"]))


def _copying(regime: dict[str, Any], sizes: list[int]) -> list[int]:
    """The sizes of `sizes` whose bytes cost at least the regime's overheads,
    (n-1)max(O, G) >= o_s + o_r: below, a fixed cost of the exchange, which O_r does not
    model, would decide it."""
    fixed, per_byte = _fixed_and_stream(regime)
    return [n for n in sizes if n > 1 and (n - 1) * per_byte >= fixed]


def _slope(sizes: list[int], times: dict[int, float], fixed: float) -> float:
    """k of times[n] = fixed + k(n-1) over `sizes`, in relative least squares."""
    n1 = np.array(sizes, dtype=float) - 1.0
    x = np.array([times[n] for n in sizes])
    w = 1.0 / (x * x)  # relative error
    return float(np.sum(w * n1 * (x - fixed)) / np.sum(w * n1 * n1))


def second_message_sizes(regimes: list[dict[str, Any]], second: dict[int, float], S: float | None
                         ) -> list[list[int]]:
    """Per regime, the eager sizes of `second` (second_message_times) its O_r is fitted at."""
    return [_copying(regime, sizes) for regime, sizes in zip(regimes, _eager_by_regime(regimes, second, S))]


def with_receive_copy(regimes: list[dict[str, Any]], times: dict[int, float], S: float | None,
                      second: dict[int, float] | None = None) -> list[dict[str, Any]]:
    """The regimes, each with `O_r` (us/B): from the second message each way (`second`,
    second_message_times) where the regime has such a size whose bytes cost at least its
    overheads; else from the exchanges `times` where two or more of its eager sizes whose
    bytes do were measured, or where LogGOPSim's rule overcharges the exchange at its
    largest eager size (_below_logGOPSim)."""
    out = []
    second = second or {}
    for regime, eager, at in zip(regimes, _eager_by_regime(regimes, times, S),
                                 second_message_sizes(regimes, second, S)):
        fixed, per_byte = _fixed_and_stream(regime)
        if at:
            out.append(regime | {"O_r": _within(_slope(at, second, fixed) - float(regime["O"]), per_byte)})
            continue
        sizes = _copying(regime, eager)
        if len(sizes) < 2:
            out.append(_below_logGOPSim(regime, eager, times, fixed, per_byte))
            continue
        out.append(regime | {"O_r": _within(_slope(sizes, times, fixed) - float(regime["O"]), per_byte)})
    return out


def _within(o_r: float, per_byte: float) -> float:
    """O_r within [0, max(O, G)]: a receiver slower than the stream would slow the ping-pong
    too."""
    return min(max(o_r, 0.0), per_byte)


def _below_logGOPSim(regime: dict[str, Any], eager: list[int], times: dict[int, float], fixed: float,
                     per_byte: float) -> dict[str, Any]:
    """A regime too small for the fit (its o_s + o_r `fixed`, max(O, G) `per_byte`): the
    receiver's copy the exchange at its largest eager size measured leaves, where LogGOPSim's
    (max(O, G)) would charge that exchange more than it took (Open MPI 4.1.4's regime of 0 to
    256 B here: G = 0.16 ns/B from its ping-pong, and LogGOPSim's exchange of 256 B 0.203 us
    against 0.189 measured); else the regime as it is."""
    largest = max((n for n in eager if n > 1), default=None)
    if largest is None:
        return regime
    o_r = _within((times[largest] - fixed) / (largest - 1) - float(regime["O"]), per_byte)
    return regime | {"O_r": o_r} if o_r < per_byte else regime


def exchange_table(regimes: list[dict[str, Any]], times: dict[int, float], S: float | None, L: float
                   ) -> list[dict[str, Any]]:
    """Per eager size measured: {n, exchange_us, model_us, loggopsim_us} (see the module)."""
    rows = []
    for r, eager in zip(regimes, _eager_by_regime(regimes, times, S)):  # in size order
        fixed = float(r["o_s"]) + float(r["o_r"])
        big_o, stream = float(r["O"]), max(float(r["O"]), float(r["G"]))
        latency = float(r.get("L", L))

        def exchange(n1: int, receiver: float) -> float:
            """Both ranks' send copy, then the receiver's copy per byte or the stream after L."""
            return fixed + max(n1 * (big_o + receiver), latency + n1 * stream)

        for n in eager:
            # LogGOPSim's receiver copies the whole stream again: receiver = max(O, G)
            loggopsim = exchange(n - 1, stream)
            model = loggopsim if r.get("O_r") is None else exchange(n - 1, float(r["O_r"]))
            rows.append({"n": n, "exchange_us": round(times[n], 4), "model_us": round(model, 4),
                         "loggopsim_us": round(loggopsim, 4)})
    return rows


def rendezvous_table(regimes: list[dict[str, Any]], times: dict[int, float], S: float | None, L: float
                     ) -> list[dict[str, Any]]:
    """Per rendezvous size measured (n >= S): {n, exchange_us, model_us}, the model's exchange
    as the simulator charges it (each rank's request reaches the other after o_s + L, which
    pulls the bytes, (n-1)max(O, G), and acknowledges, L and o_r later), under the regime that
    prices n."""
    if S is None:
        return []
    sizes = sorted(n for n in times if by_rendezvous(n, S))
    rows = []
    for n, i in zip(sizes, segment_index(regimes, sizes) if sizes else []):
        r = regimes[int(i)]
        model = float(r["o_s"]) + float(r["o_r"]) + 2 * float(r.get("L", L)) + (n - 1) * max(float(r["O"]), float(r["G"]))
        rows.append({"n": n, "exchange_us": round(times[n], 4), "model_us": round(model, 4)})
    return rows


def second_message_table(regimes: list[dict[str, Any]], second: dict[int, float], S: float | None
                         ) -> list[dict[str, Any]]:
    """Per eager size measured: {n, second_us, model_us}, what a second message each way added
    to the exchange (second_message_times) and what the model's CPUs spend on it, o_s + o_r +
    (n-1)(O + O_r) (LogGOPSim's receiver, O_r = max(O, G), where the regime has none)."""
    rows = []
    for r, eager in zip(regimes, _eager_by_regime(regimes, second, S)):
        o_r = float(r["O_r"]) if r.get("O_r") is not None else max(float(r["O"]), float(r["G"]))
        for n in eager:
            model = float(r["o_s"]) + float(r["o_r"]) + (n - 1) * (float(r["O"]) + o_r)
            rows.append({"n": n, "second_us": round(second[n], 4), "model_us": round(model, 4)})
    return rows


def exchange_excess(regimes: list[dict[str, Any]], table: list[dict[str, Any]], S: float | None,
                    statistic: str, rendezvous: list[dict[str, Any]] | None = None,
                    second: dict[int, float] | None = None) -> dict[str, Any] | None:
    """`loggp.exchange_excess` from the rows of exchange_table and rendezvous_table:
    {statistic, steps: [[n, us]], rendezvous: [[n, us]]}, per size measured, what the exchange
    took beyond the model, at least 0; None where no size was measured. `steps`, the eager
    sizes: below those O_r is fitted at (whose bytes cost less than the regime's overheads)
    the exchange's own fixed cost decides; at those, 0: the model meets the exchanges in
    least squares, and their residuals, clamped, would only add; but where the fit held O_r
    at its bound max(O, G), or the regime has none (LogGOPSim's receiver charging them less
    than they took), the model cannot meet them, and every size keeps its excess. `rendezvous` (only where a
    rendezvous size was measured): the exchange beyond the model's rendezvous rule, which no
    exchange was fitted to. A regime whose O_r comes from the second message each way
    (`second`, with_receive_copy) was not fitted to the exchanges either: every size keeps
    its excess (Open MPI's exchange of 4 KiB took 2.6 to 3.9 us against 2.3 to 3.1
    in its models)."""
    by_n = {int(row["n"]): row for row in table}
    steps = []
    seconds = second_message_sizes(regimes, second or {}, S)
    for regime, eager, at in zip(regimes, _eager_by_regime(regimes, {n: 1.0 for n in by_n}, S), seconds):
        fixed, per_byte = _fixed_and_stream(regime)
        # the fit meets the exchanges only where its O_r is theirs and free of its bound: held
        # at max(O, G), absent (LogGOPSim's receiver charging less than they took), or the
        # second message's, it leaves them their excess
        met = not at and regime.get("O_r") is not None and float(regime["O_r"]) < per_byte
        for n in eager:
            steps.append([n, 0.0 if met and (n - 1) * per_byte >= fixed else _beyond(by_n[n])])
    pulled = [[int(row["n"]), _beyond(row)] for row in rendezvous or []]
    if not steps and not pulled:
        return None
    return {"statistic": statistic, "steps": sorted(steps)} | ({"rendezvous": sorted(pulled)} if pulled else {})


def _beyond(row: dict[str, Any]) -> float:
    """What a row's exchange took beyond the model's, at least 0 (us, to 0.1 ns)."""
    return round(max(float(row["exchange_us"]) - float(row["model_us"]), 0.0), 4)
