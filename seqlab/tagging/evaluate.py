"""Scoring a tagger on a labelled split with its labelling's measure; writing token/gold/pred files.

This is the one place where predictions are turned back into the file's labels and scored: training (dev and
test), ``seqlab eval``, the Python API's ``evaluate`` and sweeps all come here. Span schemes are scored with
conlleval's span F1, token labels (POS tags) with token accuracy (:mod:`seqlab.data.labelling`).
"""
from __future__ import annotations

from pathlib import Path
from typing import Any, Sequence

from seqlab.core.errors import SeqlabError
from seqlab.core.paths import require_file
from seqlab.data.batching import Encoded, encode
from seqlab.data.config import DataConfig
from seqlab.data.conll import as_field, column_separator, write_conll
from seqlab.data.dataset import Split
from seqlab.data.labelling import Evaluation, Labelling
from seqlab.tagging.calibration import Outcomes
from seqlab.tagging.features import encode_options
from seqlab.tagging.gold import read_gold
from seqlab.tagging.predict import Predictor

#: A loaded tagger (:class:`seqlab.tagging.api.SequenceTagger`, which imports this module: named, not imported back).
SequenceTagger = Any


def read_labelled(config: DataConfig, data: str | Path | Split, columns: Sequence[str] | None = None, *,
                  encoding: str | None = None, offsets: str | None = None) -> Split:
    """A labelled file (or brat folder) read in the layout of a model whose data config is ``config`` (or as
    ``columns``), in ``encoding`` and with ``offsets`` as :func:`seqlab.tagging.gold.read_gold` reads what
    ``seqlab eval`` scores (None: the model's ``data.encoding`` and ``data.offsets``); or a split already read."""
    if isinstance(data, Split):
        return data
    return read_gold(config, data, columns=columns, encoding=encoding, offsets=offsets)


def evaluate(tagger: SequenceTagger, data: str | Path | Split | Outcomes, *, output: str | Path | None = None,
             batch_size: int = 100, scheme: str | None = None, columns: Sequence[str] | None = None,
             encoding: str | None = None, offsets: str | None = None) -> Evaluation:
    """Score ``tagger`` on a labelled file laid out like its training data, or as ``token ... tag`` (e.g.
    ``token TAG``: :func:`seqlab.data.dataset.file_layout`), or on a split already read, with its labelling's
    measure; with ``output``, write ``token gold pred`` lines there (atomically). Predictions are written and
    compared in ``scheme``, the gold file's tag scheme: by default the scheme of the model's training files;
    ``"auto"`` detects it from the file's tags (:func:`seqlab.data.schemes.detect_scheme`), so that an IOB2 file
    is not scored against IOB1 labels. ``columns`` names the file's columns with the model's column names
    (``["ner", "word"]`` for a ``TAG token`` file; ``"_"`` skips one). ``result.score`` is the measure's figure,
    ``result.to_dict()`` the report as data, ``str(result)`` the field's scorer's text. ``data`` may also be a
    split the tagger has decoded already (:meth:`~seqlab.tagging.api.SequenceTagger.outcomes`): its labels are
    then decoded from the emissions stored there, so the encoder does not run again (``batch_size`` is the one
    it was decoded at). ``encoding`` and ``offsets``: the file's text encoding and an offset format's unit, as
    ``seqlab eval --encoding / --offsets`` (None: the model's ``data.encoding`` and ``data.offsets``)."""
    labelling = tagger.labelling
    split = data.split if isinstance(data, Outcomes) else read_labelled(tagger.config.data, data, columns,
                                                                        encoding=encoding, offsets=offsets)
    if scheme == "auto":
        try:
            file_scheme = labelling.detect_file_scheme(split.file_tags)
        except SeqlabError as err:
            raise SeqlabError(f"{split.path}: {err}; name its scheme (--scheme)") from None
    else:
        file_scheme = labelling.output_scheme(scheme or labelling.file_scheme)
    if isinstance(data, Outcomes):
        predictor, encoded, batch_size = data.stored(), data.data, data.batch_size
    else:
        predictor = tagger.predictor
        encoded = encode(split.tokens, tagger.vocabs, **encode_options(tagger.features, split.columns))
    return evaluate_split(predictor, encoded, split, labelling=labelling, file_scheme=file_scheme,
                          batch_size=batch_size, predictions=Path(output) if output else None)


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
