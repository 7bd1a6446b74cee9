"""The `commchar` command line: one verb per job, discovered from commchar.commands.

This is the only module that turns errors into messages and exit codes: every
CommcharError becomes one line on stderr, never a traceback.
"""

from __future__ import annotations

import argparse
import importlib
import pkgutil
import signal
import sys
import threading
from types import ModuleType

from commchar import __version__, commands
from commchar.errors import CommcharError, UsageError


class OneLineParser(argparse.ArgumentParser):
    """argparse that reports a bad flag as a single line and exit code 2."""

    def error(self, message: str) -> None:  # type: ignore[override]
        raise UsageError(f"{self.prog}: {message}")


def _verb_modules() -> list[ModuleType]:
    found = []
    for info in sorted(pkgutil.iter_modules(commands.__path__), key=lambda m: m.name):
        if info.name.startswith("_"):
            continue
        module = importlib.import_module(f"commchar.commands.{info.name}")
        if hasattr(module, "NAME") and hasattr(module, "execute"):
            found.append(module)
    return found


def build_parser() -> tuple[OneLineParser, dict[str, ModuleType]]:
    parser = OneLineParser(
        prog="commchar",
        description="Measure, model, predict and simulate message-passing communication.",
    )
    parser.add_argument("--version", action="version", version=f"commchar {__version__}")
    sub = parser.add_subparsers(dest="verb", metavar="VERB", parser_class=OneLineParser)
    verbs = {}
    for module in _verb_modules():
        verb_parser = sub.add_parser(module.NAME, help=module.HELP, description=module.HELP)
        module.configure(verb_parser)
        verbs[module.NAME] = module
    return parser, verbs


def _stop_on_sigterm(signum: int, frame: object) -> None:
    raise KeyboardInterrupt  # a batch system's TERM stops any verb as cleanly as Ctrl-C


def main(argv: list[str] | None = None) -> int:
    from commchar import processes, terminal

    console = terminal.console()
    errors = terminal.console(stderr=True)
    on_main_thread = threading.current_thread() is threading.main_thread()
    previous = signal.signal(signal.SIGTERM, _stop_on_sigterm) if on_main_thread else None
    try:
        parser, verbs = build_parser()
        args = parser.parse_args(argv)
        if not args.verb:
            parser.print_help()
            return 2
        return int(verbs[args.verb].execute(args, console) or 0)
    except CommcharError as exc:
        errors.print(terminal.one_line(f"commchar: error: {exc}"), soft_wrap=True)
        return exc.exit_code
    except KeyboardInterrupt:
        errors.print("commchar: interrupted", markup=False)
        return 130
    except BrokenPipeError:
        return 141
    finally:
        processes.close()  # whatever commchar started has been stopped by now
        if on_main_thread:
            signal.signal(signal.SIGTERM, previous)


if __name__ == "__main__":
    sys.exit(main())
