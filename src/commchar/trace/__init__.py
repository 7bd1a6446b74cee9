"""Traces of real MPI programs: the tracer's binary files, read with numpy, and
what they say (calls, bytes, phases, wall time per rank)."""

from commchar.trace.format import (
    CALL_IDS,
    CALL_NAMES,
    OTHER_NAMES,
    RECORD_DTYPE,
    RankTrace,
    Trace,
    TraceSummary,
    read_rank,
    read_trace,
)

__all__ = ["CALL_IDS", "CALL_NAMES", "OTHER_NAMES", "RECORD_DTYPE", "RankTrace", "Trace",
           "TraceSummary", "read_rank", "read_trace"]
