"""CoNLL-U output: comments, ten fields, labels in UPOS (token labels) or MISC (spans), SpaceAfter=No."""
from __future__ import annotations

from pathlib import Path

from seqlab.data.conllu import CONLLU_FIELDS, read_conllu
from seqlab.data.formats.conllu_writer import conllu_sentence

TEXT = "He (Ed) left."
TOKENS, OFFSETS = ["He", "(", "Ed", ")", "left", "."], [(0, 2), (3, 4), (4, 6), (6, 7), (8, 12), (12, 13)]


def test_span_labels_go_in_misc_with_space_after(tmp_path: Path) -> None:
    labels = ["O", "O", "B-PER", "O", "O", "O"]
    text = conllu_sentence(TOKENS, labels, OFFSETS, TEXT, "7-1")
    rows = [line.split("\t") for line in text.splitlines() if line and not line.startswith("#")]
    assert all(len(row) == len(CONLLU_FIELDS) for row in rows)
    assert [row[9] for row in rows] == ["NER=O", "NER=O|SpaceAfter=No", "NER=B-PER|SpaceAfter=No", "NER=O",
                                        "NER=O|SpaceAfter=No", "NER=O"]
    assert {row[3] for row in rows} == {"_"}
    (tmp_path / "s.conllu").write_text(text, encoding="utf-8")
    (sentence,) = read_conllu(tmp_path / "s.conllu")
    assert sentence.extra["text"] == TEXT and sentence.extra["sent_id"] == "7-1"
    assert list(sentence.extra["offsets"]) == OFFSETS


def test_token_labels_go_in_upos() -> None:
    labels = ["PRON", "PUNCT", "PROPN", "PUNCT", "VERB", "PUNCT"]
    rows = [line.split("\t") for line in conllu_sentence(TOKENS, labels, OFFSETS, TEXT, "1", token_labels=True)
            .splitlines() if line and not line.startswith("#")]
    assert [row[3] for row in rows] == labels and rows[0][9] == "_"


def test_multiword_token_range_line_carries_space_after(tmp_path: Path) -> None:
    text = "au."
    block = conllu_sentence(["à", "le", "."], ["ADP", "DET", "PUNCT"], [(0, 2), (0, 2), (2, 3)], text, "1",
                            token_labels=True)
    rows = [line.split("\t") for line in block.splitlines() if line and not line.startswith("#")]
    assert [(r[0], r[1], r[9]) for r in rows] == [("1-2", "au", "SpaceAfter=No"), ("1", "à", "_"), ("2", "le", "_"),
                                                  ("3", ".", "_")]
    (tmp_path / "s.conllu").write_text(block, encoding="utf-8")
    (sentence,) = read_conllu(tmp_path / "s.conllu")
    assert list(sentence.columns["form"]) == ["à", "le", "."] and sentence.extra["text"] == text
