"""The C sources' layout (scripts/check-c-layout.py): no include cycle between
files or between modules (x.c with x.h), and tracer/, apps/ and am/ take shared
code only from kernels/common/.  The checker is run on this tree and on small
trees that break each rule, so it is known to catch what it looks for."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
SCRIPT = ROOT / "scripts" / "check-c-layout.py"


def _check(root: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, str(SCRIPT), str(root)], capture_output=True, text=True,
                          timeout=60)


def _tree(tmp_path: Path, files: dict[str, str]) -> Path:
    for top in ("kernels/common", "kernels/core", "kernels/mpi", "kernels/am", "kernels/pvm", "tracer", "apps",
                "am"):
        (tmp_path / top).mkdir(parents=True, exist_ok=True)
    for name, text in files.items():
        (tmp_path / name).write_text(text)
    return tmp_path


def test_this_tree_has_no_cycle_and_shares_only_common():
    result = _check(ROOT)
    assert result.returncode == 0, result.stderr
    assert result.stderr == ""


def test_the_kernel_is_grouped_by_transport():
    kernels = ROOT / "kernels"
    assert (kernels / "core" / "cc_measure.c").is_file() and (kernels / "core" / "cc_op.h").is_file()
    assert (kernels / "mpi" / "cc_ops_p2p.c").is_file() and (kernels / "am" / "cc_ops_am.c").is_file()
    assert (kernels / "pvm" / "cc_ops_pvm_p2p.c").is_file()
    loose = sorted(p.name for p in kernels.glob("*.[ch]"))
    assert loose == ["cc_ops.c"], loose  # only the table where the transports meet


def test_shared_code_lives_in_kernels_common():
    common = {p.name for p in (ROOT / "kernels" / "common").iterdir()}
    assert {"cc_timer.h", "cc_json.h", "cc_errors.h", "cc_parse.h", "cc_verify.h"} <= common
    for old in ("cc_timer.h", "cc_json.h", "cc_common.h", "cc_util.c", "cc_verify.h"):
        assert not (ROOT / "kernels" / old).exists(), old


@pytest.mark.parametrize("files, expected", [
    ({"kernels/a.h": '#include "b.h"\n', "kernels/b.h": '#include "a.h"\n'},
     "include cycle among kernels/a.h, kernels/b.h"),
    ({"kernels/a.h": "", "kernels/a.c": '#include "a.h"\n#include "b.h"\n',
      "kernels/b.h": "", "kernels/b.c": '#include "b.h"\n#include "a.h"\n'},
     "module cycle (x.c with x.h) among kernels/a, kernels/b"),
    ({"kernels/cc_op.h": "", "tracer/t.c": '#include "cc_op.h"\n'},
     "tracer/t.c includes kernels/cc_op.h: outside kernels/ only kernels/common/ may be included"),
    ({"apps/x.c": '#include "nowhere.h"\n'}, 'apps/x.c: #include "nowhere.h" names no file'),
    ({"kernels/mpi/m.h": "", "kernels/am/a.c": '#include "m.h"\n'},
     "kernels/am/a.c includes kernels/mpi/m.h: a transport's files include only kernels/common/ and "
     "kernels/core/ and their own"),
    ({"kernels/pvm/p.h": "", "kernels/core/loop.c": '#include "p.h"\n'},
     "kernels/core/loop.c includes kernels/pvm/p.h: kernels/core/ includes only kernels/common/ and "
     "kernels/core/"),
    ({"kernels/common/s.h": "", "am/s.h": "", "apps/y.c": '#include "s.h"\n'},
     'apps/y.c: #include "s.h" names several files (am/s.h, kernels/common/s.h)'),
])
def test_checker_finds_each_breach(tmp_path, files, expected):
    result = _check(_tree(tmp_path, files))
    assert result.returncode == 1
    assert f"check-c-layout: {expected}\n" in result.stderr


def test_checker_accepts_a_layered_tree(tmp_path):
    result = _check(_tree(tmp_path, {
        "kernels/common/cc_timer.h": "", "kernels/common/cc_json.h": '#include "cc_timer.h"\n',
        "tracer/t.c": '#include "cc_json.h"\n', "am/a.c": '#include "cc_timer.h"\n',
        "kernels/core/cc_op.h": '#include "cc_json.h"\n', "kernels/mpi/m.h": '#include "cc_op.h"\n',
        "kernels/mpi/m.c": '#include "m.h"\n#include "cc_timer.h"\n', "kernels/am/o.c": '#include "a.c"\n',
        "kernels/cc_ops.c": '#include "m.h"\n'}))
    assert (result.returncode, result.stderr) == (0, "")


def test_checker_refuses_a_tree_without_the_sources(tmp_path):
    result = _check(tmp_path)
    assert result.returncode == 2
    assert result.stderr.count("\n") == 1 and "does not hold kernels, tracer, apps, am" in result.stderr


LAYOUT = ROOT / "scripts" / "layout.py"


def _layout(root: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, str(LAYOUT), str(root)], capture_output=True, text=True, timeout=120)


def test_the_drawing_of_this_tree_has_no_cycle_in_any_language():
    result = _layout(ROOT)
    assert result.returncode == 0, result.stdout
    assert "CYCLE" not in result.stdout
    # the bottom of the Python drawing holds the shared code, the top the command line
    lines = result.stdout.splitlines()
    assert lines[0].startswith("Python packages") and "no cycle" in lines[0]
    assert any(line.split()[1:2] == ["errors"] and line.split()[0] == "0" for line in lines)


def _mini(tmp_path: Path, pkg_files: dict[str, str], rust: dict[str, str] | None = None) -> Path:
    for name, text in {"__init__.py": "", **pkg_files}.items():
        path = tmp_path / "src" / "commchar" / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
    for name, text in (rust or {}).items():
        path = tmp_path / "sim" / "src" / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
    return tmp_path


def test_the_drawing_finds_a_cycle_between_packages_and_between_rust_modules(tmp_path):
    tree = _mini(tmp_path, {"a/__init__.py": "", "a/x.py": "from commchar.b.y import f\n",
                            "b/__init__.py": "", "b/y.py": "def f():\n    from commchar.a import x\n"})
    result = _layout(tree)
    assert result.returncode == 1 and "CYCLE" in result.stdout.splitlines()[0]
    # an import only for type checking is not an arrow
    tree2 = _mini(tmp_path / "t2", {"a/__init__.py": "", "a/x.py": "from commchar.b.y import f\n",
                                    "b/__init__.py": "", "b/y.py": "from typing import TYPE_CHECKING\n"
                                    "if TYPE_CHECKING:\n    from commchar.a import x\n"})
    assert "no cycle" in _layout(tree2).stdout.splitlines()[0]
    tree3 = _mini(tmp_path / "t3", {}, {"lib.rs": "", "engine.rs": "use crate::workload::W;\n",
                                        "workload/mod.rs": "use crate::engine::E;\n"})
    out = _layout(tree3).stdout
    assert "Rust modules (sim/src): 2 rooms, 2 arrows, CYCLE" in out
