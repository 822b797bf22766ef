"""features.ls_corpus: typed column files, the type hierarchy, and the annotated sentences LS vectors learn from."""
from __future__ import annotations

import re
from pathlib import Path

import pytest

from features.base import FeatureFileError
from features.ls_corpus import (Mention, annotate, detect_separator, read_typed, sha256_file, training_line,
                                type_tokens)

TYPED = Path(__file__).parents[1] / "fixtures" / "ls" / "typed.txt"


def write(tmp_path: Path, text: str | bytes) -> Path:
    path = tmp_path / "typed.txt"
    path.write_bytes(text if isinstance(text, bytes) else text.encode("utf-8"))
    return path


def test_reads_the_fixture_sentences_and_mentions():
    sentences = list(read_typed(TYPED))
    assert len(sentences) == 12  # the -DOCSTART- line is skipped
    first = sentences[0]
    assert first.tokens[:3] == ("The", "Hilton", "hotel") and first.line == 3
    assert first.mentions == (Mention(1, 2, "building_hotel"), Mention(4, 5, "location_GPE"))
    assert sentences[1].mentions[0] == Mention(0, 2, "person_director")  # two tokens: Steven Spielberg


@pytest.mark.parametrize("tags, spans", [
    (["B-PER", "I-PER", "O"], [(0, 2, "PER")]),
    (["I-PER", "I-PER", "I-LOC"], [(0, 2, "PER"), (2, 3, "LOC")]),  # IOB1: I- after O or another type starts one
    (["B-PER", "B-PER"], [(0, 1, "PER"), (1, 2, "PER")]),
    (["U-LOC", "B-ORG", "L-ORG", "O"], [(0, 1, "LOC"), (1, 3, "ORG")]),  # BILOU
    (["S-LOC", "B-ORG", "I-ORG", "E-ORG"], [(0, 1, "LOC"), (1, 4, "ORG")]),  # BIOES
    (["O", "O"], []),
])
def test_mention_spans_from_each_tag_scheme(tmp_path, tags, spans):
    text = "".join(f"w{i} {tag}\n" for i, tag in enumerate(tags))
    (sentence,) = read_typed(write(tmp_path, text))
    assert [(m.start, m.end, m.label) for m in sentence.mentions] == spans


def test_the_tag_column_can_be_chosen(tmp_path):
    (sentence,) = read_typed(write(tmp_path, "Paris NNP B-LOC x\nis VBZ O x\n"), column=2)
    assert sentence.mentions == (Mention(0, 1, "LOC"),)


@pytest.mark.parametrize("text, message", [
    ("Paris B-LOC\nalone\n", r"typed\.txt:2: expected a token and a tag separated by whitespace"),
    ("Paris NNP B-LOC\nis O\n", r"typed\.txt:2: expected 3 columns \(as on line 1\), but got 2"),
    ("Paris B-LOC\n\nBerlin PER\n", r"typed\.txt:3: expected a tag O, B-TYPE or I-TYPE .* but got 'PER'"),
    ("Paris B-\n", r"typed\.txt:1: expected a tag .* but got 'B-'"),
    (b"Paris B-LOC\nK\xf6ln B-LOC\n", r"typed\.txt:2: not UTF-8 text"),
    ("\n\n-DOCSTART- O\n", r"typed\.txt: the typed corpus holds no sentences"),
])
def test_malformed_files_name_the_file_and_line(tmp_path, text, message):
    with pytest.raises(ValueError, match=message):
        list(read_typed(write(tmp_path, text)))


def test_a_missing_file_is_reported_before_reading(tmp_path):
    with pytest.raises(FileNotFoundError, match="typed corpus file not found: .*nope"):
        read_typed(tmp_path / "nope.txt")


def test_errors_are_feature_file_errors_with_path_and_line(tmp_path):
    with pytest.raises(FeatureFileError) as info:
        list(read_typed(write(tmp_path, "a O\nb X-Y Z\n")))
    assert info.value.line == 2 and info.value.path.endswith("typed.txt")


@pytest.mark.parametrize("labels, asked, expected", [
    (["person_politician", "location_GPE"], "auto", "_"),
    (["person-actor", "location-GPE"], "auto", "-"),
    (["PERSON", "WORK_OF_ART"], "auto", None),  # OntoNotes: flat, although one type has '_'
    (["PER", "LOC"], "auto", None),
    (["PERSON", "WORK_OF_ART"], "_", "_"),
    (["person_politician"], None, None),
    ([], "auto", None),
])
def test_the_hierarchy_separator(labels, asked, expected):
    assert detect_separator(labels, asked) == expected


@pytest.mark.parametrize("label, sep, tokens", [
    ("person_politician", "_", ("/person", "/person/politician")),
    ("person_artist/author", "_", ("/person", "/person/artist-author")),
    ("location_GPE", "_", ("/location", "/location/gpe")),
    ("WORK_OF_ART", None, ("/work_of_art",)),
    ("PER", None, ("/per",)),
])
def test_type_tokens_keep_the_hierarchy(label, sep, tokens):
    assert type_tokens(label, sep) == tokens


def test_an_empty_level_is_an_error():
    with pytest.raises(ValueError, match=re.escape("type 'person_' has an empty level")):
        type_tokens("person_", "_")


def test_annotate_replaces_each_mention_by_its_type_tokens():
    tokens = ["Steven", "Spielberg", "directed", "Jaws", "."]
    mentions = [Mention(3, 4, "art_film"), Mention(0, 2, "person_director")]
    types_of = lambda label: type_tokens(label, "_")  # noqa: E731
    assert annotate(tokens, mentions, types_of) == [
        "/person", "/person/director", "directed", "/art", "/art/film", "."]
    assert training_line(tokens, mentions, types_of) == (
        "steven spielberg directed jaws . /person /person/director directed /art /art/film .")


def test_annotate_refuses_overlapping_mentions():
    with pytest.raises(ValueError, match="overlaps another"):
        annotate(["a", "b", "c"], [Mention(0, 2, "X"), Mention(1, 3, "Y")], lambda label: ["/x"])


def test_sha256_of_a_file(tmp_path):
    path = write(tmp_path, "abc")
    assert sha256_file(path) == "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"
