"""Validation of the model on communication-bound programs (`commchar validate`).

A fresh model is measured and fitted, each validation program (apps/, one
communication pattern in a timed loop, loop_common.h) is traced at each size,
and each trace is replayed under LogGPS and LogGP (commchar.simulate.replay).
A row puts the measured time per iteration of the loop (an untraced run's,
the slowest rank's, over the iterations) beside both predictions of that
phase, replayed from the trace of a second run (whose own loop time, the
tracer's cost included, is kept as `traced_us`).  With repeats, the whole (model and programs) is
done again and the median and spread of each row are kept.
"""

from commchar.validate.core import (PROGRAMS, Program, ValidateOptions, parse_programs, summarize,
                                    validate)

__all__ = ["PROGRAMS", "Program", "ValidateOptions", "parse_programs", "summarize", "validate"]
