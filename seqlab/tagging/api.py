"""A trained tagger as one object: ``seqlab.load(run_dir)`` → :class:`SequenceTagger`.

It owns the config, vocabularies, fitted token features, model and device of a run, and tags raw
text, pre-tokenised sentences or a labelled file::

    tagger = seqlab.load("runs/conll03_glove")
    doc = tagger.tag("Angela Merkel met Emmanuel Macron in Berlin.")
    for span in doc.spans: print(span.text, span.label, span.start, span.end, span.confidence)
"""
from __future__ import annotations

import copy
import logging
from pathlib import Path
from typing import Any, Iterable, Iterator, Sequence

import torch
from torch import nn

from seqlab.core import rundir
from seqlab.core.device import resolve_device
from seqlab.core.errors import SeqlabError
from seqlab.core.loaded import DEFAULT_BACKEND, check_kind, model_metadata
from seqlab.data.batching import Encoded, encode
from seqlab.data.dataset import Split
from seqlab.data.labelling import Evaluation
from features.tokenize import SentenceTokens
from seqlab.text.learned import for_run
from seqlab.text.pipeline import TextPipeline, token_sentence
from seqlab.data.vocab import Vocab, load_vocabs
from seqlab.models.tagger import Tagger
from seqlab.modules.transformer import recorded_encoder
from seqlab.tagging.build import build_tagger
from seqlab.tagging.calibration import Outcomes, check_temperature, stored_temperature
from seqlab.tagging.config import POOL_BATCHES, Config, load_config
from seqlab.tagging.document import Document, Sentence, Span
from seqlab.tagging.evaluate import evaluate, read_labelled
from seqlab.tagging.features import TokenFeatures, encode_options
from seqlab.tagging.inputs import check_positive, check_text, check_token_sentences
from seqlab.modules.decoders import SoftmaxDecoder
from seqlab.tagging.parts import load_token_features, post_viterbi
from seqlab.tagging.predict import Emissions, Prediction, Predictor
from seqlab.tagging.locate import locate_feature_files
from seqlab.tagging.stream import MAX_SENTENCE_TOKENS, pooled  # noqa: F401 (the cap, where callers found it)


log = logging.getLogger("seqlab")

class SequenceTagger:
    """A trained tagger (BiLSTM-CRF, softmax or windowed), in eval mode on its device."""

    task = "tagging"
    inputs = ("texts", "tokens")  # what :meth:`predict` takes: raw text, or pre-tokenised sentences

    def __init__(self, config: Config, vocabs: dict[str, Vocab], features: TokenFeatures | None,
                 emissions: Emissions, *, backend: str = DEFAULT_BACKEND, temperature: float = 1.0,
                 decoder: nn.Module | None = None, text: TextPipeline | None = None) -> None:
        """``emissions``: what computes a batch's label scores, which the same :class:`Predictor` decodes: the
        torch tagger itself, or another backend's (onnxruntime's); ``backend`` names it
        (:data:`seqlab.apps.backends.BACKENDS`). ``temperature``: the confidences' calibration
        (:mod:`seqlab.tagging.calibration`; 1.0: the CRF's own marginals). ``decoder``: what decodes the
        emissions (default: the model's own). Temperature and decoder are fixed for the tagger's life: another
        is another tagger (:meth:`with_temperature`, :meth:`with_decoder`). ``text``: how raw text becomes words
        (:class:`seqlab.text.pipeline.TextPipeline`; default: the language's base rules)."""
        self.config, self.vocabs, self.features, self.backend = config, vocabs, features, backend
        self.model = emissions if isinstance(emissions, Tagger) else None  # the torch modules, when they score
        self.labelling = config.data.labelling
        self.predictor = Predictor(emissions, vocabs["tags"], self.labelling, temperature=temperature,
                                   decoder=decoder)
        self.device = self.predictor.device
        self.text = text or TextPipeline(config.data.language)

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
        return cls(config, vocabs, features, model.to(device).eval(), temperature=stored_temperature(run_dir),
                   text=TextPipeline(config.data.language, for_run(run_dir, config.data)))

    @property
    def types(self) -> list[str]:
        """The entity (or chunk) types the model predicts; a token-label model's labels (its POS tags)."""
        return sorted(self.labelling.classes(self.vocabs["tags"].itos))

    def with_temperature(self, temperature: float) -> "SequenceTagger":
        """This tagger with its confidences at ``temperature`` (labels unchanged); this one keeps its own."""
        return self._remade(check_temperature(temperature, "temperature"), self.predictor.decoder)

    def with_decoder(self, decoder: nn.Module) -> "SequenceTagger":
        """This tagger decoding its emissions with ``decoder`` (the weights shared); this one keeps its own."""
        return self._remade(self.temperature, decoder)

    def with_post_viterbi(self) -> "SequenceTagger":
        """This softmax tagger decoded by Viterbi under its scheme's allowed transitions (Turian et al. 2009)."""
        decoder = self.predictor.decoder
        if not isinstance(decoder, SoftmaxDecoder):
            raise SeqlabError(f"post-Viterbi decoding applies to softmax taggers; this model decodes with "
                              f"{type(decoder).__name__}")
        return self.with_decoder(post_viterbi(self.vocabs["tags"].itos, self.labelling).to(self.device))

    def _remade(self, temperature: float, decoder: nn.Module) -> "SequenceTagger":
        """A copy sharing the config, vocabularies, features and emissions, with its own predictor."""
        made = copy.copy(self)
        made.predictor = Predictor(self.predictor.backend, self.vocabs["tags"], self.labelling,
                                   temperature=temperature, decoder=decoder)
        return made

    # ------------------------------------------------------------ tagging

    def tag(self, text: str, *, scheme: str | None = None) -> Document:
        """Split ``text`` into sentences and words (by the model's language and training data: :attr:`text`) and
        tag it; offsets are into ``text``; labels
        in ``scheme`` (iob1, iob2, bioes, bilou; default iob2, B- at every entity start; a token-label model's
        labels are its tags, and its documents have no spans)."""
        check_text(text, "tag: text")
        return next(self.tag_many([text], scheme=scheme))

    def tag_many(self, texts: Iterable[str], *, batch_size: int = 100, scheme: str | None = None,
                 confidences: bool = True, pool: int = POOL_BATCHES, marginals: bool = False) -> Iterator[Document]:
        """Tag texts (e.g. the lines of a file) as a stream, yielding one document per text, in input order; an item
        that is a list of tokens (``["EU", "rejects"]``) is one pre-tokenized sentence, tagged as it stands.

        Sentences are gathered across texts until ``pool`` batches of ``batch_size`` are waiting (a long text
        fills :data:`POOL_BATCHES` batches by itself), sorted by length into batches (less padding) and decoded;
        a document is yielded once all its sentences are done. The default, 32 batches of 100, is how ``seqlab
        tag FILE`` runs: about 40% less CPU time than ``pool=1`` over Wikipedia lines, with the same labels and
        confidences. A document can then come out up to ``pool * batch_size`` sentences after it went in: for
        text that arrives line by line and wants each answer at once (a person typing), pass ``pool=1``.
        Memory stays bounded by the pool and the longest text: a sentence longer than
        :data:`MAX_SENTENCE_TOKENS` tokens is tagged in pieces (with a warning). Labels are in ``scheme``, as
        in :meth:`tag`; without ``confidences`` (a quarter faster) every span's confidence is 1.0. With
        ``marginals``, each sentence also holds its tokens' marginals and its path confidence
        (:class:`~seqlab.tagging.document.Sentence`; ask for the model's own ``scheme``,
        ``tagger.labelling.name``, to get the labels those marginals are of)."""
        if isinstance(texts, (str, bytes)):
            raise SeqlabError(f"tag_many: expected a list (or other iterable) of texts, got "
                              f"{type(texts).__name__}; for one text use tag()")
        scheme = self._scheme(scheme)
        check_positive("batch_size", batch_size)
        check_positive("pool", pool)

        def tag_pool(items: list[tuple[str, SentenceTokens]]) -> list[Sentence]:
            predictions = self._predict([tokens.words for _, tokens in items], batch_size, confidences,
                                        marginals=marginals)
            return [self._sentence(text, list(zip(tokens.starts, tokens.ends)), tokens.words, prediction, scheme)
                    for (text, tokens), prediction in zip(items, predictions)]
        split = (self._split(item, number) for number, item in enumerate(texts, start=1))
        yield from pooled(split, tag_pool, batch_size=batch_size, pool=pool, most=POOL_BATCHES)

    def _split(self, item: str | Sequence[str], number: int) -> tuple[str, list[SentenceTokens]]:
        """A raw text and its sentences of words, or a pre-tokenized sentence (a list of tokens) as one."""
        if not isinstance(item, str) and isinstance(item, Sequence):
            if not item:
                return "", []
            text, sentence = token_sentence(check_token_sentences([item])[0])
            return text, [sentence]
        text = check_text(item, f"tag_many: text {number}").rstrip("\r\n")
        return text, self.text.sentences(text) if text.strip() else []

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
            text, (tokens, starts, ends) = token_sentence(sentences[i])
            out[i] = self._sentence(text, list(zip(starts, ends)), tokens, prediction, scheme)
        return out

    def _scheme(self, scheme: str | None) -> str:
        """``scheme`` checked for output labels, or the default (iob2 for spans; token labels as they are)."""
        return self.labelling.output_scheme(scheme)

    def _predict(self, sentences: list[list[str]], batch_size: int, confidences: bool = True,
                 columns: dict[str, list[list[str]]] | None = None, *, marginals: bool = False) -> list[Prediction]:
        if not sentences:
            return []
        return self.predictor(self._encode(sentences, columns), batch_size=batch_size, confidences=confidences,
                              marginals=marginals)

    def _encode(self, sentences: list[list[str]], columns: dict[str, list[list[str]]] | None = None) -> Encoded:
        return encode(sentences, self.vocabs, **encode_options(self.features, columns))

    def _sentence(self, text: str, offsets: list[tuple[int, int]], tokens: list[str], prediction: Prediction,
                  scheme: str | None = None) -> Sentence:
        spans = [Span(text[offsets[s][0]:offsets[e - 1][1]], kind, offsets[s][0], offsets[e - 1][1], conf, s, e)
                 for kind, s, e, conf in prediction.spans]
        # the spans read from the predicted labels (conlleval's rules), written in the scheme asked for
        labels = self.labelling.output_labels(prediction.labels, [span[:3] for span in prediction.spans],
                                              self._scheme(scheme))
        return Sentence(tokens, offsets, labels, spans, prediction.marginals, prediction.path_confidence,
                        prediction.distributions)

    # ------------------------------------------------------------ evaluation

    def evaluate(self, data: str | Path | Split | Outcomes, *, output: str | Path | None = None,
                 batch_size: int = 100, scheme: str | None = None, columns: Sequence[str] | None = None,
                 encoding: str | None = None, offsets: str | None = None) -> Evaluation:
        """The model's measure on a labelled file, a split read, or a split decoded already (:meth:`outcomes`):
        :func:`seqlab.tagging.evaluate.evaluate`, whose arguments these are."""
        return evaluate(self, data, output=output, batch_size=batch_size, scheme=scheme, columns=columns,
                        encoding=encoding, offsets=offsets)

    @property
    def temperature(self) -> float:
        """The calibration temperature the confidences are computed at (1.0: uncalibrated)."""
        return self.predictor.temperature

    def outcomes(self, data: str | Path | Split, *, batch_size: int = 100, columns: Sequence[str] | None = None,
                 encoding: str | None = None, offsets: str | None = None) -> Outcomes:
        """A labelled file decoded once, for calibration and scoring: its units' confidences at any temperature
        and whether each is right (:class:`seqlab.tagging.calibration.Outcomes`); ``encoding`` and ``offsets`` as
        for :meth:`evaluate`."""
        split = read_labelled(self.config.data, data, columns, encoding=encoding, offsets=offsets)
        encoded = encode(split.tokens, self.vocabs, **encode_options(self.features, split.columns))
        return Outcomes(self.predictor, encoded, split, self.labelling, batch_size=batch_size)

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
