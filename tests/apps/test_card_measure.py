"""A card measures each split with one decoding: its scores and calibration are those of ``evaluate`` and
``outcomes`` run separately, for a span (NER) and a token-label (POS) model trained on the fixtures."""
from __future__ import annotations

import pytest

import seqlab
from seqlab.apps.card import _scores, tagger_card
from seqlab.core.strict import read_mapping
from seqlab.tagging.predict import TorchEmissions
from tests.conftest import FIXTURES, forget_new_log_handlers

KINDS = {"ner": (FIXTURES / "ner", "dev.txt"), "pos": (FIXTURES / "pos", "dev.conllu")}


@pytest.fixture(scope="module", params=sorted(KINDS))
def trained(request, tmp_path_factory):
    """(a loaded tiny tagger with a temperature other than 1, its config tree, its data folder)."""
    folder, _ = KINDS[request.param]
    run = tmp_path_factory.mktemp(request.param) / "run"
    with pytest.MonkeyPatch.context() as patch, forget_new_log_handlers():
        patch.setenv("SEQLAB_DATA", str(folder))
        seqlab.train(folder / "tiny.yaml", run, overrides=("train.epochs=8", "train.threads=1"), progress=False)
    tagger = seqlab.load(run, "cpu").with_temperature(1.7)
    return tagger, read_mapping(run / "config.yaml", "run config"), folder


def test_a_card_decodes_each_split_once_and_measures_what_evaluate_and_outcomes_do(trained, monkeypatch):
    tagger, tree, folder = trained
    monkeypatch.setenv("SEQLAB_DATA", str(folder))
    runs = []
    scorer = TorchEmissions.scorer
    monkeypatch.setattr(TorchEmissions, "scorer", lambda self, data: runs.append(len(data)) or scorer(self, data))
    card = tagger_card(tagger, tree, {}, {})
    assert len(runs) == 2  # the encoder ran once for dev and once for test
    for split in ("dev", "test"):
        path = folder / tree["data"][split]
        separately = tagger.outcomes(path)
        assert card["scores"][split] == _scores(tagger.evaluate(path).to_dict(), tagger.labelling.measure)
        before, after = separately.reliability(1.0), separately.reliability(1.7)
        assert card["calibration"][split]["units"] == after.count > 0
        assert card["calibration"][split]["ece_uncalibrated"] == round(before.ece, 4)
        assert card["calibration"][split]["ece"] == round(after.ece, 4) != round(before.ece, 4)
        assert card["calibration"][split]["ece_interval"] == [round(x, 4) for x in after.interval]
    assert len(runs) == 2 + 4


def test_evaluating_outcomes_gives_the_report_and_predictions_of_evaluating_the_file(trained, tmp_path):
    tagger, tree, folder = trained
    path = folder / KINDS["ner" if tagger.labelling.unit == "span" else "pos"][1]
    outcomes = tagger.outcomes(path, batch_size=3)
    again = tagger.evaluate(outcomes, output=tmp_path / "stored.txt")
    fresh = tagger.evaluate(path, output=tmp_path / "fresh.txt", batch_size=3)
    assert again.to_dict() == fresh.to_dict() and str(again) == str(fresh)
    assert (tmp_path / "stored.txt").read_text() == (tmp_path / "fresh.txt").read_text()


def test_packaging_an_uncalibrated_model_decodes_dev_once_for_its_fit_and_its_card(trained, monkeypatch):
    """describe() fits the temperature on dev and measures the card from that one decoding: the calibration is
    what calibrate() on the dev file gives, and the encoder runs once per split."""
    from seqlab.apps.card import describe
    from seqlab.core import rundir

    tagger, tree, folder = trained
    monkeypatch.setenv("SEQLAB_DATA", str(folder))
    from seqlab.tagging.calibration import calibrate

    tagger = tagger.with_temperature(1.0)
    _, expected = calibrate(tagger, folder / tree["data"]["dev"])
    runs = []
    scorer = TorchEmissions.scorer
    monkeypatch.setattr(TorchEmissions, "scorer", lambda self, data: runs.append(len(data)) or scorer(self, data))
    added = describe(tagger, tree, {}, {}, calibration=None, calibrate=True)
    assert len(runs) == 2  # dev once (fit and card), test once
    assert added[rundir.CALIBRATION] == expected
    assert added[rundir.CARD]["calibration"]["temperature"] == round(expected["temperature"], 4)
    assert tagger.temperature == expected["temperature"]
