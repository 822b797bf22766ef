"""The one score record of metrics.json: written as {score, measure, report}, read from old runs' keys too."""
from __future__ import annotations

import pytest

from seqlab.core.errors import SeqlabError
from seqlab.core.scores import measure_report, record, recorded_scores, split_score

SPAN = {"precision": 80.0, "recall": 90.0, "f1": 84.71, "accuracy": 97.0,
        "per_type": {"PER": {"precision": 80.0, "recall": 90.0, "f1": 84.71, "gold": 10}}}
POS = {"accuracy": 95.5, "per_label": {"NOUN": {"precision": 96.0, "recall": 95.0, "f1": 95.5, "gold": 20}}}
SEMEVAL = {"official_macro_f1": 81.2, "macro_precision": 80.0, "macro_recall": 82.4, "accuracy": 79.0,
           "relations": {"Cause-Effect": {"f1": 90.0}}}
LABELS = {"macro_f1": 70.0, "macro_precision": 71.0, "macro_recall": 69.0, "relations": {"born_in": {"f1": 70.0}}}


@pytest.mark.parametrize("report, measure, score, precision, per_class", [
    (SPAN, "F1", 84.71, 80.0, {"PER": 84.71}), (POS, "accuracy", 95.5, None, {"NOUN": 95.5}),
    (SEMEVAL, "macro-F1", 81.2, 80.0, {"Cause-Effect": 90.0}), (LABELS, "macro-F1", 70.0, 71.0, {"born_in": 70.0}),
])
def test_old_and_new_entries_read_the_same(report, measure, score, precision, per_class) -> None:
    for entry in (report, record(score, measure, report)):  # before the record was kept, and now
        found = split_score({"dev": entry}, "dev")
        assert (found.score, found.measure, found.precision, found.per_class()) == (score, measure, precision,
                                                                                     per_class)


def test_the_record_keeps_the_old_keys_for_old_readers() -> None:
    entry = record(95.5, "accuracy", POS)
    assert entry["accuracy"] == 95.5 and entry["report"] == POS and (entry["score"], entry["measure"]) == (
        95.5, "accuracy")


def test_the_record_wins_over_a_report_key() -> None:
    entry = {"f1": 1.0, "score": 2.0, "measure": "F1", "report": {"f1": 2.0}}
    assert split_score({"test": entry}, "test").score == 2.0


def test_a_missing_split_is_none_and_a_bad_one_is_named() -> None:
    assert split_score({"dev": {"f1": 1.0}}, "test") is None
    assert recorded_scores({"dev": {"f1": 1.0}}, "m.json").keys() == {"dev"}
    with pytest.raises(SeqlabError, match=r"^m.json: not the scores of a seqlab run"):
        recorded_scores({"dev": "high"}, "m.json")


def test_a_manifest_score_becomes_its_measure_s_report() -> None:
    assert split_score({"dev": measure_report("accuracy", 95.5)}, "dev").report == {"accuracy": 95.5}
    with pytest.raises(SeqlabError, match="measure 'BLEU': expected one of"):
        measure_report("BLEU", 1.0)
