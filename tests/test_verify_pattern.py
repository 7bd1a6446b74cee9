"""The kernel's verification pattern (kernels/common/cc_verify.c), compiled as it is: the
bytes it writes are the documented function of the sending rank, the position and the
point at every offset and length (the block-wise code must not drift from it), their
complement poisons a receive buffer, and a check names the first wrong byte."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest
from _c_drivers import build, compiler

COMMON = Path(__file__).resolve().parents[1] / "kernels" / "common"

DRIVER = r"""
#include <stdio.h>
#include <stdlib.h>
#include "cc_verify.h"
/* fill|poison SRC FIRST SEED LEN: the bytes in hex; check SRC FIRST SEED LEN AT: the
 * filled buffer with byte AT flipped (none when AT >= LEN), checked: 0/1 and the message */
int main(int argc, char **argv) {
    if (argc < 6) return 2;
    int src = atoi(argv[2]), seed = atoi(argv[4]);
    size_t first = strtoul(argv[3], NULL, 10), len = strtoul(argv[5], NULL, 10);
    unsigned char *b = malloc(len ? len : 1);
    char err[200] = "";
    if (argv[1][0] == 'f' || argv[1][0] == 'p') {
        if (argv[1][0] == 'f') cc_fill_bytes(b, len, src, first, seed);
        else cc_poison_bytes(b, len, src, first, seed);
        for (size_t i = 0; i < len; i++) printf("%02x", b[i]);
        printf("\n");
        return 0;
    }
    size_t at = strtoul(argv[6], NULL, 10);
    cc_fill_bytes(b, len, src, first, seed);
    if (at < len) b[at] ^= 0x10;
    printf("%d %s\n", cc_check_bytes(b, len, src, first, seed, 3, 7, err, sizeof err), err);
    return 0;
}
"""


def pattern(src: int, pos: int, seed: int) -> int:
    """The byte pattern as docs/kernel-protocol.md gives it."""
    return (pos * 251 + (pos >> 8) * 13 + src * 97 + seed * 31 + 1) & 0xFF


@pytest.fixture(scope="module")
def driver(tmp_path_factory) -> Path:
    return build(tmp_path_factory.mktemp("verify"), "driver", DRIVER, COMMON, [COMMON / "cc_verify.c"],
                 compiler("cc", "gcc"))


def _run(driver: Path, *args: object) -> str:
    return subprocess.run([str(driver), *map(str, args)], check=True, capture_output=True,
                          text=True).stdout.strip()


# lengths below, at and across a 256-byte block, starting anywhere in one
CASES = [(src, first, seed, length)
         for src in (0, 1, 5)
         for first in (0, 1, 100, 255, 256, 4093, 70000)
         for seed in (0, 9)
         for length in (0, 1, 155, 256, 257, 1000)]


@pytest.mark.parametrize("src,first,seed,length", CASES)
def test_the_bytes_written_are_the_pattern_and_its_complement(driver, src, first, seed, length):
    want = bytes(pattern(src, first + i, seed) for i in range(length))
    assert bytes.fromhex(_run(driver, "fill", src, first, seed, length)) == want
    assert bytes.fromhex(_run(driver, "poison", src, first, seed, length)) == bytes(b ^ 0xFF for b in want)


@pytest.mark.parametrize("length,at", [(1, 0), (300, 0), (300, 255), (300, 256), (300, 299),
                                       (5000, 4095), (5000, 5000)])
def test_a_check_passes_the_pattern_and_names_the_first_wrong_byte(driver, length, at):
    first, src, seed = 77, 1, 4
    out = _run(driver, "check", src, first, seed, length, at)
    if at >= length:
        assert out == "0"
        return
    want = pattern(src, first + at, seed)
    # rank 3, indices from 7 (the driver's me and index_base)
    assert out == f"1 rank 3: byte {7 + at} is 0x{want ^ 0x10:02x}, expected 0x{want:02x}"
