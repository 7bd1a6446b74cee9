"""The one table type of commchar's results, and its two renderers.

A `Table` holds plain-text cells; the report writes it as HTML (`table_html`) and
the commands print it to the terminal (`table_rich`), so a table reads the same in
both. It sits below predict and report because both build it. Cells are never
markup: the HTML writer escapes them and the terminal console (commchar.terminal)
shows them as they are. A '*' right after a number marks a model prediction where
nothing was measured at that size.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from html import escape

from rich.table import Table as RichTable


@dataclass
class Table:
    slug: str              # the table's name in a page (report anchors, tests); "" when it needs none
    title: str
    headers: list[str]
    rows: list[list[str]]
    notes: list[str] = field(default_factory=list)
    # columns aligned right beyond those whose every cell is a number (sizes such as "1 KiB", "12.3 *")
    right: frozenset[int] = frozenset()

    def __post_init__(self) -> None:
        self.rows = one_notation_per_column(self.rows)


# a number cell: plain or scientific, '*' marking a model prediction
NUMBER_CELL = re.compile(r"^(-?\d+(?:\.\d+)?(?:e[+-]\d+)?)(\*?)$")


def one_notation_per_column(rows: list[list[str]]) -> list[list[str]]:
    """Numbers of one column in one notation. Where `.3g` wrote some in scientific
    notation and others plainly: large ones (1.2e+04) are written plainly (12000) when
    every scientific one is >= 1; otherwise (6.75e-05 beside 0.000368) all are written
    in scientific notation, with as many significant digits as the most precise had."""
    columns = max((len(r) for r in rows), default=0)
    out = [list(r) for r in rows]
    for c in range(columns):
        cells = [(i, NUMBER_CELL.match(r[c])) for i, r in enumerate(out) if c < len(r)]
        numbers = [(i, m) for i, m in cells if m and float(m.group(1)) != 0]
        scientific = [(i, m) for i, m in numbers if "e" in m.group(1)]
        if not scientific or len(scientific) == len(numbers):
            continue
        if all(abs(float(m.group(1))) >= 1 for _, m in scientific):
            for i, m in scientific:
                out[i][c] = f"{float(m.group(1)):.0f}{m.group(2)}"
            continue
        digits = max(len(m.group(1).split("e")[0].replace("-", "").replace(".", "").lstrip("0")) for _, m in numbers)
        for i, m in numbers:
            out[i][c] = f"{float(m.group(1)):.{max(digits, 1) - 1}e}{m.group(2)}"
    return out


def _cell(text: str, right: bool = False) -> str:
    cls = ' class="num"' if right or NUMBER_CELL.match(text) else ""
    return f"<td{cls}>{escape(text)}</td>"


def table_html(table: Table, anchor: str = "") -> str:
    """The table as escaped HTML: its title above it, its notes below."""
    head = "".join(f"<th>{escape(h)}</th>" for h in table.headers)
    rows = "".join("<tr>" + "".join(_cell(c, i in table.right) for i, c in enumerate(row)) + "</tr>"
                   for row in table.rows)
    notes = "".join(f'<p class="table-note">{escape(n)}</p>' for n in table.notes)
    ident = f' id="{escape(anchor)}"' if anchor else ""
    # The title sits above the table rather than in <caption>, which would wrap to a narrow table's width.
    return (f'<div class="wide"{ident}><p class="table-title">{escape(table.title)}</p>'
            f"<table><thead><tr>{head}</tr></thead><tbody>{rows}</tbody></table></div>{notes}")


def _numeric(table: Table, column: int) -> bool:
    cells = [r[column] for r in table.rows if column < len(r) and r[column]]
    return bool(cells) and all(NUMBER_CELL.match(c) for c in cells)


def table_rich(table: Table) -> RichTable:
    """The table for a terminal: title above, notes as its caption; long cells fold, never cut."""
    out = RichTable(title=table.title or None, caption="\n".join(table.notes) or None, title_justify="left")
    for i, header in enumerate(table.headers):
        right = i in table.right or _numeric(table, i)
        out.add_column(header, justify="right" if right else "left", overflow="fold")
    for row in table.rows:
        out.add_row(*row)
    return out
