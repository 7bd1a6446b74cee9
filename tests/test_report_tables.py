"""The report's table and axis conventions: one notation per column, a t_c that is not a
measured cost said so, and ratio axes that can be read (at least two labelled ticks)."""

import numpy as np
from matplotlib.figure import Figure

from commchar.report.adapters import model_views
from commchar.report.dataset import Entity
from commchar.report.figures import _ratio_y
from commchar.report.tables import laws_table
from commchar.tables import one_notation_per_column


def test_a_column_mixing_notations_is_written_in_one():
    rows = [["a", "0.000368", "12.5", "–", "0.802*"], ["b", "6.75e-05", "3.1", "1.5*", "1.2e+04"],
            ["c", "0", "0.25", "2e-05*", "306*"]]
    out = one_notation_per_column(rows)
    assert [r[1] for r in out] == ["3.68e-04", "6.75e-05", "0"]         # small ones: scientific throughout
    assert [r[2] for r in out] == ["12.5", "3.1", "0.25"]                # plain throughout: unchanged
    assert [r[3] for r in out] == ["–", "1.5e+00*", "2.0e-05*"]         # the prediction mark kept
    assert [r[4] for r in out] == ["0.802*", "12000", "306*"]           # large ones: plain throughout
    assert out[0][0] == "a" and rows[0][1] == "0.000368"                 # text untouched, input not mutated


def test_number_cells_are_right_aligned_in_either_notation():
    from commchar.tables import _cell
    assert all('class="num"' in _cell(t) for t in ("12", "-0.5", "3.68e-04", "1.2e+04*"))
    assert 'class="num"' not in _cell("not resolved") and 'class="num"' not in _cell("–")


def _reduction_entity(sum_ci_lo: float, t_c: str) -> Entity:
    """reduce:sum and reduce:nop measured at p = 2 and 4, one regime with the given t_c."""
    points = []
    for p in (2, 4):
        for n in (1024, 4096, 16384):
            nop = 1.0 + 0.001 * n
            for variant, t, lo, hi in (("nop", nop, nop * 0.98, nop * 1.02),
                                       ("sum", nop * 1.01, nop * sum_ci_lo, nop * 1.05)):
                points.append({"op": "reduce", "variant": variant, "p": p, "n_bytes": n, "t_us": t,
                               "ci_lo_us": lo, "ci_hi_us": hi, "valid": True, "oversubscribed": False,
                               "precision_met": True})
    seg = {"n_min": 0, "n_max": None, "t_s": "1", "t_b": "0.001"}
    model = {"format": "commchar-model", "version": 1, "libraries": {"lib": {"operations": {
        "reduce:sum": {"p_range": [2, 4], "segments": [{**seg, "t_c": t_c}]},
        "reduce:nop": {"p_range": [2, 4], "segments": [seg]}}}}}
    view = model_views(model, "test")[0]["lib"]
    return Entity("lib", "lib", {}, [], points, [], model=view)


def _t_c_cell(entity: Entity) -> str:
    table = laws_table(entity)
    assert table is not None
    row = next(r for r in table.rows if r[0] == "reduce:sum")
    return row[table.headers.index("t_c(p) (us/B)")]


def test_t_c_is_not_resolved_when_the_sum_is_within_the_nops_ci():
    # sum's CI reaches down into the nop's at every size: no computation cost to read off
    assert _t_c_cell(_reduction_entity(sum_ci_lo=0.99, t_c="0.00001")) == "not resolved"


def test_a_negative_t_c_is_never_printed_as_a_cost():
    assert _t_c_cell(_reduction_entity(sum_ci_lo=1.03, t_c="-0.00002")) == "not resolved"


def test_t_c_resolved_beyond_both_cis_is_printed():
    assert _t_c_cell(_reduction_entity(sum_ci_lo=1.03, t_c="0.00001")).startswith("0.00001")


def _labelled_ticks(ratios: list[float]) -> list[float]:
    ax = Figure().add_subplot()
    _ratio_y(ax, [np.array(ratios)])
    low, high = ax.get_ylim()
    return [t for t in ax.yaxis.get_majorticklocs() if low <= t <= high]


def test_a_narrow_ratio_range_has_at_least_two_labelled_ticks():
    for ratios in ([0.93, 1.04], [1.01, 1.3], [0.3, 0.35], [1.0, 1.0], [3.0, 4.0]):
        ticks = _labelled_ticks(ratios)
        assert len(ticks) >= 2, (ratios, ticks)
        assert min(ticks) <= min(ratios + [1.0]) * 1.0001 or max(ticks) >= max(ratios + [1.0])


def test_a_wide_ratio_range_is_labelled_by_decades():
    ticks = _labelled_ticks([1e-3, 1e3])
    assert ticks == [1e-3, 1e-2, 1e-1, 1.0, 10.0, 100.0, 1000.0]


def test_the_loggp_table_names_a_parameter_the_points_could_not_give():
    from commchar.report.tables import loggp_table

    note = "no loggp size below S = 257 B has its overheads measured: o_s, O and o_r unknown (0)"
    loggp = {"L": 0.359, "o_s": 0.0, "o_r": 0.0, "g": 0.4, "G": 1e-4, "O": 0.0, "S": 257,
             "notes": [note, "no 0-byte PRTT: L uses the smallest size, 768 B"]}
    model = {"format": "commchar-model", "version": 1, "libraries": {"lib": {"operations": {}, "loggp": loggp}}}
    table = loggp_table(Entity("lib", "lib", {}, [], [], [], model=model_views(model, "test")[0]["lib"]))
    assert table is not None
    assert note in table.notes and not any("768 B" in n for n in table.notes)


def test_a_comparison_of_more_runs_than_colors_draws_every_run():
    # a store holds any number of runs (a validation adds one per model attempt): the comparison
    # figures cycle their styles, and every pair of the first 100 curves differs
    from commchar.report.figures import COLORS, comparison_collectives, comparison_p2p, style

    def entity(k: int) -> Entity:
        points = [{"op": op, "variant": variant, "p": 2, "n_bytes": n, "t_us": (1 + k / 10) * (1.0 + 0.001 * n),
                   "valid": True, "oversubscribed": False, "precision_met": True}
                  for op, variant in (("pingpong", "send"), ("bcast", "")) for n in (8, 1024, 65536)]
        return Entity(f"lib (run {k})", "lib", {"id": k}, [], points, [])

    runs = 2 * len(COLORS) + 3
    spec = comparison_p2p([entity(k) for k in range(runs)])
    assert spec is not None
    assert len(spec.figure.axes[1].get_lines()) == runs  # every ratio and the line at 1
    assert comparison_collectives([entity(k) for k in range(runs)]) is not None
    assert len({style(i) for i in range(100)}) == 100
