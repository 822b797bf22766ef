"""Distant supervision for LS vectors: project a typed corpus's mentions onto unlabelled text.

Ghaddar & Langlais (2018, section 3) learn LS vectors from WiFiNE, Wikipedia whose links were
grown into 1.3B tokens of fine-grained annotation. Our typed corpus is far smaller, so this module
grows it the same way: the mention strings of the typed corpus become a gazetteer
(:class:`Gazetteer`), whose entries are matched (longest match first, left to right) in the
sentences of unlabelled corpora; sentences with at least one match become new typed sentences.

A mention string is kept only when it is likely to name an entity wherever it occurs:

* it has a capital letter (``god``, ``hotel`` are dropped: lower-case strings are mostly common
  words) and at least one letter;
* it was annotated at least ``min_mentions`` times;
* its *link probability* in the typed corpus, the share of its occurrences there that are
  annotated as a mention, is at least ``min_link_prob`` (``May`` or ``The Times`` as ordinary
  words push it down);
* its most frequent type holds at least ``min_type_share`` of its mentions; that type is the one
  it is projected with.
"""
from __future__ import annotations

import logging
from collections import Counter, defaultdict
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import asdict, dataclass, field
from typing import Any

from features.ls_corpus import Mention, TypedSentence

logger = logging.getLogger(__name__)


@dataclass(frozen=True)
class DistantOptions:
    """Which mention strings are projected, and how much unlabelled text is used."""

    min_mentions: int = 1
    min_link_prob: float = 0.5
    min_type_share: float = 0.6
    max_tokens: int = 8  # longest mention string kept
    max_sentences: int = 200_000  # projected sentences kept (those with at least one match)
    min_sentence_tokens: int = 5
    annotate: bool = True  # False: add the selected sentences as plain text only (a control for the types' effect)

    def __post_init__(self) -> None:
        for name in ("min_link_prob", "min_type_share"):
            value = getattr(self, name)
            if not 0.0 <= value <= 1.0:
                raise ValueError(f"{name} must be in [0, 1], but got {value}")
        for name in ("min_mentions", "max_tokens", "max_sentences", "min_sentence_tokens"):
            if getattr(self, name) < 1:
                raise ValueError(f"{name} must be a positive integer, but got {getattr(self, name)}")


@dataclass
class DistantStats:
    """What the projection did, for the build manifest."""

    strings_seen: int = 0
    strings_kept: int = 0
    dropped: dict[str, int] = field(default_factory=dict)
    sentences_scanned: int = 0
    sentences_kept: int = 0
    mentions_projected: int = 0
    training_tokens: int = 0
    types: dict[str, int] = field(default_factory=dict)

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


class Gazetteer:
    """Token-sequence → label entries matched longest-first (case-sensitive, tokens as written)."""

    def __init__(self, entries: dict[tuple[str, ...], str]) -> None:
        self.entries = dict(entries)
        lengths: defaultdict[str, set[int]] = defaultdict(set)
        for key in self.entries:
            if not key:
                raise ValueError("a gazetteer entry must have at least one token")
            lengths[key[0]].add(len(key))
        self._lengths = {first: sorted(ls, reverse=True) for first, ls in lengths.items()}

    def __len__(self) -> int:
        return len(self.entries)

    def match(self, tokens: Sequence[str]) -> list[Mention]:
        """Non-overlapping longest matches, left to right."""
        found: list[Mention] = []
        i, n = 0, len(tokens)
        while i < n:
            for length in self._lengths.get(tokens[i], ()):
                if i + length <= n:
                    label = self.entries.get(tuple(tokens[i:i + length]))
                    if label is not None:
                        found.append(Mention(i, i + length, label))
                        i += length
                        break
            else:
                i += 1
        return found

    @classmethod
    def from_typed(cls, sentences: Sequence[TypedSentence], options: DistantOptions = DistantOptions(),
                   stats: DistantStats | None = None) -> "Gazetteer":
        """Entries from a typed corpus's mentions, filtered as the module doc says."""
        stats = stats if stats is not None else DistantStats()
        labels: defaultdict[tuple[str, ...], Counter[str]] = defaultdict(Counter)
        for sentence in sentences:
            for m in sentence.mentions:
                labels[sentence.tokens[m.start:m.end]][m.label] += 1
        stats.strings_seen = len(labels)
        dropped: Counter[str] = Counter()
        candidates: dict[tuple[str, ...], Counter[str]] = {}
        for key, by_label in labels.items():
            reason = _surface_problem(key, sum(by_label.values()), options)
            if reason:
                dropped[reason] += 1
            else:
                candidates[key] = by_label
        occurrences = _occurrences(sentences, candidates)
        entries: dict[tuple[str, ...], str] = {}
        for key, by_label in candidates.items():
            total = sum(by_label.values())
            label, top = by_label.most_common(1)[0]
            if total < options.min_link_prob * occurrences[key]:
                dropped["link_prob"] += 1
            elif top < options.min_type_share * total:
                dropped["ambiguous_type"] += 1
            else:
                entries[key] = label
        stats.strings_kept, stats.dropped = len(entries), dict(sorted(dropped.items()))
        logger.info("gazetteer: %d of %d mention strings kept (dropped: %s)", len(entries), len(labels),
                    stats.dropped)
        return cls(entries)


def _surface_problem(key: tuple[str, ...], mentions: int, options: DistantOptions) -> str | None:
    if len(key) > options.max_tokens:
        return "too_long"
    if mentions < options.min_mentions:
        return "rare"
    text = "".join(key)
    if not any(c.isalpha() for c in text):
        return "no_letter"
    if not any(c.isupper() for c in text):
        return "lowercase"
    return None


def _occurrences(sentences: Sequence[TypedSentence], keys: Iterable[tuple[str, ...]]) -> Counter[tuple[str, ...]]:
    """How often each key occurs as a token sequence in the sentences (annotated or not)."""
    lengths: defaultdict[str, set[int]] = defaultdict(set)
    keyset = set(keys)
    for key in keyset:
        lengths[key[0]].add(len(key))
    counts: Counter[tuple[str, ...]] = Counter()
    for sentence in sentences:
        tokens = sentence.tokens
        for i, token in enumerate(tokens):
            for length in lengths.get(token, ()):
                span = tokens[i:i + length]
                if len(span) == length and span in keyset:
                    counts[span] += 1
    return counts


def project(gazetteer: Gazetteer, corpus: Iterable[Sequence[str]], options: DistantOptions = DistantOptions(),
            stats: DistantStats | None = None) -> Iterator[TypedSentence]:
    """Sentences of ``corpus`` (token lists) with at least one gazetteer match, as typed sentences.

    Stops after ``options.max_sentences`` kept sentences; ``stats`` is updated as it goes.
    """
    stats = stats if stats is not None else DistantStats()
    types: Counter[str] = Counter(stats.types)
    try:
        for tokens in corpus:
            if stats.sentences_kept >= options.max_sentences:
                break
            stats.sentences_scanned += 1
            if len(tokens) < options.min_sentence_tokens:
                continue
            mentions = gazetteer.match(tokens)
            if not mentions:
                continue
            stats.sentences_kept += 1
            stats.mentions_projected += len(mentions)
            types.update(m.label for m in mentions)
            yield TypedSentence(tuple(tokens), tuple(mentions))
    finally:
        stats.types = dict(types.most_common())
