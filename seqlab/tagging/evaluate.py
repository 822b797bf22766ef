"""Scoring a model on a labelled split with conlleval's measure; writing token/gold/pred files."""
from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

import torch

from seqlab.tagging.config import Config
from seqlab.data.batching import Encoded
from seqlab.data.conll import write_conll
from seqlab.data.dataset import Split
from seqlab.data.schemes import convert
from seqlab.data.vocab import Vocab
from seqlab.core.metrics import format_conlleval, report_to_dict, score
from seqlab.models.tagger import Tagger
from seqlab.tagging.predict import predict


@dataclass
class EvalResult:
    """Span F1 (percent) with its full conlleval report."""

    f1: float
    report: Any
    report_text: str

    def to_dict(self) -> dict[str, Any]:
        return report_to_dict(self.report)


def evaluate_split(
    model: Tagger,
    data: Encoded,
    split: Split,
    vocabs: dict[str, Vocab],
    config: Config,
    device: torch.device,
    *,
    predictions: Path | None = None,
) -> EvalResult:
    """Decode ``split``, convert labels back to the file's scheme, score against the file's gold labels."""
    results = predict(model, data, vocabs["tags"], batch_size=config.train.eval_batch_size, device=device)
    pred = [convert(r.labels, config.data.file_scheme) for r in results]
    report = score(split.file_tags, pred)
    if predictions is not None:
        write_conll(predictions, ([(w, g, p) for w, g, p in zip(*row)] for row in zip(split.tokens, split.file_tags, pred)))
    return EvalResult(report.f1, report, format_conlleval(report))
