"""The extraction measures against counts worked by hand: a wrong type or span is wrong, micro sums the
counts, macro averages the per-type F1 over the types in the gold or the predicted data (SpERT's evaluator)."""
from __future__ import annotations

import pytest

from seqlab.extraction.score import score_kind

PEOP, LOC, ORG = (0, 0, 2, "Peop"), (0, 4, 6, "Loc"), (1, 0, 1, "Org")


def test_entities_need_span_and_type() -> None:
    gold = [PEOP, LOC, ORG]
    predicted = [PEOP, (0, 4, 6, "Org"), (1, 0, 2, "Org")]  # right; wrong type; wrong span
    result = score_kind(gold, predicted)
    assert {t: tuple(c) for t, c in result.per_type.items()} == {"Loc": (1, 0, 0), "Org": (1, 2, 0),
                                                                 "Peop": (1, 1, 1)}
    micro = result.micro
    assert (micro.precision, micro.recall) == pytest.approx((100 / 3, 100 / 3))
    assert result.macro()[2] == pytest.approx(100 / 3)  # Peop 100, Loc 0, Org 0


def test_strict_relations_need_both_entities_typed_and_the_relation_type() -> None:
    gold = [(PEOP, LOC, "Live_In"), (ORG, LOC, "OrgBased_In")]
    predicted = [(PEOP, LOC, "Live_In"), ((0, 0, 2, "Org"), LOC, "OrgBased_In"), (LOC, PEOP, "Kill")]
    result = score_kind(gold, predicted)
    assert result.per_type["Live_In"].f1 == 100.0 and result.per_type["OrgBased_In"].f1 == 0.0
    assert result.per_type["Kill"].gold == 0  # a type only predicted counts in the macro average, as in SpERT
    assert result.macro()[2] == pytest.approx(100 / 3)
    assert result.micro.f1 == pytest.approx(2 * (1 / 3) * (1 / 2) / (1 / 3 + 1 / 2) * 100)
    data = result.to_dict()
    assert data["types"]["Live_In"]["correct"] == 1 and data["micro"]["recall"] == 50.0


def test_nothing_predicted_scores_zero_without_dividing_by_zero() -> None:
    assert score_kind([PEOP], []).micro.f1 == 0.0 and score_kind([], []).macro() == (0.0, 0.0, 0.0)
