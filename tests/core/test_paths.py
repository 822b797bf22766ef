"""require_file: files pass; folders, missing paths and (unless a stream serves) pipes are one-line refusals; a
FIFO, such as a shell's <(cmd), is read like a file by the line readers of the command line."""
from __future__ import annotations

import os
import threading
from pathlib import Path

import pytest

from seqlab.cli._util import input_lines
from seqlab.core.errors import SeqlabError
from seqlab.core.paths import require_file


def _fifo(tmp_path: Path, data: bytes) -> Path:
    path = tmp_path / "pipe"
    os.mkfifo(path)

    def write() -> None:
        with open(path, "wb") as handle:
            handle.write(data)

    threading.Thread(target=write, daemon=True).start()
    return path


def test_files_pass_and_other_paths_are_named(tmp_path: Path) -> None:
    (tmp_path / "a.txt").write_text("x\n")
    assert require_file(tmp_path / "a.txt") == tmp_path / "a.txt"
    with pytest.raises(SeqlabError, match=r"none.txt: no such file \(expected text\)"):
        require_file(tmp_path / "none.txt", "text")
    with pytest.raises(SeqlabError, match=r"a.txt/b: no such file"):
        require_file(tmp_path / "a.txt" / "b")
    with pytest.raises(SeqlabError, match=r": a folder, not a file"):
        require_file(tmp_path)


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="no FIFOs on this system")
def test_a_fifo_serves_where_a_stream_does_and_is_named_elsewhere(tmp_path: Path) -> None:
    path = tmp_path / "named"
    os.mkfifo(path)
    with pytest.raises(SeqlabError, match=r"named: a pipe \(FIFO\), not a file that can be read more than once"):
        require_file(path)
    assert require_file(path, stream=True) == path
    lines, source = input_lines(str(_fifo(tmp_path, "Ann met Bob.\nZoë \U0001F600\n".encode("utf-8"))))
    assert list(lines) == ["Ann met Bob.\n", "Zoë \U0001F600\n"] and source.endswith("pipe")


def test_a_character_device_serves_as_a_stream() -> None:
    if not Path("/dev/null").exists():
        pytest.skip("no /dev/null")
    lines, _ = input_lines("/dev/null")
    assert list(lines) == []
