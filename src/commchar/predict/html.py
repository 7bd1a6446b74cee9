"""The advice as an HTML fragment: the advice section of the HTML report."""

from __future__ import annotations

from html import escape

from commchar.predict.advice import AdviceResult
from commchar.predict.render import (
    comparison_in_p_table,
    comparison_table,
    faults_table,
    thresholds_table,
)
from commchar.tables import table_html


def _list(items: list[str]) -> str:
    return "<ul>" + "".join(f"<li>{escape(item)}</li>" for item in items) + "</ul>"


def advice_html(result: AdviceResult) -> str:
    """An HTML fragment (one <section>) with the whole advice; every text is escaped.

    No scripts, styles or external references: the report embeds it as is.
    """
    parts = ['<section class="commchar-advice">', "<h2>Advice</h2>",
             f"<p>From model {escape(result.model_source)}.</p>"]
    for advice in result.libraries:
        parts.append(f"<h3>{escape(advice.library)}</h3>")
        parts.append("<h4>Equivalent ways to do the same job</h4>")
        for comparison in advice.comparisons:
            parts.append(table_html(comparison_table(comparison)))
            by_p = comparison_in_p_table(comparison)
            if by_p is not None:
                parts.append(table_html(by_p))
        if advice.unavailable:
            parts.append("<p>Not compared (the model lacks an operation):</p>" + _list(advice.unavailable))
        parts.append("<h4>Design faults</h4>")
        if advice.faults:
            parts.append(table_html(faults_table(advice)))
        else:
            parts.append("<p>No operation's law in p is worse than the best-known algorithm's.</p>")
        parts.append("<h4>Protocol thresholds</h4>")
        if advice.thresholds:
            parts.append(table_html(thresholds_table(advice)))
        else:
            parts.append("<p>No point-to-point operation has more than one segment in this model.</p>")
        if advice.loggp_notes:
            parts.append(_list(advice.loggp_notes))
        if advice.warnings:
            parts.append('<p class="commchar-warning">Warnings:</p>' + _list(advice.warnings))
    parts.append("</section>")
    return "\n".join(parts)
