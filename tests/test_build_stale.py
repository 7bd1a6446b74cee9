"""`commchar build` after the sources moved: the dependency files of the previous build
name sources that no longer exist, and the rebuild must not follow them."""

from __future__ import annotations

import pytest

from commchar.measure.build import APPS, build_dir, ensure_built

pytestmark = pytest.mark.mpi


def test_a_rebuild_ignores_dependency_files_naming_moved_sources(mpi_libraries, tmp_path, monkeypatch):
    library = mpi_libraries[0]
    monkeypatch.setenv("COMMCHAR_BUILD_DIR", str(tmp_path / "build"))
    target = build_dir(APPS, library)
    target.mkdir(parents=True)
    # what a build from an older layout leaves: an object's sources at paths now gone
    (target / "cc_json.d").write_text(f"{target}/cc_json.o: {tmp_path}/gone/cc_json.c\n")
    (target / "fingerprint").write_text("an older tree")
    built = ensure_built(APPS, library)
    assert all((built / name).is_file() for name in APPS.products)
    assert (built / "fingerprint").read_text() != "an older tree"
