"""The point-to-point costs a foreign simulator is configured from, read from one library
of a model file: the ping-pong regimes (Hockney t_s, t_b per size range) and the
LogGP overheads, per regime where the fit gave them."""

from __future__ import annotations

from dataclasses import dataclass

from commchar.errors import ModelError
from commchar.modelfile.model import ModelFile

P2P_KEY = "pingpong:send"


@dataclass(frozen=True)
class Regime:
    n_min: float
    n_max: float | None
    t_s: float  # us: half a round trip's start-up
    t_b: float  # us/B
    o_s: float  # us, sender overhead (0 when the model has no LogGP section)
    o_r: float  # us
    O: float  # us/B, per-byte overhead


@dataclass(frozen=True)
class P2PCost:
    library: str
    regimes: tuple[Regime, ...]
    loggp: dict[str, float] | None  # the library's LogGP section, None when not measured
    source: str  # the model's provenance for the library, one line


def read(model: ModelFile, library: str | None) -> P2PCost:
    names = model.libraries()
    if library is None:
        if len(names) != 1:
            raise ModelError(f"{model.source} holds {len(names)} libraries ({', '.join(names)}); choose one with --library")
        library = names[0]
    if library not in names:
        raise ModelError(f"{model.source} has no library {library!r} (has: {', '.join(names)})")
    if not model.has(library, P2P_KEY):
        raise ModelError(f"{model.source}: {library} has no {P2P_KEY} fit, which the parameters are derived from")
    loggp = model.loggp(library)
    # the overheads of the median fit, whose segments these are (`regimes` follows the means)
    section = model.data["libraries"][library].get("loggp") or {}
    per_size = section.get("regimes_median") or section.get("regimes") or []
    regimes = []
    for seg in model.segments(library, P2P_KEY):
        over = _overheads(loggp, per_size, seg.n_min)
        regimes.append(Regime(seg.n_min, seg.n_max, seg.t_s.evaluate(2), seg.t_b.evaluate(2), *over))
    version = model.version(library) or ""
    return P2PCost(library, tuple(regimes), loggp, f"{library} {version}".strip())


def _overheads(loggp: dict[str, float] | None, per_size: list[dict], n: float) -> tuple[float, float, float]:
    if loggp is None:
        return 0.0, 0.0, 0.0
    for regime in per_size:
        if regime["n_min"] <= n and (regime.get("n_max") is None or n <= regime["n_max"]):
            return float(regime["o_s"]), float(regime["o_r"]), float(regime.get("O", loggp.get("O", 0.0)))
    return loggp["o_s"], loggp["o_r"], loggp.get("O", 0.0)
