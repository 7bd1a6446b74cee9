"""The aggregation/broadcast experiment (Markowsky, after Lester): Jacobi with
N unknowns on N processes, the all-to-all exchange by the direct method or the
butterfly, on hypercubes of dimension 2-5 and fully connected machines of the
same N, with congestion simulated or ignored, against the sequential program,
over a sweep of the communication delay (the time a message takes per link).

Cost model of a run (us), every term a flag of `commchar simulate --experiment
aggregation`: one arithmetic operation takes `op_cost`; a message costs
`overhead` of CPU time at each end, plus `value_cost` per value it carries at
each end (the simulator's per-byte O = value_cost / 8 for 8-byte values), plus
its bytes over `bandwidth` on the wire (G = 1 / bandwidth; unlimited by
default), and `delay` per link it crosses (L = g = 0). Congestion is off, on (a
link carries one message at a time per direction, held for the delay and the
message's bytes) or, given a bandwidth, flow (the messages crossing a link share
its bandwidth max-min fairly, and the delay is latency only, as in SimGrid).
Links are full duplex (one message at a time per direction) or half duplex (one
over both directions together); routing is cut-through or store-and-forward
(each hop receives the whole message, and each rank on the way spends its two
message overheads forwarding it). Every combination asked for is swept; without
congestion no link is shared, so those runs are made once, as full duplex.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable

from commchar.errors import UsageError
from commchar.simulate.binary import Session
from commchar.tables import Table

DEFAULT_DELAYS_US = [0.01, 0.03, 0.1, 0.3, 1.0, 3.0, 10.0, 30.0, 100.0, 300.0, 1000.0]
DIMENSIONS = (2, 3, 4, 5)
METHODS = ("direct", "butterfly")
ARCHITECTURES = ("hypercube", "full")
# the simulator's --congestion: ignored, one message per link at a time, shared bandwidth
CONGESTION_TITLES = {"off": "congestion off", "on": "congestion on (one message per link)",
                     "flow": "flow level (shared bandwidth)"}
VALUE_BYTES = 8  # the simulated Jacobi sends doubles
LINKS = ("full-duplex", "half-duplex")
ROUTINGS = ("cut-through", "store-and-forward")
TODAY = ("full-duplex", "cut-through")


def parse_choices(text: str, flag: str, allowed: tuple[str, ...]) -> tuple[str, ...]:
    """A comma-separated subset of `allowed`, in `allowed`'s order."""
    asked = {v.strip() for v in text.split(",") if v.strip()}
    unknown = sorted(asked - set(allowed))
    if unknown or not asked:
        raise UsageError(f"{flag} '{text}' must list some of {', '.join(allowed)}")
    return tuple(v for v in allowed if v in asked)


Model = tuple[str, str, str]  # (congestion, links, routing)


def model_title(model: Model, short: bool = False) -> str:
    """`congestion on (one message per link), half-duplex links, store-and-forward`, or
    short: `on, half-duplex, store-and-forward`."""
    congestion, links, routing = model
    extra = [] if congestion == "off" or links == "full-duplex" else ["half-duplex" if short else "half-duplex links"]
    if routing != "cut-through":
        extra.append(routing)
    return ", ".join([congestion if short else CONGESTION_TITLES[congestion], *extra])


def parse_delays(text: str) -> list[float]:
    """Comma-separated positive delays in us, returned sorted."""
    try:
        values = sorted({float(v) for v in text.split(",") if v.strip()})
    except ValueError:
        raise UsageError(f"--delays '{text}' is not a comma-separated list of numbers") from None
    if not values or any(not math.isfinite(v) or v <= 0 for v in values):
        raise UsageError(f"--delays '{text}' must list positive delays in us")
    return values


@dataclass(frozen=True)
class Point:
    arch: str  # "hypercube" or "full"
    dim: int
    method: str
    congestion: str  # "off", "on" or "flow"
    delay_us: float
    elapsed_us: float
    links: str = "full-duplex"
    routing: str = "cut-through"

    @property
    def model(self) -> Model:
        return (self.congestion, self.links, self.routing)


@dataclass
class ExperimentResult:
    delays_us: list[float]
    sequential_us: dict[int, float]  # by dimension (N = 2^dim)
    points: list[Point] = field(default_factory=list)
    settings: dict[str, Any] = field(default_factory=dict)

    @property
    def congestion_modes(self) -> list[str]:
        return [m for m in CONGESTION_TITLES if any(p.congestion == m for p in self.points)]

    @property
    def architectures(self) -> list[str]:
        return [a for a in ARCHITECTURES if any(p.arch == a for p in self.points)]

    @property
    def models(self) -> list[Model]:
        """The network models swept, in the order they were run."""
        return list(dict.fromkeys(p.model for p in self.points))

    def elapsed(self, arch: str, dim: int, method: str, congestion: str,
                links: str = "full-duplex", routing: str = "cut-through") -> list[float]:
        key = (arch, dim, method, (congestion, links, routing))
        chosen = {p.delay_us: p.elapsed_us for p in self.points if (p.arch, p.dim, p.method, p.model) == key}
        return [chosen[d] for d in self.delays_us]

    def speedup(self, arch: str, dim: int, method: str, congestion: str,
                links: str = "full-duplex", routing: str = "cut-through") -> list[float]:
        return [self.sequential_us[dim] / t for t in self.elapsed(arch, dim, method, congestion, links, routing)]

    def crossover(self, arch: str, dim: int, congestion: str, links: str = "full-duplex",
                  routing: str = "cut-through") -> tuple[float | None, str]:
        """The delay at which the faster method changes (log-interpolated), and what happens there."""
        direct = self.elapsed(arch, dim, "direct", congestion, links, routing)
        butterfly = self.elapsed(arch, dim, "butterfly", congestion, links, routing)
        diff = [d - b for d, b in zip(direct, butterfly)]
        for i in range(len(diff) - 1):
            a, b = diff[i], diff[i + 1]
            if a == 0 or a * b < 0:
                if a == 0:
                    return self.delays_us[i], _winner(b)
                x0, x1 = math.log(self.delays_us[i]), math.log(self.delays_us[i + 1])
                x = x0 + (x1 - x0) * a / (a - b)
                return math.exp(x), _winner(b)
        return None, _winner(diff[-1]) + " throughout"

    def as_json(self) -> dict[str, Any]:
        crossovers = []
        for arch in self.architectures:
            for dim in DIMENSIONS:
                for congestion, links, routing in self.models:
                    delay, what = self.crossover(arch, dim, congestion, links, routing)
                    crossovers.append({"arch": arch, "N": 2**dim, "dim": dim, "congestion": congestion,
                                       "links": links, "routing": routing,
                                       "crossover_delay_us": delay, "after": what})
        return {
            "experiment": "aggregation",
            "settings": self.settings,
            "delays_us": self.delays_us,
            "sequential_us": {str(2**d): t for d, t in self.sequential_us.items()},
            "points": [vars(p) | {"N": 2**p.dim,
                                     "speedup": self.sequential_us[p.dim] / p.elapsed_us} for p in self.points],
            "crossovers": crossovers,
        }


def _winner(direct_minus_butterfly: float) -> str:
    return "butterfly faster" if direct_minus_butterfly > 0 else "direct faster"


class AggregationExperiment:
    """Runs the whole sweep through the simulator; `run` returns an ExperimentResult."""

    def __init__(self, delays_us: list[float] | None = None, iterations: int = 10,
                 op_cost_us: float = 1.0, overhead_us: float = 0.1, value_cost_us: float = 0.0,
                 bandwidth_bytes_per_us: float | None = None, links: tuple[str, ...] = TODAY[:1],
                 routings: tuple[str, ...] = TODAY[1:], architectures: tuple[str, ...] = ARCHITECTURES,
                 congestion: tuple[str, ...] | None = None) -> None:
        for name, value in (("--iterations", iterations), ("--op-cost", op_cost_us),
                            ("--message-overhead", overhead_us), ("--value-cost", value_cost_us)):
            if not (math.isfinite(value) and value >= 0):
                raise UsageError(f"{name} must be a finite number, not negative ({value!r})")
        if int(iterations) != iterations or iterations < 1:
            raise UsageError(f"--iterations must be a positive integer, not {iterations!r}")
        if bandwidth_bytes_per_us is not None and not (
                math.isfinite(bandwidth_bytes_per_us) and bandwidth_bytes_per_us > 0):
            raise UsageError(f"--bandwidth must be positive (MB/s), not {bandwidth_bytes_per_us!r}")
        self.delays_us = delays_us or list(DEFAULT_DELAYS_US)
        self.iterations = int(iterations)
        self.op_cost_us = op_cost_us
        self.overhead_us = overhead_us
        self.value_cost_us = value_cost_us
        self.bandwidth = bandwidth_bytes_per_us  # bytes per us = MB/s; None: unlimited
        for name, chosen, allowed in (("--links", links, LINKS), ("--routing", routings, ROUTINGS)):
            if not chosen or any(v not in allowed for v in chosen):
                raise UsageError(f"{name} must list some of {', '.join(allowed)}, not {','.join(chosen)!r}")
        self.links = links
        self.routings = routings
        if not architectures or any(a not in ARCHITECTURES for a in architectures):
            raise UsageError(f"architectures must be some of {', '.join(ARCHITECTURES)}")
        self.architectures = architectures
        if congestion is not None and (not congestion or any(c not in CONGESTION_TITLES for c in congestion)
                                       or ("flow" in congestion and not self.bandwidth)):
            raise UsageError("congestion must be some of off, on and flow (flow given a bandwidth)")
        self.congestion = congestion

    @property
    def congestion_modes(self) -> tuple[str, ...]:
        if self.congestion is not None:
            return self.congestion
        # flow-level sharing needs a bandwidth to share
        return ("off", "on", "flow") if self.bandwidth else ("off", "on")

    @property
    def models(self) -> list[Model]:
        """Every (congestion, links, routing) asked for; without congestion the links do not matter."""
        return list(dict.fromkeys((c, "full-duplex" if c == "off" else links, routing)
                                  for c in self.congestion_modes for routing in self.routings
                                  for links in self.links))

    def _args(self, unknowns: int, p: int, topology: str, method: str, congestion: str,
              delay_us: float, links: str = "full-duplex", routing: str = "cut-through") -> list[str]:
        network = [] if (links, routing) == TODAY else ["--links", links, "--routing", routing]
        return [*network, "--app", "jacobi", "--unknowns", str(unknowns), "--p", str(p), "--iterations",
                str(self.iterations), "--exchange", method, "--op-cost", repr(self.op_cost_us),
                "--topology", topology, "--congestion", congestion, "--unit", "us",
                "--L", "0", "--g", "0", "--G", repr(1.0 / self.bandwidth if self.bandwidth else 0.0),
                "--O", repr(self.value_cost_us / VALUE_BYTES), "--o", repr(self.overhead_us),
                "--hop", repr(delay_us), "--S", str(2**62)]

    def run(self, on_progress: Callable[[int, int], None] | None = None) -> ExperimentResult:
        """Simulates every case, all in one simulator process; `on_progress(done, total)` after each."""
        result = ExperimentResult(delays_us=self.delays_us, sequential_us={}, settings={
            "iterations": self.iterations, "op_cost_us": self.op_cost_us, "overhead_us": self.overhead_us,
            "value_cost_us": self.value_cost_us, "bandwidth_MB_per_s": self.bandwidth,
            "links": list(self.links), "routing": list(self.routings),
            "model": "L=g=0; o per message and O = value cost / 8 per byte at each end; "
                     "G = 1/bandwidth; delay per link; 8-byte values"})
        jobs = [(arch, dim, method, model, delay)
                for arch in self.architectures for dim in DIMENSIONS for method in METHODS
                for model in self.models for delay in self.delays_us]
        total = len(jobs) + len(DIMENSIONS)
        done = 0

        def advance() -> None:
            nonlocal done
            done += 1
            if on_progress is not None:
                on_progress(done, total)

        with Session() as sim:
            for dim in DIMENSIONS:
                n = 2**dim
                seq = sim.run(self._args(n, 1, "full", "direct", "off", 1.0))
                result.sequential_us[dim] = float(seq["makespan"])
                advance()
            for arch, dim, method, (congestion, links, routing), delay in jobs:
                n = 2**dim
                topology = f"hypercube:{dim}" if arch == "hypercube" else "full"
                out = sim.run(self._args(n, n, topology, method, congestion, delay, links, routing))
                result.points.append(Point(arch, dim, method, congestion, delay, float(out["makespan"]),
                                           links, routing))
                advance()
        return result

    def save(self, result: ExperimentResult, outdir: Path) -> list[Path]:
        """Writes results.json and the plots (PNG and SVG); returns the paths written."""
        import json

        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt

        try:
            outdir.mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            raise UsageError(f"cannot create {outdir}: {exc.strerror}") from None
        written = [outdir / "results.json"]
        written[0].write_text(json.dumps(result.as_json(), indent=1))
        for quantity in ("elapsed", "speedup"):
            modes = result.models
            archs = result.architectures
            fig, axes = plt.subplots(len(modes), len(archs), figsize=(5.5 * len(archs), 4 * len(modes)),
                                     sharex=True, squeeze=False)
            for col, arch in enumerate(archs):
                for row, model in enumerate(modes):
                    ax = axes[row][col]
                    for dim in DIMENSIONS:
                        for method, style in (("direct", "-"), ("butterfly", "--")):
                            values = (result.elapsed if quantity == "elapsed" else result.speedup)(
                                arch, dim, method, *model)
                            ax.plot(result.delays_us, values, style, marker="o", markersize=3,
                                    color=f"C{dim - 2}", label=f"N={2**dim} {method}")
                    ax.set_xscale("log")
                    ax.set_yscale("log")
                    ax.set_title(f"{arch}, {model_title(model)}", fontsize=9)
                    ax.set_xlabel("communication delay per link (us)")
                    ax.set_ylabel("elapsed time (us)" if quantity == "elapsed" else "speedup over sequential")
                    ax.grid(True, which="both", alpha=0.3)
            axes[0][0].legend(fontsize=7, ncol=2)
            fig.suptitle(f"Jacobi aggregation/broadcast: {quantity} against delay "
                         f"({result.settings['iterations']} iterations)")
            fig.tight_layout()
            for ext in ("png", "svg"):
                path = outdir / f"aggregation_{quantity}.{ext}"
                fig.savefig(path)
                written.append(path)
            plt.close(fig)
        return written


def tables(result: ExperimentResult) -> list[Table]:
    """The elapsed times and speedups per network model and architecture, then the crossover
    delays; the sequential baseline is the last table's note."""
    out: list[Table] = []
    headers = ["delay us", *(f"N={2**dim}" for dim in DIMENSIONS)]
    right = frozenset(range(len(headers)))
    for model in result.models:
        for arch in result.architectures:
            rows = []
            for i, delay in enumerate(result.delays_us):
                cells = [f"{delay:g}"]
                for dim in DIMENSIONS:
                    td, tb = (result.elapsed(arch, dim, m, *model)[i] for m in METHODS)
                    seq = result.sequential_us[dim]
                    cells.append(f"{td:.4g} / {tb:.4g}\n({seq / td:.2f} / {seq / tb:.2f})")
                rows.append(cells)
            out.append(Table(f"aggregation-{arch}-{'-'.join(model)}",
                             f"{arch}, {model_title(model)}: elapsed us direct / butterfly "
                             "(speedup over sequential)", headers, rows, right=right))
    rows = []
    for arch in result.architectures:
        for model in result.models:
            cells = [arch, model_title(model, short=True)]
            for dim in DIMENSIONS:
                crossing, what = result.crossover(arch, dim, *model)
                cells.append(f"{crossing:.3g}: {what}" if crossing is not None else what)
            rows.append(cells)
    cross_headers = ["architecture", "congestion, links, routing", *(f"N={2**dim}" for dim in DIMENSIONS)]
    baseline = ", ".join(f"N={2**d}: {t:.4g}" for d, t in result.sequential_us.items())
    out.append(Table("aggregation-crossover", "crossover delay (us) where the faster method changes",
                     cross_headers, rows, notes=[f"sequential baseline (us): {baseline}"],
                     right=frozenset(range(2, len(cross_headers)))))
    return out
