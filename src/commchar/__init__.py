"""commchar: characterize, model, predict and simulate message-passing communication.

Importing the package starts no MPI and runs no measurement; the command line
(`commchar.cli`) is the only place that prints.
"""

__version__ = "0.1.0"
