"""What a burst of exchanges costs beyond the model (`loggp.exchange_excess.burst`, `burst_eager`).

A rendezvous exchange (one message each way between two ranks) takes longer than the
model's rendezvous rule, and `loggp.exchange_excess.rendezvous` keeps what it took beyond
(models/receive_copy.py). A wait that completes two such exchanges with one rank at once
(a 2-D halo's left and right neighbours at p = 2: two `MPI_Isend`s and two `MPI_Irecv`s
each way, one `MPI_Waitall`) does not pay that excess twice: the kernel's
`exchange:isend2` (the same burst) took, beyond the model's own two messages each way,
about what one exchange took beyond its one (Open MPI 4.1.4 here: 0.74 against 0.7 to
0.8 us at 4 KiB, 1.07 against 1.0 to 1.2 at 32 KiB), and with MPICH 4.0.2 at 32 KiB
nothing (0.05 against 0.8). Charged once a pair, a burst of two replayed 20% over its own
probe.

The model's own two messages each way are what the simulator charges them, under every
rule of the engine (the receiver's pull, the sender's gap between its requests, the
ack): for each size the probe measured, the simulator runs a schedule of `ITERATIONS`
bursts, each rank posting two receives and two sends and the next burst waiting for all
four, and again twice as many; the difference over `ITERATIONS` is one burst in steady
state. `burst` (rendezvous sizes, n >= S) and `burst_eager` (the others) are the probe's
time (the exchange excess's statistic, the mean) less that, at least 0, per size; the
replay shares each among the pairs of a burst (sim/src/exchange_excess.rs). Eager bursts
miss their probe too: MPICH's of 256 B simulated 0.71 to 0.78 us against the probe's
0.79 to 0.85 in one validation's three models, Open MPI's 0.56 to 0.62 against 0.60 to
0.69. A library without the probe, or without the exchange excess, keeps every
rendezvous pair charged a single exchange's excess and every eager pair nothing.

A size whose burst spans more of a rank's buffers (four of n bytes) than the model's
footprint curves hold at no cost (`copy_footprint.held_bytes`) gets no step: there the
probe's time holds what its buffers cost the caches (MPICH's burst of 1 MiB took 75 us
beyond the simulated one), which the replay charges by the program's own footprint
(`copy_footprint`), and the step would charge it twice.
"""

from __future__ import annotations

import os
import tempfile
from collections import defaultdict
from typing import Any

from commchar.modelfile.document import ModelDocument
from commchar.models.receive_copy import OP as EXCHANGE_OP, TWO_EACH_WAY, exchange_times, in_state_of
from commchar.segment_gaps import by_rendezvous
from commchar.simulate.binary import Session

# bursts of the shorter schedule; the longer has twice as many (their difference is steady)
ITERATIONS = 16
MESSAGES_EACH_WAY = 2
# each rank's message buffers in the probe's burst: its sends' and its receives'
BUFFERS = 2 * MESSAGES_EACH_WAY


def burst_schedule(n: int, bursts: int) -> str:
    """A GOAL schedule of two ranks, `bursts` bursts of MESSAGES_EACH_WAY messages of `n`
    bytes each way: every rank posts its receives, then its sends, and each burst's
    operations wait for all of the burst before (a `MPI_Waitall`)."""
    lines = ["num_ranks 2"]
    for rank in (0, 1):
        other = 1 - rank
        lines.append(f"rank {rank} {{")
        before: list[str] = []
        for b in range(bursts):
            labels = [f"r{b}_{k}" for k in range(MESSAGES_EACH_WAY)] + [f"s{b}_{k}" for k in range(MESSAGES_EACH_WAY)]
            lines += [f"r{b}_{k}: recv {n}b from {other} tag {k}" for k in range(MESSAGES_EACH_WAY)]
            lines += [f"s{b}_{k}: send {n}b to {other} tag {k}" for k in range(MESSAGES_EACH_WAY)]
            lines += [f"{label} requires {earlier}" for label in labels for earlier in before]
            before = labels
        lines.append("}")
    return "\n".join(lines) + "\n"


def simulated_burst_us(sim: Session, model_path: str, library: str, n: int, directory: str) -> float:
    """One burst of the model's own (us), in steady state (the schedules written once into
    `directory`, whatever the library)."""
    makespans = []
    for bursts in (ITERATIONS, 2 * ITERATIONS):
        path = os.path.join(directory, f"burst-{n}-{bursts}.goal")
        if not os.path.exists(path):
            with open(path, "w", encoding="utf-8") as out:
                out.write(burst_schedule(n, bursts))
        makespans.append(float(sim.run(["--model", model_path, "--library", library, "--unit", "us",
                                        "--goal", path])["makespan"]))
    return (makespans[1] - makespans[0]) / ITERATIONS


def probe_times(points: list[dict], library: str, statistic: str) -> dict[int, float]:
    """{n: us} the library's `exchange:isend2` points, those measured in the main state of its
    ping-pongs' cores (as the exchange excess takes them), by `statistic`."""
    own = [pt for pt in points if pt.get("library") == library]
    exchanges = [pt for pt in own if pt.get("op") == EXCHANGE_OP]
    pingpongs = [pt for pt in own if pt.get("op") == "pingpong"]
    return exchange_times(in_state_of(exchanges, pingpongs), statistic, TWO_EACH_WAY)


def burst_steps(sim: Session, model_path: str, library: str, loggp: dict[str, Any], points: list[dict],
                directory: str) -> dict[str, list[list[float]]]:
    """{"burst": [[n, us]] per rendezvous size (n >= S) the probe measured, "burst_eager": the
    same per eager size}: its time beyond the model's burst, at least 0."""
    excess, S = loggp["exchange_excess"], float(loggp["S"])
    measured = probe_times(points, library, str(excess.get("statistic", "mean")))
    held = (loggp.get("copy_footprint") or {}).get("held_bytes")
    steps: dict[str, list[list[float]]] = {"burst": [], "burst_eager": []}
    for n in sorted(measured):
        if held is not None and BUFFERS * n > float(held):
            continue  # the footprint curves charge what the burst's buffers cost from here
        model = simulated_burst_us(sim, model_path, library, n, directory)
        steps["burst" if by_rendezvous(n, S) else "burst_eager"].append([n, round(max(measured[n] - model, 0.0), 4)])
    return {key: value for key, value in steps.items() if value}


def add_burst_excess(model: ModelDocument, points: list[dict]) -> ModelDocument:
    """`model` with `exchange_excess.burst` and `burst_eager` in every library whose model
    charges exchanges an excess (its run measured them) and whose run measured the burst."""
    from commchar.modelfile import save

    wanted = {name: lib for name, lib in model.libraries.items()
              if isinstance(lib.loggp, dict) and isinstance(lib.loggp.get("exchange_excess"), dict)
              and lib.loggp.get("S") is not None}
    if not wanted:
        return model
    by_library: dict[str, list[dict]] = defaultdict(list)
    for pt in points:
        by_library[str(pt.get("library"))].append(pt)
    out = model
    with tempfile.TemporaryDirectory(prefix="commchar-burst-") as tmp, Session() as sim:
        path = os.path.join(tmp, "model.json")
        save(model, path)  # the simulator reads the model as a file
        for name, lib in wanted.items():
            assert isinstance(lib.loggp, dict)
            steps = burst_steps(sim, path, name, lib.loggp, by_library.get(name, []), tmp)
            if steps:
                out = out.with_library(name, lib.with_loggp(
                    exchange_excess={**lib.loggp["exchange_excess"], **steps}))
    return out
