"""``seqlab tag --workers N`` on pre-tokenized input (``--tokenized``, CoNLL and CoNLL-U files): the workers tag
token lists as they tag lines, and the output is the single process's, line numbers included."""
from __future__ import annotations

import json
from pathlib import Path

import pytest

from seqlab.cli import main

#: 320 lines: three chunks (128, 128 and 64 lines: seqlab.apps.parallel.parts), so both workers tag some.
SENTENCES = [["EU", "rejects", "German", "call", "."], [], ["Peter", "Blackburn", "said", "so"],
             ["Zürich", "is", "in", "Switzerland", "."]] * 80


def _tag(argv: list[str], capsys) -> str:
    assert main(["tag", "en-ner-conll03", *argv]) == 0
    return capsys.readouterr().out


def _file(tmp_path: Path, kind: str) -> tuple[Path, list[str]]:
    """The sentences as a --tokenized file (empty line: an empty sentence) or a CoNLL file (no empty ones)."""
    if kind == "tokenized":
        path = tmp_path / "in.txt"
        path.write_bytes("".join(" ".join(s) + "\n" for s in SENTENCES).encode("latin-1"))
        return path, ["--tokenized", "--encoding", "latin-1"]  # decoded here, before the workers
    path = tmp_path / "in.conll"
    path.write_text("\n".join("".join(f"{t} O\n" for t in s) for s in SENTENCES if s), encoding="utf-8")
    return path, []


@pytest.mark.parametrize("kind", ["tokenized", "conll"])
def test_workers_tag_pre_tokenized_input_as_one_process_does(tmp_path, capsys, kind) -> None:
    path, argv = _file(tmp_path, kind)
    single = _tag([str(path), *argv, "--format", "jsonl"], capsys)
    assert [json.loads(line)["tokens"] for line in single.splitlines()] == [s for s in SENTENCES if s]
    assert _tag([str(path), *argv, "--format", "jsonl", "--workers", "2", "--batch-size", "2"], capsys) == single


def test_html_with_workers_is_still_refused_for_pre_tokenized_input(tmp_path, capsys) -> None:
    path, argv = _file(tmp_path, "tokenized")
    assert main(["tag", "en-ner-conll03", str(path), *argv, "--format", "html", "--workers", "2"]) == 2
    assert "--format html writes one page; leave out --workers" in capsys.readouterr().err
