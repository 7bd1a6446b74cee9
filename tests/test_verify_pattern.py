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
 * filled buffer with byte AT flipped (none when AT >= LEN), checked: 0/1 and the message;
 * sfill|spoison SRC BLOCK STRIDE SEED LEN: the strided buffer (gaps 0xaa) in hex;
 * scheck SRC BLOCK STRIDE SEED LEN AT: the strided fill with payload byte AT flipped, checked */
static int strided(char **argv) {
    int src = atoi(argv[2]), seed = atoi(argv[5]);
    size_t block = strtoul(argv[3], NULL, 10), stride = strtoul(argv[4], NULL, 10),
           len = strtoul(argv[6], NULL, 10);
    size_t extent = len ? (len - 1) / block * stride + (len - 1) % block + 1 : 0;
    unsigned char *b = malloc(extent ? extent : 1);
    for (size_t i = 0; i < extent; i++) b[i] = 0xaa;
    char err[200] = "";
    if (argv[1][1] != 'c') {
        cc_fill_bytes_strided(b, len, block, stride, src, seed, argv[1][1] == 'p');
        for (size_t i = 0; i < extent; i++) printf("%02x", b[i]);
        printf("\n");
        return 0;
    }
    size_t at = strtoul(argv[7], NULL, 10);
    cc_fill_bytes_strided(b, len, block, stride, src, seed, 0);
    if (at < len) b[at / block * stride + at % block] ^= 0x10;
    printf("%d %s\n", cc_check_bytes_strided(b, len, block, stride, src, seed, 3, err, sizeof err), err);
    return 0;
}
int main(int argc, char **argv) {
    if (argc < 6) return 2;
    if (argv[1][0] == 's') return argc < 7 ? 2 : strided(argv);
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


def _strided_want(src: int, block: int, stride: int, seed: int, length: int, flip: int = 0) -> bytes:
    extent = (length - 1) // block * stride + (length - 1) % block + 1 if length else 0
    out = bytearray(b"\xaa" * extent)
    for i in range(length):
        out[i // block * stride + i % block] = pattern(src, i, seed) ^ flip
    return bytes(out)


# a derived datatype's layouts: blocks of 8 every 16 (the ddt operations), blocks that do
# not divide the pattern's 256-position blocks, contiguous (block == stride)
@pytest.mark.parametrize("block,stride", [(8, 16), (3, 7), (300, 512), (64, 64)])
@pytest.mark.parametrize("length", [0, 1, 8, 255, 256, 257, 1000])
def test_a_strided_layout_holds_the_payload_pattern_and_leaves_its_gaps(driver, block, stride, length):
    src, seed = 1, 6
    assert bytes.fromhex(_run(driver, "sfill", src, block, stride, seed, length)) == \
        _strided_want(src, block, stride, seed, length)
    assert bytes.fromhex(_run(driver, "spoison", src, block, stride, seed, length)) == \
        _strided_want(src, block, stride, seed, length, 0xFF)


@pytest.mark.parametrize("block,stride,length,at", [(8, 16, 1000, 0), (8, 16, 1000, 7), (8, 16, 1000, 8),
                                                    (8, 16, 1000, 999), (3, 7, 500, 256), (8, 16, 1000, 1000)])
def test_a_strided_check_names_the_payload_index_of_the_first_wrong_byte(driver, block, stride, length, at):
    src, seed = 0, 2
    out = _run(driver, "scheck", src, block, stride, seed, length, at)
    if at >= length:
        assert out == "0"
        return
    want = pattern(src, at, seed)
    assert out == f"1 rank 3: byte {at} is 0x{want ^ 0x10:02x}, expected 0x{want:02x}"
