"""Labelling: span schemes and token labels behind one interface, and the data config that picks one."""
from __future__ import annotations

import re
from pathlib import Path

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


#: What only seqlab/data/labelling.py may ask: which kind a labelling is, by class, flag or scheme name.
KIND_QUESTIONS = re.compile(r"has_spans|SpanLabelling|TokenLabelling|tag_scheme\s*[!=]=|[!=]=\s*[\"']token[\"']")


def test_no_module_but_labelling_asks_which_kind_of_labels() -> None:
    package = Path(__file__).resolve().parents[2] / "seqlab"
    found = [f"{path.relative_to(package.parent)}:{number}: {line.strip()}"
             for path in sorted(package.rglob("*.py")) if path.name != "labelling.py" or path.parent.name != "data"
             for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), start=1)
             if KIND_QUESTIONS.search(line)]
    assert not found, "ask the labelling (seqlab.data.labelling.Labelling), not its kind:\n" + "\n".join(found)


@pytest.mark.parametrize("scheme, unit, upos", [("bilou", "span", False), ("iob2", "span", False),
                                               ("token", "token", True)])
def test_the_scheme_table_gives_each_kind_its_answers(scheme: str, unit: str, upos: bool) -> None:
    chosen = labelling(scheme)
    assert (chosen.unit, chosen.conllu_upos) == (unit, upos)
    assert chosen.label_word == ("type" if unit == "span" else "label")


def test_relabel_and_gold_types_follow_the_kind() -> None:
    met: set[str] = set()
    assert labelling("token").relabel(["PROPN", "VERB"], {"PROPN": "NOUN"}, met) == ("NOUN", "VERB")
    assert met == {"PROPN"} and labelling("token").gold_types([["NOUN"]]) == set()
    assert labelling("bilou", "iob2").relabel(["B-A", "O"], {"A": "X"}, met) == ("B-X", "O")
    assert labelling("bilou").gold_types([["B-PER", "I-PER", "O", "B-LOC"]]) == {"PER", "LOC"}
    assert labelling("bilou").detect_file_scheme([["B-PER", "O"]]) == "iob2"
    assert labelling("token").detect_file_scheme([["B-PER"]]) == "token"


def test_a_token_model_refuses_span_output_formats_in_one_line() -> None:
    labelling("bilou").check_output_format("brat")
    with pytest.raises(SeqlabError, match="^--format brat writes spans, and this model predicts token labels"):
        labelling("token").check_output_format("brat")
    with pytest.raises(ConfigError, match="cannot be dropped"):
        labelling("token").check_label_map({"X": None}, "--label-map")
