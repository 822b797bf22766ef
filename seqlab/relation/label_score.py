"""Relation classification on a data set's own labels: macro-F1 over them, the negative label left out.

What relation JSONL data (:mod:`seqlab.data.relations`) is scored with; SemEval-2010 Task 8 files keep the
official scorer (:mod:`seqlab.relation.score`). Each label's precision, recall and F1 are those of a
one-label-against-the-rest count over the examples (:func:`seqlab.data.token_metrics.token_report`, one
example per "token"). The model-selection figure is the **macro-F1**: the plain mean of the per-label F1 over
the labels present in the gold data, excluding the negative label (``data.negative_label``, such as ``Other``
or ``no_relation``) when there is one -- the official SemEval measure's averaging, without its direction
rule (a label is right or wrong as written). Beside it: macro precision and recall (means over the same
labels), the micro-averaged P/R/F1 over the non-negative labels (OpenNRE's and TACRED's figure) and accuracy.
A prediction of the negative label is never a true positive; a wrong prediction of a label costs its precision.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Callable, Union

from seqlab.core.errors import SeqlabError
from seqlab.data.metrics import TypeCounts
from seqlab.data.token_metrics import token_report
from seqlab.relation.score import SemEvalResult, score_answers

#: What a relation measure gives: the official SemEval result or a :class:`LabelResult`.
RelationResult = Union[SemEvalResult, "LabelResult"]
#: A measure: (proposed labels by id, gold labels by id) -> its result.
Scorer = Callable[[dict[str, str], dict[str, str]], RelationResult]


@dataclass
class LabelResult:
    """Macro-F1 (percent) over the gold labels but the negative one, with the other figures and every label's
    counts; ``report`` is the text ``seqlab eval`` prints."""

    macro_f1: float
    macro_precision: float
    macro_recall: float
    micro_precision: float
    micro_recall: float
    micro_f1: float
    accuracy: float
    negative_label: str | None
    relations: dict[str, TypeCounts] = field(default_factory=dict)
    report: str = ""
    measure = "macro-F1"

    def to_dict(self) -> dict[str, Any]:
        """The result as data (``metrics.json``): the figures, the negative label and every label's P/R/F1."""
        return {"macro_f1": self.macro_f1, "macro_precision": self.macro_precision, "macro_recall": self.macro_recall,
                "micro_precision": self.micro_precision, "micro_recall": self.micro_recall, "micro_f1": self.micro_f1,
                "accuracy": self.accuracy, "negative_label": self.negative_label,
                "relations": {label: {"precision": c.precision, "recall": c.recall, "f1": c.f1, "gold": c.gold,
                                      "predicted": c.found, "correct": c.correct}
                              for label, c in self.relations.items()}}

    @property
    def score(self) -> float:
        """The model-selection figure: the macro-F1."""
        return self.macro_f1


def score_labels(proposed: dict[str, str], key: dict[str, str], *, negative_label: str | None = None) -> LabelResult:
    """Score proposed labels against the gold ``key`` (both by example id, the same ids) on the key's own labels."""
    if not proposed:
        raise SeqlabError("no predictions to score")
    if proposed.keys() != key.keys():
        missing = next((i for i in proposed if i not in key), None) or next(i for i in key if i not in proposed)
        side = "the gold labels" if missing in proposed else "the predictions"
        raise SeqlabError(f"predictions and gold labels must cover the same ids, but {missing!r} is not in {side}")
    ids = list(key)
    report = token_report([[key[i] for i in ids]], [[proposed[i] for i in ids]])
    averaged = [label for label, c in report.per_label.items() if c.gold and label != negative_label]
    if not averaged:
        raise SeqlabError(f"the gold labels hold no label other than the negative label {negative_label!r}: "
                          f"the macro-average is undefined")
    counts = [report.per_label[label] for label in averaged]
    positive = [c for label, c in report.per_label.items() if label != negative_label]
    micro = TypeCounts(*(sum(column) for column in zip(*positive)))  # the non-negative labels as one
    result = LabelResult(macro_f1=sum(c.f1 for c in counts) / len(counts),
                         macro_precision=sum(c.precision for c in counts) / len(counts),
                         macro_recall=sum(c.recall for c in counts) / len(counts),
                         micro_precision=micro.precision, micro_recall=micro.recall, micro_f1=micro.f1,
                         accuracy=report.accuracy, negative_label=negative_label, relations=dict(report.per_label))
    result.report = format_label_result(result, len(ids), report.correct)
    return result


def format_label_result(result: LabelResult, examples: int, correct: int) -> str:
    """The result as text: totals, the averages, then one line per label (conlleval's layout)."""
    excluding = f" (excluding {result.negative_label!r})" if result.negative_label is not None else ""
    averaged = sum(1 for label, c in result.relations.items() if c.gold and label != result.negative_label)
    lines = [f"processed {examples} relations; {correct} correct.",
             f"accuracy: {result.accuracy:6.2f}%",
             f"macro-averaged over {averaged} labels{excluding}: precision: {result.macro_precision:6.2f}%; "
             f"recall: {result.macro_recall:6.2f}%; F1: {result.macro_f1:6.2f}",
             f"micro-averaged{excluding}: precision: {result.micro_precision:6.2f}%; "
             f"recall: {result.micro_recall:6.2f}%; F1: {result.micro_f1:6.2f}"]
    width = max(len(label) for label in result.relations)
    for label, c in result.relations.items():
        note = "  (negative label, not averaged)" if label == result.negative_label else \
            "" if c.gold else "  (not in the gold labels, not averaged)"
        lines.append(f"{label:>{width}}: precision: {c.precision:6.2f}%; recall: {c.recall:6.2f}%; "
                     f"F1: {c.f1:6.2f}  {c.gold} gold, {c.found} predicted{note}")
    return "\n".join(lines) + "\n"


def relation_scorer(fmt: str, negative_label: str | None = None) -> Scorer:
    """The measure of data in format ``fmt``: the official SemEval-2010 Task 8 scorer for ``semeval`` files,
    :func:`score_labels` with ``negative_label`` for ``jsonl``."""
    if fmt == "semeval":
        return score_answers
    return lambda proposed, key: score_labels(proposed, key, negative_label=negative_label)
