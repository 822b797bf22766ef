"""``seqlab convert``: the counts and the alignment report printed, errors in one line."""
from __future__ import annotations

from pathlib import Path

import pytest

from seqlab.cli import main

BRAT = Path(__file__).parents[1] / "fixtures" / "formats" / "brat"


def test_convert_prints_what_it_wrote_and_the_alignment_report(tmp_path, capsys) -> None:
    assert main(["convert", str(BRAT), str(tmp_path / "a.jsonl"), "--to", "jsonl"]) == 0
    out, err = capsys.readouterr()
    lines = out.splitlines()
    assert lines[0].endswith("read 3 sentences with 5 spans (brat), wrote 2 documents (jsonl)")
    assert lines[1].startswith("alignment: 2 documents, 3 sentences, 7 spans read: 5 aligned")
    assert "2 dropped as overlapping" in lines[1] and len(lines) == 4  # the two dropped spans, one line each
    assert "d1.ann:4" in lines[2] and "dropped" not in err  # printed once, not logged again
    assert main(["convert", str(tmp_path / "a.jsonl"), str(tmp_path / "b.txt"), "--from", "jsonl", "--to", "conll",
                 "--label-map", "Gene=,Disease=Dis"]) == 0
    assert "with 4 spans" in capsys.readouterr().out
    assert "B-Dis" in (tmp_path / "b.txt").read_text() and "Gene" not in (tmp_path / "b.txt").read_text()


@pytest.mark.parametrize("argv, message", [
    (["missing.txt", "out", "--to", "jsonl"], "missing.txt: no such file or folder"),
    ([str(BRAT), "out", "--to", "jsonl", "--label-map", "Gene"], "expected old=new pairs"),
    ([str(BRAT / "d1.txt"), "out", "--from", "conll", "--to", "conll", "--columns", "a,b"], "name the token column"),
])
def test_errors_are_one_line(argv, message, tmp_path, capsys, monkeypatch) -> None:
    monkeypatch.chdir(tmp_path)
    assert main(["convert", *argv]) == 2
    err = capsys.readouterr().err.strip()
    assert message in err and len(err.splitlines()) == 1


def test_encoding_reads_a_latin1_file_and_a_wrong_one_is_one_line(tmp_path, capsys) -> None:
    (tmp_path / "x.txt").write_bytes("Zürich B-LOC\n".encode("latin-1"))
    assert main(["convert", str(tmp_path / "x.txt"), str(tmp_path / "y.txt"), "--to", "conll",
                 "--encoding", "latin-1"]) == 0
    assert (tmp_path / "y.txt").read_text(encoding="utf-8") == "Zürich B-LOC\n\n"
    capsys.readouterr()
    assert main(["convert", str(tmp_path / "x.txt"), str(tmp_path / "z.txt"), "--to", "conll",
                 "--encoding", "klingon"]) == 2
    assert "--encoding: unknown text encoding 'klingon'" in capsys.readouterr().err


def test_convert_offsets_reads_the_unit_given_and_refuses_chars_that_look_like_utf16(tmp_path, capsys) -> None:
    import json

    text = "\U0001F600 Paris ."
    path = tmp_path / "x.jsonl"
    path.write_text(json.dumps({"id": "d", "text": text, "spans": [{"start": 3, "end": 8, "label": "LOC",
                                                                     "text": "Paris"}]}) + "\n", encoding="utf-8")
    assert main(["convert", str(path), str(tmp_path / "a.jsonl"), "--to", "jsonl", "--offsets", "utf16"]) == 0
    [doc] = [json.loads(line) for line in (tmp_path / "a.jsonl").read_text(encoding="utf-8").splitlines()]
    assert doc["spans"] == [{"start": 2, "end": 7, "label": "LOC", "text": "Paris"}]
    capsys.readouterr()
    assert main(["convert", str(path), str(tmp_path / "b.jsonl"), "--to", "jsonl", "--offsets", "chars"]) == 2
    assert "x.jsonl:1: document d: the spans' offsets look like UTF-16 code units" in capsys.readouterr().err
