"""Scoring a tagger on a labelled split with its labelling's measure; writing token/gold/pred files.

This is the one place where predictions are turned back into the file's labels and scored: training (dev and
test), ``seqlab eval``, the Python API's ``evaluate`` and sweeps all come here. Span schemes are scored with
conlleval's span F1, token labels (POS tags) with token accuracy (:mod:`seqlab.data.labelling`).
"""
from __future__ import annotations

from pathlib import Path

from seqlab.data.batching import Encoded
from seqlab.data.conll import as_field, column_separator, write_conll
from seqlab.data.dataset import Split
from seqlab.data.labelling import Evaluation, Labelling
from seqlab.tagging.predict import Predictor

def evaluate_split(predictor: Predictor, data: Encoded, split: Split, *, labelling: Labelling,
                   file_scheme: str | None = None, batch_size: int = 100,
                   predictions: Path | None = None) -> Evaluation:
    """Decode ``split`` (encoded as ``data``), write the labels in ``file_scheme`` (default: the labelling's),
    score them against the file's gold labels, and with ``predictions`` write ``token gold pred`` lines there
    (atomically), each token as the file has it: space-separated, or TAB-separated when a token is empty, holds
    whitespace or is unprintable (:func:`seqlab.data.conll.column_separator`), so the lines join back to the
    input's and ``seqlab score conll`` reads them."""
    results = predictor(data, batch_size=batch_size)
    scheme = file_scheme or labelling.file_scheme
    pred = [labelling.output_labels(r.labels, [c[:3] for c in r.spans], scheme) for r in results]
    evaluation = labelling.score(split.file_tags, pred)
    if predictions is not None:  # tokens exactly as the file has them; TAB-separated when one is not a plain field
        words = [split.written.get(k, tokens) for k, tokens in enumerate(split.tokens)]
        write_conll(predictions, ([(as_field(w), g, p) for w, g, p in zip(*row)]
                                  for row in zip(words, split.file_tags, pred)),
                    sep=column_separator([*words, *split.file_tags, *pred]))  # a label may hold a space too
    return evaluation
