"""Multiword tokens (UD): surface tokens that stand for several syntactic words (French ``du`` -> ``de le``,
Spanish ``del`` -> ``de el``, Greek ``στο`` -> ``σε το``), learned from a treebank's range lines.

For each surface form (lower case) the table keeps its most frequent expansion and how often the form is a multiword
token or a plain word. A form that is both (French ``des``: ``de les`` or the article) is decided by naive Bayes over
the lower-cased surface tokens before and after it (add-one smoothing over both readings' neighbours), counted in the training data; a form seen
only one way is always read that way.
"""
from __future__ import annotations

import math
from collections import Counter, defaultdict
from dataclasses import dataclass, field
from typing import Iterable, Iterator

#: The previous or next token where there is none.
EDGE = "<s>"


@dataclass
class Entry:
    """One surface form: its expansion, how often it is a multiword token and a plain word, and (when it is both)
    the counts of its neighbours by reading: ``context["mwt"|"plain"]["prev"|"next"][token]``."""

    words: list[str]
    mwt: int = 0
    plain: int = 0
    context: dict[str, dict[str, dict[str, int]]] = field(default_factory=dict)

    def expands(self, prev: str, nxt: str) -> bool:
        """Whether the form, between the tokens ``prev`` and ``nxt``, is a multiword token."""
        if not self.plain or not self.mwt:
            return self.mwt > 0
        return self._score("mwt", self.mwt, prev, nxt) >= self._score("plain", self.plain, prev, nxt)

    def _score(self, reading: str, count: int, prev: str, nxt: str) -> float:
        score = math.log(count)
        for side, token in (("prev", prev), ("next", nxt)):
            seen = self.context.get(reading, {}).get(side, {})
            vocabulary = set().union(*(self.context.get(r, {}).get(side, {}) for r in ("mwt", "plain")))
            score += math.log((seen.get(token, 0) + 1) / (count + len(vocabulary) + 1))
        return score


@dataclass
class MultiwordTable:
    """Surface form (lower case) -> :class:`Entry`."""

    entries: dict[str, Entry] = field(default_factory=dict)

    def words(self, tokens: list[str], k: int) -> list[str] | None:
        """The words token ``k`` of ``tokens`` stands for, in its case, or None where it is one word."""
        entry = self.entries.get(tokens[k].lower())
        if entry is None:
            return None
        prev = tokens[k - 1].lower() if k else EDGE
        nxt = tokens[k + 1].lower() if k + 1 < len(tokens) else EDGE
        return with_case(tokens[k], entry.words) if entry.expands(prev, nxt) else None

    def to_json(self) -> dict:
        return {form: {"words": e.words, "mwt": e.mwt, "plain": e.plain, "context": e.context}
                for form, e in sorted(self.entries.items())}

    @classmethod
    def from_json(cls, data: dict) -> "MultiwordTable":
        return cls({form: Entry(list(e["words"]), int(e["mwt"]), int(e["plain"]), dict(e.get("context", {})))
                    for form, e in data.items()})


def with_case(surface: str, words: list[str]) -> list[str]:
    """``words`` in ``surface``'s case: all upper case, or the first capitalised, or as they are."""
    if len(surface) > 1 and surface.isupper():
        return [w.upper() for w in words]
    if surface[:1].isupper():
        return [words[0][:1].upper() + words[0][1:]] + words[1:]
    return list(words)


def surface_tokens(sentence) -> Iterator[tuple[str, list[str]]]:
    """A CoNLL-U sentence's surface tokens as (surface form, its words): a multiword token's words share offsets."""
    forms, offsets, text = sentence.columns["form"], sentence.extra.get("offsets"), sentence.extra.get("text")
    if not offsets or text is None:
        yield from ((form, [form]) for form in forms)
        return
    k = 0
    while k < len(forms):
        last = k
        while last + 1 < len(forms) and offsets[last + 1] == offsets[k]:
            last += 1
        yield text[offsets[k][0]:offsets[k][1]], list(forms[k:last + 1])
        k = last + 1


def learn_multiwords(sentences: Iterable) -> MultiwordTable:
    """The multiword tokens of CoNLL-U ``sentences``, with their plain-word counts and contexts."""
    rows = [list(surface_tokens(s)) for s in sentences]
    expansions: dict[str, Counter] = defaultdict(Counter)
    for row in rows:
        for surface, words in row:
            if len(words) > 1:
                expansions[surface.lower()][tuple(w.lower() for w in words)] += 1
    table = {form: Entry(list(c.most_common(1)[0][0])) for form, c in expansions.items()}
    for row in rows:
        lows = [surface.lower() for surface, _ in row]
        for k, (_, words) in enumerate(row):
            entry = table.get(lows[k])
            if entry is None:
                continue
            reading = "mwt" if len(words) > 1 else "plain"
            setattr(entry, reading, getattr(entry, reading) + 1)
            sides = entry.context.setdefault(reading, {"prev": {}, "next": {}})
            for side, token in (("prev", lows[k - 1] if k else EDGE), ("next", lows[k + 1] if k + 1 < len(lows) else EDGE)):
                sides[side][token] = sides[side].get(token, 0) + 1
    for entry in table.values():
        if not entry.plain or not entry.mwt:
            entry.context = {}  # one reading: no decision to make
    return MultiwordTable(table)


def accuracy(table: MultiwordTable, sentences: Iterable) -> dict[str, float | int]:
    """How often the table's decision (expand or not) matches the treebank on the surface forms it holds, over all
    of them and over the ambiguous ones (both readings seen in training)."""
    total = right = amb_total = amb_right = 0
    for sentence in sentences:
        row = list(surface_tokens(sentence))
        tokens = [surface for surface, _ in row]
        for k, (surface, words) in enumerate(row):
            entry = table.entries.get(surface.lower())
            if entry is None:
                continue
            ok = (table.words(tokens, k) is not None) == (len(words) > 1)
            total, right = total + 1, right + ok
            if entry.mwt and entry.plain:
                amb_total, amb_right = amb_total + 1, amb_right + ok
    return {"tokens": total, "accuracy": right / total if total else 1.0,
            "ambiguous_tokens": amb_total, "ambiguous_accuracy": amb_right / amb_total if amb_total else 1.0}
