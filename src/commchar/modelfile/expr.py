"""The model file's expression language: a recursive-descent parser and evaluator.

Grammar (docs/model-format.md):

    expr    := term (("+" | "-") term)*
    term    := unary (("*" | "/") unary)*
    unary   := ("-" | "+") unary | power
    power   := atom ("^" unary)?
    atom    := NUMBER | "p" | FUNC "(" expr ("," expr)* ")" | "(" expr ")"

Model files come from anyone, so nothing here uses eval, ast or compile: text
becomes a tree of the small node classes below, and evaluating the tree only
does float arithmetic. Length and nesting are bounded so no input can exhaust
the stack or take long, and every malformed input raises ModelError.
"""

from __future__ import annotations

import functools
import math
import re
from dataclasses import dataclass
from typing import Callable

from commchar.errors import ModelError

MAX_LENGTH = 1000
MAX_DEPTH = 50

_NUMBER = re.compile(r"(\d+\.?\d*|\.\d+)([eE][+-]?\d+)?")
_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")


def _log(x: float, base: float | None = None) -> float:
    if x <= 0:
        raise ValueError("logarithm of a number <= 0")
    return math.log2(x) if base == 2 else math.log(x)


# name -> (function, smallest arity, largest arity or None)
_FUNCTIONS: dict[str, tuple[Callable[..., float], int, int | None]] = {
    "log2": (lambda x: _log(x, 2), 1, 1),
    "ln": (lambda x: _log(x), 1, 1),
    "sqrt": (math.sqrt, 1, 1),
    "exp": (math.exp, 1, 1),
    "ceil": (lambda x: float(math.ceil(x)), 1, 1),
    "floor": (lambda x: float(math.floor(x)), 1, 1),
    "min": (min, 2, None),
    "max": (max, 2, None),
}

# Binding strength, used by __str__ to parenthesise only where needed.
_PREC_ADD, _PREC_MUL, _PREC_UNARY, _PREC_POW, _PREC_ATOM = 1, 2, 3, 4, 5


def _finite(value: float) -> float:
    # Checked at every node: inf can vanish later (1/inf, min(nan, 1), inf^0)
    # and leave a finite but meaningless result.
    if not math.isfinite(value):
        raise ValueError("an intermediate result is not a finite number")
    return value


def printable(text: str) -> str:
    """text on one line: control characters shown as escapes, so an error stays one line."""
    return "".join(c if c.isprintable() else repr(c)[1:-1] for c in text)


class Expr:
    """A parsed expression in the single variable p.

    `evaluate(p)` returns a finite float or raises ModelError; `str(expr)`
    gives text that parses back to the same expression.
    """

    precedence = _PREC_ATOM

    def evaluate(self, p: float) -> float:
        """Value at p; ModelError when the result is not a finite number."""
        try:
            value = self._eval(float(p))
        except (ArithmeticError, ValueError) as exc:
            raise ModelError(f"'{self}' cannot be evaluated at p={p:g}: {exc}") from None
        if not math.isfinite(value):
            raise ModelError(f"'{self}' is not a finite number at p={p:g}")
        return value

    def uses_p(self) -> bool:
        """True when the value depends on p."""
        raise NotImplementedError

    def _eval(self, p: float) -> float:
        raise NotImplementedError

    def __repr__(self) -> str:
        return f"Expr({str(self)!r})"


@dataclass(frozen=True, eq=True, repr=False)
class Number(Expr):
    value: float

    def _eval(self, p: float) -> float:
        return self.value

    def uses_p(self) -> bool:
        return False

    def __str__(self) -> str:
        if self.value.is_integer() and abs(self.value) < 1e15:
            return str(int(self.value))
        return repr(self.value)


@dataclass(frozen=True, eq=True, repr=False)
class Variable(Expr):
    def _eval(self, p: float) -> float:
        return p

    def uses_p(self) -> bool:
        return True

    def __str__(self) -> str:
        return "p"


@dataclass(frozen=True, eq=True, repr=False)
class Negate(Expr):
    operand: Expr
    precedence = _PREC_UNARY

    def _eval(self, p: float) -> float:
        return -self.operand._eval(p)

    def uses_p(self) -> bool:
        return self.operand.uses_p()

    def __str__(self) -> str:
        inner = str(self.operand)
        # -(p^2) prints as -p^2 (same tree); a sum or product needs brackets.
        if self.operand.precedence < _PREC_POW:
            inner = f"({inner})"
        return f"-{inner}"


@dataclass(frozen=True, eq=True, repr=False)
class Chain(Expr):
    """A left-associative run `first op rest[0] op rest[1] ...` of + and -, or of * and /.

    Kept flat rather than as nested binary nodes so a long sum cannot make
    evaluation or printing recurse deeply.
    """

    first: Expr
    rest: tuple[tuple[str, Expr], ...]

    @property
    def precedence(self) -> int:  # type: ignore[override]
        return _PREC_ADD if self.rest[0][0] in "+-" else _PREC_MUL

    def _eval(self, p: float) -> float:
        value = self.first._eval(p)
        for op, operand in self.rest:
            b = operand._eval(p)
            if op == "+":
                value += b
            elif op == "-":
                value -= b
            elif op == "*":
                value *= b
            else:
                value /= b
            _finite(value)
        return value

    def uses_p(self) -> bool:
        return self.first.uses_p() or any(e.uses_p() for _, e in self.rest)

    def __str__(self) -> str:
        own = self.precedence
        text = str(self.first)
        if self.first.precedence < own:
            text = f"({text})"
        for op, operand in self.rest:
            part = str(operand)
            # An operand as strong as the chain would re-associate: keep brackets.
            if operand.precedence <= own:
                part = f"({part})"
            text += f" {op} {part}" if own == _PREC_ADD else f"{op}{part}"
        return text


@dataclass(frozen=True, eq=True, repr=False)
class Power(Expr):
    base: Expr
    exponent: Expr
    precedence = _PREC_POW

    def _eval(self, p: float) -> float:
        # math.pow raises on overflow and on a negative base with a fractional
        # exponent, where ** would return inf or a complex number.
        return _finite(math.pow(self.base._eval(p), self.exponent._eval(p)))

    def uses_p(self) -> bool:
        return self.base.uses_p() or self.exponent.uses_p()

    def __str__(self) -> str:
        base, exponent = str(self.base), str(self.exponent)
        if self.base.precedence <= _PREC_POW:
            base = f"({base})"
        # The exponent is parsed as a unary: only sums and products need brackets.
        if self.exponent.precedence < _PREC_UNARY:
            exponent = f"({exponent})"
        return f"{base}^{exponent}"


@dataclass(frozen=True, eq=True, repr=False)
class Call(Expr):
    name: str
    args: tuple[Expr, ...]

    def _eval(self, p: float) -> float:
        function = _FUNCTIONS[self.name][0]
        return _finite(float(function(*(a._eval(p) for a in self.args))))

    def uses_p(self) -> bool:
        return any(a.uses_p() for a in self.args)

    def __str__(self) -> str:
        return f"{self.name}({', '.join(str(a) for a in self.args)})"


def _chain(first: Expr, rest: list[tuple[str, Expr]], precedence: int) -> Expr:
    """Build a Chain; `(a + b) + c` joins `a + b + c`, the same left-to-right evaluation."""
    if not rest:
        return first
    if isinstance(first, Chain) and first.precedence == precedence:
        return Chain(first.first, first.rest + tuple(rest))
    return Chain(first, tuple(rest))


@dataclass(frozen=True)
class _Token:
    kind: str  # "num", "name", "op", "end"
    text: str
    column: int  # 1-based
    value: float = 0.0


def _describe(token: _Token) -> str:
    return "end of input" if token.kind == "end" else f"'{token.text}'"


class _Parser:
    def __init__(self, text: str) -> None:
        self.text = text
        self.tokens = self._tokenize(text)
        self.index = 0
        self.depth = 0

    def fail(self, what: str, column: int) -> ModelError:
        return ModelError(f"{what} at column {column} in '{printable(self.text)}'")

    def _tokenize(self, text: str) -> list[_Token]:
        tokens: list[_Token] = []
        i = 0
        while i < len(text):
            ch = text[i]
            if ch in " \t":
                i += 1
                continue
            if ch.isascii() and (ch.isdigit() or ch == "."):
                match = _NUMBER.match(text, i)
                if not match:
                    raise self.fail(f"malformed number '{ch}'", i + 1)
                value = float(match.group(0))
                if not math.isfinite(value):
                    raise self.fail(f"number '{match.group(0)[:20]}' out of range", i + 1)
                tokens.append(_Token("num", match.group(0), i + 1, value))
                i = match.end()
                continue
            match = _NAME.match(text, i)
            if match and ch.isascii():
                tokens.append(_Token("name", match.group(0), i + 1))
                i = match.end()
                continue
            if ch in "+-*/^(),":
                tokens.append(_Token("op", ch, i + 1))
                i += 1
                continue
            raise self.fail(f"unexpected character {ch!r}", i + 1)
        tokens.append(_Token("end", "", len(text) + 1))
        return tokens

    @property
    def current(self) -> _Token:
        return self.tokens[self.index]

    def advance(self) -> _Token:
        token = self.tokens[self.index]
        if token.kind != "end":
            self.index += 1
        return token

    def accept(self, op: str) -> bool:
        if self.current.kind == "op" and self.current.text == op:
            self.advance()
            return True
        return False

    def expect(self, op: str) -> None:
        if not self.accept(op):
            token = self.current
            raise self.fail(f"expected '{op}' but found {_describe(token)}", token.column)

    def enter(self) -> None:
        self.depth += 1
        if self.depth > MAX_DEPTH:
            raise self.fail(f"nested more than {MAX_DEPTH} levels", self.current.column)

    def parse(self) -> Expr:
        if not self.text.strip():
            raise ModelError("empty expression")
        tree = self.expr()
        if self.current.kind != "end":
            raise self.fail(f"unexpected {_describe(self.current)}", self.current.column)
        return tree

    def expr(self) -> Expr:
        return self.chain(self.term, "+-", _PREC_ADD)

    def term(self) -> Expr:
        return self.chain(self.unary, "*/", _PREC_MUL)

    def chain(self, operand: Callable[[], Expr], ops: str, precedence: int) -> Expr:
        """`operand (op operand)*` for the left-associative operators `ops`."""
        first = operand()
        rest: list[tuple[str, Expr]] = []
        while self.current.kind == "op" and self.current.text in ops:
            op = self.advance().text
            rest.append((op, operand()))
        return _chain(first, rest, precedence)

    def unary(self) -> Expr:
        if self.current.kind == "op" and self.current.text in "+-":
            op = self.advance().text
            self.enter()
            operand = self.unary()
            self.depth -= 1
            return Negate(operand) if op == "-" else operand
        return self.power()

    def power(self) -> Expr:
        base = self.atom()
        if self.accept("^"):
            self.enter()
            exponent = self.unary()
            self.depth -= 1
            return Power(base, exponent)
        return base

    def atom(self) -> Expr:
        token = self.advance()
        if token.kind == "num":
            return Number(token.value)
        if token.kind == "name":
            if token.text == "p":
                return Variable()
            if token.text in _FUNCTIONS:
                return self.call(token)
            raise self.fail(f"unknown name '{token.text}' (the only variable is p; functions: {', '.join(_FUNCTIONS)})", token.column)
        if token.kind == "op" and token.text == "(":
            self.enter()
            inner = self.expr()
            self.expect(")")
            self.depth -= 1
            return inner
        raise self.fail(f"unexpected {_describe(token)}", token.column)

    def call(self, name: _Token) -> Expr:
        self.expect("(")
        self.enter()
        args = [self.expr()]
        while self.accept(","):
            args.append(self.expr())
        self.expect(")")
        self.depth -= 1
        _, least, most = _FUNCTIONS[name.text]
        if len(args) < least or (most is not None and len(args) > most):
            wanted = f"{least}" if least == most else f"at least {least}"
            raise self.fail(f"{name.text}() takes {wanted} argument(s), got {len(args)}", name.column)
        return Call(name.text, tuple(args))


def parse_expr(text: str) -> Expr:
    """Parse `text` in the model file's expression language (variable p).

    Raises ModelError, with what is wrong and at which column, for anything
    malformed, longer than MAX_LENGTH characters or nested deeper than
    MAX_DEPTH. Never evaluates Python code.
    """
    if not isinstance(text, str):
        raise ModelError(f"an expression must be a string, not {type(text).__name__}")
    if len(text) > MAX_LENGTH:
        raise ModelError(f"expression longer than {MAX_LENGTH} characters ({len(text)})")
    return _parsed(text)


@functools.lru_cache(maxsize=4096)
def _parsed(text: str) -> Expr:
    # Expressions are immutable and model files repeat them (every library's log2(p)).
    return _Parser(text).parse()


def constant(value: float) -> Expr:
    """An expression for a plain number (JSON numbers in a model file)."""
    value = float(value)
    if not math.isfinite(value):
        raise ModelError(f"{value} is not a finite number")
    if value < 0:
        return Negate(Number(-value))
    return Number(value)
