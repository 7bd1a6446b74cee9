"""The one way commchar writes to a terminal: text from data is printed as it is.

Library names, operation keys and messages come from files, stores and MPI
libraries, so none of them may be read as rich markup (`[/]` would crash,
`openmpi[ucx]` would print as `openmpi`) or reach the terminal as control
characters (an escape sequence could rewrite the screen). Every console of
the command line is a `SafeConsole`: markup and emoji are off, and control
characters in any string it renders are shown as escapes (`\\x1b`). Colour is
given with `styled`, never with markup in a string.
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING, Any

from rich.console import Console
from rich.text import Text

if TYPE_CHECKING:
    from rich.progress import Progress

# C0 and C1 controls, DEL, and the invisible format characters that reorder or hide text.
_CONTROL = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\u200b-\u200f\u202a-\u202e\u2066-\u2069\ufeff]")
_CONTROL_OR_NEWLINE = re.compile(_CONTROL.pattern[:-1] + "\n\t]")


def _escape(match: re.Match[str]) -> str:
    code = ord(match.group())
    return f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}"


def visible(text: str) -> str:
    """`text` with control characters written as escapes; newlines and tabs kept."""
    return _CONTROL.sub(_escape, text)


def one_line(text: str) -> str:
    """`text` on one line: control characters, newlines and tabs written as escapes."""
    return _CONTROL_OR_NEWLINE.sub(_escape, text)


def styled(*parts: str | tuple[str, str]) -> Text:
    """A Text of plain parts and (text, style) parts, every part made visible."""
    return Text.assemble(*((visible(p[0]), p[1]) if isinstance(p, tuple) else visible(p) for p in parts))


class SafeConsole(Console):
    """A rich Console that never interprets markup or emoji and shows control characters."""

    def __init__(self, **kwargs: Any) -> None:
        kwargs.update(markup=False, emoji=False, highlight=False)
        super().__init__(**kwargs)

    def render_str(self, text: str, **kwargs: Any) -> Text:  # type: ignore[override]
        kwargs.update(markup=False, emoji=False)
        return super().render_str(visible(text), **kwargs)


def console(*, stderr: bool = False) -> SafeConsole:
    """The console for standard output (or standard error)."""
    return SafeConsole(stderr=stderr)


def _clock(seconds: float) -> str:
    whole = int(seconds)
    return f"{whole // 3600}:{whole // 60 % 60:02d}:{whole % 60:02d}"


def sweep_progress(out: Console) -> Progress:
    """The bar of a sweep (points, application cases): its description names libraries
    and operations from data, so it is never read as markup. Its clock reads
    `0:01:10 elapsed, 0:03:20 left`: the time left is the elapsed time per finished
    item times the items left (`left unknown` until one has finished)."""
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, ProgressColumn, Task, TextColumn

    class _Clock(ProgressColumn):
        def render(self, task: Task) -> Text:
            elapsed = task.finished_time if task.finished else task.elapsed
            text = f"{_clock(elapsed or 0.0)} elapsed"
            if task.finished:
                return Text(text, style="progress.elapsed")
            if task.total and task.completed > 0 and elapsed:
                left = elapsed * (task.total - task.completed) / task.completed
                return Text(f"{text}, {_clock(left)} left", style="progress.remaining")
            return Text(f"{text}, left unknown", style="progress.remaining")

    return Progress(TextColumn("{task.description}", markup=False), BarColumn(),
                    MofNCompleteColumn(), _Clock(), console=out, transient=False)
