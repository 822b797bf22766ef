"""Atomic file writes: a file appears at its path complete, or not at all.

A path that names something other than a regular file (``/dev/stdout``, a named pipe, a device) is written
to directly: renaming over it would replace the device with a file.

Everything seqlab and features/ write (checkpoints, models, vectors, cluster paths, corpora,
predictions) goes to a temporary file in the destination folder, is flushed to disk, and is
renamed into place; on an error the temporary file is removed and an older file at the path is
left untouched. The file gets the permissions an ordinary ``open`` would give it (``0o666``
less the umask), not the private ``0o600`` of :func:`tempfile.mkstemp`.
"""
from __future__ import annotations

import errno
import os
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import IO, Any

PathLike = str | os.PathLike[str]


def _umask() -> int:
    mask = os.umask(0o022)  # reading the umask means setting it; put it straight back
    os.umask(mask)
    return mask


_UMASK = _umask()


@contextmanager
def atomic_path(path: PathLike, suffix: str = ".tmp") -> Iterator[Path]:
    """Yield a fresh temporary path beside ``path``; when the block ends without error, move it to ``path``.

    ``suffix`` lets writers that go by the extension (gensim's ``.gz``) see the right one.
    The caller writes the temporary file itself (and closes it) inside the block.
    """
    path = Path(path)
    if path.is_dir():
        raise IsADirectoryError(errno.EISDIR, "a folder; expected the name of a file to write", str(path))
    if path.exists() and not path.is_file():  # a device, pipe or socket (/dev/stdout): write to it, never replace it
        yield path
        return
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, name = tempfile.mkstemp(prefix=f".{path.name}.", suffix=suffix, dir=path.parent)
    os.close(fd)
    tmp = Path(name)
    try:
        yield tmp
        tmp.chmod(0o666 & ~_UMASK)
        os.replace(tmp, path)
    except OSError as err:
        tmp.unlink(missing_ok=True)
        if err.filename is None and err.errno is not None:  # a failed write (full disk) names no file: name it
            raise OSError(err.errno, err.strerror, str(path)) from err
        raise
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise


@contextmanager
def atomic_open(path: PathLike, mode: str = "w", encoding: str | None = "utf-8") -> Iterator[IO[Any]]:
    """``open(path, mode)`` for writing, flushed to disk and moved into place when the block succeeds."""
    with atomic_path(path) as tmp:
        with open(tmp, mode, encoding=None if "b" in mode else encoding) as handle:
            yield handle
            handle.flush()
            if tmp.is_file():  # a pipe or device cannot be synced
                os.fsync(handle.fileno())
