"""The one table type: its HTML and terminal renderers show the same cells, in one
notation per column, with nothing read as markup."""

import re
from html import unescape

from commchar.tables import Table, table_html, table_rich
from commchar.terminal import SafeConsole

HEADERS = ["operation", "n", "t (us)", "note"]
ROWS = [["bcast", "8 B", "0.000368", "a <b> & [bold]x[/]"],
        ["allreduce:sum", "1 KiB", "6.75e-05", "-"],
        ["alltoall", "64 KiB", "12.5*", "predicted"]]


def _table() -> Table:
    return Table("demo", "Demo: three operations", HEADERS, ROWS, ["* a model prediction"],
                 right=frozenset({1}))


def _html_cells(html: str) -> list[list[str]]:
    rows = re.findall(r"<tr>(.*?)</tr>", html)
    return [[unescape(c) for c in re.findall(r"<t[hd][^>]*>(.*?)</t[hd]>", r)] for r in rows]


def _terminal(table: Table) -> str:
    console = SafeConsole(width=200, record=True, file=open("/dev/null", "w"))
    console.print(table_rich(table))
    return console.export_text()


def _terminal_cells(text: str) -> list[list[str]]:
    lines = [line for line in text.splitlines() if line.startswith(("┃", "│"))]
    return [[c.strip() for c in re.split("[┃│]", line)[1:-1]] for line in lines]


def test_html_and_terminal_show_the_same_cells_in_one_notation():
    table = _table()
    # the column's mixed notations are written in one, once, for both renderers
    assert [r[2] for r in table.rows] == ["3.68e-04", "6.75e-05", "1.25e+01*"]
    expected = [HEADERS] + table.rows
    html = table_html(table, "tab-demo")
    text = _terminal(table)
    assert _html_cells(html) == expected
    assert _terminal_cells(text) == expected
    # the title and the note in both
    assert "Demo: three operations" in html and "Demo: three operations" in text
    assert '<p class="table-note">* a model prediction</p>' in html and "* a model prediction" in text


def test_html_escapes_and_marks_number_and_right_columns():
    html = table_html(_table(), "tab-demo")
    assert "<b>" not in html and "a &lt;b&gt; &amp; [bold]x[/]" in html
    assert html.startswith('<div class="wide" id="tab-demo"><p class="table-title">')
    assert '<td class="num">3.68e-04</td>' in html and '<td class="num">1 KiB</td>' in html
    assert "<td>bcast</td>" in html
    assert ' id=' not in table_html(_table())  # no anchor asked, none written


def test_terminal_prints_cells_as_text_and_aligns_numbers_right():
    text = _terminal(_table())
    assert "a <b> & [bold]x[/]" in text  # rich markup in a cell is shown, not read
    line = next(line for line in text.splitlines() if "bcast" in line)
    cells = re.split("[┃│]", line)[1:-1]
    assert cells[0].startswith(" bcast ")            # text left
    assert cells[1].endswith(" 8 B ") and cells[1].startswith("  ")  # declared right
    assert cells[2].endswith(" 3.68e-04 ")           # every cell a number: right
