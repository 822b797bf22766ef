"""features.atomic: complete or absent, old file kept on error, ordinary permissions."""
from __future__ import annotations

import os
import stat

import pytest

from features.atomic import atomic_open, atomic_path


def mode(path) -> int:
    return stat.S_IMODE(os.stat(path).st_mode)


def test_a_written_file_appears_with_the_umask_permissions(tmp_path):
    target = tmp_path / "sub" / "out.txt"
    with atomic_open(target) as out:
        out.write("héllo\n")
        assert not target.exists()  # not before the block ends
    assert target.read_text(encoding="utf-8") == "héllo\n"
    umask = os.umask(0o022)
    os.umask(umask)
    assert mode(target) == 0o666 & ~umask  # not mkstemp's 0o600
    assert [p.name for p in target.parent.iterdir()] == ["out.txt"]


def test_an_error_keeps_the_old_file_and_leaves_no_temporary(tmp_path):
    target = tmp_path / "model.bin"
    target.write_bytes(b"old")
    with pytest.raises(RuntimeError, match="disk on fire"):
        with atomic_open(target, "wb") as out:
            out.write(b"half of the new")
            raise RuntimeError("disk on fire")
    assert target.read_bytes() == b"old"
    assert [p.name for p in tmp_path.iterdir()] == ["model.bin"]


def test_atomic_path_keeps_the_suffix_a_writer_needs(tmp_path):
    target = tmp_path / "vectors.txt.gz"
    with atomic_path(target, ".tmp.gz") as tmp:
        assert tmp.name.endswith(".tmp.gz") and tmp.parent == tmp_path and tmp.exists()
        tmp.write_bytes(b"x")
    assert target.read_bytes() == b"x" and len(list(tmp_path.iterdir())) == 1


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="needs named pipes (POSIX)")
def test_a_named_pipe_is_written_to_not_replaced(tmp_path):
    import threading

    pipe = tmp_path / "pipe"
    os.mkfifo(pipe)
    received = []
    reader = threading.Thread(target=lambda: received.append(pipe.read_text(encoding="utf-8")))
    reader.start()
    with atomic_open(pipe) as out:
        out.write("through the pipe\n")
    reader.join(timeout=10)
    assert received == ["through the pipe\n"] and stat.S_ISFIFO(pipe.stat().st_mode)
