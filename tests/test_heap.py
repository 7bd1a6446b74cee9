"""The kernel's `--heap steady` (kernels/core/cc_heap.c): glibc's thresholds fixed so that
a temporary the library allocates and frees inside a call comes from the heap and keeps
its pages, where glibc's defaults map a large one of its own and give a freed top back."""
from __future__ import annotations

import subprocess
from pathlib import Path

import pytest
from _c_drivers import compiler

ROOT = Path(__file__).resolve().parents[1]


@pytest.fixture(scope="module")
def heap_steady(tmp_path_factory) -> Path:
    cc = compiler("cc", "gcc")
    binary = tmp_path_factory.mktemp("heap") / "heap_steady"
    subprocess.run([cc, "-std=c11", "-O1", "-I", str(ROOT / "kernels" / "core"), "-o", str(binary),
                    str(ROOT / "tests" / "programs" / "heap_steady.c"),
                    str(ROOT / "kernels" / "core" / "cc_heap.c")],
                   check=True, capture_output=True, timeout=120)
    return binary


def _heap(binary: Path, mode: str) -> str:
    done = subprocess.run([str(binary), mode], capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stdout + done.stderr
    return done.stdout.strip()


def test_a_steady_heap_serves_and_keeps_a_librarys_temporaries(heap_steady):
    assert _heap(heap_steady, "steady") == "heap_steady: from_heap=1 kept=1"


def test_glibcs_defaults_map_a_large_block_and_give_a_freed_top_back(heap_steady):
    # what the kernel's default guards against; the same program without the thresholds
    assert _heap(heap_steady, "as-is") == "heap_steady: from_heap=0 kept=0"
