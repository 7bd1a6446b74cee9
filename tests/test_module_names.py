"""A word names one module: "predict", "replay" and "runner" each have one home in the
package (predict/, simulate/replay.py, measure/runner.py); a module elsewhere that does
one of these jobs says what it is (apps/estimate.py, apps/sweep.py, trace/program.py).
The command modules are the exception by design: each is named after its verb
(commands/predict.py is `commchar predict`), which the command line imports by name."""

from __future__ import annotations

from pathlib import Path

PACKAGE = Path(__file__).resolve().parents[1] / "src" / "commchar"
HOMES = {"predict": "predict", "replay": "simulate/replay.py", "runner": "measure/runner.py"}


def _named(word: str) -> list[str]:
    found = []
    for path in PACKAGE.rglob("*"):
        rel = path.relative_to(PACKAGE)
        if rel.parts[0] in ("commands", "__pycache__") or "__pycache__" in rel.parts:
            continue
        if (path.is_dir() and path.name == word) or (path.suffix == ".py" and path.stem == word):
            found.append(rel.as_posix())
    return sorted(found)


def test_each_word_has_one_home() -> None:
    assert {word: _named(word) for word in HOMES} == {word: [home] for word, home in HOMES.items()}


def test_the_verbs_keep_their_names() -> None:
    for verb in ("predict", "replay", "app", "trace"):
        assert (PACKAGE / "commands" / f"{verb}.py").is_file()
