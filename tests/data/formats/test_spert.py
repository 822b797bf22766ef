"""SpERT-style JSON: IOB2 tagger sentences from entity spans, every ordered entity pair for the relation
classifier, a types file beside the data, and one-line errors naming file, sentence and field."""
from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from seqlab.core.errors import SeqlabError
from seqlab.data.config import DataConfig
from seqlab.data.dataset import read_split
from seqlab.data.formats.spert import NO_RELATION, entity_pairs, read_spert, read_spert_pairs, read_spert_tags

SENTENCES = [
    {"tokens": ["John", "Smith", "lives", "in", "New", "York", "."],
     "entities": [{"type": "Peop", "start": 0, "end": 2}, {"type": "Loc", "start": 4, "end": 6}],
     "relations": [{"type": "Live_In", "head": 0, "tail": 1}], "orig_id": 17},
    {"tokens": ["IBM", ",", "Armonk", ",", "hired", "Ann", "."],
     "entities": [{"type": "Org", "start": 0, "end": 1}, {"type": "Loc", "start": 2, "end": 3},
                  {"type": "Peop", "start": 5, "end": 6}],
     "relations": [{"type": "OrgBased_In", "head": 0, "tail": 1}, {"type": "Work_For", "head": 2, "tail": 0}],
     "orig_id": 18},
    {"tokens": ["Nothing", "here", "."], "entities": [], "relations": [], "orig_id": 19},
]
TYPES = {"entities": {t: {} for t in ("Loc", "Org", "Peop", "Other")},
         "relations": {t: {} for t in ("Kill", "Live_In", "Located_In", "OrgBased_In", "Work_For")}}


def _write(tmp_path: Path, sentences: list[Any], name: str = "toy_train.json", types: bool = False) -> Path:
    path = tmp_path / name
    path.write_text(json.dumps(sentences), encoding="utf-8")
    if types:
        (tmp_path / "toy_types.json").write_text(json.dumps(TYPES), encoding="utf-8")
    return path


def test_spans_become_iob2_tags(tmp_path: Path) -> None:
    sentences = list(read_spert_tags(_write(tmp_path, SENTENCES)))
    assert sentences[0]["ner"] == ("B-Peop", "I-Peop", "O", "O", "B-Loc", "I-Loc", "O")
    assert sentences[1]["ner"] == ("B-Org", "O", "B-Loc", "O", "O", "B-Peop", "O")
    assert sentences[2]["ner"] == ("O", "O", "O") and sentences[0].extra == {"id": "17"}


def test_a_tagger_config_reads_spert_files(tmp_path: Path) -> None:
    path = str(_write(tmp_path, SENTENCES))
    config = DataConfig(train=path, dev=path, format="spert", tag_scheme="bilou")
    assert config.file_scheme == "iob2"
    split = read_split(config, "train")
    assert split.tags[0] == ["B-Peop", "L-Peop", "O", "O", "B-Loc", "L-Loc", "O"]


def test_every_ordered_pair_of_distinct_entities_is_an_example(tmp_path: Path) -> None:
    sentences = read_spert(_write(tmp_path, SENTENCES))
    pairs = entity_pairs(sentences[1])
    assert [(p.head, p.tail, p.label) for p in pairs] == [
        (0, 1, "OrgBased_In"), (0, 2, None), (1, 0, None), (1, 2, None), (2, 0, "Work_For"), (2, 1, None)]
    examples = read_spert_pairs(_write(tmp_path, SENTENCES))
    assert len(examples) == 2 + 6
    first = examples[0]
    assert (first.id, first.e1, first.e2, first.label) == ("17/0/1", (0, 1), (4, 5), "Live_In")
    assert examples[1].label == NO_RELATION and examples[1].e1_text == "New York"


def test_the_types_file_beside_the_data_limits_the_types(tmp_path: Path) -> None:
    bad = [dict(SENTENCES[0], entities=[{"type": "Person", "start": 0, "end": 2}], relations=[])]
    with pytest.raises(SeqlabError, match=r"toy_train.json:\d+: sentence 0 \(orig_id 17\): entities\[0\].type: unknown "
                                          r"type 'Person'; the types file allows Loc, Org, Other, Peop$"):
        read_spert(_write(tmp_path, bad, types=True))
    assert len(read_spert(_write(tmp_path, SENTENCES, types=True))) == 3


def _with(**changes: Any) -> list[dict[str, Any]]:
    return [SENTENCES[0], dict(SENTENCES[1], **changes)]


@pytest.mark.parametrize("sentences, message", [
    (_with(relations=[{"type": "Kill", "head": 0, "tail": 3}]),
     r"sentence 1 \(orig_id 18\): relations\[0\].tail: entity index 3 is out of range \(the sentence has 3 entities\)"),
    (_with(entities=[{"type": "Org", "start": 0, "end": 2}, {"type": "Loc", "start": 1, "end": 3}],
           relations=[{"type": "OrgBased_In", "head": 0, "tail": 1}]),
     r"relations\[0\]: head entities\[0\] and tail entities\[1\] overlap"),
    (_with(entities=[{"type": "Org", "start": 5, "end": 8}], relations=[]),
     r"entities\[0\]: span \[5, 8\) is not within the 7 tokens"),
    (_with(entities=[{"type": "Org", "start": 0, "end": 1, "label": "x"}], relations=[]),
     r"entities\[0\]: unknown key 'label'; expected the keys \['end', 'start', 'type'\]"),
    (_with(sentence_id=3), r"sentence: unknown key 'sentence_id'"),
    (_with(relations=[{"type": "Kill", "head": "0", "tail": 1}]), r"relations\[0\].head: expected an integer"),
    (_with(entities=[{"type": 3, "start": 0, "end": 1}], relations=[]), r"entities\[0\].type: expected a type name"),
    (_with(tokens=[]), r"tokens: expected a non-empty list"),
    ([["not", "an", "object"]], r"sentence 0: sentence: expected a JSON object, got list"),
])
def test_bad_sentences_are_one_line_errors(tmp_path: Path, sentences: list[Any], message: str) -> None:
    with pytest.raises(SeqlabError, match=message) as caught:
        read_spert(_write(tmp_path, sentences))
    assert "\n" not in str(caught.value) and str(caught.value).startswith(str(tmp_path / "toy_train.json"))


def test_overlapping_entities_cannot_be_tagged_and_a_pair_has_one_relation(tmp_path: Path) -> None:
    nested = _with(entities=[{"type": "Org", "start": 0, "end": 3}, {"type": "Loc", "start": 2, "end": 3}],
                   relations=[])
    with pytest.raises(SeqlabError, match=r"sentence 1 \(orig_id 18\): entities\[1\]: span \[2, 3\) overlaps"):
        list(read_spert_tags(_write(tmp_path, nested)))
    assert len(read_spert_pairs(_write(tmp_path, nested))) == 2  # the overlapping pair is not a candidate
    twice = _with(relations=[{"type": "Kill", "head": 2, "tail": 0}, {"type": "Work_For", "head": 2, "tail": 0}])
    with pytest.raises(SeqlabError, match=r"relations\[1\]: entities 2 and 0 already hold a Kill relation"):
        read_spert_pairs(_write(tmp_path, twice))


def test_a_file_that_is_not_a_list_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "x.json"
    path.write_text('{"tokens": []}', encoding="utf-8")
    with pytest.raises(SeqlabError, match=r"x.json:1: expected a JSON list of sentences \(SpERT's format\)"):
        read_spert(path)
    path.write_text('[{"tokens": ', encoding="utf-8")
    with pytest.raises(SeqlabError, match=r"x.json:1: not JSON"):
        read_spert(path)


def test_conll04_as_shipped(shared_data: Path) -> None:
    folder = shared_data / "conll04"
    if not (folder / "conll04_train.json").is_file():
        pytest.skip("CoNLL04 not found under the data folder (conll04/conll04_train.json)")
    sizes = {split: len(read_spert(folder / f"conll04_{split}.json")) for split in ("train", "dev", "test")}
    assert sizes == {"train": 922, "dev": 231, "test": 288}
    labels = [e.label for e in read_spert_pairs(folder / "conll04_train.json")]
    assert len(labels) == 11998 and len(labels) - labels.count(NO_RELATION) == 1283


def test_an_empty_list_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "x.json"
    path.write_text("[]", encoding="utf-8")
    with pytest.raises(SeqlabError, match=r"x.json: no sentences \(an empty JSON list\)"):
        read_spert(path)
