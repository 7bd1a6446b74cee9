"""Writing a user's output file: the one policy of every verb that takes one.

`export -o`, `fit -o`, `report -o`, `export-model -o`, `simulate --emit-goal`
and `--trace` all write through this module, so a path means the same to each:

- A regular file, or a path that does not exist yet, is written whole to a
  temporary file with a unique name in the same directory (`mkstemp`: created
  with O_EXCL, so a file or link planted at any name is never opened) and renamed
  over the target when complete. A write that fails leaves the target as it was
  and no temporary behind. An existing file keeps its permissions; a new one gets
  0666 less the umask.
- A symbolic link is followed: the file it points to is the one replaced, the
  link stays. A link to a device or a pipe is written through like the device.
- A character device or a FIFO (`/dev/null`, `/dev/stdout`, a terminal, a named
  pipe) is written through deliberately: opened for writing, never replaced by a
  regular file.
- A directory, a socket or a block device is refused.
- Every failure, a full device (ENOSPC, e.g. `/dev/full`) included, is one line
  naming the path.
"""

from __future__ import annotations

import os
import shutil
import stat
import tempfile
from contextlib import contextmanager
from pathlib import Path
from typing import IO, Iterator

from commchar.errors import InputError


def _refused(path: str, why: str) -> InputError:
    return InputError(f"cannot write {path}: {why}")


def _failed(path: str, exc: OSError) -> InputError:
    return _refused(path, (exc.strerror or str(exc)).lower() if exc.strerror else str(exc))


def _kind(path: str) -> str:
    """'missing', 'regular' or 'special' (written through) for what `path` names, links followed."""
    try:
        mode = os.stat(path).st_mode
    except FileNotFoundError:
        return "missing"
    except OSError as exc:
        if os.path.islink(path) and not os.path.exists(path):
            return "missing"  # a dangling link: its target is created
        raise _failed(path, exc) from None
    if stat.S_ISREG(mode):
        return "regular"
    if stat.S_ISCHR(mode) or stat.S_ISFIFO(mode):
        return "special"
    if stat.S_ISDIR(mode):
        raise _refused(path, "is a directory")
    raise _refused(path, "not a regular file, character device or pipe")


def _new_mode(existing: str | None) -> int:
    if existing is not None:
        try:
            return stat.S_IMODE(os.stat(existing).st_mode)
        except OSError:
            pass
    mask = os.umask(0)
    os.umask(mask)
    return 0o666 & ~mask


@contextmanager
def output_path(path: str | os.PathLike[str]) -> Iterator[Path]:
    """A path to write the output of `path` to (by this process or a child), put in place when
    the block ends without an error: a unique temporary beside the target, renamed over it; for
    a device or pipe, a private temporary copied through it."""
    name = os.fspath(path)
    if not name:
        raise _refused("''", "an empty path")
    kind = _kind(name)
    if kind == "special":
        with tempfile.TemporaryDirectory(prefix="commchar-out-") as scratch:
            staged = Path(scratch) / "output"
            staged.touch(0o600)
            yield staged
            try:
                with staged.open("rb") as source, open(name, "wb") as sink:
                    shutil.copyfileobj(source, sink)
            except OSError as exc:
                raise _failed(name, exc) from None
        return
    target = os.path.realpath(name)  # a link's target is replaced, the link kept
    directory = os.path.dirname(target) or "."
    try:
        fd, temporary = tempfile.mkstemp(dir=directory, prefix=f".{os.path.basename(target)}.", suffix=".tmp")
    except OSError as exc:
        raise _failed(name, exc) from None
    os.close(fd)
    try:
        yield Path(temporary)
        os.chmod(temporary, _new_mode(target if kind == "regular" else None))
        os.replace(temporary, target)
    except OSError as exc:
        raise _failed(name, exc) from None
    finally:
        try:
            os.unlink(temporary)
        except FileNotFoundError:
            pass
        except OSError:
            pass


@contextmanager
def output_file(path: str | os.PathLike[str], *, binary: bool = False) -> Iterator[IO]:
    """An open file to write `path`'s content to, under output_path's policy; a write error
    (ENOSPC included) raised inside the block becomes one line naming the path."""
    name = os.fspath(path)
    with output_path(name) as staged:
        try:
            with (staged.open("wb") if binary else staged.open("w", encoding="utf-8", newline="")) as out:
                yield out
        except OSError as exc:
            raise _failed(name, exc) from None


def write_text(path: str | os.PathLike[str], text: str) -> None:
    """Write `text` (UTF-8) to `path` under output_path's policy."""
    with output_file(path) as out:
        out.write(text)
