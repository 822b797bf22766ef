"""Macro-F1 over a data set's own relation labels: hand-worked cases, scikit-learn's figures, and the choice of
measure by data format."""
from __future__ import annotations

import random

import pytest

from seqlab.core.errors import SeqlabError
from seqlab.relation.label_score import LabelResult, relation_scorer, score_labels
from seqlab.relation.score import SemEvalResult

KEY = {"1": "works_for", "2": "works_for", "3": "born_in", "4": "none", "5": "none"}


def test_the_negative_label_is_left_out_of_the_averages_but_costs_precision():
    proposed = {"1": "works_for", "2": "none", "3": "born_in", "4": "born_in", "5": "none"}
    result = score_labels(proposed, KEY, negative_label="none")
    works, born = result.relations["works_for"], result.relations["born_in"]
    assert (works.precision, works.recall) == (pytest.approx(100.0), pytest.approx(50.0))
    assert (born.precision, born.recall) == (pytest.approx(50.0), pytest.approx(100.0))  # sentence 4 was "none"
    assert result.macro_f1 == pytest.approx((200 / 3 + 200 / 3) / 2)  # none's own F1 (50) is not averaged
    assert result.macro_precision == pytest.approx(75.0) and result.macro_recall == pytest.approx(75.0)
    # micro over works_for and born_in: 2 correct of 3 proposed and of 3 gold
    assert result.micro_precision == pytest.approx(200 / 3) == result.micro_recall == result.micro_f1
    assert result.accuracy == pytest.approx(60.0) and result.score == result.macro_f1
    assert result.measure == "macro-F1" and result.negative_label == "none"
    assert "macro-averaged over 2 labels (excluding 'none')" in result.report
    assert "(negative label, not averaged)" in result.report


def test_without_a_negative_label_every_gold_label_is_averaged_and_micro_f1_is_accuracy():
    proposed = {"1": "works_for", "2": "none", "3": "born_in", "4": "born_in", "5": "none"}
    result = score_labels(proposed, KEY)
    assert result.macro_f1 == pytest.approx((200 / 3 + 200 / 3 + 50.0) / 3)  # none: 1 of 2 proposed, 1 of 2 gold
    assert result.micro_f1 == pytest.approx(result.accuracy) == pytest.approx(60.0)
    assert "macro-averaged over 3 labels:" in result.report


def test_a_label_only_proposed_is_not_averaged_and_a_never_proposed_one_scores_zero():
    result = score_labels({"1": "founded", "2": "works_for", "3": "none", "4": "none", "5": "none"}, KEY,
                          negative_label="none")
    assert result.relations["founded"].gold == 0 and result.relations["born_in"].f1 == 0.0
    assert result.macro_f1 == pytest.approx((200 / 3 + 0.0) / 2)  # works_for and born_in
    assert "founded: precision:   0.00%" in result.report and "(not in the gold labels, not averaged)" in result.report
    assert result.to_dict()["relations"]["founded"] == {"precision": 0.0, "recall": 0.0, "f1": 0.0, "gold": 0,
                                                        "predicted": 1, "correct": 0}


def test_figures_match_scikit_learn_on_random_labels():
    metrics = pytest.importorskip("sklearn.metrics")
    rng = random.Random(3)
    labels = ["a", "b", "c", "d", "NA"]
    for _ in range(50):
        n = rng.randint(1, 40)
        key = {str(i): rng.choice(labels) for i in range(n)}
        proposed = {str(i): rng.choice(labels) for i in range(n)}
        if all(label == "NA" for label in key.values()):
            continue
        gold, pred = list(key.values()), [proposed[i] for i in key]
        averaged = sorted({g for g in gold if g != "NA"})
        positive = [label for label in labels if label != "NA"]
        result = score_labels(proposed, key, negative_label="NA")
        assert result.macro_f1 == pytest.approx(100 * metrics.f1_score(gold, pred, labels=averaged, average="macro",
                                                                       zero_division=0))
        assert result.micro_f1 == pytest.approx(100 * metrics.f1_score(gold, pred, labels=positive, average="micro",
                                                                       zero_division=0))
        assert result.accuracy == pytest.approx(100 * metrics.accuracy_score(gold, pred))


def test_bad_inputs():
    with pytest.raises(SeqlabError, match="no label other than the negative label 'none'"):
        score_labels({"4": "born_in", "5": "none"}, {"4": "none", "5": "none"}, negative_label="none")
    with pytest.raises(SeqlabError, match="same ids, but '9' is not in the gold labels"):
        score_labels({"9": "none"}, {"1": "none"})
    with pytest.raises(SeqlabError, match="no predictions"):
        score_labels({}, KEY)


def test_semeval_data_keeps_the_official_scorer_and_json_lines_get_the_label_measure():
    key = {"1": "Cause-Effect(e1,e2)", "2": "Other"}
    official = relation_scorer("semeval", negative_label=None)(key, key)
    assert isinstance(official, SemEvalResult) and official.score == official.official_f1 == pytest.approx(100.0)
    assert official.measure == "official macro-F1"
    labels = relation_scorer("jsonl", negative_label="Other")(key, key)
    assert isinstance(labels, LabelResult) and labels.score == pytest.approx(100.0)
    assert set(labels.to_dict()) >= {"macro_f1", "micro_f1", "accuracy", "negative_label", "relations"}
