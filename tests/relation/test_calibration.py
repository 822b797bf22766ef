"""Relation confidences calibrated as span confidences are: a temperature fitted on dev after training, stored
in the run, read at load; labels unchanged at any temperature, only confidences move."""
from __future__ import annotations

import json
import math
from pathlib import Path

import pytest
import torch

from seqlab.core import rundir
from seqlab.relation.api import RelationModel
from seqlab.relation.build import encode
from seqlab.relation.calibration import RelationOutcomes, calibrate_relations
from tests.conftest import tiny_run

SENTENCES = ["The <e1>smoke</e1> was caused by a <e2>fire</e2>.", "A <e1>car</e1> left the <e2>factory</e2>.",
             "The <e1>author</e1> wrote a <e2>book</e2>."]


@pytest.fixture(scope="module")
def run(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tiny_run(tmp_path_factory.mktemp("relcal") / "relation", "semeval", ("train.epochs=2",))


def test_training_stores_a_temperature_that_loading_reads(run: Path) -> None:
    record = json.loads((run / rundir.CALIBRATION).read_text())
    assert record["unit"] == "relation" and set(record) >= {"temperature", "fitted_on", "ece_before", "ece_after"}
    assert RelationModel.load(run, "cpu").temperature == pytest.approx(record["temperature"])


def test_a_temperature_moves_confidences_and_keeps_labels(run: Path) -> None:
    model = RelationModel.load(run, "cpu")
    plain = RelationModel(model.config, model.vocabs, model.model, temperature=1.0)
    hot = RelationModel(model.config, model.vocabs, model.model, temperature=4.0)
    for a, b in zip(plain.classify_many(SENTENCES), hot.classify_many(SENTENCES)):
        assert a.label == b.label
        logs = {k: math.log(p) / 4.0 for k, p in a.probabilities.items()}
        total = sum(math.exp(v) for v in logs.values())
        assert b.confidence == pytest.approx(math.exp(logs[a.label]) / total, abs=1e-5)
        assert b.confidence <= a.confidence + 1e-9  # a hotter softmax is flatter


def test_the_units_are_the_pairs_given_a_relation_and_the_fit_lowers_the_log_loss(run: Path, monkeypatch) -> None:
    model = RelationModel.load(run, "cpu")
    from seqlab.data.relations import parse_input_lines
    from seqlab.relation.build import model_inputs

    examples = model_inputs(list(parse_input_lines(SENTENCES * 10, "<test>")), model.config.model)
    data = encode(examples, model.vocabs)
    labels = model.labels
    data.labels[:] = torch.arange(len(examples)) % len(labels)  # gold labels, some right, most wrong
    every = RelationOutcomes(model.model, data, labels, None)
    predicted = [labels[i] for i in every.predicted.tolist()]
    negative = max(set(predicted), key=predicted.count)
    some = RelationOutcomes(model.model, data, labels, negative)
    assert len(some.correct) == len(every.correct) - predicted.count(negative)
    monkeypatch.setattr("seqlab.core.calibration.MIN_EACH", 1)  # a handful of right units is enough here
    assert 0 < every.correct.sum() < len(every.correct)
    record = calibrate_relations(every, "test")
    assert record["temperature"] != 1.0 and every.log_loss(record["temperature"]) < every.log_loss(1.0)
