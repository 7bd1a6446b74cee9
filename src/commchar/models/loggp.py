"""LogGP / LogGPS parameters from the kernel's `loggp` (Netgauge PRTT) and `rndv` points.

- g, G: g + (n-1) G = gap_us, fitted over sizes (the last regime gives G,
  the first regime g, since the gap per byte of long messages is what G means).
- o_s, O: the sender overhead o_s_us(n) = o_s + O n over the sizes below S.
- o_r: the receiver overhead, intercept of o_r_us(n) over the same sizes.
- L = PRTT(1,0,0)/2 - o_s - o_r, clamped at 0 (with a note) when negative.
- S: the smallest size from which MPI_Send blocks for about the receiver's
  delay D (time >= threshold_fraction * D for it and every larger size).
- s: the end of the first protocol regime of PRTT(1,0,n) below S, if any.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from commchar.errors import InputError
from commchar.models._base import Estimator, number_in
from commchar.models.regimes import SegmentedHockneyModel
from commchar.models.thresholds import DEFAULT_DELAY_US as DEFAULT_RNDV_DELAY_US, rendezvous_bracket

DELAY_KEYS = ("delay_us", "rndv_delay_us", "receiver_delay_us", "D_us")


def _affine(n: np.ndarray, y: np.ndarray) -> tuple[float, float]:
    """a + b n on relative error, robustly (soft-L1 loss at a 5% scale).

    The overheads are differences of round trips, so a descheduled repetition
    on a shared machine can make one size off by orders of magnitude; the robust
    loss keeps such a point from deciding the line. Values near zero or negative
    are measured against a floor of 5% of the median magnitude.
    """
    from scipy.optimize import least_squares

    if np.unique(n).size < 2:
        return float(np.median(y)), 0.0
    scale_y = np.maximum(np.abs(y), 0.05 * max(float(np.median(np.abs(y))), 1e-12))
    scale_n = max(float(n.max()), 1.0)
    x = n / scale_n
    start = np.array([float(np.median(y)), 0.0])
    fit = least_squares(lambda q: (q[0] + q[1] * x - y) / scale_y, start, loss="soft_l1", f_scale=0.05)
    return float(fit.x[0]), float(fit.x[1]) / scale_n


def _series(points: list[dict], key: str) -> tuple[np.ndarray, np.ndarray]:
    pairs = sorted((float(pt["n_bytes"]), float(pt["extra"][key])) for pt in points
                   if isinstance(pt.get("extra"), dict) and _finite(pt["extra"].get(key)))
    return np.array([a for a, _ in pairs]), np.array([b for _, b in pairs])


def unknown_parameters(section: Any) -> list[str]:
    """The notes of a model file's loggp section that name a parameter its points could not
    give (written as 0): what `commchar fit` prints and the report's LogGP table carries."""
    notes = section.get("notes") if isinstance(section, dict) else None
    return [str(note) for note in notes or [] if " unknown" in str(note)]


def _finite(x: Any) -> bool:
    return isinstance(x, (int, float)) and not isinstance(x, bool) and bool(np.isfinite(x))


class LogGPModel(Estimator):
    """LogGP/LogGPS from point dicts (op "loggp" and "rndv", see docs/kernel-protocol.md).

    Fitted: params_ ({L, o_s, o_r, g, G, O, S, s}: us, us/B, bytes; S and s
    None when the data does not show them), S_interval_ ([low, high): where S
    lies between the sizes measured, None when unbracketed), s_interval_ (the
    same for s), delay_us_ (receiver
    delay used for S), notes_ (list of str), sizes_ (loggp sizes used).
    """

    _parameter_constraints = {"threshold_fraction": number_in(0.05, 0.95)}

    def __init__(self, threshold_fraction: float = 0.5, receiver_delay_us: float | None = None) -> None:
        self.threshold_fraction = threshold_fraction
        self.receiver_delay_us = receiver_delay_us

    def fit(self, points: list[dict]) -> "LogGPModel":
        self._validate_params()
        loggp = [pt for pt in points if pt.get("op") == "loggp"]
        rndv = [pt for pt in points if pt.get("op") == "rndv"]
        if not loggp and not rndv:
            raise InputError("LogGPModel: no 'loggp' or 'rndv' points")
        notes: list[str] = []
        params: dict[str, Any] = {"S": None, "s": None}
        self.delay_us_: float | None = None
        self.S_interval_: list[int] | None = None
        self.s_interval_: list[int] | None = None
        if rndv:
            params["S"] = self._rendezvous(rndv, notes)
        if loggp:
            self._logp(loggp, params, notes)
        else:
            notes.append("no loggp points: L, o_s, o_r, g, G unknown")
        self.params_ = params
        self.notes_ = notes
        return self

    def threshold(self) -> tuple[int, int] | None:
        """[low, high]: the sizes the first one to wait for the receiver may be (S_interval_,
        both ends included; high is S), or None where the rndv points did not bracket it."""
        self._check_fitted()
        return None if self.S_interval_ is None else (self.S_interval_[0], self.S_interval_[1] - 1)

    def _rendezvous(self, rndv: list[dict], notes: list[str]) -> int | None:
        delays = [float(pt["extra"][k]) for pt in rndv if isinstance(pt.get("extra"), dict)
                  for k in DELAY_KEYS if _finite(pt["extra"].get(k))]
        if self.receiver_delay_us is not None:
            delay = float(self.receiver_delay_us)
        elif delays:
            delay = float(np.median(delays))
        else:
            delay = DEFAULT_RNDV_DELAY_US
            notes.append(f"receiver delay not recorded: assumed the kernel default {delay:g} us")
        self.delay_us_ = delay
        n = np.array([float(pt["n_bytes"]) for pt in rndv])
        t = np.array([float(pt["t_us"]) for pt in rndv])
        bracket = rendezvous_bracket(n, t, delay, self.threshold_fraction)
        S = None if bracket is None else bracket[1]
        if bracket is not None and bracket[0] is not None:
            # S is the first size that waits: it lies above the last that does not
            self.S_interval_ = [bracket[0] + 1, bracket[1] + 1]
        if S is None:
            notes.append(f"no rendezvous seen up to {int(n.max())} B: S is above the sizes measured")
        elif S == int(n.min()):
            notes.append(f"every size measured blocks for the receiver: S <= {S} B")
        return S

    def _logp(self, loggp: list[dict], params: dict[str, Any], notes: list[str]) -> None:
        S = params.get("S")
        n_gap, gap = _series(loggp, "gap_us")
        positive = gap > 0
        if positive.sum() >= 2 and np.unique(n_gap[positive]).size >= 2:
            regimes = SegmentedHockneyModel(bootstrap=0).fit(n_gap[positive], gap[positive])
            first = regimes.segments_[0]["fits"][0]
            last = regimes.segments_[-1]["fits"][0]
            params["G"] = last.t_b_
            params["g"] = first.t_s_ + first.t_b_  # gap(n) = (g - G) + G n in the first regime
        else:
            params["G"], params["g"] = 0.0, float(np.median(gap)) if gap.size else 0.0
            notes.append("gap_us missing or not positive at two sizes: G unknown (0)")
        below = (lambda n: n < S) if S is not None else (lambda n: np.ones_like(n, dtype=bool))
        n_os, o_s = _series(loggp, "o_s_us")
        n_or, o_r = _series(loggp, "o_r_us")
        params["o_s"], params["O"] = (_affine(n_os[below(n_os)], o_s[below(n_os)])
                                      if below(n_os).any() else (0.0, 0.0))
        params["o_r"] = _affine(n_or[below(n_or)], o_r[below(n_or)])[0] if below(n_or).any() else 0.0
        unknown = [name for name, sizes in (("o_s, O", n_os), ("o_r", n_or)) if not below(sizes).any()]
        if unknown:
            # the sizes below S were not measured, or left out (measured in another state of
            # the ranks' cores than the model's): 0 is no measurement, and L takes it in
            where = f"below S = {S} B" if S is not None else "at all"
            notes.append(f"no loggp size {where} has its overheads measured: {' and '.join(unknown)}"
                         " unknown (0), and L is half the round trip; measure the loggp sizes below S again")
        for name in ("o_s", "O", "o_r", "g", "G"):
            if params[name] < 0:
                notes.append(f"{name} fitted negative ({params[name]:.3g}): clamped to 0")
                params[name] = 0.0
        n_rtt, rtt = _series(loggp, "prtt1_us")
        if rtt.size:
            half = rtt[int(np.argmin(n_rtt))] / 2.0
            L = half - params["o_s"] - params["o_r"]
            if n_rtt.min() > 0:
                notes.append(f"no 0-byte PRTT: L uses the smallest size, {int(n_rtt.min())} B")
            if L < 0:
                notes.append(f"PRTT(1,0,0)/2 - o_s - o_r = {L:.3g} us < 0: L clamped to 0"
                             " (the overheads overlap the latency on this system)")
                L = 0.0
            params["L"] = float(L)
            short = self._short_limit(n_rtt, rtt, S)
            if short is not None:
                # s is the last short size: at least the regime's last measured size,
                # below the next regime's first
                params["s"], self.s_interval_ = short[0], [short[0], short[1]]
        else:
            params["L"] = 0.0
            notes.append("prtt1_us missing: L unknown (0)")
        self.sizes_ = sorted(set(int(pt["n_bytes"]) for pt in loggp))

    @staticmethod
    def _short_limit(n: np.ndarray, rtt: np.ndarray, S: int | None) -> tuple[int, int] | None:
        sel = (n < S) if S is not None else np.ones_like(n, dtype=bool)
        if np.unique(n[sel]).size < 6 or np.any(rtt[sel] <= 0):
            return None
        regimes = SegmentedHockneyModel(bootstrap=0).fit(n[sel], rtt[sel])
        if not regimes.breakpoints_:
            return None
        return int(regimes.breakpoints_[0]["after"]), int(regimes.breakpoints_[0]["at"])

    def predict(self, n: Any) -> np.ndarray:
        """End-to-end LogGP time of an n-byte message: o_s + (n-1) G + L + o_r (n >= 1)."""
        self._check_fitted()
        q = self.params_
        n = np.maximum(np.asarray(n, dtype=float), 1.0)
        return q["o_s"] + (n - 1) * q["G"] + q["L"] + q["o_r"]
