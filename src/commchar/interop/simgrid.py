"""A fitted model as SimGrid/SMPI configuration, in the form SimGrid's configuration
documentation gives (`--cfg=smpi/os:...`, `smpi/lat-factor`, `smpi/bw-factor`).

SMPI charges a message of n bytes os(n) on the sender, or(n) on the receiver
and, on the network, latency * lat-factor(n) + n / (bandwidth * bw-factor(n)).
Each option is a list of sections `boundary:values` separated by `;`; a
section applies to sizes above its boundary and below the next one's (the
first also below its own). One section per ping-pong regime of the model:

    os(n) = o_s + O n,   or(n) = o_r,   ois = os (commchar times no separate Isend overhead)
    latency * lat-factor = t_s - o_s - o_r
    1 / (bandwidth * bw-factor) = t_b - O

so SMPI's ping-pong half round trip is the model's t_s + t_b n in every regime
(tests/test_interop.py checks it). The platform link is the last regime's
network: bandwidth 1 / (t_b - O) and latency of the first regime, so its
factors are 1 there. The rendezvous threshold S, when fitted, becomes
`smpi/send-is-detached-thresh`.
"""

from __future__ import annotations

from dataclasses import dataclass

from commchar.errors import ModelError
from commchar.interop.p2pcost import P2PCost, Regime

US = 1e-6
# A regime whose network share would be zero or negative (overheads as large as the
# start-up) keeps this much of the link's latency, so the factor stays positive.
FLOOR = 1e-3


@dataclass(frozen=True)
class SmpiConfig:
    link_latency_us: float
    link_bandwidth_Bps: float
    options: dict[str, str]  # option name -> value, in SimGrid's syntax
    notes: list[str]

    def cfg_arguments(self) -> list[str]:
        return [f"--cfg={name}:{value}" for name, value in self.options.items()]

    def platform_link(self) -> str:
        return (f'<link id="link" bandwidth="{self.link_bandwidth_Bps:.6g}Bps"'
                f' latency="{self.link_latency_us:.6g}us"/>')


def _boundaries(regimes: tuple[Regime, ...]) -> list[int]:
    """Section i applies above the last size of regime i-1 (SMPI: size > boundary)."""
    out = [0]
    for prev, cur in zip(regimes, regimes[1:]):
        out.append(int(prev.n_max) if prev.n_max is not None else max(int(cur.n_min) - 1, 0))
    return out


def _g(x: float) -> str:
    return f"{x:.9g}"


def smpi_config(cost: P2PCost) -> SmpiConfig:
    notes: list[str] = []
    regimes = cost.regimes
    latency_us = [r.t_s - r.o_s - r.o_r for r in regimes]
    per_byte_us = [r.t_b - r.O for r in regimes]
    link_latency = latency_us[0]
    if link_latency <= 0:
        link_latency = max(regimes[0].t_s, FLOOR)
        notes.append("the first regime's overheads exceed its start-up: the link latency is its whole"
                     " start-up and the overheads are charged on top")
    link_per_byte = per_byte_us[-1]
    if link_per_byte <= 0:
        raise ModelError(f"{cost.library}: the last ping-pong regime has no positive per-byte network time"
                         f" (t_b {regimes[-1].t_b:g} us/B, O {regimes[-1].O:g} us/B); no bandwidth to give SMPI")
    bounds = _boundaries(regimes)
    lat, bw, os_, or_ = [], [], [], []
    for bound, r, lat_us, byte_us in zip(bounds, regimes, latency_us, per_byte_us):
        if lat_us <= 0:
            notes.append(f"regime from {bound} B: overheads o_s + o_r >= t_s; its latency factor is floored")
            lat_us = FLOOR * link_latency
        if byte_us <= 0:
            notes.append(f"regime from {bound} B: O >= t_b; its bandwidth factor is capped")
            byte_us = FLOOR * link_per_byte
        lat.append(f"{bound}:{_g(lat_us / link_latency)}")
        bw.append(f"{bound}:{_g(link_per_byte / byte_us)}")
        os_.append(f"{bound}:{_g(r.o_s * US)}:{_g(r.O * US)}")
        or_.append(f"{bound}:{_g(r.o_r * US)}:0")
    options = {"smpi/lat-factor": ";".join(lat), "smpi/bw-factor": ";".join(bw)}
    if cost.loggp is None:
        notes.append("the model has no LogGP section (no loggp probe was measured): os, or and ois are"
                     " left at SimGrid's default of 0 and the whole start-up is network latency")
    else:
        options.update({"smpi/os": ";".join(os_), "smpi/or": ";".join(or_), "smpi/ois": ";".join(os_)})
        notes.append("smpi/ois is the blocking send's overhead: commchar does not fit a separate Isend overhead")
        if "S" in cost.loggp:
            options["smpi/send-is-detached-thresh"] = str(int(cost.loggp["S"]))
    return SmpiConfig(link_latency, 1e6 / link_per_byte, options, notes)
