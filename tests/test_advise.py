"""Advice: the published AP3000 conclusions, crossovers by hand, design faults, thresholds, HTML."""

from __future__ import annotations

import json
import re
from pathlib import Path

import numpy as np
import pytest

from commchar.cli import main
from commchar.modelfile import ModelFile, load, parse_expr
from commchar.predict import CATALOGUE, advice_html, advise
from commchar.models.laws import classify

from test_modelfile import two_regime_model

EXAMPLE = Path(__file__).resolve().parents[1] / "examples" / "ap3000-mpi.json"


@pytest.fixture(scope="module")
def ap3000_advice():
    [advice] = advise(load(EXAMPLE)).libraries
    return advice


def comparison(advice, name):
    [found] = [c for c in advice.comparisons if c.equivalence.name == name]
    return found


def test_catalogue_has_the_required_equivalences(ap3000_advice):
    labels = {(c.equivalence.left_label, c.equivalence.right_label) for c in ap3000_advice.comparisons}
    assert {("allgather(n)", "gather(n) + bcast(n)"), ("allreduce(n)", "reduce(n) + bcast(n)"),
            ("reduce_scatter(n)", "reduce(n) + scatter(n)"), ("bcast(n)", "scatter(n) + allgather(n)"),
            ("alltoall(n)", "p x scatter(n*p)")} <= labels
    assert ap3000_advice.unavailable == []
    assert ap3000_advice.p_values == list(range(2, 13))
    assert ap3000_advice.n_interval == (0, 1048576)


def test_gather_bcast_beats_allgather_for_short_messages_with_the_crossover_by_hand(ap3000_advice):
    allgather = comparison(ap3000_advice, "allgather")
    for row in allgather.in_n:
        assert row.winner_low == "right"        # gather + bcast at n = 0, every p
        assert row.winner_high == "left"        # allgather at 1 MiB
        assert len(row.crossings) == 1 and row.crossings[0].winner == "left"
    # At p = 8: allgather(n) = 736 + (0.0239 + 0.00279*3) n = 736 + 0.03227 n
    #   gather(n) + bcast(n) = 1/0.00462 + 207 + (0.0252*3^-0.1473 + 0.0162*3) n
    # equal at n = (736 - 1/0.00462 - 207) / (0.0252*3^-0.1473 + 0.0486 - 0.03227) = 8276.2 B
    crossover = (736 - 1 / 0.00462 - 207) / (0.0252 * 3 ** -0.1473 + 0.0486 - 0.03227)
    assert crossover == pytest.approx(8276.2, abs=0.1)
    [p8] = [row for row in allgather.in_n if row.p == 8]
    assert p8.crossings[0].at == pytest.approx(crossover, rel=1e-7)
    # one double per process (n = 8p): gather + bcast is cheaper at every p
    [per_process] = [row for row in allgather.in_p if row.n == "8*p"]
    assert per_process.winner_low == per_process.winner_high == "right" and per_process.crossings == ()


def test_reduce_scatter_costs_more_than_reduce_plus_scatter(ap3000_advice):
    reduce_scatter = comparison(ap3000_advice, "reduce_scatter")
    # p = 3..9: reduce + scatter cheaper over the whole n range (published conclusion);
    # at p = 8 by hand, n = 0: 780 (reduce_scatter) vs 255 + 482 = 737 (reduce + scatter)
    for row in reduce_scatter.in_n:
        if 3 <= row.p <= 9:
            assert row.winner_low == row.winner_high == "right" and row.crossings == ()
    [p8] = [row for row in reduce_scatter.in_n if row.p == 8]
    assert (p8.left_low, p8.right_low) == (pytest.approx(780), pytest.approx(737))
    # p = 2: 222 vs 75 + 164 = 239 at n = 0, so reduce_scatter wins short messages there, then loses
    [p2] = [row for row in reduce_scatter.in_n if row.p == 2]
    assert p2.winner_low == "left" and p2.winner_high == "right"


def test_scan_is_flagged_as_a_design_fault_and_bcast_startup_is_not(ap3000_advice):
    faults = {(f.op, f.term): f for f in ap3000_advice.faults}
    scan = faults[("scan:sum", "t_s")]
    assert (scan.law, scan.best_law, scan.algorithm) == ("O(p)", "O(log p)", "recursive doubling")
    # gap at p = 12: fitted 70*12 + 38 = 878 us; best-known log2(12)*alpha with alpha = 69 us
    # (t_s of the MPI Send model) = 247.36 us
    largest, ten, hundred = scan.gaps
    assert (largest.p, ten.p, hundred.p) == (12, 120, 1200)
    assert largest.fitted == pytest.approx(878) and largest.best == pytest.approx(69 * 3.5849625, rel=1e-6)
    assert hundred.fitted == pytest.approx(70 * 1200 + 38) and hundred.ratio == pytest.approx(84038 / (69 * 10.2288187), rel=1e-6)
    assert ("bcast", "t_s") not in faults                # 69 log2 p: a binomial tree, as published
    assert ("reduce:sum", "t_s") not in faults
    assert ("allgather", "t_s") in faults and ("alltoall", "t_s") in faults
    laws = {(op, term): law for op, term, law, _ in ap3000_advice.laws}
    assert laws[("bcast", "t_s")] == "O(log p)" and laws[("scatter", "t_b")] == "O(1)"


def test_classify_laws():
    def law(text):
        expr = parse_expr(text)
        return classify(lambda p: np.array([expr.evaluate(float(q)) for q in p]), 2, 12).name
    assert law("3 + 4*log2(p)") == "O(log p)"
    assert law("95*p - 24") == "O(p)"
    assert law("2*p^2 + 1") == "O(p^2)"
    assert law("7") == "O(1)"
    assert law("0.0209*log2(p)^-0.3830") == "O(1)"   # decreasing
    assert law("p*log2(p)") == "O(p log p)"


def test_one_classifier_for_fitted_laws_and_expressions():
    """A fitted law and the expression it writes into the model file get the same class."""
    from commchar.models.laws import Law
    for fitted in (Law("powlog", {"c": 3.0, "e": 1.6}), Law("reciprocal", {"a": 1.0, "b": 0.2}),
                   Law("plogp", {"a": 1.0, "b": 0.5}), Law("powlog", {"c": 3.0, "e": 0.4})):
        expr = parse_expr(fitted.expr())
        from_expr = classify(lambda p: np.array([expr.evaluate(float(q)) for q in p]), 2, 12).name
        assert fitted.complexity((2, 12)) == from_expr


def test_complexity_names_and_ranks_are_one_table():
    from commchar.models.laws import BEST_KNOWN, CLASSES, class_named
    assert [c.rank for c in CLASSES] == sorted(c.rank for c in CLASSES)
    for cls in CLASSES:
        assert class_named(cls.name) is cls and class_named(cls.name.replace(" ", "").lower()) is cls
    assert class_named("O(log2 p)").name == "O(log p)" and class_named("O(sqrt p)").rank < class_named("O(p)").rank
    assert class_named("O(p^3)") is None and class_named(None) is None
    assert all(class_named(best.law.name) is best.law for terms in BEST_KNOWN.values() for best in terms.values())


def test_laws_field_takes_precedence():
    d = two_regime_model()
    d["libraries"]["openmpi"]["operations"]["bcast"]["laws"]["t_s"]["complexity"] = "O(p)"
    [advice] = advise(ModelFile.from_dict(d)).libraries
    [fault] = [f for f in advice.faults if f.op == "bcast" and f.term == "t_s"]
    assert fault.law_source == "laws field" and fault.law == "O(p)"


def test_protocol_threshold_and_splitting_by_hand():
    model = ModelFile.from_dict(two_regime_model())
    [advice] = advise(model, n_values=[100.0, 6000.0, 10000.0], p_values=[2, 4]).libraries
    [threshold] = advice.thresholds
    assert (threshold.op, threshold.below_max, threshold.above_min) == ("pingpong:send", 4096, 8192)
    # just over: 8192 B whole = 1.9 + 0.000071*8192 = 2.481632 us;
    # two halves = 2*(0.41 + 0.000087*4096) = 1.532704 us: splitting saves 38%
    assert threshold.just_over.whole_us == pytest.approx(2.481632)
    assert threshold.just_over.split_us == pytest.approx(1.532704)
    assert threshold.just_over.saving_pct == pytest.approx(100 * (2.481632 - 1.532704) / 2.481632)
    # 10000 B: ceil(10000/4096) = 3 pieces of 3333.3 B: 3*(0.41 + 0.000087*10000/3) = 2.1 us
    # vs 1.9 + 0.71 = 2.61 us whole; 6000 B uses the lower segment (nearer 4096), so no advice
    [user] = threshold.user_sizes
    assert (user.n, user.pieces) == (10000, 3)
    assert (user.whole_us, user.split_us) == (pytest.approx(2.61), pytest.approx(2.1))
    assert any("S = 65536 B" in note and "rendezvous" in note for note in advice.loggp_notes)
    # the AP3000 model has single-segment point-to-point models: no threshold
    assert advise(load(EXAMPLE)).libraries[0].thresholds == []


def test_missing_operations_are_listed_not_fatal():
    [advice] = advise(ModelFile.from_dict(two_regime_model())).libraries
    assert advice.comparisons == []
    assert any(line.startswith("allgather(n) vs gather(n) + bcast(n): no model for") for line in advice.unavailable)
    assert len(advice.unavailable) == len(CATALOGUE)


def test_crossover_in_p_by_hand():
    # allreduce vs reduce + bcast at n = 0: allreduce 144 log2 p + 15 vs (90 log2 p - 15) + 69 log2 p
    # equal where 15*log2 p = 30: p = 4 exactly
    [advice] = advise(load(EXAMPLE), n_values=[0.0], p_values=list(range(2, 13))).libraries
    [row] = comparison(advice, "allreduce").in_p
    assert [c.at for c in row.crossings] == [pytest.approx(4.0, abs=1e-6)]
    assert row.winner_low == "right" and row.winner_high == "left"


def test_advice_html_escapes_everything():
    d = json.loads(EXAMPLE.read_text())
    d["libraries"]["<script>alert(1)</script>"] = d["libraries"].pop("mpi")
    html = advice_html(advise(ModelFile.from_dict(d, source="a&b.json")))
    assert "<script>" not in html and "&lt;script&gt;alert(1)&lt;/script&gt;" in html
    assert "a&amp;b.json" in html
    assert html.startswith('<section class="commchar-advice">') and html.rstrip().endswith("</section>")
    assert html.count("<table") == html.count("</table>") > 5
    assert "recursive doubling" in html and "O(p)" in html
    # every tag is one of the few the fragment uses (its tables in the report's markup, commchar.tables)
    assert set(re.findall(r"</?([a-z0-9]+)", html)) <= {
        "section", "h2", "h3", "h4", "p", "div", "table", "thead", "tbody", "tr", "th", "td", "ul", "li"}


def test_cli_advise(capsys):
    assert main(["advise", str(EXAMPLE), "--p", "8,12", "--n", "0:64K"]) == 0
    out, err = capsys.readouterr()
    assert "allgather(n) vs gather(n) + bcast(n)" in out and "at n = 8.082 KiB" in out
    assert "Design faults" in out and "scan:sum" in out
    assert main(["advise", str(EXAMPLE), "--p", "8", "--n", "1K", "--json"]) == 0
    out, err = capsys.readouterr()
    data = json.loads(out)
    assert data["libraries"][0]["library"] == "mpi"
    assert main(["advise", str(EXAMPLE), "--library", "pvm"]) == 2
    out, err = capsys.readouterr()
    assert err.count("\n") == 1 and "no library 'pvm'" in err
