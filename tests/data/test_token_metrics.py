"""Token accuracy and per-label counts of token-label tasks (POS tagging)."""
from __future__ import annotations

import pytest

from seqlab.data.token_metrics import format_token_report, token_accuracy, token_report, token_report_to_dict


def test_token_accuracy_compares_any_tags() -> None:
    assert token_accuracy([["NN", "VB"], ["DT"]], [["NN", "NN"], ["DT"]]) == pytest.approx(200 / 3)
    assert token_accuracy([], []) == 0.0


def test_per_label_counts_and_text() -> None:
    report = token_report([["NN", "VB", "DT"]], [["NN", "NN", "DT"]])
    assert (report.tokens, report.correct) == (3, 2)
    nn, vb = report.per_label["NN"], report.per_label["VB"]
    assert (nn.gold, nn.found, nn.correct) == (1, 2, 1)
    assert nn.precision == pytest.approx(50.0) and nn.recall == pytest.approx(100.0)
    assert vb.f1 == 0.0
    text = format_token_report(report)
    assert "accuracy:  66.67%" in text and "VB: precision:   0.00%" in text
    assert token_report_to_dict(report)["per_label"]["DT"]["f1"] == pytest.approx(100.0)


def test_shapes_must_match() -> None:
    with pytest.raises(ValueError, match="same length"):
        token_report([["NN", "VB"]], [["NN"]])
