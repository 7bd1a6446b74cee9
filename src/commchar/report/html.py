"""The HTML page: one self-contained file, figures inline as SVG, no script, no network.

Every string that comes from the data, the environment or a file name is
escaped here with html.escape; only tables (commchar.tables.table_html) and the
advice (commchar.predict.html) build markup elsewhere, escaping the same way.
"""

from __future__ import annotations

import io
import re
from typing import Any
from html import escape
from string import Template

import matplotlib

from commchar.report.figures import FigureSpec
from commchar.report.findings import GROUPS, Finding

PAGE = Template("""<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>$title</title>
<style>
body { font: 14px/1.45 system-ui, -apple-system, "Segoe UI", sans-serif; color: #1b1b1b;
       max-width: 1180px; margin: 0 auto; padding: 1em 1.5em 4em; }
h1 { font-size: 1.6em; margin-bottom: 0.2em; } h2 { border-bottom: 2px solid #ddd; padding-bottom: 0.2em;
margin-top: 2em; } h3 { margin-top: 1.6em; }
.meta { color: #555; } nav ul { columns: 2; } code { background: #f3f3f3; padding: 0 0.2em; }
figure { margin: 1.2em 0; } figure svg { max-width: 100%; height: auto; display: block; }
figcaption { color: #444; font-size: 0.92em; }
table { border-collapse: collapse; margin: 0 0 0.8em; font-size: 0.9em; }
.table-title { font-weight: 600; margin: 1.2em 0 0.3em; }
th, td { border: 1px solid #ccc; padding: 0.25em 0.55em; text-align: left; vertical-align: top; }
th { background: #f2f4f7; } td.num { text-align: right; font-variant-numeric: tabular-nums; }
.table-note { color: #555; font-size: 0.85em; margin-top: -0.4em; }
.wide { overflow-x: auto; } .findings li { margin: 0.35em 0; }
.tag { display: inline-block; min-width: 7.5em; font-size: 0.8em; color: #fff; background: #607d8b;
       border-radius: 3px; padding: 0 0.4em; margin-right: 0.4em; text-align: center; }
.tag-failure, .tag-wrong-result, .tag-model { background: #c62828; } .tag-law { background: #ef6c00; }
.tag-oversubscribed, .tag-variance, .tag-precision { background: #8d6e63; }
.tag-threshold { background: #1565c0; } .tag-comparison { background: #2e7d32; }
.tag-unsupported { background: #9e9e9e; }
.note { background: #fff8e1; border-left: 4px solid #ffb300; padding: 0.4em 0.8em; }
</style>
</head>
<body>
<h1>$title</h1>
<p class="meta">$meta</p>
$notes
<nav><ul>$toc</ul></nav>
$body
</body>
</html>
""")


# typed loosely: matplotlib's stubs accept only a literal dict of known keys
FIGURE_RC: Any = {"text.usetex": False, "svg.fonttype": "path", "axes.formatter.use_mathtext": False,
             "axes.unicode_minus": True}


def svg_markup(spec: FigureSpec) -> str:
    """The figure as inline SVG, with ids salted by its slug so figures never share one."""
    buffer = io.StringIO()
    with matplotlib.rc_context({**FIGURE_RC, "svg.hashsalt": spec.slug}):
        spec.figure.savefig(buffer, format="svg", metadata={"Date": None})
    text = buffer.getvalue()
    # The RDF metadata block only names external vocabularies; the page does not need it.
    svg = re.sub(r"<metadata>.*?</metadata>", "", text[text.index("<svg"):], flags=re.S)
    return _prefix_ids(svg, f"{spec.slug}-")


def _prefix_ids(svg: str, prefix: str) -> str:
    """matplotlib numbers its groups (figure_1, axes_1) per file; in one page every id must be unique."""
    svg = re.sub(r'\bid="([^"]+)"', lambda m: f'id="{prefix}{m.group(1)}"', svg)
    svg = re.sub(r'href="#([^"]+)"', lambda m: f'href="#{prefix}{m.group(1)}"', svg)
    return re.sub(r"url\(#([^)]+)\)", lambda m: f"url(#{prefix}{m.group(1)})", svg)


def figure_html(spec: FigureSpec, anchor: str) -> str:
    return (f'<figure id="{escape(anchor)}">{svg_markup(spec)}'
            f"<figcaption><strong>{escape(spec.title)}.</strong> {escape(spec.caption)}</figcaption></figure>")


def findings_html(findings: list[Finding]) -> str:
    if not findings:
        return "<p>No finding: no failure, threshold, law or anomaly to report.</p>"
    out = []
    for heading, kinds in GROUPS:
        shown = [f for f in findings if f.category in kinds]
        if not shown:
            continue
        items = "".join(f'<li><span class="tag tag-{escape(f.category)}">{escape(f.category)}</span>'
                        f"{escape(f.text)}</li>" for f in shown)
        block = f'<h3>{escape(heading)}</h3><ul class="findings">{items}</ul>'
        if heading == GROUPS[-1][0]:  # details stay one click away
            block = (f'<details><summary><strong>{escape(heading)}</strong> ({len(shown)} findings:'
                     f" thresholds, precision, variance, unsupported operations)</summary>"
                     f'<ul class="findings">{items}</ul></details>')
        out.append(block)
    return "".join(out)


def page(title: str, meta: str, notes: list[str], sections: list[tuple[str, str, str, bool]]) -> str:
    """sections: (anchor, heading, already-escaped body html, whether the body brings its own heading)."""
    toc = "".join(f'<li><a href="#{escape(a)}">{escape(h)}</a></li>' for a, h, _, _ in sections)
    body = "".join(f'<div id="{escape(a)}">{b}</div>' if own else
                   f'<section id="{escape(a)}"><h2>{escape(h)}</h2>{b}</section>' for a, h, b, own in sections)
    note_html = "".join(f'<p class="note">{escape(n)}</p>' for n in notes)
    return PAGE.substitute(title=escape(title), meta=escape(meta), notes=note_html, toc=toc, body=body)
