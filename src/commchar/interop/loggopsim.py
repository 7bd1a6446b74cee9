"""A fitted model as LogGOPSim command-line parameters (`--LogGOPS_L=... -o ...`).

LogGOPSim takes L, o, g, O in nanoseconds as integers, G in ns per byte and
S in bytes; it has one overhead o for sender and receiver, so o is the mean
of the model's o_s and o_r (both are printed in the notes). Without a LogGP
section (no loggp probe measured) L is the first ping-pong regime's start-up
and G its last regime's per-byte time, with o, g and O zero.
"""

from __future__ import annotations

from dataclasses import dataclass

from commchar.interop.p2pcost import P2PCost

NS_PER_US = 1000.0


@dataclass(frozen=True)
class LogGOPSimParams:
    values: dict[str, float | int]  # LogGOPSim's option names without the LogGOPS_ prefix
    notes: list[str]

    def arguments(self) -> list[str]:
        return [f"--LogGOPS_{k}={v:.6g}" if isinstance(v, float) else f"--LogGOPS_{k}={v}"
                for k, v in self.values.items()]


def loggopsim_params(cost: P2PCost) -> LogGOPSimParams:
    notes: list[str] = []
    lg = cost.loggp
    if lg is None:
        first, last = cost.regimes[0], cost.regimes[-1]
        values: dict[str, float | int] = {"L": round(first.t_s * NS_PER_US), "o": 0, "g": 0,
                                          "G": last.t_b * NS_PER_US, "O": 0}
        notes.append("no LogGP section in the model: L is the ping-pong start-up (overheads included),"
                     " G the last regime's per-byte time; o, g, O are 0")
    else:
        values = {"L": round(lg["L"] * NS_PER_US), "o": round((lg["o_s"] + lg["o_r"]) / 2 * NS_PER_US),
                  "g": round(lg["g"] * NS_PER_US), "G": lg["G"] * NS_PER_US,
                  "O": round(lg.get("O", 0.0) * NS_PER_US)}
        notes.append(f"o is the mean of o_s = {lg['o_s']:.4g} us and o_r = {lg['o_r']:.4g} us"
                     " (LogGOPSim has one overhead)")
        if "S" in lg:
            values["S"] = int(lg["S"])
        else:
            notes.append("no rendezvous threshold S was fitted: LogGOPSim keeps its default")
        if 0 < lg.get("O", 0.0) * NS_PER_US < 0.5:
            notes.append(f"O = {lg['O'] * NS_PER_US:.3g} ns/B rounds to 0: LogGOPSim reads O as whole ns")
    return LogGOPSimParams(values, notes)
