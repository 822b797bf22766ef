"""Relation configs: shipped files load, defaults follow Lee et al. (2019) §4, strict keys and types."""
from __future__ import annotations

from pathlib import Path

import pytest

from seqlab.tagging.config import load_config
from seqlab.core.errors import ConfigError
from seqlab.core.strict import read_mapping
from seqlab.relation.config import RelationConfig, load_relation_config

CONFIGS = sorted(p for p in (Path(__file__).parents[2] / "configs").glob("*.yaml") if read_mapping(p).get("task") == "relation")


def test_there_is_a_shipped_relation_config():
    assert any(p.name == "semeval10_entity_attention.yaml" for p in CONFIGS)


def test_the_shipped_config_keeps_the_entity_markers_but_old_runs_read_without_them(tmp_path):
    """Markers are the shipped config's choice (RESULTS.md, SemEval-2010 Task 8); a run directory written before the
    key existed has no ``entity_markers`` in its config.yaml and must still load as trained, without them."""
    shipped = next(p for p in CONFIGS if p.name == "semeval10_entity_attention.yaml")
    assert load_relation_config(shipped).model.entity_markers is True
    old = tmp_path / "config.yaml"
    old.write_text("task: relation\ndata: {train: t.txt}\n")
    assert load_relation_config(old).model.entity_markers is False


@pytest.mark.parametrize("path", CONFIGS, ids=lambda p: p.name)
def test_shipped_relation_configs_load(path):
    config = load_relation_config(path)
    assert isinstance(config, RelationConfig) and config.task == "relation"


def test_paper_hyperparameters_are_the_defaults(tmp_path):
    path = tmp_path / "c.yaml"
    path.write_text("task: relation\ndata: {train: t.txt}\n")
    c = load_relation_config(path)
    m, t = c.model, c.train
    assert (m.position_dim, m.hidden, m.heads, m.attention_dim, m.latent_types) == (50, 300, 4, 50, 3)
    assert (m.dropout_embedding, m.dropout_lstm, m.dropout_attention) == (0.3, 0.3, 0.5)
    assert (t.optimizer, t.lr, t.weight_decay, t.batch_size) == ("adadelta", 1.0, 1e-5, 20)
    assert (c.data.dev_size, c.data.dev_seed) == (800, 1)


@pytest.mark.parametrize("text, overrides, message", [
    ("task: relation\ndata: {train: t.txt}\nmodel: {hiden: 3}\n", [], "model.hiden: unknown key; did you mean 'hidden'?"),
    ("task: relation\ndata: {train: t.txt}\n", ["model.latent_types=-1"], "model.latent_types: expected 0 \\(LET off\\)"),
    ("task: relation\ndata: {train: t.txt}\n", ["model.dropout_lstm=1.0"], "model.dropout_lstm: expected a dropout rate"),
    ("task: relation\ndata: {train: t.txt}\n", ["train.optimizer=adagrad"], "train.optimizer: expected one of"),
    ("task: relation\ndata: {train: t.txt}\n", ["data.dev_sizes=3"], "--set data.dev_sizes: unknown key; did you mean"),
    ("task: relatoin\ndata: {train: t.txt}\n", [], "task: expected one of \\['relation'\\], got 'relatoin'"),
    ("task: relation\n", [], "data: required key is missing"),
])
def test_errors_name_the_key(tmp_path, text, overrides, message):
    path = tmp_path / "c.yaml"
    path.write_text(text)
    with pytest.raises(ConfigError, match=message):
        load_relation_config(path, overrides)


def test_tagger_configs_stay_strict_about_task(tmp_path):
    path = tmp_path / "c.yaml"
    path.write_text("task: relation\ndata: {train: a.txt, dev: b.txt}\n")
    with pytest.raises(ConfigError, match="task: expected one of \\['tagging'\\], got 'relation'"):
        load_config(path)
