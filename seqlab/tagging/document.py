"""What tagging returns: documents of sentences, with spans that carry character offsets and confidences."""
from __future__ import annotations

from dataclasses import asdict, dataclass
from typing import Any


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
class Sentence:
    """One sentence: its tokens with their character offsets into the tagged text, one label per token
    (in the scheme asked for), and its spans."""

    tokens: list[str]
    offsets: list[tuple[int, int]]
    labels: list[str]
    spans: list[Span]

    def to_dict(self) -> dict[str, Any]:
        return {"tokens": self.tokens, "labels": self.labels, "spans": [asdict(s) for s in self.spans]}


@dataclass(frozen=True)
class Document:
    """A tagged text (one line or paragraph): its sentences, and all their spans in order."""

    text: str
    sentences: list[Sentence]

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

    def __str__(self) -> str:
        return self.inline()

    def to_dict(self) -> dict[str, Any]:
        return {"text": self.text, "sentences": [s.to_dict() for s in self.sentences]}
