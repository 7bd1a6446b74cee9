"""What an application sweep runs: one case per (library, configuration, N, p).

Jacobi's configurations are its exchanges. Gaussian elimination's are the
study's three: the original code with the library's default rendezvous
threshold, the original code with a raised threshold, and the fragmented code
(every pivot row in messages below the threshold) with the default threshold.
How to raise the threshold is a vendor quirk and lives here alone.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field

from commchar.errors import UsageError
from commchar.measure.libraries import Library

JACOBI_EXCHANGES = ("allgather", "direct", "butterfly")
GAUSS_CONFIGS = ("original", "raised", "fragmented")

DEFAULT_JACOBI_SIZES = [32, 64, 128, 256, 512, 1024, 2048]
DEFAULT_GAUSS_SIZES = [256, 512, 1024, 2048]
# Jacobi's system contracts by about 0.73 per iteration: 100 iterations reach
# the 1e-6 the check asks for at every N with room to spare.
DEFAULT_JACOBI_ITERATIONS = 100
# 64 KiB, the raised S of the study, is above every pivot row up to N = 4096.
DEFAULT_RAISED_THRESHOLD = 65536
# Below the default threshold of both libraries here: Open MPI's sends wait for
# their receiver from 512 B on, MPICH's from 16 KiB (docs/apps.md, the rndv probe).
DEFAULT_FRAGMENT = 256


def raised_threshold_env(library: Library, threshold: int) -> dict[str, str]:
    """The environment that moves the library's eager/rendezvous threshold to `threshold` bytes.

    Open MPI 4.1 on one node sends through the vader BTL of pml ob1: its eager
    limit is the threshold (the rndv probe moves with it, docs/apps.md). MPICH
    (ch4:ucx) hands every message to UCX, whose rendezvous threshold is
    UCX_RNDV_THRESH.
    """
    if library.family == "openmpi":
        return {"OMPI_MCA_btl_vader_eager_limit": str(threshold)}
    if library.family == "mpich":
        return {"UCX_RNDV_THRESH": str(threshold)}
    raise UsageError(f"raising the rendezvous threshold of {library.name} is not known to commchar "
                     "(Open MPI and MPICH are)")


@dataclass(frozen=True)
class Case:
    app: str
    config: str
    n: int
    p: int
    args: tuple[str, ...]
    env: tuple[tuple[str, str], ...] = ()

    def key(self, library: str) -> tuple[str, str, str, int, int]:
        return (library, self.app, self.config, self.n, self.p)


@dataclass
class AppSweepOptions:
    app: str
    libraries: list[str] | None = None
    sizes: list[int] = field(default_factory=list)
    np: list[int] = field(default_factory=lambda: [1, 2])
    configs: list[str] = field(default_factory=list)
    reps: int = 3
    iterations: int = DEFAULT_JACOBI_ITERATIONS
    raised_threshold: int = DEFAULT_RAISED_THRESHOLD
    fragment: int = DEFAULT_FRAGMENT
    timeout: float = 600.0
    launcher: str = "mpirun"
    hostfile: str | None = None
    trace: bool = True

    def to_dict(self) -> dict:
        return asdict(self)

    @classmethod
    def from_dict(cls, data: dict) -> "AppSweepOptions":
        return cls(**{k: v for k, v in data.items() if k in cls.__dataclass_fields__})


def skipped_reason(app: str, config: str, n: int, p: int) -> str | None:
    """Why a case cannot run at all (not a failure: the program would refuse it)."""
    if app == "jacobi" and n % p:
        return f"N = {n} is not a multiple of p = {p}"
    if app == "jacobi" and config == "butterfly" and p & (p - 1):
        return f"the butterfly needs a power-of-two p, not {p}"
    return None


def impossible(options: AppSweepOptions) -> dict[str, int]:
    """Why some requested cases cannot run, with how many each reason rules out."""
    reasons: dict[str, int] = {}
    for p in options.np:
        for n in options.sizes:
            for config in options.configs:
                reason = skipped_reason(options.app, config, n, p)
                if reason:
                    reasons[reason] = reasons.get(reason, 0) + 1
    return reasons


def cases_for(options: AppSweepOptions, library: Library) -> list[Case]:
    """The cases that can run, in the order they run: small and cheap first."""
    out = []
    for p in options.np:
        for n in options.sizes:
            for config in options.configs:
                if skipped_reason(options.app, config, n, p):
                    continue
                out.append(_case(options, library, config, n, p))
    return out


def _case(options: AppSweepOptions, library: Library, config: str, n: int, p: int) -> Case:
    if options.app == "jacobi":
        jacobi_args = ("--n", str(n), "--exchange", config, "--iterations", str(options.iterations))
        return Case("jacobi", config, n, p, jacobi_args)
    args: tuple[str, ...] = ("--n", str(n))
    env: dict[str, str] = {}
    if config == "fragmented":
        args += ("--fragment", str(options.fragment))
    elif config == "raised":
        env = raised_threshold_env(library, options.raised_threshold)
    return Case("gauss", config, n, p, args, tuple(sorted(env.items())))
