"""First-touch cost of a receive buffer, from the kernel's `touch` points (cc_ops_touch.c).

Each size was measured twice at p = 2: a ping-pong whose receive buffers are
mapped afresh before every repetition (variant `fresh`: the message lands in
memory no byte of which was ever written, so the kernel faults in and zeroes
each 4 KiB page during the call) and the same into resident buffers (variant
`resident`). Half a round trip is one receive, so per size fresh less resident
is what first touching n bytes costs the receiver. The fit is

    excess(n) = c + per_byte * n        (c, per_byte >= 0; least squares in relative error)

weighted by 1/excess so that 64 KiB counts as much as 64 MiB. per_page is per_byte
times the 4 KiB page. The cost per byte is not one number, though: while the
faulted pages fit in cache the zeroed page is still there when the message is
copied into it, past it (a few MiB) zeroing and copying each go to memory, and
a byte costs about three times more (this VM: 0.2 ns a byte up to 1 MiB, 0.8 ns
from 4 MiB). So `steps` keeps each measured size's own cost, [n, excess / n],
and the replay charges a receive's cold bytes c at the step of the largest
measured n <= c (the smallest n's below it); per_byte is the fallback of a
model without steps.
"""

from __future__ import annotations

from typing import Any

from commchar.errors import InputError
from commchar.models._base import Estimator, fitted_section
from commchar.models.excess import fit_excess, paired_times

OP = "touch"
PAGE_BYTES = 4096
MIN_BYTES = 64 * 1024  # the tracer counts cold bytes of receive buffers of at least this


class FirstTouchModel(Estimator):
    """First-touch parameters from `touch` point dicts.

    Fitted: params_ ({per_byte (us/B), per_page (us), page_bytes, c (us), min_bytes,
    max_bytes, steps ([n, us/B] per measured size)}), sizes_ (per size: n, fresh, resident, excess in us), notes_.
    """


    def fit(self, points: list[dict]) -> "FirstTouchModel":
        self._validate_params()
        try:
            params, table, notes = fit_excess(paired_times(points, OP, "fresh", "resident"), OP,
                                              "fresh", "resident")
        except InputError as exc:
            raise InputError(f"FirstTouchModel: {exc}") from None
        self.params_: dict[str, Any] = {
            "per_byte": params["per_byte"], "per_page": round(params["per_byte"] * PAGE_BYTES, 6),
            "page_bytes": PAGE_BYTES, "c": params["c"], "min_bytes": MIN_BYTES,
            "max_bytes": params["max_bytes"], "steps": params["steps"]}
        self.sizes_ = table
        self.notes_ = notes
        return self


def first_touch_section(points: list[dict], skipped: list[str], library: str) -> dict | None:
    """The loggp section's `first_touch` entry, or None (and why in skipped)."""
    return fitted_section(FirstTouchModel(), points, skipped, f"{library} touch")