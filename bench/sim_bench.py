#!/usr/bin/env python3
"""Speed and memory of the simulator against its targets.

Runs the release binary on fixed cases and prints, per case, the events
simulated, wall time, CPU time, events per second (per wall second and per
CPU second, i.e. on one core) and peak resident memory, measured by the
kernel for the child process (os.wait4), and the makespan (to compare two
builds: a change of speed must not change it), beside each case's targets.
Wall time includes reading the workload (parsing, for the GOAL case). Time
targets are judged on CPU seconds (user + system), the one-core figure: the
machine is shared, and its load stretches wall time, not CPU time. Each
target is printed as met or MISSED beside the case.

Targets: >= 5 M events per CPU second without congestion (30 M is the
aim, reported met or missed beside it); Rabenseifner allreduce of 1 MiB on 2^20
ranks in < 30 s and < 2 GB; with --big: the same on 2^24 ranks in < 60 s and
< 4 GB, on a 512x512 torus with congestion (no target: the step between the
256x256 and 1024x1024 cases, to see how the cost grows), on a 1024x1024 torus
with congestion in < 300 s (one message per link, and the flow-level
network), and its GOAL text
(generated with --emit-goal, deleted afterwards) in less memory than
LogGOPSim's 4.58 GB.

    python3 bench/sim_bench.py            # the standard cases
    python3 bench/sim_bench.py --quick    # without the 2^20-rank case
    python3 bench/sim_bench.py --big      # also the 2^24, 2^18 and 2^20 torus (both networks) and GOAL cases (long; run with nice)
    COMMCHAR_SIM=path/to/commchar-sim python3 bench/sim_bench.py --only torus   # another binary, some cases
    python3 bench/sim_bench.py --baseline path/to/old/commchar-sim [--rounds 3]

With --baseline, each case runs the baseline binary and this one in turn,
--rounds times, and prints the median of the baseline/this CPU-time ratios
beside this binary's median round (a shared machine moves one run by tens of
percent; alternating within one sitting and taking the median of the ratios
is what holds). A makespan that differs between the two is a failure.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "src"))
from build_compare import alternate  # noqa: E402  (bench/, the script's own directory)
from commchar.simulate.binary import default_binary  # noqa: E402  (the path above first)

BINARY = Path(os.environ.get("COMMCHAR_SIM") or default_binary())
MIB = str(2**20)


def rabenseifner(p: int) -> list[str]:
    return ["--collective", "allreduce:rabenseifner", "--p", str(p), "--n", MIB]


def congested_torus(side: int, model: str = "on") -> list[str]:
    """`model`: "on" (one message per link at a time) or "flow" (messages on a link share its bandwidth)."""
    return [*rabenseifner(side * side), "--topology", f"torus:{side}x{side}", "--congestion", model, "--hop", "50"]


@dataclass
class Case:
    name: str
    args: list[str]
    time_max_s: float | None = None
    peak_max_mb: float | None = None
    # the events-per-second floor applies to the contention-free engine only
    rate_target: bool = True
    quick: bool = True
    big: bool = False
    goal: list[str] = field(default_factory=list)  # --emit-goal this collective, then replay the file


CASES = [
    Case("bcast:binomial p=2^20 1KiB", ["--collective", "bcast:binomial", "--p", str(2**20), "--n", "1024"]),
    Case("allreduce:rabenseifner p=2^16 1MiB", rabenseifner(2**16)),
    Case("allreduce:ring p=4096 1MiB", ["--collective", "allreduce:ring", "--p", "4096", "--n", MIB]),
    Case("alltoall:pairwise p=2048 torus:32x64 congestion",
         ["--collective", "alltoall:pairwise", "--p", "2048", "--n", "4096", "--topology", "torus:32x64",
          "--congestion", "on", "--hop", "50"], rate_target=False),
    Case("allreduce:rabenseifner p=2^18 1MiB", rabenseifner(2**18)),
    Case("allreduce:rabenseifner p=2^20 1MiB", rabenseifner(2**20), time_max_s=30, peak_max_mb=2000, quick=False),
    Case("rabenseifner p=4096 torus:64x64 congestion", congested_torus(64), rate_target=False),
    Case("rabenseifner p=16384 torus:128x128 congestion", congested_torus(128), rate_target=False),
    Case("rabenseifner p=65536 torus:256x256 congestion", congested_torus(256), rate_target=False, quick=False),
    Case("rabenseifner p=65536 torus:256x256 flow-level", congested_torus(256, "flow"), rate_target=False,
         quick=False),
    Case("rabenseifner p=2^18 torus:512x512 congestion", congested_torus(512), rate_target=False, big=True),
    Case("rabenseifner p=2^24 1MiB", rabenseifner(2**24), time_max_s=60, peak_max_mb=4000, big=True),
    Case("rabenseifner p=2^20 torus:1024x1024 congestion", congested_torus(1024), time_max_s=300,
         rate_target=False, big=True),
    Case("rabenseifner p=2^20 torus:1024x1024 flow-level", congested_torus(1024, "flow"), time_max_s=300,
         rate_target=False, big=True),
    Case("GOAL rabenseifner p=2^20 (parse + simulate)", [], peak_max_mb=4580, rate_target=False, big=True,
         goal=rabenseifner(2**20)),
]


def measure(args: list[str], binary: Path) -> dict:
    import resource

    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    child = subprocess.Popen([str(binary), *args, "--json", "--rendezvous", "match"],
                             stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    out, err = child.communicate()
    wall = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if child.returncode != 0:
        raise SystemExit(f"sim_bench: {' '.join(args)} failed: {err.strip()}")
    result = json.loads(out)
    return {
        "events": result["events"],
        "makespan": result["makespan_ps"],
        "wall_s": wall,
        "cpu_s": (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime),
        # the simulator's own VmHWM (RUSAGE_CHILDREN's maxrss is the largest child so far)
        "peak_mb": (result["performance"]["peak_rss_bytes"] or 0) / 1e6,
    }


@contextlib.contextmanager
def goal_args(case: Case):
    """Writes the case's GOAL text to a scratch directory and yields the arguments that replay
    it, with a note of its size; deletes it afterwards."""
    scratch = Path(tempfile.mkdtemp(prefix="sim_bench_", dir=os.environ.get("TMPDIR", "/tmp")))
    try:
        free_gb = shutil.disk_usage(scratch).free / 1e9
        if free_gb < 12:
            raise SystemExit(f"sim_bench: {scratch} has {free_gb:.1f} GB free; the GOAL case needs 12")
        path = scratch / "schedule.goal"
        start = time.perf_counter()
        done = subprocess.run([str(BINARY), *case.goal, "--emit-goal", str(path)], capture_output=True, text=True,
                              check=False)
        if done.returncode != 0:
            raise SystemExit(f"sim_bench: --emit-goal failed: {done.stderr.strip()}")
        generate = time.perf_counter() - start
        yield ["--goal", str(path)], f"{path.stat().st_size / 1e9:.1f} GB of text, written in {generate:.0f} s"
    finally:
        shutil.rmtree(scratch, ignore_errors=True)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="skip the 2^20-rank and 2^16-torus cases")
    parser.add_argument("--big", action="store_true",
                        help="also the 2^24-rank, 2^18- and 2^20-rank torus and 2^20-rank GOAL cases (minutes each)")
    parser.add_argument("--only", help="run only the cases whose name contains this text")
    parser.add_argument("--baseline", type=Path, help="another build to run in turn with this one")
    parser.add_argument("--rounds", type=int, default=3, help="with --baseline: runs of each (default 3)")
    opts = parser.parse_args()
    for binary in (BINARY, opts.baseline):
        if binary is not None and not binary.exists():
            print(f"sim_bench: {binary} is missing{': run `make sim`' if binary == BINARY else ''}",
                  file=sys.stderr)
            return 2
    if opts.rounds < 1:
        print("sim_bench: --rounds must be at least 1", file=sys.stderr)
        return 2
    print(f"load average before: {os.getloadavg()[0]:.2f} (cores are shared; CPU time is the one-core figure)")
    header = (f"{'case':50} {'events':>12} {'wall s':>8} {'cpu s':>8} {'Mev/s wall':>10} {'Mev/s cpu':>10} "
              f"{'peak MB':>8} {'makespan ps':>14}  targets")
    print(header)
    failures: list[str] = []
    for case in CASES:
        if (opts.quick and not case.quick) or (case.big and not opts.big):
            continue
        if opts.only and opts.only not in case.name:
            continue
        with goal_args(case) if case.goal else contextlib.nullcontext((case.args, "")) as (args, note):
            if opts.baseline is None:
                m, versus = measure(args, BINARY), ""
            else:
                compared = alternate(lambda binary: measure(args, binary), BINARY, opts.baseline, opts.rounds)
                m, versus = compared.ours, compared.describe("peak_mb", "MB")
                if not compared.same_makespan:
                    failures.append(f"{case.name}: the makespan differs from the baseline's")
        per_wall = m["events"] / m["wall_s"] / 1e6
        per_cpu = m["events"] / max(m["cpu_s"], 1e-9) / 1e6
        targets = []

        def judge(what: str, met: bool, failure: str) -> None:
            targets.append(f"{what}: {'met' if met else 'MISSED'}")
            if not met:
                failures.append(f"{case.name}: {failure}")

        if case.rate_target:
            judge(">= 5 Mev/s cpu", per_cpu >= 5.0, f"{per_cpu:.2f} M events per CPU second < 5")
            # the aim, reported beside the floor but not a failure
            targets.append(f"aim 30 Mev/s cpu: {'met' if per_cpu >= 30.0 else 'missed'}")
        if case.time_max_s is not None:
            # CPU time: the one-core figure, which a shared machine's load does not inflate
            judge(f"< {case.time_max_s:.0f} s cpu", m["cpu_s"] < case.time_max_s,
                  f"{m['cpu_s']:.1f} s CPU >= {case.time_max_s:.0f} s")
        if case.peak_max_mb is not None:
            judge(f"< {case.peak_max_mb:.0f} MB", m["peak_mb"] < case.peak_max_mb,
                  f"{m['peak_mb']:.0f} MB peak >= {case.peak_max_mb:.0f} MB")
        print(f"{case.name:50} {m['events']:>12} {m['wall_s']:>8.2f} {m['cpu_s']:>8.2f} {per_wall:>10.2f} "
              f"{per_cpu:>10.2f} {m['peak_mb']:>8.0f} {m['makespan']:>14}  {', '.join(targets) or '-'}"
              f"{f'  ({note})' if note else ''}{versus}", flush=True)
    for f in failures:
        print(f"MISSED {f}")
    print("all targets met" if not failures else f"{len(failures)} target(s) missed")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
