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
