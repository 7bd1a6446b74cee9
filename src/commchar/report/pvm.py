"""PVM (library "pvm") beside the MPI libraries, as the AP3000 study compared them:
the start-up and bandwidth of each way PVM sends (pvm_psend, and pvm_send of a
message packed with each encoding) against MPI's standard send; the cost of
packing alone; and how each library's broadcast grows with p.

PVM's points are stored under MPI's names (measure/operations.py), so the
report's general comparison and every fit already cover the operations both
have; this section lines up what differs in name only (psend against send)."""

from __future__ import annotations

from commchar.report import modelinfo
from commchar.report.dataset import Entity
from commchar.tables import Table
from commchar.report.units import Rates, number

PVM_LIBRARY = "pvm"
SENDS = (("pingpong:psend", "pvm_psend / pvm_precv"),
         ("pingpong:default", "pvm_send, PvmDataDefault (XDR)"),
         ("pingpong:raw", "pvm_send, PvmDataRaw"),
         ("pingpong:inplace", "pvm_send, PvmDataInPlace"))
MPI_SEND = ("pingpong:send", "MPI_Send / MPI_Recv")
PACKS = (("pack:default", "PvmDataDefault"), ("pack:raw", "PvmDataRaw"), ("pack:inplace", "PvmDataInPlace"))
BROADCASTS = ("bcast", "mcast")
SMALL = 8  # the latency column's size (B), or the next size measured


def _has_pvm(entities: list[Entity]) -> bool:
    return any(e.library == PVM_LIBRARY and e.points for e in entities)


def _small(e: Entity, key: str) -> float | None:
    s = e.series(key, 2)
    if s is None or not (s.n >= SMALL).any():
        return None
    return float(s.t[(s.n >= SMALL).argmax()])


def _routes(e: Entity) -> str:
    routes = sorted({str(pt["extra"].get("pvm_route")) for pt in e.points
                     if isinstance(pt.get("extra"), dict) and pt["extra"].get("pvm_route")})
    return ", ".join(routes) or "unknown"


def send_table(entities: list[Entity], rates: Rates) -> Table | None:
    if not _has_pvm(entities):
        return None
    rows = []
    notes = []
    for e in entities:
        sends = SENDS if e.library == PVM_LIBRARY else (MPI_SEND,)
        for key, what in sends:
            if e.series(key, 2) is None:
                continue
            params = modelinfo.p2p_parameters(e.model, key)
            bw, n_half = modelinfo.p2p_headline(e.model, key)
            rows.append([e.label, what, number(_small(e, key)), number(params[0].t_s if params else None),
                         rates.bandwidth(bw), str(n_half) if n_half is not None else "–"])
        if e.library == PVM_LIBRARY:
            notes.append(f"{e.label}: messages between tasks went {_routes(e)} (COMMCHAR_PVM_ROUTE; "
                         "'daemon' is PVM's default route through the pvmd daemons, 'direct' asks for "
                         "task-to-task TCP).")
    if not rows:
        return None
    return Table("pvm-sends", "PVM's sends beside MPI's (p = 2, half a round trip)",
                 ["library", "send", f"{SMALL} B (us)", "t_s (us)", f"r_inf ({rates.bw_unit})", "n_half (B)"],
                 rows,
                 ["The 8 B column is the median as measured (or the next size up); t_s, r_inf and "
                  "n_half come from the Hockney fits (commchar.models). pvm_send rows leave packing "
                  "out: the message is packed before the timed region and unpacked within it; the "
                  "packing alone is the next table, and a packing send costs both.", *notes])


def pack_table(entities: list[Entity], rates: Rates) -> Table | None:
    rows = []
    for e in entities:
        if e.library != PVM_LIBRARY:
            continue
        for key, encoding in PACKS:
            if e.series(key, 2) is None:
                continue
            params = modelinfo.p2p_parameters(e.model, key)
            bw, _ = modelinfo.p2p_headline(e.model, key)
            rows.append([e.label, encoding, number(_small(e, key)),
                         number(params[0].t_s if params else None), rates.bandwidth(bw)])
    if not rows:
        return None
    return Table("pvm-pack", "PVM's packing alone (pvm_initsend + pvm_pkbyte)",
                 ["library", "encoding", f"{SMALL} B (us)", "t_s (us)", f"copy rate ({rates.bw_unit})"], rows,
                 ["PvmDataInPlace records where the data is and copies nothing until the send, so "
                  "its cost appears in the pvm_send row instead."])


def _law(view, key: str, term: str) -> tuple[str, str]:
    law = modelinfo.laws(view, key).get(term, {})
    p_range = law.get("p_range")
    ps = "–" if not isinstance(p_range, list) else "–".join(str(int(v)) for v in p_range)
    return str(law.get("complexity") or "–"), ps


def broadcast_table(entities: list[Entity]) -> Table | None:
    if not _has_pvm(entities):
        return None
    rows = []
    for e in entities:
        for op in BROADCASTS:
            if e.model is None or e.model.operation(op) is None:
                continue
            startup, ps = _law(e.model, op, "t_s")
            per_byte, _ = _law(e.model, op, "t_b")
            rows.append([e.label, op, startup, per_byte, ps])
    if not rows:
        return None
    return Table("pvm-bcast-laws", "How the broadcast grows with p (the fitted laws)",
                 ["library", "operation", "startup t_s(p)", "per byte t_b(p)", "p fitted"], rows,
                 ["The AP3000 study found PVM's broadcast O(p) and MPI's O(log p). A law needs "
                  "several p on dedicated cores: with one p the class is O(1) by construction, and "
                  "points measured with more ranks than cores are left out unless fitted with "
                  "--oversubscribed include.",
                  "mcast is pvm_mcast: the root sends to every other task itself."])


def comparison_tables(entities: list[Entity], rates: Rates) -> list[Table]:
    """The section's tables, none when no PVM run is in the report."""
    return [t for t in (send_table(entities, rates), pack_table(entities, rates), broadcast_table(entities))
            if t is not None]
