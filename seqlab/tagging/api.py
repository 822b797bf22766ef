"""A trained tagger as one object: ``seqlab.load(run_dir)`` → :class:`SequenceTagger`.

It owns the config, vocabularies, fitted token features, model and device of a run, and tags raw
text, pre-tokenised sentences or a labelled file::

    tagger = seqlab.load("runs/conll03_glove")
    doc = tagger.tag("Angela Merkel met Emmanuel Macron in Berlin.")
    for span in doc.spans: print(span.text, span.label, span.start, span.end, span.confidence)
"""
from __future__ import annotations

import logging
from collections import deque
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Iterable, Iterator, Sequence

import torch

from seqlab.core import rundir
from seqlab.core.device import resolve_device
from seqlab.core.errors import SeqlabError
from seqlab.core.loaded import DEFAULT_BACKEND, check_kind, model_metadata
from seqlab.data.batching import Encoded, encode
from seqlab.core.paths import data_relative
from seqlab.data.dataset import Split, file_layout, read_split
from seqlab.data.labelling import Evaluation
from seqlab.data.schemes import detect_scheme
from features.tokenize import SentenceTokens, sentence_tokens
from seqlab.data.vocab import Vocab, load_vocabs
from seqlab.models.tagger import Tagger
from seqlab.modules.transformer import recorded_encoder
from seqlab.tagging.build import build_tagger, use_post_viterbi
from seqlab.tagging.calibration import Outcomes, calibration_fault, fit_temperature, stored_temperature
from seqlab.tagging.calibration import summary as calibration_summary
from seqlab.tagging.config import POOL_BATCHES, Config, load_config
from seqlab.tagging.document import Document, Sentence, Span
from seqlab.tagging.evaluate import evaluate_split
from seqlab.tagging.features import TokenFeatures, encode_options
from seqlab.tagging.inputs import check_positive, check_text, check_token_sentences
from seqlab.modules.decoders import SoftmaxDecoder
from seqlab.tagging.parts import load_token_features, post_viterbi
from seqlab.tagging.predict import Emissions, Prediction, Predictor
from seqlab.tagging.locate import locate_feature_files


log = logging.getLogger("seqlab")

#: A "sentence" of raw text longer than this many tokens (a line without sentence ends, a table, a word list)
#: is tagged in pieces of at most this many: tagging cost and memory grow with a sentence's length, and no
#: training sentence of CoNLL-2003 or OntoNotes comes near it.
MAX_SENTENCE_TOKENS = 256


@dataclass
class _Pending:
    """A text waiting in :meth:`SequenceTagger.tag_many`: its tokenised sentences and those tagged so far."""

    text: str
    sentences: list[SentenceTokens]
    tagged: list[Sentence | None]
    remaining: int  # sentences not tagged yet

    @property
    def done(self) -> bool:
        return self.remaining == 0


def cap_length(sentences: list[SentenceTokens], limit: int, where: str) -> list[SentenceTokens]:
    """``sentences`` with each one longer than ``limit`` tokens cut into pieces of at most ``limit``
    (with a warning naming ``where``)."""
    if all(len(s.words) <= limit for s in sentences):
        return sentences
    longest = max(len(s.words) for s in sentences)
    log.warning("%s: a sentence of %d tokens is tagged in pieces of at most %d tokens", where, longest, limit)
    return [SentenceTokens(*(part[i:i + limit] for part in s)) for s in sentences
            for i in range(0, len(s.words), limit)]


def _ready(waiting: deque[_Pending]) -> Iterator[Document]:
    """Yield (and drop) the texts at the front of ``waiting`` whose sentences are all tagged."""
    while waiting and waiting[0].done:
        pending = waiting.popleft()
        yield Document(pending.text, pending.tagged)  # type: ignore[arg-type]


class SequenceTagger:
    """A trained tagger (BiLSTM-CRF, softmax or windowed), in eval mode on its device."""

    task = "tagging"
    inputs = ("texts", "tokens")  # what :meth:`predict` takes: raw text, or pre-tokenised sentences

    def __init__(self, config: Config, vocabs: dict[str, Vocab], features: TokenFeatures | None,
                 emissions: Emissions, *, backend: str = DEFAULT_BACKEND, temperature: float = 1.0) -> None:
        """``emissions``: what computes a batch's label scores, which the same :class:`Predictor` decodes: the
        torch tagger itself, or another backend's (onnxruntime's); ``backend`` names it
        (:data:`seqlab.apps.backends.BACKENDS`). ``temperature``: the confidences' calibration
        (:mod:`seqlab.tagging.calibration`; 1.0: the CRF's own marginals)."""
        self.config, self.vocabs, self.features, self.backend = config, vocabs, features, backend
        self.model = emissions if isinstance(emissions, Tagger) else None  # the torch modules, when they score
        self.labelling = config.data.labelling
        self.predictor = Predictor(emissions, vocabs["tags"], self.labelling, temperature=temperature)
        self.device = self.predictor.device

    @classmethod
    def load(cls, run_dir: str | Path, device: torch.device | str = "auto") -> "SequenceTagger":
        """Load a run directory written by ``seqlab train``: config, vocabularies, fitted features and the
        best weights (``torch.load(weights_only=True)``: a model file never runs code)."""
        run_dir = Path(run_dir)
        device = resolve_device(device, key="device") if isinstance(device, str) else device
        if not (run_dir / rundir.CONFIG).is_file():
            raise SeqlabError(f"{run_dir}: not a seqlab run directory (no {rundir.CONFIG}); "
                              "pass the --output folder of a training run")
        config = locate_feature_files(load_config(run_dir / rundir.CONFIG), run_dir)
        vocabs = load_vocabs(run_dir / rundir.VOCABS)
        features = load_token_features(config.model.features, state=rundir.load_feature_state(run_dir))
        model = build_tagger(config, vocabs, token_features=features, encoder_record=recorded_encoder(run_dir))
        rundir.load_state(model, rundir.load_weights(run_dir, device), run_dir / rundir.WEIGHTS)
        return cls(config, vocabs, features, model.to(device).eval(), temperature=stored_temperature(run_dir))

    @property
    def types(self) -> list[str]:
        """The entity (or chunk) types the model predicts; a token-label model's labels (its POS tags)."""
        return sorted(self.labelling.classes(self.vocabs["tags"].itos))

    def use_post_viterbi(self) -> None:
        """Decode a softmax tagger by Viterbi under its scheme's allowed transitions (Turian et al. 2009)."""
        labels, labelling = self.vocabs["tags"].itos, self.labelling
        if self.model is not None:
            use_post_viterbi(self.model, labels, labelling)
        elif not isinstance(self.predictor.backend.decoder, SoftmaxDecoder):
            raise SeqlabError(f"post-Viterbi decoding applies to softmax taggers; this model decodes with "
                              f"{type(self.predictor.backend.decoder).__name__}")
        else:
            self.predictor.backend.decoder = post_viterbi(labels, labelling)

    # ------------------------------------------------------------ tagging

    def tag(self, text: str, *, scheme: str | None = None) -> Document:
        """Split ``text`` into sentences and CoNLL-style tokens and tag it; offsets are into ``text``; labels
        in ``scheme`` (iob1, iob2, bioes, bilou; default iob2, B- at every entity start; a token-label model's
        labels are its tags, and its documents have no spans)."""
        check_text(text, "tag: text")
        return next(self.tag_many([text], scheme=scheme))

    def tag_many(self, texts: Iterable[str], *, batch_size: int = 100, scheme: str | None = None,
                 confidences: bool = True, pool: int = POOL_BATCHES) -> Iterator[Document]:
        """Tag texts (e.g. the lines of a file) as a stream, yielding one document per text, in input order.

        Sentences are gathered across texts until ``pool`` batches of ``batch_size`` are waiting (a long text
        fills :data:`POOL_BATCHES` batches by itself), sorted by length into batches (less padding) and decoded;
        a document is yielded once all its sentences are done. The default, 32 batches of 100, is how ``seqlab
        tag FILE`` runs: about 40% less CPU time than ``pool=1`` over Wikipedia lines, with the same labels and
        confidences. A document can then come out up to ``pool * batch_size`` sentences after it went in: for
        text that arrives line by line and wants each answer at once (a person typing), pass ``pool=1``.
        Memory stays bounded by the pool and the longest text: a sentence longer than
        :data:`MAX_SENTENCE_TOKENS` tokens is tagged in pieces (with a warning). Labels are in ``scheme``, as
        in :meth:`tag`; without ``confidences`` (a quarter faster) every span's confidence is 1.0."""
        if isinstance(texts, (str, bytes)):
            raise SeqlabError(f"tag_many: expected a list (or other iterable) of texts, got "
                              f"{type(texts).__name__}; for one text use tag()")
        scheme = self._scheme(scheme)
        check_positive("batch_size", batch_size)
        check_positive("pool", pool)
        waiting: deque[_Pending] = deque()  # texts not yet yielded, in input order
        queue: list[tuple[_Pending, int]] = []  # (text, sentence index) of sentences not yet tagged
        for number, text in enumerate(texts, start=1):
            text = check_text(text, f"tag_many: text {number}").rstrip("\r\n")
            sentences = sentence_tokens(text) if text.strip() else []
            sentences = cap_length(sentences, MAX_SENTENCE_TOKENS, f"text {number}")
            pending = _Pending(text, sentences, [None] * len(sentences), len(sentences))
            waiting.append(pending)
            for index in range(len(sentences)):
                queue.append((pending, index))
                if len(queue) >= batch_size * POOL_BATCHES:  # a long text: decode its sentences a pool at a time
                    self._tag_queue(queue, batch_size, scheme, confidences)
                    queue = []
                    yield from _ready(waiting)
            if len(queue) >= batch_size * pool:  # between texts: `pool` batches, sorted by length
                self._tag_queue(queue, batch_size, scheme, confidences)
                queue = []
            yield from _ready(waiting)
        self._tag_queue(queue, batch_size, scheme, confidences)
        yield from _ready(waiting)

    def _tag_queue(self, queue: list[tuple[_Pending, int]], batch_size: int, scheme: str,
                   confidences: bool) -> None:
        """Tag the queued sentences, storing each result in its text's ``tagged`` list."""
        flat = [p.sentences[i].words for p, i in queue]
        for (p, i), prediction in zip(queue, self._predict(flat, batch_size, confidences)):
            words, starts, ends = p.sentences[i]
            p.tagged[i] = self._sentence(p.text, list(zip(starts, ends)), words, prediction, scheme)
            p.remaining -= 1

    def tag_tokens(self, sentences: Sequence[Sequence[str]], *, scheme: str | None = None, batch_size: int = 100,
                   columns: dict[str, list[list[str]]] | None = None) -> list[Sentence]:
        """Tag pre-tokenised sentences; labels in ``scheme`` (iob1, iob2, bioes, bilou; default iob2; a
        token-label model's labels are its tags). Offsets are into the tokens joined by single spaces. A model that
        reads other data columns (a windowed chunker's POS tags) gets them as ``columns={"pos": [[...], ...]}``."""
        scheme = self._scheme(scheme)
        sentences = check_token_sentences(sentences)
        check_positive("batch_size", batch_size)
        filled = [i for i, tokens in enumerate(sentences) if tokens]  # an empty sentence gets an empty Sentence
        if columns is not None and len(filled) < len(sentences):
            columns = {name: [rows[i] for i in filled] for name, rows in columns.items()}
        out = [Sentence([], [], [], []) for _ in sentences]
        for i, prediction in zip(filled, self._predict([sentences[i] for i in filled], batch_size, columns=columns)):
            tokens, offsets, cursor = sentences[i], [], 0
            for token in tokens:
                offsets.append((cursor, cursor + len(token)))
                cursor += len(token) + 1
            out[i] = self._sentence(" ".join(tokens), offsets, tokens, prediction, scheme)
        return out

    def _scheme(self, scheme: str | None) -> str:
        """``scheme`` checked for output labels, or the default (iob2 for spans; token labels as they are)."""
        return self.labelling.output_scheme(scheme)

    def _predict(self, sentences: list[list[str]], batch_size: int, confidences: bool = True,
                 columns: dict[str, list[list[str]]] | None = None) -> list[Prediction]:
        if not sentences:
            return []
        return self.predictor(self._encode(sentences, columns), batch_size=batch_size, confidences=confidences)

    def _encode(self, sentences: list[list[str]], columns: dict[str, list[list[str]]] | None = None) -> Encoded:
        return encode(sentences, self.vocabs, **encode_options(self.features, columns))

    def _sentence(self, text: str, offsets: list[tuple[int, int]], tokens: list[str], prediction: Prediction,
                  scheme: str | None = None) -> Sentence:
        spans = [Span(text[offsets[s][0]:offsets[e - 1][1]], kind, offsets[s][0], offsets[e - 1][1], conf, s, e)
                 for kind, s, e, conf in prediction.spans]
        # the spans read from the predicted labels (conlleval's rules), written in the scheme asked for
        labels = self.labelling.output_labels(prediction.labels, [span[:3] for span in prediction.spans],
                                              self._scheme(scheme))
        return Sentence(tokens, offsets, labels, spans)

    # ------------------------------------------------------------ evaluation

    def evaluate(self, data: str | Path | Split | Outcomes, *, output: str | Path | None = None,
                 batch_size: int = 100, scheme: str | None = None, columns: Sequence[str] | None = None) -> Evaluation:
        """Score the model on a labelled file laid out like its training data, or as ``token ... tag`` (e.g.
        ``token TAG``: :func:`seqlab.data.dataset.file_layout`), or on a split already read,
        with conlleval's measure; with ``output``, write ``token gold pred`` lines there (atomically).
        Predictions are written and compared in ``scheme``, the gold file's tag scheme: by default the
        scheme of the model's training files; ``"auto"`` detects it from the file's tags
        (:func:`seqlab.data.schemes.detect_scheme`), so that an IOB2 file is not scored against IOB1 labels.
        ``columns`` names the file's columns with the model's column names (``["ner", "word"]`` for a ``TAG
        token`` file; ``"_"`` skips one). ``result.f1`` is the span F1, ``result.to_dict()`` the report as data,
        ``str(result)`` conlleval's text. ``data`` may also be a split this model has decoded already
        (:meth:`outcomes`): its labels are then decoded from the emissions stored there, so the encoder does not
        run again (``batch_size`` is the one it was decoded at)."""
        split = data.split if isinstance(data, Outcomes) else self._labelled(data, columns)
        file_scheme = self.labelling.file_scheme
        if scheme == "auto" and self.labelling.has_spans:
            try:
                file_scheme = detect_scheme(split.file_tags) or file_scheme
            except SeqlabError as err:
                raise SeqlabError(f"{split.path}: {err}; name its scheme (--scheme)") from None
        elif scheme != "auto":
            file_scheme = self._scheme(scheme or file_scheme)
        if isinstance(data, Outcomes):
            predictor, encoded, batch_size = data.stored(), data.data, data.batch_size
        else:
            predictor = self.predictor
            encoded = encode(split.tokens, self.vocabs, **encode_options(self.features, split.columns))
        return evaluate_split(predictor, encoded, split, labelling=self.labelling, file_scheme=file_scheme,
                              batch_size=batch_size, predictions=Path(output) if output else None)

    def _labelled(self, data: str | Path | Split, columns: Sequence[str] | None = None) -> Split:
        """A labelled file read in the model's layout (or ``columns``), or a split already read."""
        if isinstance(data, Split):
            return data
        if not Path(data).exists():  # a file, or a brat folder: what seqlab eval reads
            raise SeqlabError(f"{data}: no such file or folder")
        return read_split(file_layout(self.config.data, data, columns), "eval", path=data)

    @property
    def temperature(self) -> float:
        """The calibration temperature the confidences are computed at (1.0: uncalibrated)."""
        return self.predictor.temperature

    def outcomes(self, data: str | Path | Split, *, batch_size: int = 100,
                 columns: Sequence[str] | None = None) -> Outcomes:
        """A labelled file decoded once, for calibration: its units' confidences at any temperature and whether
        each is right (:class:`seqlab.tagging.calibration.Outcomes`)."""
        split = self._labelled(data, columns)
        encoded = encode(split.tokens, self.vocabs, **encode_options(self.features, split.columns))
        return Outcomes(self.predictor, encoded, split, self.labelling, batch_size=batch_size)

    def calibrate(self, data: str | Path | Split | Outcomes, *, batch_size: int = 100,
                  strict: bool = False) -> dict[str, Any]:
        """Fit the confidences' temperature on a labelled file (the dev set), or on a split this model has decoded
        already (:meth:`outcomes`), and use it from now on; returns what a run's calibration.json records (the
        temperature, and the ECE there before and after). ``strict``: data that cannot calibrate
        (:func:`seqlab.tagging.calibration.calibration_fault`) is a SeqlabError, not the fallback 1.0."""
        outcomes = data if isinstance(data, Outcomes) else self.outcomes(data, batch_size=batch_size)
        fault = calibration_fault(outcomes) if strict else ""
        if fault:
            raise SeqlabError(f"{outcomes.split.path}: cannot calibrate: {fault}; the model's temperature "
                              f"({self.predictor.temperature:g}) is kept")
        temperature = fit_temperature(outcomes)
        self.predictor.temperature = temperature
        where = Path(data.split.path if isinstance(data, Outcomes) else data.path if isinstance(data, Split) else data)
        return calibration_summary(outcomes.reliability(1.0), outcomes.reliability(temperature), data_relative(where))

    # ------------------------------------------------------------ the loaded-model protocol (seqlab.core.loaded)

    @property
    def labels(self) -> list[str]:
        """What the model tells apart: its span types (:attr:`types`)."""
        return self.types

    def predict(self, items: Sequence[Any], *, kind: str | None = None, **options: Any) -> list[Any]:
        """A batch of ``texts`` (raw text → documents, :meth:`tag_many`) or ``tokens`` (token lists → sentences,
        :meth:`tag_tokens`); ``options`` are theirs."""
        if check_kind(self, kind) == "texts":
            return list(self.tag_many(items, **options))
        return self.tag_tokens(items, **options)

    def encode(self, result: Document | Sentence) -> dict[str, Any]:
        """A document or sentence as the one JSON schema writes it (:mod:`seqlab.core.schema`)."""
        return result.to_dict()

    def metadata(self) -> dict[str, Any]:
        """Task, labels, backend, device and resolved config (:func:`seqlab.core.loaded.model_metadata`)."""
        return model_metadata(self, self.device, self.config)

    def __repr__(self) -> str:
        return (f"SequenceTagger({self.config.model.encoder}-{self.config.model.decoder}, types={self.types}, "
                f"device={self.device}{'' if self.backend == DEFAULT_BACKEND else f', backend={self.backend}'})")
