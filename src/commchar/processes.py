"""The one policy for processes commchar starts (MPI launchers and their ranks, the simulator).

Each is started as the leader of a session of its own and ended with
`stop`: SIGTERM to its process group (a launcher then stops its ranks), and
after a grace SIGKILL to the group and to every process descended from it,
since launchers put their ranks in groups and sessions of their own. So that
this holds however commchar ends, including SIGKILL, which no handler sees,
a watchdog process outlives commchar: commchar tells it through a pipe which
groups are running, and when the pipe closes without a goodbye (commchar is
gone) it ends them the same way. PR_SET_PDEATHSIG is not used: it reaches only
the direct child (the launcher, not the ranks), and setting it needs a
preexec_fn, which is unsafe in a process with threads."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import threading
import time
from collections import defaultdict
from typing import IO, Any, Iterable

# Seconds a group has to end after SIGTERM before what is left of it gets SIGKILL.
TERM_GRACE_S = 3.0


def _tree(root: int) -> list[int]:
    """The processes descended from `root` now (from /proc). Launchers put ranks in
    process groups and sessions of their own (Open MPI, MPICH's proxies), so a group
    signal alone can miss them once their launcher is gone."""
    children: dict[int, list[int]] = defaultdict(list)
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/stat") as fh:
                ppid = int(fh.read().rsplit(")", 1)[1].split()[1])
        except (OSError, ValueError, IndexError):
            continue
        children[ppid].append(int(entry))
    found, stack = [], [root]
    while stack:
        for child in children.get(stack.pop(), ()):
            found.append(child)
            stack.append(child)
    return found


def alive(pid: int) -> bool:
    """Whether the process exists and is not a zombie."""
    try:
        with open(f"/proc/{pid}/stat") as fh:
            return fh.read().rsplit(")", 1)[1].split()[0] != "Z"
    except (OSError, IndexError):
        return False


def _signal(pids: Iterable[int], sig: int, group: bool = False) -> None:
    for pid in pids:
        try:
            (os.killpg if group else os.kill)(pid, sig)
        except (ProcessLookupError, PermissionError):
            pass


def end_groups(leaders: list[int], grace: float = TERM_GRACE_S) -> None:
    """SIGTERM each leader's group (a launcher then stops its ranks itself); after the grace,
    SIGKILL the groups and every process that descended from a leader when this began."""
    trees = {pid: _tree(pid) for pid in leaders}
    _signal(leaders, signal.SIGTERM, group=True)
    everyone = [*leaders, *(pid for tree in trees.values() for pid in tree)]
    deadline = time.monotonic() + grace
    while any(alive(pid) for pid in everyone) and time.monotonic() < deadline:
        time.sleep(0.05)
    _signal(leaders, signal.SIGKILL, group=True)
    _signal((pid for pid in everyone if alive(pid)), signal.SIGKILL)


def _watch() -> None:
    """The watchdog's loop: follow commchar's `+pid`/`-pid` lines; on end of input without
    `bye` (commchar is gone, however it ended), end every group still running."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    signal.signal(signal.SIGTERM, signal.SIG_IGN)
    groups: set[int] = set()
    for line in sys.stdin:
        line = line.strip()
        if line == "bye":
            return
        if line[:1] in ("+", "-") and line[1:].isdigit():
            (groups.add if line[0] == "+" else groups.discard)(int(line[1:]))
    end_groups(sorted(groups))


_lock = threading.Lock()
_watchdog: subprocess.Popen[str] | None = None


def _tell_watchdog(message: str) -> None:
    global _watchdog
    with _lock:
        if _watchdog is None or _watchdog.poll() is not None:
            _watchdog = subprocess.Popen(
                [sys.executable, "-m", "commchar.processes"], stdin=subprocess.PIPE,
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
    try:
        _tell_watchdog(f"+{process.pid}")  # the first call starts the watchdog: milliseconds
    except BaseException:  # Ctrl-C or SIGTERM before the caller holds the process: end it here
        stop(process)
        raise
    return process


def stop(process: subprocess.Popen) -> int | None:
    """End the process, its group and its descendants (see `end_groups`) and reap it.
    Returns the first signal sent, SIGTERM, or None when it had already exited."""
    if process.poll() is not None:
        finished(process)
        return None
    end_groups([process.pid])
    process.wait()
    finished(process)
    return signal.SIGTERM


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


if __name__ == "__main__":
    _watch()
