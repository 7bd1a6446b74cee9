"""Compositions of operations: `reduce+scatter`, `gather(8*p)+bcast(8*p)`, `p*scatter(8*p*p)`.

A composition is operations performed one after the other; its time is the
sum of its parts. Grammar (docs/predict.md):

    composition := part ("+" part)*
    part        := [COUNT "*"] OPKEY ["(" N ")"]

OPKEY is `op` or `op:variant`; N is the part's own message length, an
expression in p (otherwise the row's n); COUNT repeats the part (an
expression in p; write it in parentheses if it has + or -: `(p-1)*pingpong`).
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass

from commchar.errors import ModelError, UsageError
from commchar.modelfile import Expr, ModelFile, Prediction, parse_expr
from commchar.predict.values import split_top_level

MAX_LENGTH = 1000
_OPKEY_AT_END = re.compile(r"(?<![A-Za-z0-9_])([a-z][a-z0-9_]*(?::[a-z][a-z0-9_]*)?)$")
_PREC_ADD = 1


@dataclass(frozen=True)
class Part:
    """One operation in a composition, with its own n and repeat count if given."""

    key: str
    n: Expr | None = None
    count: Expr | None = None

    def __str__(self) -> str:
        text = self.key if self.n is None else f"{self.key}({self.n})"
        if self.count is None:
            return text
        count = str(self.count)
        return f"({count})*{text}" if self.count.precedence <= _PREC_ADD else f"{count}*{text}"


@dataclass(frozen=True)
class PartTime:
    """A part's predicted time at one (n, p): count * prediction.t_us."""

    part: Part
    count: float
    prediction: Prediction

    @property
    def t_us(self) -> float:
        return self.count * self.prediction.t_us


@dataclass(frozen=True)
class Composition:
    """Parsed composition; `text` is what the user wrote, whitespace removed."""

    text: str
    parts: tuple[Part, ...]

    def check(self, model: ModelFile, library: str) -> None:
        """ModelError when the library lacks one of the operations."""
        for part in self.parts:
            model.resolve(library, part.key)

    def time(self, model: ModelFile, library: str, n: float, p: float) -> tuple[float, tuple[PartTime, ...]]:
        """Total predicted time (us) at (n, p) and each part's share."""
        shares = []
        for part in self.parts:
            part_n = n if part.n is None else _evaluate(part.n, p, f"n of {part.key} in {self.text!r}")
            count = 1.0 if part.count is None else _evaluate(part.count, p, f"count of {part.key} in {self.text!r}")
            if part_n < 0:
                raise UsageError(f"{self.text!r}: n of {part.key} is negative ({part_n:g}) at p={p:g}")
            if not (count >= 0 and math.isfinite(count)):
                raise UsageError(f"{self.text!r}: count of {part.key} is {count:g} at p={p:g}"
                                 " (a repeat count must be a finite number >= 0)")
            shares.append(PartTime(part, count, model.time(library, part.key, part_n, p)))
        total = sum(share.t_us for share in shares)
        if not math.isfinite(total):
            raise UsageError(f"{self.text!r}: the predicted time at n={n:g}, p={p:g} is not a finite number"
                             " (too large to represent)")
        return total, tuple(shares)


def _evaluate(expr: Expr, p: float, what: str) -> float:
    try:
        return expr.evaluate(p)
    except ModelError as exc:
        raise UsageError(f"{what}: {exc}") from None


def _wrapped(text: str) -> bool:
    """True when text is one parenthesised group: `(p-1)`, not `(p)-(1)`."""
    if not (text.startswith("(") and text.endswith(")")):
        return False
    depth = 0
    for i, ch in enumerate(text):
        depth += ch == "("
        depth -= ch == ")"
        if depth == 0 and i != len(text) - 1:
            return False
    return True


def _parse_part(raw: str, whole: str) -> Part:
    text = raw.strip()
    if not text:
        raise UsageError(f"empty operation in {whole!r} (a '+' with nothing on one side)")
    n_expr = None
    head = text
    if text.endswith(")"):
        depth = 0
        for i in range(len(text) - 1, -1, -1):
            depth += text[i] == ")"
            depth -= text[i] == "("
            if depth == 0:
                break
        inner, head = text[i + 1:-1], text[:i].rstrip()
        match = _OPKEY_AT_END.search(head)
        if match:
            try:
                n_expr = parse_expr(inner)
            except ModelError as exc:
                raise UsageError(f"n of {match.group(1)} in {whole!r}: {exc}") from None
        else:
            head = text  # a parenthesised count with no operation after it
    match = _OPKEY_AT_END.search(head)
    if not match:
        raise UsageError(f"{text!r} in {whole!r} is not an operation (expected op, op:variant or op(n))")
    key = match.group(1)
    count_text = head[: match.start()].rstrip()
    count = None
    if count_text:
        if not count_text.endswith("*"):
            raise UsageError(f"{text!r} in {whole!r}: expected '*' between a count and {key!r}")
        count_text = count_text[:-1].strip()
        try:
            count = parse_expr(count_text)
        except ModelError as exc:
            raise UsageError(f"count of {key} in {whole!r}: {exc}") from None
        if count.precedence <= _PREC_ADD and not _wrapped(count_text):
            raise UsageError(f"count of {key} in {whole!r}: put a count with + or - in parentheses, e.g. ({count_text})*{key}")
    return Part(key, n_expr, count)


def parse_composition(text: str) -> Composition:
    """Parse an EXPR of `commchar predict`; UsageError (one line) if malformed."""
    if not isinstance(text, str) or not text.strip():
        raise UsageError("empty operation expression")
    if len(text) > MAX_LENGTH:
        raise UsageError(f"operation expression longer than {MAX_LENGTH} characters")
    parts = tuple(_parse_part(raw, text) for raw in split_top_level(text, "+"))
    return Composition("".join(text.split()), parts)
