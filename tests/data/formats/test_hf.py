"""Hugging Face-style token JSONL: string tags, integer tags through a label list (given or beside the file),
and clear errors for integers out of range and malformed objects."""
from __future__ import annotations

import json
import logging
from pathlib import Path

import pytest

from seqlab.core.errors import DataFormatError, SeqlabError
from seqlab.data.formats.hf import read_hf_jsonl
from tests.conftest import FIXTURES

HF = FIXTURES / "formats"
NAMES = ["O", "B-PER", "I-PER", "B-ORG", "I-ORG", "B-LOC", "I-LOC", "B-MISC", "I-MISC"]


def test_string_tags_are_read_and_empty_sentences_skipped(caplog: pytest.LogCaptureFixture) -> None:
    with caplog.at_level(logging.INFO, logger="seqlab"):
        sentences = list(read_hf_jsonl(HF / "hf.jsonl"))
    assert [s["word"] for s in sentences] == [("EU", "rejects", "German", "call", "."), ("Peter", "Blackburn")]
    assert sentences[1]["ner"] == ("B-PER", "I-PER") and sentences[1].line == 2
    assert sentences[0].extra == {"id": "0", "lines": (1, 1, 1, 1, 1)}
    assert "1 empty sentences skipped" in caplog.text


def test_integer_tags_take_the_sidecar_label_list() -> None:
    sentences = list(read_hf_jsonl(HF / "hf_ints.jsonl"))
    assert sentences[0]["ner"] == ("B-ORG", "O", "B-MISC", "O", "O")
    assert sentences[1]["ner"] == ("B-PER", "I-PER")


def _file(tmp_path: Path, *rows: object, name: str = "x.jsonl") -> Path:
    path = tmp_path / name
    path.write_text("".join(json.dumps(row) + "\n" for row in rows), encoding="utf-8")
    return path


def test_a_given_label_list_and_datasets_info_file_are_used(tmp_path: Path) -> None:
    path = _file(tmp_path, {"tokens": ["Rome"], "ner_tags": [5]})
    assert next(read_hf_jsonl(path, labels=NAMES))["ner"] == ("B-LOC",)
    info = {"features": {"tokens": {"_type": "Sequence"},
                         "ner_tags": {"feature": {"names": NAMES, "_type": "ClassLabel"}, "_type": "Sequence"}}}
    (tmp_path / "dataset_info.json").write_text(json.dumps(info), encoding="utf-8")
    assert next(read_hf_jsonl(path))["ner"] == ("B-LOC",)
    (tmp_path / "labels.txt").write_text("O\nB-X\n", encoding="utf-8")  # looked for before dataset_info.json
    with pytest.raises(DataFormatError, match=r"labels.txt has 2 labels \(0 to 1\)"):
        list(read_hf_jsonl(path))


@pytest.mark.parametrize("row, labels, message", [
    ({"tokens": ["a", "b"], "ner_tags": [0, 9]}, NAMES, r"x.jsonl:1: ner_tags\[1\] = 9: out of range; the labels "
                                                        r"given has 9 labels \(0 to 8\)"),
    ({"tokens": ["a"], "ner_tags": [-1]}, NAMES, r"ner_tags\[0\] = -1: out of range"),
    ({"tokens": ["a"], "ner_tags": [0]}, None, r"x.jsonl:1: ner_tags holds integers; give the label list"),
    ({"tokens": ["a"], "ner_tags": [True]}, NAMES, r"ner_tags\[0\]: expected a label string or an integer, got True"),
    ({"tokens": ["a"], "ner_tags": [1.0]}, NAMES, r"ner_tags\[0\]: expected a label string or an integer"),
    ({"tokens": ["a", "b"], "ner_tags": ["O"]}, None, r"x.jsonl:1: 2 tokens but 1 ner_tags"),
    ({"tokens": ["a", " "], "ner_tags": ["O", "O"]}, None, r"tokens\[1\]: expected a non-blank string"),
    ({"words": ["a"], "ner_tags": ["O"]}, None, r"expected a list under 'tokens', got no such key; keys: "),
    ({"tokens": "a b", "ner_tags": ["O"]}, None, r"expected a list under 'tokens', got str"),
])
def test_bad_rows_are_errors_naming_file_line_and_index(tmp_path: Path, row: dict, labels: list[str] | None,
                                                        message: str) -> None:
    with pytest.raises(SeqlabError, match=message):
        list(read_hf_jsonl(_file(tmp_path, row), labels=labels))


def test_a_label_file_with_a_bom_and_quoted_labels_reads_clean(tmp_path: Path,
                                                              caplog: pytest.LogCaptureFixture) -> None:
    (tmp_path / "labels.txt").write_bytes("\ufeffO\n'B-PER'\n\"I-PER\"\n".encode("utf-8"))
    (tmp_path / "x.jsonl").write_text(json.dumps({"tokens": ["Ann", "Lee", "ran"], "ner_tags": [1, 2, 0]}) + "\n")
    with caplog.at_level(logging.WARNING, logger="seqlab"):
        [sentence] = read_hf_jsonl(tmp_path / "x.jsonl")
    assert sentence["ner"] == ("B-PER", "I-PER", "O")
    assert "2 labels written in quotes" in caplog.text
