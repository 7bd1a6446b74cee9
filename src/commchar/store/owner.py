"""Which process owns a run or a trace folder, and whether it is still alive.

A run records its owner when it starts (and again when it is resumed): the
host name, the kernel's boot id, the process id and the process's start time
(in clock ticks since boot, from /proc). The owner is dead when, on the same
host, the boot id differs (the machine restarted) or no process with that id
and start time exists (it was killed, SIGKILL included, or it ended without
recording an outcome). On another host nothing can be told: `alive` is None.
"""

from __future__ import annotations

import os
import socket
from pathlib import Path
from typing import Any


def _boot_id() -> str:
    try:
        return Path("/proc/sys/kernel/random/boot_id").read_text().strip()
    except OSError:
        return ""


def _start_ticks(pid: int) -> int | None:
    """The process's start time in clock ticks since boot, None when there is no such process
    (or /proc cannot say)."""
    try:
        text = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return None
    try:
        return int(text[text.rindex(")") + 2:].split()[19])  # field 22, counted after the name
    except (ValueError, IndexError):
        return None


def current() -> dict[str, Any]:
    """The owner record of this process."""
    pid = os.getpid()
    return {"hostname": socket.gethostname(), "boot_id": _boot_id(), "pid": pid, "start": _start_ticks(pid)}


def alive(owner: Any) -> bool | None:
    """Whether the process of an owner record still runs: None when it ran on another host
    or the record is not one."""
    if not isinstance(owner, dict) or not isinstance(owner.get("pid"), int) or owner["pid"] <= 0:
        return None
    if owner.get("hostname") != socket.gethostname():
        return None
    boot = _boot_id()
    if boot and owner.get("boot_id") and owner["boot_id"] != boot:
        return False
    start = _start_ticks(owner["pid"])
    if start is None:  # no /proc entry: ask the kernel whether the id is in use
        try:
            os.kill(owner["pid"], 0)
        except ProcessLookupError:
            return False
        except OSError:
            return True  # in use, by another user's process
        return True
    return owner.get("start") in (None, start)  # another start time: the id was reused


def describe(owner: Any) -> str:
    """'pid P on HOST' for messages."""
    if not isinstance(owner, dict):
        return "an unknown process"
    return f"pid {owner.get('pid')} on {owner.get('hostname')}"


def run_status(run: dict) -> str:
    """A stored run's status as it stands: 'running' whose owner is dead reads 'died'
    (killed, SIGKILL included, before it could record an outcome; `run --resume` continues it)."""
    if run.get("status") == "running" and alive((run.get("host") or {}).get("owner")) is False:
        return "died"
    return str(run.get("status"))
