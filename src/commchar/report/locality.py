"""On-node beside off-node: for a run across hosts, each library's point-to-point
startup, asymptotic bandwidth and half-performance length measured with both ranks
on one host and on two, in one table (the entities themselves are side by side
everywhere else as `LIB on-node` and `LIB off-node`)."""

from __future__ import annotations

from commchar.report import modelinfo
from commchar.report.dataset import Entity
from commchar.tables import Table
from commchar.report.units import Rates, number


def locality_table(entities: list[Entity], rates: Rates) -> Table | None:
    halves: dict[tuple[int, str], dict[str, Entity]] = {}
    for e in entities:
        if e.points and e.points[0].get("locality"):
            run_library = (e.run["id"], e.points[0]["library"])
            halves.setdefault(run_library, {})[e.points[0]["locality"]] = e
    rows = []
    for (_, library), pair in sorted(halves.items()):
        on, off = pair.get("on-node"), pair.get("off-node")
        if on is None or off is None:
            continue
        for key in [k for k in on.keys() if k in off.keys() and k.startswith("pingpong:")]:
            t_on, t_off = _startup(on, key), _startup(off, key)
            bw_on, half_on = modelinfo.p2p_headline(on.model, key)
            bw_off, half_off = modelinfo.p2p_headline(off.model, key)
            ratio = bw_on / bw_off if bw_on and bw_off else None
            rows.append([library, key.partition(":")[2], number(t_on), number(t_off),
                         rates.bandwidth(bw_on), rates.bandwidth(bw_off), number(ratio, 3),
                         "–" if half_on is None else str(half_on),
                         "–" if half_off is None else str(half_off)])
    if not rows:
        return None
    return Table(
        "locality", "Point-to-point on one host (on-node) and across hosts (off-node), side by side",
        ["library", "send mode", "t_s on-node (us)", "t_s off-node (us)",
         f"Bw_as on-node ({rates.bw_unit})", f"Bw_as off-node ({rates.bw_unit})",
         "Bw_as on/off", "n_half on-node (B)", "n_half off-node (B)"],
        rows, ["t_s of the smallest-size regime; Bw_as and n_half of the whole fitted model"
               " (commchar.models.metrics). Ranks 0 and 1 on one host, then on two."])


def _startup(entity: Entity, key: str) -> float | None:
    params = modelinfo.p2p_parameters(entity.model, key)
    return params[0].t_s if params else None
