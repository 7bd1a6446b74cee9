"""The active-message layer (library "am") beside the MPI libraries, as the SP-2
Active Messages study compared its layer with the vendor's library: one-word
round trip, asymptotic bandwidth and n_half; the layer's call costs; and its
throughput against the injected loss rate."""

from __future__ import annotations

import numpy as np
from matplotlib.figure import Figure

from commchar.report import modelinfo
from commchar.report.dataset import Entity
from commchar.report.figures import FigureSpec, plain, style
from commchar.tables import Table
from commchar.report.units import Rates, number
from commchar.vocabulary import format_size

AM_LIBRARY = "am"
# (key, what it is) of the layer's fitted series shown with their Hockney metrics
AM_SERIES = (("am_store", "blocking store"), ("am_pipe:async", "pipelined async stores (1 MiB)"),
             ("am_pipe:blocking", "blocking stores (1 MiB)"), ("am_get", "blocking get"),
             ("am_exchange:blocking", "exchange, blocking"), ("am_exchange:async", "exchange, async"))
COSTS = (("request", "am_request_1"), ("reply", "handling a request with its reply (poll + handler + reply)"),
         ("poll_empty", "empty am_poll"), ("poll_msg", "am_poll per received message"))


def _rtt_am(e: Entity, words: int) -> float | None:
    s = e.series("am_rtt", 2)
    return s.at(4 * words) if s is not None else None


def _rtt_mpi(e: Entity, n: int) -> float | None:
    """A round trip: twice the ping-pong latency (half a round trip), at n bytes or the next size up."""
    s = e.series("pingpong:send", 2)
    if s is None or not (s.n >= n).any():
        return None
    return 2.0 * float(s.t[np.nonzero(s.n >= n)[0][0]])


def comparison_table(entities: list[Entity], rates: Rates) -> Table | None:
    am = [e for e in entities if e.library == AM_LIBRARY and e.points]
    if not am:
        return None
    rows = []
    for e in entities:
        if e.library == AM_LIBRARY:
            bw, n_half = modelinfo.p2p_headline(e.model, "am_store")
            rows.append([e.label, "am_rtt (request + reply)", number(_rtt_am(e, 1)), number(_rtt_am(e, 4)),
                         "am_store", rates.bandwidth(bw), str(n_half) if n_half is not None else "–"])
        elif e.series("pingpong:send", 2) is not None:
            bw, n_half = modelinfo.p2p_headline(e.model, "pingpong:send")
            rows.append([e.label, "2 × pingpong:send", number(_rtt_mpi(e, 4)), number(_rtt_mpi(e, 16)),
                         "pingpong:send", rates.bandwidth(bw), str(n_half) if n_half is not None else "–"])
    return Table("am-vs-mpi", "Active messages beside MPI (p = 2, as the SP-2 study's table)",
                 ["library", "round trip of", "4 B (us)", "16 B (us)", "bandwidth of",
                  f"Bw_as ({rates.bw_unit})", "n_half (B)"], rows,
                 ["Round trips are medians as measured; an MPI round trip is twice its ping-pong "
                  "latency, at 4 and 16 B or the next size measured. Bw_as and n_half come from the "
                  "Hockney fits (commchar.models).",
                  "The study's processor (copy) bandwidth has no counterpart here: the layer never "
                  "copies into transmit buffers (datagrams are gathered from the caller's memory "
                  "and received in place)."])


def series_table(e: Entity, rates: Rates) -> Table | None:
    rows = []
    for key, what in AM_SERIES:
        if e.series(key, 2) is None:
            continue
        bw, n_half = modelinfo.p2p_headline(e.model, key)
        params = modelinfo.p2p_parameters(e.model, key)
        t_s = params[0].t_s if params else None
        rows.append([key, what, number(t_s), rates.bandwidth(bw), str(n_half) if n_half is not None else "–"])
    if not rows:
        return None
    return Table(f"am-series-{e.label}", f"{e.label}: bulk transfers (Hockney: r_inf = Bw_as, n_half)",
                 ["operation", "what", "t_s (us)", f"r_inf ({rates.bw_unit})", "n_half (B)"], rows,
                 ["One sample of am_pipe is the time per store while 1 MiB moves in stores of n "
                  "bytes, so its n_half is the study's pipelining n_half."])


def cost_table(e: Entity) -> Table | None:
    rows = []
    for variant, what in COSTS:
        s = e.series(f"am_cost:{variant}", 2)
        if s is not None and s.n.size:
            rows.append([variant, what, number(float(s.t[0]))])
    if not rows:
        return None
    return Table(f"am-cost-{e.label}", f"{e.label}: the cost of one call",
                 ["am_cost", "what", "time (us)"], rows,
                 ["Medians per call on a repetition's batch; the reply's own cost is the reply row "
                  "less the poll_msg row."])


def loss_figure(e: Entity, rates: Rates) -> FigureSpec | None:
    found = []
    for pt in e.points:
        if pt["op"] == "am_loss" and pt["valid"] and pt["p"] == 2:
            try:
                found.append((float(pt["variant"]), float(pt["n_bytes"]), float(pt["t_us"])))
            except ValueError:
                continue
    if len({loss for loss, _, _ in found}) < 2:
        return None
    fig = Figure(figsize=(6.4, 3.8))
    ax = fig.add_subplot(1, 1, 1)
    for i, n in enumerate(sorted({n for _, n, _ in found})):
        pts = sorted((loss, t) for loss, m, t in found if m == n)
        x = np.array([100 * loss for loss, _ in pts])
        y = np.array([rates.bw_from_us(n, t) for _, t in pts])
        ax.plot(x, y, "o-", color=style(i)[0], label=plain(f"stores of {format_size(n)}"))
    ax.set_xlabel("injected loss (% of datagrams)")
    ax.set_ylabel(f"throughput ({rates.bw_unit})")
    ax.set_ylim(bottom=0)
    ax.grid(True, alpha=0.3)
    ax.legend(fontsize=7)
    title = f"{e.label}: throughput against injected loss (am_loss)"
    ax.set_title(plain(title), fontsize=10)
    fig.tight_layout()
    return FigureSpec(f"am-loss-{e.label}", title,
                      "Asynchronous stores with that fraction of datagrams dropped by the layer's "
                      "fault injection; losses are repaired by NACK and go-back-N retransmission, "
                      "lost tails by the keep-alive.", fig)


def entity_parts(e: Entity, rates: Rates) -> tuple[list[Table], list[FigureSpec]]:
    """The layer's own tables and figures, for its library section (none for MPI libraries)."""
    if e.library != AM_LIBRARY:
        return [], []
    tables = [t for t in (series_table(e, rates), cost_table(e)) if t is not None]
    spec = loss_figure(e, rates)
    return tables, [spec] if spec is not None else []
