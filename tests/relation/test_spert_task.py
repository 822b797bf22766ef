"""The relation task on SpERT files: every ordered gold-entity pair an example, the dev file as dev, no_relation
as the negative label, and its down-weighting in the loss."""
from __future__ import annotations

from pathlib import Path

import pytest
import torch

import seqlab
from seqlab.core.errors import ConfigError
from seqlab.relation.build import batches
from seqlab.relation.task import read_data, read_splits, relation_labels
from tests.helpers import relation_trainer
from tests.relation.spert_fixture import write_corpus


@pytest.fixture
def config_path(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("SEQLAB_DATA", str(tmp_path))
    return write_corpus(tmp_path)


def test_pairs_of_the_train_and_dev_files_are_the_splits(config_path: Path) -> None:
    config = seqlab.read_config(config_path)
    splits = read_splits(config)
    # 12 sentences: 4 of 2 entities (2 pairs), 4 of 3 (6 pairs), 4 of 2 (2 pairs)
    assert {name: len(examples) for name, examples in splits.items()} == {"train": 40, "dev": 20, "test": 20}
    assert relation_labels(config, *read_data(config)[:2]) == ["Live_In", "OrgBased_In", "Work_For", "no_relation"]
    first = splits["train"][0]
    assert first.id == "0/0/1" and first.tokens[:3] == ("<e1>", "John", "</e1>") and first.label == "Live_In"


def test_no_relation_is_down_weighted_in_the_loss(config_path: Path, tmp_path: Path) -> None:
    plain = relation_trainer(seqlab.read_config(config_path), tmp_path / "plain", progress=False)
    weighted = relation_trainer(seqlab.read_config(config_path, ["model.negative_weight=0.25"]), tmp_path / "w",
                                progress=False)
    labels = weighted.task.vocabs["labels"]
    assert plain.model.label_weights is None
    assert weighted.model.label_weights[labels.index("no_relation")] == 0.25
    assert "label_weights" not in weighted.model.state_dict()  # rebuilt from the config, not saved
    weighted.model.load_state_dict(plain.model.state_dict())
    _, batch = next(batches(plain.task.data["train"], 40))
    plain.model.eval(), weighted.model.eval()
    with torch.no_grad():
        assert not torch.isclose(plain.model.loss(batch), weighted.model.loss(batch))


def test_a_run_trains_and_scores_macro_f1_without_no_relation(config_path: Path, tmp_path: Path) -> None:
    result = relation_trainer(seqlab.read_config(config_path), tmp_path / "run", progress=False).fit()
    report = (tmp_path / "run" / "test.report.txt").read_text(encoding="utf-8")
    assert "excluding 'no_relation'" in report and result is not None


def test_a_negative_weight_needs_the_negative_label(config_path: Path) -> None:
    with pytest.raises(ConfigError, match=r"model.negative_weight: weights the examples of data.negative_label"):
        seqlab.read_config(config_path, ["data.negative_label=null", "model.negative_weight=0.5"])
    with pytest.raises(ConfigError, match=r"model.negative_weight: expected a weight in \(0, 1\]"):
        seqlab.read_config(config_path, ["model.negative_weight=0"])


def test_typed_markers_name_the_entities_types_and_enter_the_vocabulary(config_path: Path, tmp_path: Path) -> None:
    config = seqlab.read_config(config_path, ["model.typed_markers=true"])
    first = read_splits(config)["train"][0]
    assert first.tokens[:3] == ("<e1:Peop>", "John", "</e1:Peop>") and "<e2:Loc>" in first.tokens
    assert first.tokens[first.e1[0]] == "John" and first.types == ("Peop", "Loc")
    trainer = relation_trainer(config, tmp_path / "typed", progress=False)
    assert {"<e1:Peop>", "</e2:Loc>"} <= set(trainer.task.vocabs["words"].itos)


def test_typed_markers_need_markers_and_typed_data(config_path: Path) -> None:
    from seqlab.core.errors import SeqlabError
    from seqlab.data.semeval import RelationExample, with_markers

    with pytest.raises(ConfigError, match=r"model.typed_markers: typed tags are entity markers"):
        seqlab.read_config(config_path, ["model.typed_markers=true", "model.entity_markers=false"])
    with pytest.raises(SeqlabError, match=r"example 7: typed entity markers need the entities' types"):
        with_markers(RelationExample("7", ("a", "b"), (0, 0), (1, 1)), typed=True)
