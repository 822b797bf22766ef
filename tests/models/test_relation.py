"""The model contract for RelationClassifier: gradients, fitting, save/load, batching, resume, ablations."""
from __future__ import annotations

import json
from pathlib import Path

import pytest
import torch

from seqlab.relation.build import batches
from seqlab.relation.config import load_relation_config
from seqlab.relation.api import RelationModel
from seqlab.relation.predict import predict_probabilities
from seqlab.apps.tasks import train
from tests.helpers import relation_trainer

FIXTURE = Path(__file__).parents[1] / "fixtures" / "semeval"
VARIANTS = {"full": [], "no_let": ["model.latent_types=0"], "no_self_attention": ["model.self_attention=false"]}


@pytest.fixture
def config(monkeypatch):
    monkeypatch.setenv("SEQLAB_DATA", str(FIXTURE))
    return lambda *overrides: load_relation_config(FIXTURE / "tiny.yaml", list(overrides))


@pytest.mark.parametrize("variant", VARIANTS)
def test_every_parameter_gets_a_gradient(config, tmp_path, variant):
    trainer = relation_trainer(config(*VARIANTS[variant]), tmp_path, progress=False)
    _, batch = next(batches(trainer.task.data["train"], 10))
    trainer.model.train()
    trainer.model.loss(batch).backward()
    for name, param in trainer.model.named_parameters():
        assert param.grad is not None and torch.isfinite(param.grad).all(), name
        assert param.grad.abs().sum() > 0, f"{name} got a zero gradient"


def test_ablations_remove_their_parts(config, tmp_path):
    names = {v: {n for n, _ in relation_trainer(config(*o), tmp_path, progress=False).model.named_parameters()}
             for v, o in VARIANTS.items()}
    assert "attention.typing.types" in names["full"] and "attention.typing.types" not in names["no_let"]
    assert any(n.startswith("encoder.self_attention") for n in names["full"])
    assert not any(n.startswith("encoder.self_attention") for n in names["no_self_attention"])


def test_fits_the_tiny_fixture(config, tmp_path):
    trainer = relation_trainer(config("train.optimizer=adam", "train.lr=0.02"), tmp_path, progress=False)
    losses = [trainer.train_epoch(e)["loss"] for e in range(40)]
    assert losses[-1] < 0.1 * losses[0]
    probs = predict_probabilities(trainer.model, trainer.task.data["train"])
    labels = trainer.task.vocabs["labels"].itos
    assert [labels[i] for i in probs.argmax(-1).tolist()] == [e.label for e in trainer.task.splits["train"]]


def test_batched_equals_one_by_one(config, tmp_path):
    trainer = relation_trainer(config(), tmp_path, progress=False)
    data = trainer.task.data["train"]
    assert torch.allclose(predict_probabilities(trainer.model, data, batch_size=7),
                          predict_probabilities(trainer.model, data, batch_size=1), atol=1e-5)


def test_save_then_load_gives_identical_predictions(config, tmp_path):
    metrics = train(config(), tmp_path / "run", progress=False)
    assert metrics["selected_on"] == "dev" and "test" in metrics and len(metrics["history"]) == 2
    run = RelationModel.load(tmp_path / "run", "cpu")
    trainer = relation_trainer(config(), tmp_path / "other", progress=False)
    trainer.model.load_state_dict(run.model.state_dict())
    data = trainer.task.data["test"]
    assert torch.equal(predict_probabilities(run.model, data), predict_probabilities(trainer.model, data))
    answers = (tmp_path / "run" / "test.answers.txt").read_text().splitlines()
    labels = run.labels
    assert answers == [f"{i}\t{labels[k]}" for i, k in zip(data.ids, predict_probabilities(run.model, data).argmax(-1))]


def test_resume_reaches_the_uninterrupted_result(config, tmp_path):
    full = train(config("train.epochs=3", "train.patience=3"), tmp_path / "full", progress=False)
    train(config("train.epochs=1"), tmp_path / "part", progress=False)
    (tmp_path / "part" / "config.yaml").write_text((tmp_path / "full" / "config.yaml").read_text())
    resumed = train(config("train.epochs=3", "train.patience=3"), tmp_path / "part", resume=True,
                             progress=False)
    assert [h["loss"] for h in resumed["history"]] == pytest.approx([h["loss"] for h in full["history"]], abs=1e-6)
    assert json.loads((tmp_path / "part" / "metrics.json").read_text())["epochs"] == 3


def test_dimension_mismatch_between_parts(config, tmp_path):
    from seqlab.models.relation import RelationClassifier

    model = relation_trainer(config(), tmp_path, progress=False).model
    with pytest.raises(ValueError, match="encoder output_dim must match attention input_dim, but got 12 and 4"):
        RelationClassifier(model.embedder, model.encoder, type(model.attention)(4, 3, 2, 5), model.head)
