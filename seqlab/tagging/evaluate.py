"""Scoring a tagger on a labelled split with conlleval's measure; writing token/gold/pred files.

This is the one place where predictions are converted back to the file's tag scheme and scored:
training (dev and test), ``seqlab eval``, the Python API's ``evaluate`` and sweeps all come here.
"""
from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from seqlab.data.metrics import format_conlleval, report_to_dict, score
from seqlab.data.batching import Encoded
from seqlab.data.conll import write_conll
from seqlab.data.dataset import Split
from seqlab.data.schemes import convert
from seqlab.tagging.predict import Predictor


@dataclass
class EvalResult:
    """Span F1 (percent) with its full conlleval report, as an object (``report``) and as text."""

    f1: float
    report: Any
    report_text: str

    def to_dict(self) -> dict[str, Any]:
        return report_to_dict(self.report)

    def __str__(self) -> str:
        return self.report_text


def evaluate_split(predictor: Predictor, data: Encoded, split: Split, *, file_scheme: str, batch_size: int = 100,
                   predictions: Path | None = None) -> EvalResult:
    """Decode ``split`` (encoded as ``data``), convert labels back to ``file_scheme``, score against the
    file's gold labels, and with ``predictions`` write ``token gold pred`` lines there (atomically)."""
    results = predictor(data, batch_size=batch_size)
    pred = [convert(r.labels, file_scheme) for r in results]
    report = score(split.file_tags, pred)
    if predictions is not None:
        write_conll(predictions, ([(_one_field(w), g, p) for w, g, p in zip(*row)]
                                  for row in zip(split.tokens, split.file_tags, pred)))
    return EvalResult(report.f1, report, format_conlleval(report))


def _one_field(token: str) -> str:
    """``token`` as one space-separated field: whitespace in it (a TAB-separated file's token may be a space
    or hold one) becomes ``_``, so that conlleval and ``seqlab score`` read the predictions file's columns."""
    return token if token.isprintable() and not any(c.isspace() for c in token) else \
        "".join("_" if c.isspace() or not c.isprintable() else c for c in token)
