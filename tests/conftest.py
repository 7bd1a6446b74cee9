"""Shared fixtures: MPI libraries present on this machine and a built kernel per library."""

from __future__ import annotations

import os

import pytest

os.environ.setdefault("OMPI_ALLOW_RUN_AS_ROOT", "1")
os.environ.setdefault("OMPI_ALLOW_RUN_AS_ROOT_CONFIRM", "1")


@pytest.fixture(scope="session")
def simulator():
    """The simulator binary; `make setup` builds it, so a missing one is a failure, not a skip."""
    from commchar.simulate.binary import SimulationError, find_binary

    try:
        return find_binary()
    except SimulationError as exc:
        pytest.fail(str(exc))


@pytest.fixture(scope="session")
def mpi_libraries():
    from commchar.measure.libraries import discover

    found = discover()
    if not found:
        pytest.fail("no MPI library found: `make setup` installs Open MPI and MPICH")
    return found


@pytest.fixture(scope="session")
def built_apps(mpi_libraries):
    """The applications and validation programs built for every library: (library, folder)."""
    from commchar.measure.build import APPS, ensure_built

    return [(lib, ensure_built(APPS, lib)) for lib in mpi_libraries]


@pytest.fixture(scope="session")
def one_built_library(built_apps):
    """One library and its built programs, for tests of the programs' own checks: MPICH's where
    present (Hydra starts and ends a failing job in 0.1 s, Open MPI's mpirun in 1 to 2 s)."""
    return next(((lib, folder) for lib, folder in built_apps if lib.family == "mpich"), built_apps[0])


# Fixtures that launch MPI jobs: a test using one is an `mpi` test wherever it is marked.
_MPI_FIXTURES = {"mpi_libraries", "built_apps"}


def pytest_collection_modifyitems(config, items):  # type: ignore[no-untyped-def]
    """Marks every test that launches MPI jobs `mpi`: `make test` runs those one at a time
    (their timings need the machine's cores) and the rest side by side."""
    for item in items:
        if _MPI_FIXTURES & set(getattr(item, "fixturenames", ())):
            item.add_marker(pytest.mark.mpi)
