"""Token-level measures for token-label tasks (part-of-speech tags and any other one-label-per-token task).

Accuracy is the share of tokens whose predicted label equals the gold one, the measure POS tagging is reported
with (UPOS/XPOS accuracy in the CoNLL 2018 shared task; Manning 2011 for the Penn Treebank). Beside it, every
label's precision, recall and F1 over tokens, so that a rare tag's errors are not hidden by the total.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Sequence

from seqlab.data.metrics import TypeCounts, check_same_shape


@dataclass(frozen=True)
class TokenReport:
    """Token accuracy (percent) over ``tokens`` tokens, and every label's counts (``found``: predicted)."""

    tokens: int
    correct: int
    per_label: dict[str, TypeCounts]

    @property
    def accuracy(self) -> float:
        return 100.0 * self.correct / self.tokens if self.tokens else 0.0


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
    per_label = {label: TypeCounts(gold_counts.get(label, 0), pred_counts.get(label, 0), right.get(label, 0))
                 for label in labels}
    return TokenReport(tokens, correct, per_label)


def format_token_report(report: TokenReport) -> str:
    """The report as text, laid out like conlleval's: a summary line, then one line per label."""
    lines = [f"processed {report.tokens} tokens; {report.correct} correct.",
             f"accuracy: {report.accuracy:6.2f}%"]
    width = max((len(label) for label in report.per_label), default=0)
    for label, c in report.per_label.items():
        lines.append(f"{label:>{width}}: precision: {c.precision:6.2f}%; recall: {c.recall:6.2f}%; "
                     f"FB1: {c.f1:6.2f}  {c.gold} gold, {c.found} predicted")
    return "\n".join(lines) + "\n"


def token_report_to_dict(report: TokenReport) -> dict[str, Any]:
    """The report as data (for ``metrics.json``): accuracy, token counts and every label's P/R/F1 (percent)."""
    return {
        "accuracy": report.accuracy,
        "tokens": report.tokens,
        "correct": report.correct,
        "per_label": {label: {"precision": c.precision, "recall": c.recall, "f1": c.f1, "gold": c.gold,
                              "predicted": c.found, "correct": c.correct}
                      for label, c in report.per_label.items()},
    }
