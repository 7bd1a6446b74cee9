"""Build the compiled components once per MPI library, again only when their sources change.

A component is a directory of the source tree whose Makefile takes MPICC and
BUILD and leaves its products in BUILD; it is built into
build/<component>/<library>/.  Adding one is one line in COMPONENTS.
"""

from __future__ import annotations

import hashlib
import os
import subprocess
from dataclasses import dataclass
from pathlib import Path

from commchar.errors import MeasurementError
from commchar.measure.libraries import Library


@dataclass(frozen=True)
class Component:
    name: str  # its directory in the source tree, and under build/
    products: tuple[str, ...]  # what its Makefile leaves in BUILD
    uses: tuple[str, ...] = ()  # other source directories it compiles against
    make_args: tuple[str, ...] = ()  # what its Makefile is told besides MPICC and BUILD


KERNEL = Component("kernels", ("commchar-kernel",), uses=("am",))  # links the active-message layer
# the same kernel with PVM's operations (kernels/pvm/), for the pvm library (its own build directory)
PVM_KERNEL = Component("kernels", ("commchar-kernel",), uses=("am",), make_args=("WITH_PVM=1",))
TRACER = Component("tracer", ("libcommchar-trace.so",), uses=("kernels/common",))
# the validation programs (apps/loop_common.h), one communication pattern each in a timed loop
LOOPS = ("pingpong_loop", "ring_sendrecv", "ring_replace", "allreduce_loop", "halo2d", "alltoall_loop",
         "master_worker")
APPS = Component("apps", ("jacobi", "gauss", *LOOPS), uses=("kernels/common",))
COMPONENTS = (KERNEL, TRACER, APPS)


def components_for(library: Library) -> tuple[Component, ...]:
    """What a library needs built: PVM and the active-message layer run the kernel only."""
    if library.transport == "pvm":
        return (PVM_KERNEL,)
    if library.transport != "mpi":
        return (KERNEL,)
    return COMPONENTS


def source_root() -> Path:
    """The tree holding the components: $COMMCHAR_SOURCE_DIR, else this checkout."""
    configured = os.environ.get("COMMCHAR_SOURCE_DIR")
    return Path(configured) if configured else Path(__file__).resolve().parents[3]


def build_root() -> Path:
    configured = os.environ.get("COMMCHAR_BUILD_DIR")
    return Path(configured) if configured else source_root() / "build"


def _sources(component: Component) -> Path:
    path = source_root() / component.name
    if not (path / "Makefile").is_file():
        raise MeasurementError(f"{component.name} sources not found at {path} "
                               "(set COMMCHAR_SOURCE_DIR)")
    return path


def _fingerprint(component: Component, library: Library) -> str:
    digest = hashlib.sha256(library.mpicc.encode())
    digest.update(" ".join(component.make_args).encode())
    for directory in (component.name, *component.uses):
        root = source_root() / directory
        for path in sorted(root.rglob("*")):
            if path.is_file():
                digest.update(path.relative_to(source_root()).as_posix().encode())
                digest.update(path.read_bytes())
    return digest.hexdigest()


def build_dir(component: Component, library: Library) -> Path:
    return build_root() / component.name / library.name


def ensure_built(component: Component, library: Library) -> Path:
    """Return the component's build directory for this library, building it if missing or stale."""
    sources = _sources(component)
    target = build_dir(component, library)
    stamp = target / "fingerprint"
    fingerprint = _fingerprint(component, library)
    products = [target / name for name in component.products]
    if all(p.is_file() for p in products) and stamp.is_file() and stamp.read_text() == fingerprint:
        return target
    target.mkdir(parents=True, exist_ok=True)
    # `make -B` rebuilds every object, so the dependency files of the last build only
    # mislead it, naming sources that may have moved since
    for stale in target.rglob("*.d"):
        stale.unlink(missing_ok=True)
    argv = ["make", "-s", "-B", "-C", str(sources), f"MPICC={library.mpicc}", f"BUILD={target}",
            *component.make_args]
    what = f"building {component.name} for {library.name} failed"
    try:
        result = subprocess.run(argv, capture_output=True, text=True, timeout=600)
    except (OSError, subprocess.TimeoutExpired) as exc:
        raise MeasurementError(f"{what}: {exc}") from None
    if result.returncode != 0 or not all(p.is_file() for p in products):
        last = (result.stderr.strip() or result.stdout.strip() or "no output").splitlines()[-1]
        raise MeasurementError(f"{what}: {last}")
    stamp.write_text(fingerprint)
    return target


def ensure_kernel(library: Library) -> Path:
    component = PVM_KERNEL if library.transport == "pvm" else KERNEL
    return ensure_built(component, library) / component.products[0]


def ensure_tracer(library: Library) -> Path:
    return ensure_built(TRACER, library) / TRACER.products[0]
