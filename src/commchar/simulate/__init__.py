"""Drive the Rust simulator `commchar-sim` (sim/) and read its JSON results.

The simulator is its own binary; this package builds its argument list, runs
it without a shell, and turns its one-line errors into CommcharError.
"""

from commchar.simulate.binary import find_binary, list_collectives, run_simulator

__all__ = ["find_binary", "list_collectives", "run_simulator"]
