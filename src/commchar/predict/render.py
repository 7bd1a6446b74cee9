"""The advice as tables (commchar.tables.Table): one wording shared by the terminal and the HTML report."""

from __future__ import annotations

from commchar.predict.advice import Comparison, CrossingsInN, DesignFault, LibraryAdvice
from commchar.tables import Table
from commchar.vocabulary import format_size as size, format_us as us


def per_term(value: float, term: str) -> str:
    return f"{value:.4g} us" if term == "t_s" else f"{value:.4g} us/B"


def _side(comparison: Comparison, which: str) -> str:
    eq = comparison.equivalence
    return eq.left_label if which == "left" else eq.right_label


def _crossings_n(comparison: Comparison, row: CrossingsInN) -> str:
    if not row.crossings:
        return "none"
    return "; ".join(f"at n = {size(c.at)}: {_side(comparison, c.winner)}" for c in row.crossings)


def comparison_table(comparison: Comparison) -> Table:
    eq = comparison.equivalence
    rows = []
    for row in comparison.in_n:
        low_winner = _side(comparison, row.winner_low)
        high_winner = _side(comparison, row.winner_high)
        low_gain = 100 * abs(row.left_low - row.right_low) / max(row.left_low, row.right_low) if max(row.left_low, row.right_low) > 0 else 0
        high_gain = 100 * abs(row.left_high - row.right_high) / max(row.left_high, row.right_high) if max(row.left_high, row.right_high) > 0 else 0
        rows.append([str(row.p),
                     f"{low_winner} ({us(min(row.left_low, row.right_low))} vs {us(max(row.left_low, row.right_low))} us, -{low_gain:.0f}%)",
                     _crossings_n(comparison, row),
                     f"{high_winner} ({us(min(row.left_high, row.right_high))} vs {us(max(row.left_high, row.right_high))} us, -{high_gain:.0f}%)"])
    n_low, n_high = (comparison.in_n[0].n_low, comparison.in_n[0].n_high) if comparison.in_n else (0.0, 0.0)
    return Table(
        "", f"{eq.left_label} vs {eq.right_label}",
        ["p", f"cheaper at n = {size(n_low)}", "crossover n: then cheaper", f"cheaper at n = {size(n_high)}"],
        rows, [f"{eq.job}; crossovers searched over n in [{size(n_low)}, {size(n_high)}]"])


def comparison_in_p_table(comparison: Comparison) -> Table | None:
    if not comparison.in_p:
        return None
    eq = comparison.equivalence
    rows = []
    for row in comparison.in_p:
        crossings = "; ".join(f"at p = {c.at:.2f}: {_side(comparison, c.winner)}" for c in row.crossings) or "none"
        rows.append([row.n, _side(comparison, row.winner_low), crossings, _side(comparison, row.winner_high)])
    first = comparison.in_p[0]
    return Table(
        "", f"{eq.left_label} vs {eq.right_label}, by p",
        ["n", f"cheaper at p = {first.p_low:g}", "crossover p: then cheaper", f"cheaper at p = {first.p_high:g}"],
        rows, [f"{eq.job}"])


def _gap(fault: DesignFault, index: int) -> str:
    gap = fault.gaps[index]
    if gap.fitted is None or gap.ratio is None:
        return f"p={gap.p:g}: fitted law gives no positive time (it does not hold there)"
    return f"p={gap.p:g}: {per_term(gap.fitted, fault.term)} vs {per_term(gap.best, fault.term)} ({gap.ratio:.2f}x)"


def faults_table(advice: LibraryAdvice) -> Table:
    rows = [
        [fault.op, fault.term, f"{fault.law} ({fault.expr})",
         f"{fault.best_law}: {fault.algorithm}; {fault.parameter} = {per_term(fault.parameter_value, fault.term)} "
         f"({fault.parameter_source})",
         _gap(fault, 0), _gap(fault, 1), _gap(fault, 2)]
        for fault in advice.faults]
    return Table(
        "", "Design faults: laws in p worse than the best-known algorithm's",
        ["operation", "term", "fitted law", "best-known law", "gap at largest p", "at 10x p", "at 100x p"],
        rows, ["best-known cost from reference models.md section 6 with alpha = t_s and beta = t_b of the "
               "point-to-point send model and gamma = the reduction's t_c at p = 2 (else the term's own value at "
               "p = 2, where the algorithms coincide); beyond the fitted p range both are extrapolations"])


def _split(advice_row) -> str:  # type: ignore[no-untyped-def]
    verdict = "saves" if advice_row.split_us < advice_row.whole_us else "costs"
    return (f"{size(advice_row.n)}: whole {us(advice_row.whole_us)} us, {advice_row.pieces} pieces "
            f"{us(advice_row.split_us)} us ({verdict} {abs(advice_row.saving_pct):.0f}%)")


def thresholds_table(advice: LibraryAdvice) -> Table:
    rows = []
    for t in advice.thresholds:
        boundary = size(t.above_min) if t.above_min - t.below_max <= 1 else f"{size(t.below_max)} .. {size(t.above_min)}"
        rows.append([t.op, boundary, f"{us(t.t_below_us)} -> {us(t.t_above_us)} us", _split(t.just_over),
                     "; ".join(_split(u) for u in t.user_sizes) or "-"])
    return Table(
        "", "Protocol thresholds of point-to-point operations",
        ["operation", "boundary", "time across it", "just over: whole vs 2 halves", "your sizes"],
        rows, ["a boundary between two fitted segments (protocol regimes); splitting a message into pieces that "
               "stay below it pays when the pieces' total time is less than the whole message's"])
