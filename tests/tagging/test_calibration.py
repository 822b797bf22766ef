"""Calibration of a tagger's confidences (seqlab.tagging.calibration): ECE, span minima, temperature scaling."""
from __future__ import annotations

import json

import numpy as np
import pytest
import torch

import seqlab
from seqlab.core.errors import SeqlabError
from seqlab.modules.crf import CRF
from seqlab.modules.decoders import SoftmaxDecoder
from seqlab.tagging.calibration import (Outcomes, _span_minima, check_temperature, fit_temperature, reliability,
                                        calibrate, stored_temperature)
from tests.conftest import FIXTURES

NER = FIXTURES / "ner"


def test_ece_is_the_count_weighted_gap_of_equal_width_bins() -> None:
    confidence = np.array([0.05, 0.1, 0.95, 0.95, 0.95, 0.95, 0.55])
    correct = np.array([False, False, True, True, True, False, True])
    rel = reliability(confidence, correct)
    assert [b.count for b in rel.bins] == [2, 0, 0, 0, 0, 1, 0, 0, 0, 4]  # 0.1 lies in (0.0, 0.1]
    expected = (2 * abs(0 - 0.075) + 1 * abs(1 - 0.55) + 4 * abs(0.75 - 0.95)) / 7
    assert rel.ece == pytest.approx(expected)
    assert rel.accuracy == pytest.approx(4 / 7) and rel.count == 7
    assert "(0.9, 1.0]" in rel.table() and f"{expected:.4f}" in rel.table()
    low, high = reliability(np.repeat(confidence, 100), np.repeat(correct, 100)).interval
    assert low < expected < high and high - low < 0.1
    with pytest.raises(ValueError, match="one length"):
        reliability(confidence, correct[:3])


def test_span_minima_take_each_span_smallest_marginal() -> None:
    chosen = np.random.default_rng(0).random((3, 6))
    where = np.array([[0, 0, 2], [0, 2, 3], [0, 4, 6], [1, 5, 6], [2, 0, 6]])
    expected = [chosen[r, s:e].min() for r, s, e in where]
    assert np.allclose(_span_minima(chosen, where), expected)
    assert _span_minima(chosen, np.zeros((0, 3), dtype=np.int64)).shape == (0,)


@pytest.mark.parametrize("decoder", [CRF(5), SoftmaxDecoder(5)])
def test_temperature_softens_marginals_and_leaves_the_best_path(decoder) -> None:
    torch.manual_seed(0)
    if isinstance(decoder, CRF):
        torch.nn.init.normal_(decoder.transitions)
    emissions, mask = torch.randn(4, 7, 5) * 3, torch.ones(4, 7, dtype=torch.bool)
    mask[1, 5:] = False
    best = decoder.decode(emissions, mask)
    cold, hot = decoder.marginals(emissions, mask), decoder.marginals(emissions, mask, 2.0)
    top_cold = cold.gather(-1, best.unsqueeze(-1)).squeeze(-1)[mask]
    top_hot = hot.gather(-1, best.unsqueeze(-1)).squeeze(-1)[mask]
    assert float(top_hot.mean()) < float(top_cold.mean())
    assert torch.allclose(hot.sum(-1)[mask], torch.ones(int(mask.sum())), atol=1e-5)
    assert torch.equal(decoder.marginals(emissions, mask, 1.0), cold)


class _Synthetic(Outcomes):
    """Outcomes whose units have logits z, right with probability sigmoid(z / 2.5): the best temperature is 2.5."""

    def __init__(self) -> None:
        rng = np.random.default_rng(1)
        self.z = rng.normal(3.0, 3.0, 20_000)
        self.correct = rng.random(self.z.shape) < 1 / (1 + np.exp(-self.z / 2.5))
        self.unit = "span"

    def confidences(self, temperature: float = 1.0) -> np.ndarray:
        return 1 / (1 + np.exp(-self.z / temperature))


def test_the_fitted_temperature_is_the_one_that_generated_the_outcomes() -> None:
    outcomes = _Synthetic()
    temperature = fit_temperature(outcomes)
    assert temperature == pytest.approx(2.5, rel=0.05)
    assert outcomes.reliability(temperature).ece < outcomes.reliability(1.0).ece / 3


def test_stored_temperatures_are_checked(tmp_path) -> None:
    assert stored_temperature(tmp_path) == 1.0
    for bad in (0, -1, float("nan"), "2", True, 1000):
        with pytest.raises(SeqlabError, match="temperature must be a number"):
            check_temperature(bad, "x")
    (tmp_path / "calibration.json").write_text(json.dumps({"temperature": "hot"}))
    with pytest.raises(SeqlabError, match="calibration.json: temperature must be"):
        stored_temperature(tmp_path)
    (tmp_path / "calibration.json").write_text("[1.5]")
    with pytest.raises(SeqlabError, match="expected a JSON object"):
        stored_temperature(tmp_path)


@pytest.fixture(scope="module")
def tagger() -> seqlab.SequenceTagger:
    return seqlab.load("en-ner-conll03", "cpu")


def test_outcomes_read_the_confidences_the_tagger_gives(tagger) -> None:
    outcomes = tagger.outcomes(NER / "dev.txt")
    doc = tagger.evaluate(NER / "dev.txt")
    assert len(outcomes.correct) == doc.report.phrases_found and outcomes.correct.sum() == doc.report.correct
    from seqlab.tagging.evaluate import read_labelled

    split = read_labelled(tagger.config.data, NER / "dev.txt")
    spans = [s.confidence for tokens in split.tokens for s in tagger.tag_tokens([tokens])[0].spans]
    assert sorted(np.round(outcomes.confidences(tagger.temperature), 4)) == pytest.approx(sorted(spans), abs=1e-4)


def test_calibrating_changes_confidences_not_labels(tagger, monkeypatch) -> None:
    text = "Angela Merkel met Emmanuel Macron in Berlin on Tuesday with the EU."
    from seqlab.tagging.calibration import calibrate

    before = tagger.tag(text)
    old = tagger.temperature
    same, record = calibrate(tagger, NER / "dev.txt")  # a handful of spans, all right: too little to fit
    assert record["temperature"] == 1.0 and record["unit"] == "span" and same.temperature == 1.0
    monkeypatch.setattr("seqlab.core.calibration.MIN_EACH", 0)
    fitted, record = calibrate(tagger, NER / "dev.txt")  # now fitted: every span right, so the lowest temperature
    after = fitted.tag(text)
    assert record["temperature"] == pytest.approx(fitted.temperature, abs=1e-5) and fitted.temperature < 0.1
    assert [(s.start, s.end, s.label) for s in after.spans] == [(s.start, s.end, s.label) for s in before.spans]
    assert [s.confidence for s in after.spans] != [s.confidence for s in before.spans]
    assert record["ece_after"] <= record["ece_before"]
    assert tagger.temperature == old and tagger.tag(text) == before  # the tagger calibrated is not changed


def test_fitting_needs_right_and_wrong_units() -> None:
    outcomes = _Synthetic()
    outcomes.correct = np.ones_like(outcomes.correct)
    assert fit_temperature(outcomes) == 1.0


def _outcomes(file_tags: list[list[str]], correct: list[bool]) -> object:
    from types import SimpleNamespace

    split = SimpleNamespace(tokens=[["w"] * len(t) for t in file_tags], file_tags=file_tags, path="dev.txt")
    return SimpleNamespace(split=split, unit="span", correct=np.array(correct, dtype=bool),
                           predictor=SimpleNamespace(names=np.array(["O", "B-PER", "I-PER", "B-LOC"])))


@pytest.mark.parametrize("file_tags, correct, message", [
    ([["B-PER"]], [True], r"1 sentence; a temperature is fitted on at least 2"),
    ([["O"], ["O", "O"]], [], r"no entities in its gold tags"),
    ([["B-Gene"], ["B-Disease"]], [False, False], r"its types \['Disease', 'Gene'\] are none of the model's "
                                                  r"\['LOC', 'PER'\]"),
    ([["B-PER"], ["B-LOC"]], [True] * 30 + [False] * 3, r"30 predicted spans right and 3 wrong: too few"),
])
def test_data_that_cannot_calibrate_is_named(file_tags: list, correct: list, message: str) -> None:
    from seqlab.tagging.calibration import calibration_fault

    import re

    assert re.search(message, calibration_fault(_outcomes(file_tags, correct)))
    assert calibration_fault(_outcomes([["B-PER"], ["B-LOC"]], [True] * 10 + [False] * 10)) == ""


def test_seqlab_calibrate_refuses_what_cannot_calibrate_and_keeps_the_temperature(tagger, tmp_path,
                                                                                   capsys) -> None:
    import re

    from seqlab.cli import main

    brat = FIXTURES / "formats" / "brat"  # a folder, read as eval reads it; its types are not the model's
    assert main(["calibrate", "en-ner-conll03", str(brat), "--out", str(tmp_path / "x.seqlab")]) == 2
    err = capsys.readouterr().err.strip()
    assert re.fullmatch(r"seqlab: error: \S*brat: cannot calibrate: its types \['Disease', 'Gene'\] are none of the "
                        r"model's .* the model's temperature \(.*\) is kept", err), err
    assert not (tmp_path / "x.seqlab").exists()
    with pytest.raises(SeqlabError, match=r"dev.txt: cannot calibrate: .* too few to fit"):
        calibrate(tagger, NER / "dev.txt", strict=True)
