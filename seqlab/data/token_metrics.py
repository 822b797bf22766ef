"""Token-level measures for token-label tasks (part-of-speech tags and any other one-label-per-token task).

Accuracy is the share of tokens whose predicted label equals the gold one, the measure POS tagging is reported
with (UPOS/XPOS accuracy in the CoNLL 2018 shared task; Manning 2011 for the Penn Treebank). Beside it, every
label's precision, recall and F1 over tokens, so that a rare tag's errors are not hidden by the total.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Sequence

from seqlab.data.metrics import check_same_shape


def _percent(part: int, whole: int) -> float:
    return 100.0 * part / whole if whole else 0.0


@dataclass(frozen=True)
class LabelCounts:
    """One label's token counts: in the gold labels, in the predictions, and predicted correctly."""

    gold: int = 0
    predicted: int = 0
    correct: int = 0

    @property
    def precision(self) -> float:
        return _percent(self.correct, self.predicted)

    @property
    def recall(self) -> float:
        return _percent(self.correct, self.gold)

    @property
    def f1(self) -> float:
        p, r = self.precision, self.recall
        return 2 * p * r / (p + r) if p + r else 0.0


@dataclass(frozen=True)
class TokenReport:
    """Token accuracy (percent) over ``tokens`` tokens, and every label's counts."""

    tokens: int
    correct: int
    per_label: dict[str, LabelCounts]

    @property
    def accuracy(self) -> float:
        return _percent(self.correct, self.tokens)


def token_accuracy(gold: Sequence[Sequence[str]], pred: Sequence[Sequence[str]]) -> float:
    """Percentage of tokens whose predicted label equals the gold label; any label set (POS tags too)."""
    return token_report(gold, pred).accuracy


def token_report(gold: Sequence[Sequence[str]], pred: Sequence[Sequence[str]]) -> TokenReport:
    """Accuracy and per-label counts of ``pred`` against ``gold`` (sentences of labels, the same shapes)."""
    check_same_shape(gold, pred)
    gold_counts: dict[str, int] = {}
    pred_counts: dict[str, int] = {}
    right: dict[str, int] = {}
    tokens = correct = 0
    for gold_sentence, pred_sentence in zip(gold, pred):
        for g, p in zip(gold_sentence, pred_sentence):
            tokens += 1
            gold_counts[g] = gold_counts.get(g, 0) + 1
            pred_counts[p] = pred_counts.get(p, 0) + 1
            if g == p:
                correct += 1
                right[g] = right.get(g, 0) + 1
    labels = sorted(set(gold_counts) | set(pred_counts))
    per_label = {label: LabelCounts(gold_counts.get(label, 0), pred_counts.get(label, 0), right.get(label, 0))
                 for label in labels}
    return TokenReport(tokens, correct, per_label)


def format_token_report(report: TokenReport) -> str:
    """The report as text, laid out like conlleval's: a summary line, then one line per label."""
    lines = [f"processed {report.tokens} tokens; {report.correct} correct.",
             f"accuracy: {report.accuracy:6.2f}%"]
    width = max((len(label) for label in report.per_label), default=0)
    for label, c in report.per_label.items():
        lines.append(f"{label:>{width}}: precision: {c.precision:6.2f}%; recall: {c.recall:6.2f}%; "
                     f"FB1: {c.f1:6.2f}  {c.gold} gold, {c.predicted} predicted")
    return "\n".join(lines) + "\n"


def token_report_to_dict(report: TokenReport) -> dict[str, Any]:
    """The report as data (for ``metrics.json``): accuracy, token counts and every label's P/R/F1 (percent)."""
    return {
        "accuracy": report.accuracy,
        "tokens": report.tokens,
        "correct": report.correct,
        "per_label": {label: {"precision": c.precision, "recall": c.recall, "f1": c.f1, "gold": c.gold,
                              "predicted": c.predicted, "correct": c.correct}
                      for label, c in report.per_label.items()},
    }
