"""A split's score as a run records it: written once by the trainer, read by one function.

``metrics.json`` holds, for each scored split (``dev``, ``test``), the task's report (conlleval's counts and
F1, token accuracy with per-label figures, the SemEval scorer's macro-F1...) and with it the record every reader
takes: ``score`` (percent, the figure model selection read), ``measure`` (its name) and ``report`` (the report
again, as data). :func:`split_score` reads it; a run written before the record was kept has only the report's
own keys, and its score is taken from the first key of :data:`MEASURES` the report holds.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Mapping

from seqlab.core.errors import SeqlabError


@dataclass(frozen=True)
class Measure:
    """Where a measure's figures sit in a split's report: the score's key and, where the measure has them, the
    overall precision and recall and the per-class table (each class's ``f1``)."""

    name: str
    key: str
    precision: str = ""
    recall: str = ""
    per_class: str = ""


#: The measures seqlab's tasks score with, in the order an old report's keys are tried: the official SemEval
#: scorer, macro-F1 over a relation file's own labels, conlleval's span F1, token accuracy (POS taggers).
MEASURES = (Measure("macro-F1", "official_macro_f1", "macro_precision", "macro_recall", "relations"),
            Measure("macro-F1", "macro_f1", "macro_precision", "macro_recall", "relations"),
            Measure("F1", "f1", "precision", "recall", "per_type"),
            Measure("accuracy", "accuracy", per_class="per_label"))
_BY_NAME = {"official macro-F1": MEASURES[0], **{m.name: m for m in reversed(MEASURES)}}


@dataclass(frozen=True)
class Score:
    """One split's recorded score: the figure (percent), the measure's name and the full report."""

    score: float
    measure: str
    report: dict[str, Any] = field(default_factory=dict)

    @property
    def keys(self) -> Measure:
        """Where this measure's figures sit in :attr:`report`."""
        return _BY_NAME.get(self.measure) or _measure_of(self.report)

    @property
    def precision(self) -> float | None:
        """Overall precision (percent); None for a measure without one (token accuracy)."""
        return float(self.report[self.keys.precision]) if self.keys.precision else None

    @property
    def recall(self) -> float | None:
        """Overall recall (percent); None for a measure without one (token accuracy)."""
        return float(self.report[self.keys.recall]) if self.keys.recall else None

    def per_class(self) -> dict[str, float]:
        """Each class's F1 (entity type, label or relation), where the report has a per-class table."""
        table = self.report.get(self.keys.per_class) or {} if self.keys.per_class else {}
        return {name: float(row["f1"]) for name, row in table.items() if isinstance(row, dict) and "f1" in row}


def record(score: float, measure: str, report: Mapping[str, Any]) -> dict[str, Any]:
    """A split's entry of metrics.json: the report's own keys (which older readers take), and the record
    ``{score, measure, report}``."""
    return {**report, "score": score, "measure": measure, "report": dict(report)}


def _measure_of(report: Mapping[str, Any]) -> Measure:
    """The measure an old report (one without the record) was written with, by the keys it holds."""
    return next((m for m in MEASURES if m.key in report), MEASURES[2])


def split_score(metrics: Mapping[str, Any], split: str) -> Score | None:
    """The recorded score of ``split`` in a run's metrics (None when the split was not scored); a run written
    before the record was kept is read from its report's keys. A malformed entry raises KeyError or TypeError,
    which the caller names with its file."""
    entry = metrics.get(split)
    if not entry:
        return None
    if not isinstance(entry, Mapping):
        raise TypeError(f"{split!r} is {type(entry).__name__}, not an object of scores")
    if "score" in entry and "measure" in entry:
        report = entry.get("report", entry)
        return Score(float(entry["score"]), str(entry["measure"]), dict(report))
    measure = _measure_of(entry)
    return Score(float(entry[measure.key]), measure.name, dict(entry))


def measure_report(measure: str, score: float) -> dict[str, Any]:
    """The smallest report of ``measure`` holding ``score`` (a packaged model's manifest keeps only the score)."""
    keys = _BY_NAME.get(measure)
    if keys is None:
        raise SeqlabError(f"measure {measure!r}: expected one of {sorted(_BY_NAME)}")
    return record(score, measure, {keys.key: score})


def recorded_scores(metrics: Mapping[str, Any], where: str) -> dict[str, Score]:
    """The dev and test scores a run recorded (those it has), or a one-line error naming ``where``."""
    try:
        found = {split: split_score(metrics, split) for split in ("dev", "test")}
    except (KeyError, TypeError, ValueError) as err:
        raise SeqlabError(f"{where}: not the scores of a seqlab run (missing or malformed {err})") from None
    return {split: score for split, score in found.items() if score is not None}
