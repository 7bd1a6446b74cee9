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


def _verb_of(module_name: str) -> str:
    """The verb a command module is expected to define (`export_model` -> `export-model`,
    `import_` -> `import`); the module's NAME decides, this only picks what to import."""
    return module_name.rstrip("_").replace("_", "-")


def _verb_modules(only: str | None = None) -> list[ModuleType]:
    """Every command module, or only the one for verb `only` (imported alone: a verb's
    dependencies, such as scipy for fitting, are not loaded to run another)."""
    found = []
    for info in sorted(pkgutil.iter_modules(commands.__path__), key=lambda m: m.name):
        if info.name.startswith("_") or (only is not None and _verb_of(info.name) != only):
            continue
        module = importlib.import_module(f"commchar.commands.{info.name}")
        if hasattr(module, "NAME") and hasattr(module, "execute"):
            found.append(module)
    return found


def build_parser(argv: list[str] | None = None) -> tuple[OneLineParser, dict[str, ModuleType]]:
    """The parser; given the arguments, with the subparser of their verb alone when the first
    names one (any other first argument, such as --help or a typo, gets every verb)."""
    parser = OneLineParser(
        prog="commchar",
        description="Measure, model, predict and simulate message-passing communication.",
    )
    parser.add_argument("--version", action="version", version=f"commchar {__version__}")
    sub = parser.add_subparsers(dest="verb", metavar="VERB", parser_class=OneLineParser)
    verbs = {}
    first = argv[0] if argv else None
    modules = _verb_modules(first) if first and not first.startswith("-") else []
    if not any(module.NAME == first for module in modules):
        modules = _verb_modules()
    for module in modules:
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
        arguments = sys.argv[1:] if argv is None else argv
        parser, verbs = build_parser(arguments)
        args = parser.parse_args(arguments)
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
