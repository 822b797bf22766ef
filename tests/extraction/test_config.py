"""Extraction configs: both halves read as strictly as alone, the shipped CoNLL04 config loads, and what an
extraction model needs is checked when the config is read."""
from __future__ import annotations

from pathlib import Path

import pytest

from seqlab.core.errors import ConfigError
from seqlab.extraction.config import ExtractionConfig, load_extraction_config
from tests.relation.spert_fixture import write_pipeline

SHIPPED = sorted((Path(__file__).parents[2] / "configs").glob("conll04_pipeline*.yaml"))


@pytest.mark.parametrize("shipped", SHIPPED, ids=lambda p: p.name)
def test_the_shipped_pipeline_configs_load(shipped: Path) -> None:
    config = load_extraction_config(shipped)
    assert isinstance(config, ExtractionConfig) and config.ner.data.format == config.relation.data.format == "spert"
    assert config.relation.data.negative_label == "no_relation"


def test_overrides_reach_either_half_and_are_checked(tmp_path: Path) -> None:
    path = write_pipeline(tmp_path)
    config = load_extraction_config(path, ["ner.train.epochs=1", "relation.model.negative_weight=0.5"])
    assert config.ner.train.epochs == 1 and config.relation.model.negative_weight == 0.5
    with pytest.raises(ConfigError, match="ner.train.epoch"):
        load_extraction_config(path, ["ner.train.epoch=1"])


def test_the_negative_label_and_a_span_scheme_are_required(tmp_path: Path) -> None:
    path = write_pipeline(tmp_path)
    with pytest.raises(ConfigError, match=r"relation.data.negative_label: an extraction model classifies every"):
        load_extraction_config(path, ["relation.data.negative_label=null"])
    with pytest.raises(ConfigError, match=r"ner.data.tag_scheme: the tagger finds the entities"):
        load_extraction_config(path, ["ner.data.tag_scheme=token"])
