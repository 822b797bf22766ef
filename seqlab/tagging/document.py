"""What tagging returns: documents of sentences, with spans that carry character offsets and confidences."""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Iterable

from seqlab.core.schema import encode_document, encode_sentence, encode_span_relation
from seqlab.data.formats.conllu_writer import multiword_groups
from seqlab.data.formats.registry import OUTPUTS

#: The formats :func:`render` streams (``seqlab tag --format``; brat is written whole).
FORMATS = tuple(name for name, fmt in OUTPUTS.items() if fmt.render is not None)


@dataclass(frozen=True)
class Span:
    """An entity (or chunk): its text, label, character offsets ``[start, end)`` into the tagged text,
    token offsets ``[token_start, token_end)`` into its sentence, and confidence (the smallest CRF
    posterior marginal of its tokens' predicted labels; 1.0 where the model gives none)."""

    text: str
    label: str
    start: int
    end: int
    confidence: float
    token_start: int
    token_end: int


@dataclass(frozen=True)
class SurfaceToken:
    """A token of the text as written, ``[start, end)``, and the words it stands for, ``[word_start, word_end)``
    (more than one for a multiword token)."""

    text: str
    start: int
    end: int
    word_start: int
    word_end: int


@dataclass(frozen=True)
class Sentence:
    """One sentence: its tokens (the words the model tagged) with their character offsets into the tagged text, one
    label per token (in the scheme asked for), and its spans. The words of a multiword token share its offsets
    (:meth:`Document.surface_tokens`). Tagged with ``marginals`` (``tag_many(..., marginals=True)``), it also
    holds each token's posterior marginal of its label in the model's own scheme, the probability of the
    sentence's whole label sequence (``path_confidence``) and each token's distribution over the labels of that
    scheme (``distributions``: ``{label: p}`` for every label at or above
    :data:`seqlab.tagging.predict.DISTRIBUTION_FLOOR`); otherwise all three are None."""

    tokens: list[str]
    offsets: list[tuple[int, int]]
    labels: list[str]
    spans: list[Span]
    marginals: list[float] | None = None
    path_confidence: float | None = None
    distributions: list[dict[str, float]] | None = None

    def to_dict(self) -> dict[str, Any]:
        """The sentence as JSON-ready data (:mod:`seqlab.core.schema`): tokens, offsets, labels, spans."""
        return encode_sentence(self)


@dataclass(frozen=True)
class SpanRelation:
    """A relation an extraction model found between two spans of a document: ``head`` and ``tail`` index
    ``Document.spans``; ``confidence`` is the relation classifier's probability of ``label``."""

    head: int
    tail: int
    label: str
    confidence: float

    def to_dict(self) -> dict[str, Any]:
        return encode_span_relation(self)


@dataclass(frozen=True)
class Document:
    """A tagged text (one line or paragraph): its sentences, all their spans in order, and the relations an
    extraction model found between them (none from a tagger)."""

    text: str
    sentences: list[Sentence]
    relations: list[SpanRelation] = field(default_factory=list)

    @property
    def spans(self) -> list[Span]:
        return [span for sentence in self.sentences for span in sentence.spans]

    def inline(self) -> str:
        """The text with every span marked ``[LABEL words]``."""
        pieces, cursor = [], 0
        for span in self.spans:
            pieces.append(f"{self.text[cursor:span.start]}[{span.label} {self.text[span.start:span.end]}]")
            cursor = span.end
        pieces.append(self.text[cursor:])
        return "".join(pieces)

    def surface_tokens(self) -> list[list[SurfaceToken]]:
        """Each sentence's surface tokens, the pieces of the text its words came from: a multiword token (French
        ``du``) is one surface token over several words (``de``, ``le``), which share its offsets."""
        return [[SurfaceToken(self.text[s.offsets[a][0]:s.offsets[a][1]], s.offsets[a][0], s.offsets[a][1], a, b + 1)
                 for a, b in multiword_groups(s.offsets)] for s in self.sentences]

    def tagged_words(self) -> str:
        """A token-label model's output: every word as ``word/TAG``, separated by spaces."""
        return " ".join(f"{word}/{label}" for s in self.sentences for word, label in zip(s.tokens, s.labels))

    def __str__(self) -> str:
        return self.inline()

    def to_dict(self) -> dict[str, Any]:
        """The document as JSON-ready data (:mod:`seqlab.core.schema`): text, spans, sentences, and
        ``relations`` only when there are some (a tagger's documents are written as they always were)."""
        return encode_document(self)

    def sentence_relations(self, index: int) -> list[SpanRelation]:
        """The relations within sentence ``index``, their ``head``/``tail`` indexing that sentence's spans."""
        first = sum(len(s.spans) for s in self.sentences[:index])
        last = first + len(self.sentences[index].spans)
        return [SpanRelation(r.head - first, r.tail - first, r.label, r.confidence) for r in self.relations
                if first <= r.head < last and first <= r.tail < last]

    def to_html(self, *, token_labels: bool = False, title: str = "seqlab", language: str | None = None) -> str:
        """The document as a self-contained HTML page (:func:`seqlab.render.html.documents_html`): its spans
        highlighted by type, or (``token_labels``, a POS tagger's) each word's tag under it; ``language``: the
        text's (the model's ``data.language``), the page's ``lang`` and, right to left, ``dir``."""
        from seqlab.render.html import documents_html

        return documents_html([self], title=title, token_labels=token_labels, language=language)


def render(numbered: Iterable[tuple[int, Document]], fmt: str, *, token_labels: bool = False) -> str:
    """Documents as ``seqlab tag --format fmt`` streams them, each with its input line number (``jsonl`` and
    ``conllu`` record it), through the format's renderer in :data:`seqlab.data.formats.registry.OUTPUTS`:

    * ``conll``: ``token label`` lines, a blank line after each sentence;
    * ``jsonl``: one JSON object per sentence, :func:`seqlab.core.schema.encode_line`: its input line number,
      tokens, offsets, labels and spans (text, label, character offsets into the input line, confidence, token
      offsets);
    * ``inline``: each input line with entities marked ``[LABEL words]`` (``word/TAG`` for ``token_labels``);
    * ``conllu``: CoNLL-U, ``# sent_id = LINE-K`` (the K-th sentence of input line LINE) and ``# text``, the
      labels in UPOS when they are ``token_labels`` (a POS tagger's), else ``NER=label`` in MISC
      (:func:`seqlab.data.formats.conllu_writer.conllu_sentence`)."""
    found = OUTPUTS.get(fmt)
    if found is None or found.render is None:
        raise ValueError(f"unknown output format {fmt!r}; expected one of {FORMATS}")
    return "".join(found.render(number, doc, token_labels) for number, doc in numbered)
