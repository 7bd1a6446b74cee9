"""The measurements a report shows, grouped into entities (one library in one run).

An entity is the unit of comparison: two libraries in one run, or one library
in two runs (two machines, two option sets), are two entities side by side.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from commchar.report.adapters import Measurements, ModelView
from commchar.report.adapters import library_label
from commchar.vocabulary import key_order, op_key


@dataclass
class Series:
    """One operation at one p, sorted by size; every array has one entry per point."""

    key: str
    p: int
    n: np.ndarray
    t: np.ndarray
    ci_lo: np.ndarray
    ci_hi: np.ndarray
    p25: np.ndarray
    p75: np.ndarray
    p95: np.ndarray
    valid: np.ndarray
    oversubscribed: np.ndarray
    precision_met: np.ndarray

    def at(self, n: int) -> float | None:
        hit = np.nonzero(self.n == n)[0]
        return float(self.t[hit[0]]) if hit.size else None


@dataclass
class Entity:
    label: str
    library: str
    run: dict
    jobs: list[dict]
    points: list[dict]
    failures: list[dict]
    model: ModelView | None = None
    model_note: str | None = None
    advice: Any = None  # adapters.Advice, when the advisor could read the model
    _series: dict[tuple[str, int], Series] = field(default_factory=dict, repr=False)

    @property
    def version(self) -> str:
        """The library's version in short: the first line (or first 80 characters) of what it reports."""
        versions = {short_version(j["library_version"]) for j in self.jobs if j.get("library_version")}
        return "; ".join(sorted(versions)) if versions else "unknown"

    def keys(self) -> list[str]:
        """Measured operation keys in the report's order."""
        present = {op_key(pt["op"], pt["variant"]) for pt in self.points}
        return sorted(present, key=key_order)

    def ps(self, key: str) -> list[int]:
        return sorted({pt["p"] for pt in self.points if op_key(pt["op"], pt["variant"]) == key})

    def series(self, key: str, p: int) -> Series | None:
        if (key, p) not in self._series:
            rows = sorted(
                # a time that is not positive (an imported 0.00, always marked invalid) has no
                # place on the figures' log axes: it is counted among the wrong points only
                (pt for pt in self.points
                 if pt["p"] == p and op_key(pt["op"], pt["variant"]) == key
                 and isinstance(pt["t_us"], (int, float)) and 0 < pt["t_us"] < math.inf),
                key=lambda pt: pt["n_bytes"],
            )
            if not rows:
                return None

            def col(name: str, default: float = np.nan) -> np.ndarray:
                return np.array([default if r.get(name) is None else r[name] for r in rows],
                                dtype=float)

            self._series[(key, p)] = Series(
                key, p, col("n_bytes"), col("t_us"), col("ci_lo_us"), col("ci_hi_us"),
                col("t_p25_us"), col("t_p75_us"), col("t_p95_us"),
                np.array([bool(r["valid"]) for r in rows]),
                np.array([bool(r["oversubscribed"]) for r in rows]),
                np.array([bool(r["precision_met"]) for r in rows]),
            )
        return self._series[(key, p)]


def short_version(text: str) -> str:
    first = " ".join(str(text).strip().splitlines()[0].split()) if str(text).strip() else ""
    for cut in (" MPICH Release date", ", package:"):  # long vendor banners: keep the version
        if cut in first:
            first = first[:first.index(cut)]
    return first if len(first) <= 80 else first[:79] + "…"


def build_entities(data: Measurements) -> list[Entity]:
    """One entity per (run, library), labelled by library alone when that is unambiguous."""
    runs = {r["id"]: r for r in data.runs}
    # A run across hosts is two entities a library, on-node and off-node, side by side.
    pairs = sorted({(pt["run_id"], _label(pt)) for pt in data.points})
    libraries = [lib for _, lib in pairs]
    entities = []
    for run_id, library in pairs:
        label = library if libraries.count(library) == 1 else f"{library} (run {run_id})"
        points = [pt for pt in data.points if pt["run_id"] == run_id and _label(pt) == library]
        bare = points[0]["library"]
        source = runs[run_id].get("options", {}).get("import")
        if isinstance(source, dict):  # every title and caption naming it says these are a peer's means
            label += f" [{str(source.get('tool', '?')).upper()} {source.get('version', '')} means]"
        entities.append(Entity(
            label=label,
            library=library,
            run=runs[run_id],
            jobs=[j for j in data.jobs if j["run_id"] == run_id and j["library"] == bare],
            points=points,
            failures=[f for f in data.failures
                      if f["run_id"] == run_id and _label(f) == library],
        ))
    # Failures of a library that produced no point at all still belong in the report.
    for failure in data.failures:
        if (failure["run_id"], _label(failure)) not in pairs:
            pairs.append((failure["run_id"], _label(failure)))
            entities.append(Entity(
                label=f"{_label(failure)} (run {failure['run_id']})",
                library=_label(failure), run=runs[failure["run_id"]],
                jobs=[j for j in data.jobs if j["run_id"] == failure["run_id"]
                      and j["library"] == failure["library"]],
                points=[],
                failures=[f for f in data.failures if f["run_id"] == failure["run_id"]
                          and _label(f) == _label(failure)],
            ))
    return entities


def _label(row: dict) -> str:
    return library_label(row["library"], row.get("locality"), row.get("cache"))
