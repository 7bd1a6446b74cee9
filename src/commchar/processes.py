"""The one policy for processes commchar starts (MPI launchers and their ranks, the simulator).

Each is started in its own session, so it and everything it forks form one
process group that is stopped as a whole (`stop`): a launcher's ranks never
outlive it. So that this holds however commchar ends, including SIGKILL,
which no handler sees, a watchdog process outlives commchar: commchar tells it
through a pipe which groups are running, and when the pipe closes without a
goodbye (commchar is gone) it kills those groups. PR_SET_PDEATHSIG is not
used: it reaches only the direct child (the launcher, not the ranks), and
setting it needs a preexec_fn, which is unsafe in a process with threads.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import threading
from typing import IO, Any

# Seconds a group has to end after SIGTERM before it gets SIGKILL.
TERM_GRACE_S = 3.0

_WATCHDOG = r"""
import os, signal, sys, time
signal.signal(signal.SIGINT, signal.SIG_IGN)
signal.signal(signal.SIGTERM, signal.SIG_IGN)
groups = set()
for line in sys.stdin:
    line = line.strip()
    if line == "bye":
        sys.exit(0)
    if line[:1] in "+-" and line[1:].isdigit():
        (groups.add if line[0] == "+" else groups.discard)(int(line[1:]))
def signal_all(sig):
    for pgid in list(groups):
        try:
            os.killpg(pgid, sig)
        except OSError:
            groups.discard(pgid)
signal_all(signal.SIGTERM)
deadline = time.monotonic() + %(grace)r
while groups and time.monotonic() < deadline:
    time.sleep(0.1)
    signal_all(0)
signal_all(signal.SIGKILL)
"""

_lock = threading.Lock()
_watchdog: subprocess.Popen[str] | None = None


def _tell_watchdog(message: str) -> None:
    global _watchdog
    with _lock:
        if _watchdog is None or _watchdog.poll() is not None:
            _watchdog = subprocess.Popen(
                [sys.executable, "-c", _WATCHDOG % {"grace": TERM_GRACE_S}], stdin=subprocess.PIPE,
                stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, text=True, start_new_session=True)
        stdin: IO[str] = _watchdog.stdin  # type: ignore[assignment]
        try:
            stdin.write(message + "\n")
            stdin.flush()
        except (BrokenPipeError, OSError):
            pass


def start(argv: list[str], **popen_kwargs: Any) -> subprocess.Popen:
    """Start `argv` as the leader of a new process group that outlives commchar by no more
    than the watchdog's grace. OSError if it cannot be started."""
    process = subprocess.Popen(argv, start_new_session=True, **popen_kwargs)
    _tell_watchdog(f"+{process.pid}")
    return process


def stop(process: subprocess.Popen) -> int | None:
    """End the process's whole group (SIGTERM, then SIGKILL after the grace) and reap the
    leader. Returns the signal that ended it (None if it had already exited)."""
    used = None
    for sig, wait in ((signal.SIGTERM, TERM_GRACE_S), (signal.SIGKILL, 5.0)):
        try:
            os.killpg(process.pid, sig)
        except (ProcessLookupError, PermissionError):
            break
        used = sig
        try:
            process.wait(timeout=wait)
            # The leader is gone; ranks it left behind in the group are not.
            os.killpg(process.pid, signal.SIGKILL)
        except subprocess.TimeoutExpired:
            continue
        except (ProcessLookupError, PermissionError):
            pass
        break
    finished(process)
    return used


def finished(process: subprocess.Popen) -> None:
    """The process has ended (waited for): the watchdog forgets its group."""
    if process.poll() is None:
        return
    _tell_watchdog(f"-{process.pid}")


def close() -> None:
    """commchar is ending normally: the watchdog leaves without killing anything."""
    global _watchdog
    with _lock:
        if _watchdog is None:
            return
        try:
            _watchdog.stdin.write("bye\n")  # type: ignore[union-attr]
            _watchdog.stdin.close()  # type: ignore[union-attr]
            _watchdog.wait(timeout=5)
        except (OSError, subprocess.TimeoutExpired):
            pass
        _watchdog = None
