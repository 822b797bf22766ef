"""seqlab.tagging.parts: an encoder is one builder and one ENCODERS entry, registered from outside the package."""
from __future__ import annotations

from typing import Any

import pytest
import torch
from torch import nn

import seqlab
from seqlab.core.errors import ConfigError
from seqlab.tagging.config import load_config
from seqlab.tagging.parts import ENCODERS, EncoderKind
from tests.conftest import FIXTURES, forget_new_log_handlers

NER = FIXTURES / "ner"


class ToyEncoder(nn.Module):
    """A per-token tanh layer of ``model.hidden`` units: no context at all, the smallest encoder there is."""

    def __init__(self, input_dim: int, hidden: int) -> None:
        super().__init__()
        self.layer = nn.Linear(input_dim, hidden)
        self.input_dim, self.output_dim = input_dim, hidden

    def forward(self, inputs: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
        return torch.tanh(self.layer(inputs))  # shape: (B, T, hidden)


def _one_layer(m: Any) -> None:
    if m.layers != 1:
        raise ConfigError(f"model.layers: the toy encoder has one layer, got {m.layers}")


TOY = EncoderKind(lambda input_dim, m: ToyEncoder(input_dim, m.hidden), check=_one_layer)


@pytest.fixture
def toy():
    with ENCODERS.added("toy", TOY):
        yield
    assert "toy" not in ENCODERS


def test_a_toy_encoder_registered_here_trains_and_loads(toy, tmp_path, monkeypatch):
    monkeypatch.setenv("SEQLAB_DATA", str(NER))
    config = load_config(NER / "tiny.yaml", ["model.encoder=toy", "train.epochs=1", "train.threads=1"])
    with forget_new_log_handlers():
        metrics = seqlab.train(config, tmp_path / "run", progress=False)
    assert len(metrics["history"]) == 1
    model = seqlab.load(tmp_path / "run", "cpu")
    assert isinstance(model.model.encoder, ToyEncoder)
    assert next(iter(model.tag_many(["EU rejects German call ."]))).sentences


@pytest.mark.parametrize("overrides, message", [
    (["model.layers=2"], "model.layers: the toy encoder has one layer, got 2"),
    (["model.window={architecture: I-O}"], "model.window: set it exactly when model.encoder is 'window'"),
])
def test_the_entry_owns_its_checks(toy, overrides, message):
    with pytest.raises(ConfigError, match=message):
        load_config(NER / "tiny.yaml", ["model.encoder=toy", *overrides])


def test_unknown_encoders_are_refused_with_the_nearest_name():
    with pytest.raises(ConfigError, match="model.encoder: expected one of .*did you mean 'bilstm'"):
        load_config(NER / "tiny.yaml", ["model.encoder=bilstn"])


def test_a_name_is_registered_once():
    with pytest.raises(ValueError, match="registered twice"):
        ENCODERS.add("bilstm", TOY)
