"""Relation configs: shipped files load, defaults follow Lee et al. (2019) §4, strict keys and types."""
from __future__ import annotations

import re
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


def test_data_limit_keeps_the_first_sentences_of_each_split_after_the_dev_split(tmp_path):
    from seqlab.relation.task import read_splits

    fixture = (Path(__file__).parents[1] / "fixtures" / "semeval" / "test.txt").read_text()
    train = tmp_path / "train.txt"
    blocks = [b for b in fixture.strip("\n").split("\n\n")] * 3  # 18 labelled sentences, ids made unique below
    train.write_text("".join(f"{i}\t{b.split(chr(9), 1)[1]}\n\n" for i, b in enumerate(blocks, start=1)))
    text = f"task: relation\ndata: {{train: {train}, test: {train}, dev_size: 5}}\n"
    (tmp_path / "c.yaml").write_text(text)
    full = read_splits(load_relation_config(tmp_path / "c.yaml"))
    limited = read_splits(load_relation_config(tmp_path / "c.yaml", ["data.limit=2"]))
    assert {name: len(v) for name, v in full.items()} == {"train": 13, "dev": 5, "test": 18}
    assert {name: len(v) for name, v in limited.items()} == {"train": 2, "dev": 2, "test": 2}
    assert all(limited[name] == full[name][:2] for name in full)  # the full run's dev split, cut


def test_a_negative_data_limit_is_refused(tmp_path):
    (tmp_path / "c.yaml").write_text("task: relation\ndata: {train: t.txt}\n")
    with pytest.raises(ConfigError, match=r"data.limit: expected a number of sentences >= 0"):
        load_relation_config(tmp_path / "c.yaml", ["data.limit=-1"])


@pytest.mark.parametrize("override, message", [
    ("data.format=json",
     "data.format: expected one of ['auto', 'semeval', 'jsonl', 'spert'], got 'json'; did you mean 'jsonl'?"),
    ("data.negative_label=' '", "data.negative_label: expected a label (such as Other) or null"),
])
def test_data_format_and_negative_label_are_checked(tmp_path, override, message):
    (tmp_path / "c.yaml").write_text("task: relation\ndata: {train: t.jsonl, negative_label: no_relation}\n")
    config = load_relation_config(tmp_path / "c.yaml")
    assert (config.data.format, config.data.negative_label) == ("auto", "no_relation")
    with pytest.raises(ConfigError, match=re.escape(message)):
        load_relation_config(tmp_path / "c.yaml", [override])
