"""Labelling: span schemes and token labels behind one interface, and the data config that picks one."""
from __future__ import annotations

import numpy as np
import pytest

from seqlab.core.errors import ConfigError, SeqlabError
from seqlab.data.config import DataConfig
from seqlab.data.labelling import SpanLabelling, TokenLabelling, labelling


def test_span_labelling_converts_constrains_and_scores() -> None:
    spans = SpanLabelling("bilou", "iob1")
    assert spans.training_labels(["I-PER", "I-PER", "O", "I-LOC"]) == ["B-PER", "L-PER", "O", "U-LOC"]
    labels = spans.label_set(["LOC", "PER"])
    assert labels[0] == "O" and "U-PER" in labels
    allowed, start, _ = spans.transitions(labels)
    assert not start[labels.index("L-PER")] and not allowed[labels.index("O")][labels.index("I-PER")]
    chunks = spans.chunk_reader(labels)(np.array([[labels.index("U-PER"), 0]]), np.array([2]))
    assert chunks == [[("PER", 0, 1)]]
    assert spans.output_labels(["U-PER", "O"], chunks[0], "iob2") == ["B-PER", "O"]
    assert spans.output_scheme(None) == "iob2"
    result = spans.score([["B-PER", "O"]], [["B-PER", "O"]])
    assert result.measure == "F1" and result.score == result.f1 == 100.0


def test_token_labelling_keeps_labels_allows_every_transition_and_scores_accuracy() -> None:
    tokens = TokenLabelling()
    assert tokens.training_labels(["NN", "B-X"]) == ["NN", "B-X"]  # no prefixes are read into a label
    labels = tokens.label_set(["VB", "NN", "NN"])
    assert labels == ["NN", "VB"]
    allowed, start, end = tokens.transitions(labels)
    assert all(all(row) for row in allowed) and all(start) and all(end)
    assert tokens.chunk_reader(labels)(np.zeros((2, 3), dtype=np.int64), np.array([3, 2])) == [[], []]
    result = tokens.score([["NN", "VB"]], [["NN", "NN"]])
    assert result.measure == "accuracy" and result.score == result.accuracy == 50.0
    with pytest.raises(SeqlabError, match="scored by accuracy"):
        result.f1
    with pytest.raises(SeqlabError, match="empty label"):
        tokens.check_tag("")
    with pytest.raises(SeqlabError, match="token labels"):
        tokens.output_scheme("bilou")


@pytest.mark.parametrize("tag_scheme, file_scheme, kind", [
    ("bilou", None, SpanLabelling), ("iob2", "iob2", SpanLabelling), ("token", None, TokenLabelling),
    ("token", "token", TokenLabelling)])
def test_labelling_is_picked_by_the_schemes(tag_scheme, file_scheme, kind) -> None:
    assert isinstance(labelling(tag_scheme, file_scheme), kind)


@pytest.mark.parametrize("tag_scheme, file_scheme", [("token", "iob1"), ("bilou", "token")])
def test_token_labels_are_token_on_both_sides(tag_scheme, file_scheme) -> None:
    with pytest.raises(ConfigError, match="token labels"):
        DataConfig(train="t.txt", dev="d.txt", tag_scheme=tag_scheme, file_scheme=file_scheme)


def test_the_format_sets_the_default_layout() -> None:
    conll = DataConfig(train="t.txt", dev="d.txt")
    assert (conll.columns, conll.word_column, conll.tag_column, conll.file_scheme) == (
        ("word", "pos", "chunk", "ner"), "word", "ner", "iob1")
    ud = DataConfig(train="t.conllu", dev="d.conllu", tag_scheme="token", tag_column="xpos")
    assert (ud.word_column, ud.tag_column, ud.file_scheme, ud.labelling) == ("form", "xpos", "token", TokenLabelling())
    with pytest.raises(ConfigError, match="a CoNLL-U file has the columns"):
        DataConfig(train="t.conllu", dev="d.conllu", columns=("word", "pos"), word_column="word", tag_column="pos")
    with pytest.raises(ConfigError, match="data.format"):
        DataConfig(train="t.txt", dev="d.txt", format="csv")
