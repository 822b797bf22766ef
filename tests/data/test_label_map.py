"""Label maps: parsing (pairs and files), checks, span-wise mapping in every scheme, data.label_map when reading."""
from __future__ import annotations

import logging
from pathlib import Path

import pytest

from seqlab.core.errors import ConfigError
from seqlab.data.dataset import read_split
from seqlab.data.label_map import LabelMapper, check_label_map, describe, merged, parse_label_map
from seqlab.data.labelling import SpanLabelling, TokenLabelling
from seqlab.data.schemes import spans
from seqlab.tagging.config import DataConfig

FIXTURES = Path(__file__).parents[1] / "fixtures"
BRAT = FIXTURES / "formats" / "brat"
NCBI = Path(__file__).parents[3] / "shared" / "data" / "ncbi_disease"


def test_pairs_parse_with_drops_and_spaces() -> None:
    assert parse_label_map("person=PER, corporation=ORG,group=,product=O") == {
        "person": "PER", "corporation": "ORG", "group": None, "product": None}


@pytest.mark.parametrize("suffix, text", [(".yaml", "person: PER\ngroup: null\n"),
                                          (".json", '{"person": "PER", "group": null}')])
def test_a_yaml_or_json_file_is_read(tmp_path: Path, suffix: str, text: str) -> None:
    path = tmp_path / f"map{suffix}"
    path.write_text(text, encoding="utf-8")
    assert parse_label_map(str(path)) == {"person": "PER", "group": None}


@pytest.mark.parametrize("text, message", [
    ("person", "expected old=new pairs"),
    ("=PER", "expected old=new pairs"),
    ("a=B,a=C", "'a' is mapped twice"),
    ("a=two words", "without whitespace"),
    (",", "expected old=new pairs, got ','"),
    ("missing.yaml", "does not exist"),
])
def test_bad_label_maps_are_one_line_errors(text: str, message: str) -> None:
    with pytest.raises(ConfigError, match=message) as err:
        parse_label_map(text)
    assert "\n" not in str(err.value)


@pytest.mark.parametrize("mapping, message", [
    (["a", "b"], "expected a mapping"),
    ({"a": 3}, "data.label_map.a: expected a type name"),
    ({"": "B"}, "a key: expected a type name"),
])
def test_check_names_the_entry(mapping: object, message: str) -> None:
    with pytest.raises(ConfigError, match=message):
        check_label_map(mapping)


def test_token_labels_are_renamed_but_not_dropped() -> None:
    assert LabelMapper({"PROPN": "NOUN"}, TokenLabelling())(["PROPN", "VERB"]) == ("NOUN", "VERB")
    with pytest.raises(ConfigError, match="cannot be dropped"):
        check_label_map({"PROPN": None}, token_labels=True)
    assert check_label_map({"X": "O"}, token_labels=True) == {"X": "O"}  # O is a label like any other here


@pytest.mark.parametrize("scheme, tags, expected", [
    ("iob1", ["I-A", "I-B", "O"], ["I-X", "B-X", "O"]),  # two entities stay two
    ("iob2", ["B-A", "I-A", "B-B", "O", "B-C"], ["B-X", "I-X", "B-X", "O", "B-C"]),
    ("bilou", ["B-A", "L-A", "U-B", "U-D"], ["B-X", "L-X", "U-X", "O"]),
    ("iob2", ["B-D", "I-D", "O"], ["O", "O", "O"]),
    ("iob2", ["B-C", "O"], ["B-C", "O"]),
    ("iob1", ["B-A", "I-A", "O", "I-B"], ["B-X", "I-X", "O", "I-X"]),  # prefixes kept where they read the same
    ("iob1", ["I-C", "I-A"], ["I-C", "I-X"]),
])
def test_spans_are_mapped_as_spans(scheme: str, tags: list[str], expected: list[str]) -> None:
    mapper = LabelMapper({"A": "X", "B": "X", "D": None}, SpanLabelling("bilou", scheme))
    assert list(mapper(tags)) == expected
    assert len(spans(expected)) == len([c for c in spans(tags) if c[0] != "D"])


def test_prefixes_are_kept_in_the_files_scheme() -> None:
    """A gold file in IOB2 read by a model trained on IOB1 files keeps its B- tags (its scheme is detected)."""
    assert LabelMapper({"person": "PER"}, SpanLabelling("bilou", "iob1"))(["B-person", "O"]) == ("B-PER", "O")


def test_unmet_types_are_named() -> None:
    mapper = LabelMapper({"A": "X", "Typo": "X"}, SpanLabelling("bilou", "iob2"))
    mapper(["B-A"])
    assert mapper.unmet() == ["Typo"]


def test_describe_and_merge() -> None:
    assert describe({"a": "B", "c": None}) == "a=B,c="
    assert merged({"a": "B", "c": "D"}, {"c": "E"}) == {"a": "B", "c": "E"}
    assert merged(None, {}) is None


def test_data_label_map_applies_when_a_brat_folder_is_read(caplog) -> None:
    config = DataConfig(train=str(BRAT), dev=str(BRAT), label_map={"Gene": None, "Disease": "Illness", "Nope": "X"})
    with caplog.at_level(logging.WARNING, logger="seqlab"):
        split = read_split(config, "train")
    types = {kind for tags in split.file_tags for kind, _, _ in spans(tags)}
    assert types == {"Illness"}
    assert any("Nope" in r.getMessage() for r in caplog.records)  # a type the files do not hold is named
    assert {kind for tags in split.tags for kind, _, _ in spans(tags)} == {"Illness"}


def test_data_label_map_is_checked_with_the_config() -> None:
    with pytest.raises(ConfigError, match="data.label_map.Gene"):
        DataConfig(train=str(BRAT), dev=str(BRAT), label_map={"Gene": ["x"]})


@pytest.mark.skipif(not NCBI.is_dir(), reason="the NCBI disease corpus is not in ../shared/data/ncbi_disease")
def test_ncbi_four_mention_types_become_disease() -> None:
    four = {"SpecificDisease": "Disease", "DiseaseClass": "Disease", "Modifier": "Disease",
            "CompositeMention": "Disease"}
    test = str(NCBI / "standoff" / "test")
    split = read_split(DataConfig(train=test, dev=test, label_map=four), "train")
    chunks = [kind for tags in split.file_tags for kind, _, _ in spans(tags)]
    assert len(chunks) == 960 and set(chunks) == {"Disease"}


@pytest.mark.skipif(not NCBI.is_dir(), reason="the NCBI disease corpus is not in ../shared/data/ncbi_disease")
def test_the_ncbi_config_reads_its_brat_splits_as_one_disease_type(monkeypatch) -> None:
    from seqlab.tagging.config import load_config

    monkeypatch.setenv("SEQLAB_DATA", str(NCBI.parent))
    config = load_config(Path(__file__).parents[2] / "configs" / "ncbi_disease.yaml")
    split = read_split(config.data, "dev")
    chunks = [kind for tags in split.file_tags for kind, _, _ in spans(tags)]
    assert len(chunks) == 787 and set(chunks) == {"Disease"}  # devel's mentions (PROVENANCE.md)
    assert {kind for tags in split.tags for kind, _, _ in spans(tags)} == {"Disease"}


@pytest.mark.parametrize("text", ["", "# nothing\n", "{}\n"])
def test_an_empty_label_map_file_is_refused(tmp_path: Path, text: str) -> None:
    path = tmp_path / "map.yaml"
    path.write_text(text)
    with pytest.raises(ConfigError, match=r"map.yaml: (the label map file holds no entries|.*mapping)"):
        parse_label_map(str(path))


@pytest.mark.parametrize("text, message", [
    ("B-PER=X", r"--label-map: 'B-PER' is a tag, but a label map names types: write PER=X"),
    ("I-ORG=", r"'I-ORG' is a tag, .* write ORG= "),
])
def test_a_map_naming_tags_is_refused_with_a_hint(text: str, message: str) -> None:
    with pytest.raises(ConfigError, match=message):
        parse_label_map(text)


def test_a_map_that_maps_nothing_is_refused_where_asked_and_named_otherwise(caplog) -> None:
    mapper = LabelMapper({"Nope": "X", "Typo": None}, SpanLabelling("bilou", "iob2"))
    mapper(["B-A", "O"])
    with caplog.at_level(logging.WARNING, logger="seqlab"):
        mapper.warn_unmet("x.txt")
    assert "x.txt: the label map names types this file does not hold: Nope, Typo" in caplog.text
    with pytest.raises(ConfigError, match=r"x.txt: the label map names no type this file holds \(Nope, Typo\)"):
        mapper.warn_unmet("x.txt", refuse=True)
    config = DataConfig(train=str(BRAT), dev=str(BRAT), label_map={"Nope": "X"})
    with pytest.raises(ConfigError, match=r"data.train: .*brat: the label map names no type this file holds"):
        read_split(config, "train")


def test_convert_refuses_a_map_that_maps_nothing_and_writes_nothing(tmp_path: Path) -> None:
    from seqlab.data.formats.convert import convert

    with pytest.raises(ConfigError, match=r"brat: the label map names no type this file holds \(Nope\)"):
        convert(BRAT, tmp_path / "a.conll", target_format="conll", label_map={"Nope": "X"})
    assert not (tmp_path / "a.conll").exists()
