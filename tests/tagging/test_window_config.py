"""Strict config checks for the windowed taggers, held-out validation and fitted features."""
from __future__ import annotations

from pathlib import Path

import pytest

from seqlab.tagging.config import load_config
from seqlab.core.errors import ConfigError

WINDOW = Path(__file__).parents[1] / "fixtures" / "chunk" / "window.yaml"
CONFIGS = Path(__file__).parents[2] / "configs"
TABLE1 = ["conll00_io_q16.yaml", "conll00_iwo_q4.yaml", "conll00_itwo_q2.yaml", "conll00_itwwo_q4.yaml"]


def test_the_four_table1_configs_are_shipped_and_load():
    configs = [load_config(CONFIGS / name) for name in TABLE1]
    archs = {cfg.model.window.architecture for cfg in configs}
    assert "I-T(150)-W(310)-W(310)-O" in archs and "I-O" in archs
    for cfg in configs:  # the paper's training: plain SGD at a fixed rate, minibatches of 8, no dropout
        t = cfg.train
        assert (t.optimizer, t.momentum, t.lr_decay, t.batch_size) == ("sgd", 0.0, 1.0, 8)
        assert (cfg.model.dropout, cfg.model.window.dropout, cfg.model.decoder) == (0.0, 0.0, "softmax")
        assert cfg.data.dev is None and cfg.data.dev_sample == 1000


def test_the_regularised_crf_chunker_differs_from_itwo_q2_only_where_documented():
    paper = load_config(CONFIGS / "conll00_itwo_q2.yaml")
    ours = load_config(CONFIGS / "conll00_itwo_q2_crf.yaml")
    assert ours.data == paper.data and ours.model.features == paper.model.features
    assert ours.model.window.architecture == paper.model.window.architecture == "I-T(150)-W(400)-O"
    assert (ours.model.decoder, ours.model.dropout, ours.model.window.dropout) == ("crf", 0.2, 0.3)
    assert (ours.train.optimizer, ours.train.lr, ours.train.ema) == ("adam", 0.001, 0.999)


@pytest.mark.parametrize("overrides, message", [
    (["model.window.archtecture=I-O"], "model.window.archtecture: unknown key; did you mean 'architecture'"),
    (["model.window.architecture=I-W(3)"], "model.window.architecture: 'I-W(3)': an architecture ends with"),
    (["model.window.size=4"], "model.window.size: expected a positive odd number, got 4"),
    (["model.window.filters=-1"], "model.window.filters: expected a number >= 0"),
    (["model.window.dropout=1.0"], "model.window.dropout: expected a dropout rate in [0, 1), got 1.0"),
    (["model.window=null"], "model.window: set it exactly when model.encoder is 'window'"),
    (["model.encoder=bilstm"], "model.window: set it exactly when model.encoder is 'window'"),
    (["model.output_filters=2"], "model.output_filters: expected a number >= 0, for the bilstm encoder only"),
    (["model.output_hidden=8"], "model.output_hidden: expected a size >= 0, for the bilstm encoder only"),
    (["model.decoder=viterbi"], "model.decoder: expected one of"),
    (["data.dev_sample=0"], "give a dev file (data.dev) or a number of training sentences"),
    (["data.dev=x.txt"], "exactly one; got dev='x.txt', dev_sample=3"),
    (["model.features=[{type: pos, path: x.txt}]"], "type 'pos' takes no path"),
    (["model.features=[{type: embeddings}]"], "type 'embeddings' needs a path"),
    (["model.features=[{type: orthographic, min_count: 0}]"], "min_count: expected a number from 1 to"),
    (["model.features=[{type: label_frq}]"], "did you mean 'label_freq'"),
    (["model.window.filters=two"], "model.window.filters: expected int, got str"),
])
def test_bad_values_are_errors_naming_the_key(overrides, message):
    with pytest.raises(ConfigError) as err:
        load_config(WINDOW, overrides)
    assert message in str(err.value)


def test_quadratic_output_on_a_bilstm_is_a_config_option():
    cfg = load_config(WINDOW, ["model.encoder=bilstm", "model.window=null", "model.output_filters=4"])
    assert cfg.model.output_filters == 4 and cfg.model.quadratic_sqrt
