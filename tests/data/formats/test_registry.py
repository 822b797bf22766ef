"""Format detection by extension and content, and the formats as data.format values of a config's splits."""
from __future__ import annotations

import json
from pathlib import Path

import pytest

from seqlab.core.errors import ConfigError, SeqlabError
from seqlab.data.config import FORMATS, DataConfig, file_format
from seqlab.data.dataset import file_layout, read_split
from seqlab.data.formats.registry import detect_format
from tests.conftest import FIXTURES

FORMATS_DIR = FIXTURES / "formats"


@pytest.mark.parametrize("path, expected", [
    (FORMATS_DIR / "brat", "brat"),
    (FORMATS_DIR / "brat" / "d1.ann", "brat"),
    (FORMATS_DIR / "brat" / "d1.txt", "brat"),
    (FORMATS_DIR / "brat" / "notes.txt", "conll"),  # no .ann beside it
    (FORMATS_DIR / "spans.jsonl", "jsonl"),
    (FORMATS_DIR / "hf.jsonl", "hf"),
    (FORMATS_DIR / "labelstudio.json", "labelstudio"),
    (FIXTURES / "pos" / "train.conllu", "conllu"),
    (FIXTURES / "ner" / "train.txt", "conll"),
    (FORMATS_DIR, "conll"),  # a folder without .ann files: the CoNLL reader says it is a folder
    (Path("missing.jsonl"), "jsonl"),
    (Path("missing.CONLLU"), "conllu"),
    (Path("missing.txt"), "conll"),
])
def test_formats_are_told_apart_by_extension_and_content(path: Path, expected: str) -> None:
    assert detect_format(path) == expected
    assert file_format(path) == expected and file_format(path, "conll") == "conll"


def test_a_json_lines_file_named_json_is_read_by_its_first_object(tmp_path: Path) -> None:
    path = tmp_path / "x.json"
    path.write_text(json.dumps({"tokens": ["a"], "ner_tags": ["O"]}) + "\n", encoding="utf-8")
    assert detect_format(path) == "hf"
    path.write_text("\ufeff" + json.dumps({"text": "a", "spans": []}) + "\n", encoding="utf-8")
    assert detect_format(path) == "jsonl"


def test_a_relative_path_is_looked_for_under_the_data_folder(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    (tmp_path / "corpus").mkdir()
    (tmp_path / "corpus" / "a.ann").write_text("", encoding="utf-8")
    monkeypatch.setenv("SEQLAB_DATA", str(tmp_path))
    assert detect_format("corpus") == "brat"


def test_every_format_is_a_data_format_with_the_word_and_ner_columns() -> None:
    assert FORMATS == ("auto", "conll", "seqlab", "conllu", "brat", "spert", "labelstudio", "hf", "jsonl")
    brat = str(FORMATS_DIR / "brat")
    config = DataConfig(train=brat, dev=brat)
    assert (config.columns, config.word_column, config.tag_column, config.file_scheme) == (("word", "ner"), "word",
                                                                                          "ner", "iob2")
    assert DataConfig(train=str(FORMATS_DIR / "hf.jsonl"), dev=brat).file_scheme == "iob1"  # tags as the file has them
    assert DataConfig(train=brat, dev=brat, file_scheme="bioes").file_scheme == "bioes"
    with pytest.raises(ConfigError, match=r"data.columns: a brat file is read as the columns \['word', 'ner'\]"):
        DataConfig(train=brat, dev=brat, columns=("word", "pos", "ner"))


@pytest.mark.parametrize("name, tokens", [
    ("brat", 22), ("spans.jsonl", 20), ("labelstudio.json", 15), ("hf.jsonl", 7), ("hf_ints.jsonl", 7)])
def test_read_split_dispatches_on_the_detected_format(name: str, tokens: int) -> None:
    path = str(FORMATS_DIR / name)
    split = read_split(DataConfig(train=path, dev=path, tag_scheme="bilou"), "train")
    assert split.num_tokens == tokens and split.columns == {}
    assert all(len(t) == len(g) for t, g in zip(split.tokens, split.tags))
    assert any(tag.startswith("U-") or tag.startswith("B-") for tags in split.tags for tag in tags)


def test_a_conll_model_evaluates_an_offset_format_by_the_word_and_ner_columns() -> None:
    conll = str(FIXTURES / "ner" / "train.txt")
    config = DataConfig(train=conll, dev=conll)
    spans = FORMATS_DIR / "spans.jsonl"
    fitted = file_layout(config, spans)
    assert fitted.columns == ("word", "ner")
    assert read_split(fitted, "eval", path=spans).tokens[0] == ["Barack", "Obama", "visited", "Paris", "."]
    with pytest.raises(SeqlabError, match=r"spans.jsonl: a jsonl file has the columns \['word', 'ner'\]"):
        file_layout(config, spans, ["word", "ner"])


def test_the_table_names_each_format_once_and_derives_every_list_from_it() -> None:
    from seqlab.data.formats.registry import OUTPUTS, TABLE, WRITE_FORMATS
    from seqlab.tagging.document import FORMATS as STREAMED

    names = [f.name for f in TABLE]
    assert len(names) == len(set(names))
    assert FORMATS == ("auto", *(f.name for f in TABLE if f.read is not None))
    assert WRITE_FORMATS == ("conll", "conllu", "brat", "hf", "jsonl")
    assert list(OUTPUTS) == ["conll", "jsonl", "inline", "conllu", "brat", "html"]  # seqlab tag --format
    assert OUTPUTS["jsonl"].name == "seqlab" and STREAMED == ("conll", "jsonl", "inline", "conllu", "html")
    assert [name for name, fmt in OUTPUTS.items() if fmt.page is not None] == ["html"]
    assert all(f.render is not None or f.write is not None for f in OUTPUTS.values())


@pytest.mark.parametrize("first, expected", [
    ({"line": 1, "tokens": ["a"], "offsets": [[0, 1]], "labels": ["O"], "spans": []}, "seqlab"),
    ({"text": "a", "spans": [], "sentences": [{"tokens": ["a"], "labels": ["O"]}]}, "seqlab"),
    ({"tokens": ["a"], "ner_tags": ["O"]}, "hf"),
    ({"tokens": ["a"], "labels": [0]}, "hf"),  # no offsets: not seqlab's (the hf reader names what it expects)
    ({"text": "a", "spans": []}, "jsonl"),
])
def test_seqlab_jsonl_is_told_from_hf_and_span_jsonl(tmp_path: Path, first: dict, expected: str) -> None:
    path = tmp_path / "x.jsonl"
    path.write_text(json.dumps(first) + "\n", encoding="utf-8")
    assert detect_format(path) == expected


def test_every_reader_reads_in_the_configured_encoding(tmp_path: Path) -> None:
    (tmp_path / "x.jsonl").write_bytes('{"text": "Zürich", "spans": [[0, 6, "LOC"]]}\n'.encode("latin-1"))
    (tmp_path / "y.txt").write_bytes("Zürich B-LOC\n".encode("latin-1"))
    for name in ("x.jsonl", "y.txt"):
        path = str(tmp_path / name)
        split = read_split(DataConfig(train=path, dev=path, encoding="latin-1", columns=("word", "ner")), "train")
        assert split.tokens == [["Zürich"]] and split.file_tags == [["B-LOC"]]


def test_a_first_line_nested_past_the_parser_is_span_jsonl_for_its_reader_to_refuse(tmp_path) -> None:
    from seqlab.data.formats.registry import detect_format

    path = tmp_path / "x.jsonl"
    path.write_text('{"text": ' + "[" * 100_000 + "]" * 100_000 + "}\n")
    assert detect_format(path) == "jsonl"
