"""What a run records about the machine it ran on."""

from __future__ import annotations

import os
import platform
import socket


def cpu_model() -> str:
    try:
        with open("/proc/cpuinfo", encoding="utf-8", errors="replace") as handle:
            for line in handle:
                if line.lower().startswith("model name"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or "unknown"


def host_info() -> dict:
    try:
        usable = len(os.sched_getaffinity(0))
    except AttributeError:
        usable = os.cpu_count() or 1
    return {
        "hostname": socket.gethostname(),
        "cpu_model": cpu_model(),
        "cores": os.cpu_count() or 1,
        "usable_cores": usable,
        "os": platform.platform(),
        "python": platform.python_version(),
    }
