"""The report's words on how each run's sizes were chosen (measure/sizechoice.py)."""

from __future__ import annotations

from commchar.measure.adaptive import MAX_FLOOR
from commchar.measure.sizechoice import size_choice


def size_choice_items(db: str, runs: list[dict]) -> list[str]:
    """One sentence per run: its size rule, and under adaptive its rounds, how many series
    met the CI target, how much the series scatter from size to size, and which still asked
    for sizes when the rounds ran out."""
    ids = [int(run["id"]) for run in runs if isinstance(run.get("id"), int)]
    if not ids:
        return []
    items = []
    for record in size_choice(db, ids)["runs"]:
        series = record["series"]
        text = f"Sizes of run {record['run_id']}: {record['rule']}, {record['description']}"
        if record["rule"] == "adaptive":
            rounds = max((r["round"] for s in series for r in s["rounds"]), default=0)
            modelled = [s for s in series if "ci_met" in s]
            met = sum(1 for s in modelled if s["ci_met"])
            still = [f"{s['library']} {s['op']} p={s['p']}" for s in modelled if s.get("open")]
            text += (f"; {sum(s['sizes'] for s in series)} points, the coarse grid and {rounds} round(s);"
                     f" predicted times known to {100 * record['ci_target']:g}% (or half the series'"
                     f" noise floor, where looser) in {met} of {len(modelled)} series")
            scatters = sorted(s["scatter"] for s in modelled if isinstance(s.get("scatter"), float))
            if scatters:
                # what a point's own CI does not show: the series' scatter from size to size
                text += (f"; the series scatter {100 * scatters[len(scatters) // 2]:.0f}% from size to size"
                         f" (median; {100 * scatters[0]:.0f}-{100 * scatters[-1]:.0f}%), the rule's noise"
                         f" floor at most {100 * MAX_FLOOR:g}%")
            if still:
                text += f"; still asking for sizes: {', '.join(still[:8])}" + (
                    f" and {len(still) - 8} more" if len(still) > 8 else "")
        items.append(text + ".")
    return items
