"""The relation task's data: SemEval files or JSON lines, the label set of each, and what is refused."""
from __future__ import annotations

import json

import pytest

import seqlab
from seqlab.core.errors import SeqlabError
from seqlab.data.relations import semeval_to_jsonl
from seqlab.data.semeval import LABELS
from seqlab.relation.task import read_data, read_splits, relation_labels
from tests.conftest import FIXTURES, forget_new_log_handlers

SEMEVAL, RELATIONS = FIXTURES / "semeval", FIXTURES / "relations"


def _fields(splits: dict) -> dict:
    return {name: [(e.id, e.tokens, e.e1, e.e2, e.label) for e in examples] for name, examples in splits.items()}


@pytest.mark.parametrize("markers", [False, True], ids=["words", "entity_markers"])
def test_a_run_on_the_json_lines_conversion_reads_the_semeval_examples(tmp_path, monkeypatch, markers):
    """Same ids, tokens, entity positions and labels in train, dev and test, from either file."""
    monkeypatch.setenv("SEQLAB_DATA", str(SEMEVAL))
    for name in ("train", "test"):
        semeval_to_jsonl(SEMEVAL / f"{name}.txt", tmp_path / f"{name}.jsonl")
    overrides = [f"model.entity_markers={str(markers).lower()}"]
    original = seqlab.read_config(SEMEVAL / "tiny.yaml", overrides)
    converted = seqlab.read_config(SEMEVAL / "tiny.yaml", overrides + [
        f"data.train={tmp_path / 'train.jsonl'}", f"data.test={tmp_path / 'test.jsonl'}"])
    assert read_data(original)[0] == "semeval" and read_data(converted)[0] == "jsonl"
    expected = _fields(read_splits(original))
    assert _fields(read_splits(converted)) == expected and [len(v) for v in expected.values()] == [20, 4, 6]
    assert relation_labels(original, *read_data(original)[:2]) == list(LABELS)  # all 19, as the scorer counts them
    assert set(relation_labels(converted, *read_data(converted)[:2])) <= set(LABELS)  # those of the training file


def test_json_lines_bring_their_own_labels_and_negative_label(monkeypatch):
    monkeypatch.setenv("SEQLAB_DATA", str(RELATIONS))
    config = seqlab.read_config(RELATIONS / "tiny.yaml")
    assert relation_labels(config, *read_data(config)[:2]) == ["born_in", "none", "works_for"]
    typo = seqlab.read_config(RELATIONS / "tiny.yaml", ["data.negative_label=nnone"])
    with pytest.raises(SeqlabError, match=r"data.negative_label: 'nnone' is not a label of train.jsonl "
                                          r"\(born_in, none, works_for\); did you mean 'none'\?"):
        relation_labels(typo, *read_data(typo)[:2])


def test_semeval_files_take_only_other_as_the_negative_label(monkeypatch):
    monkeypatch.setenv("SEQLAB_DATA", str(SEMEVAL))
    for negative in ("Other", "null"):
        config = seqlab.read_config(SEMEVAL / "tiny.yaml", [f"data.negative_label={negative}"])
        assert relation_labels(config, *read_data(config)[:2]) == list(LABELS)
    config = seqlab.read_config(SEMEVAL / "tiny.yaml", ["data.negative_label=none"])
    with pytest.raises(SeqlabError, match="official scorer, whose negative label is Other; got 'none'"):
        relation_labels(config, *read_data(config)[:2])


def test_train_and_test_in_different_formats_and_unknown_test_labels_are_refused(tmp_path, monkeypatch):
    monkeypatch.setenv("SEQLAB_DATA", str(RELATIONS))
    mixed = seqlab.read_config(RELATIONS / "tiny.yaml", [f"data.test={SEMEVAL / 'test.txt'}"])
    with pytest.raises(SeqlabError, match=r"data.test: .*test.txt is a semeval file, but data.train is jsonl"):
        read_data(mixed)
    lines = (RELATIONS / "test.jsonl").read_text(encoding="utf-8").splitlines()
    relabelled = json.loads(lines[1]) | {"relation": "lives_in"}
    (tmp_path / "test.jsonl").write_text("\n".join([lines[0], json.dumps(relabelled)]) + "\n", encoding="utf-8")
    config = seqlab.read_config(RELATIONS / "tiny.yaml", [f"data.test={tmp_path / 'test.jsonl'}"])
    with pytest.raises(SeqlabError, match=r"data.test: .*test.jsonl: example 2 is labelled 'lives_in', which is not"), \
            forget_new_log_handlers():
        seqlab.train(config, tmp_path / "run", progress=False)
    assert not (tmp_path / "run").exists()
