"""Multiword tokens (UD): surface tokens that stand for several syntactic words (French ``du`` -> ``de le``,
Spanish ``del`` -> ``de el``, Greek ``στο`` -> ``σε το``), learned from a treebank's range lines.

For each surface form (lower case) the table keeps its most frequent expansion and how often the form is a multiword
token or a plain word. A form that is both (French ``des``: ``de les`` after a noun, the article after a verb) is
decided by a logistic regression over its context (:func:`context_features`: the two surface tokens on each side,
their last two and three letters, whether they are capitalised), fitted on the training data's occurrences of that
form and stored as the weights of the features it saw; a form seen only one way is always read that way. On UD
French-Sequoia's test file the regression reads 94.2% of the 276 ambiguous tokens right, where naive Bayes over the
next and previous tokens read 89.5% and the most frequent reading 0% (``benchmarks.ud_raw_text``); its strength
``C`` was chosen on the dev file.
"""
from __future__ import annotations

from collections import Counter, defaultdict
from dataclasses import dataclass, field
from typing import Iterable, Iterator

#: The previous or next token where there is none.
EDGE = "<s>"
#: Inverse L2 strength of the regression that decides an ambiguous form (chosen on UD French-Sequoia dev, among 1,
#: 3, 10 and 30: 95.3% of its 256 ambiguous tokens).
STRENGTH = 10.0
#: The feature every context has: the regression's intercept.
BIAS = "bias"


def context_features(tokens: list[str], k: int) -> list[str]:
    """The features of token ``k``'s context in ``tokens`` (surface tokens): the lower-cased tokens one and two
    before and after it, their last two and three letters, and whether each is capitalised."""
    out = [BIAS]
    for name, j in (("p1", k - 1), ("n1", k + 1), ("p2", k - 2), ("n2", k + 2)):
        if not 0 <= j < len(tokens):
            out.append(f"{name}={EDGE}")
            continue
        low = tokens[j].lower()
        out += [f"{name}={low}", f"{name}s2={low[-2:]}", f"{name}s3={low[-3:]}"]
        if tokens[j][:1].isupper():
            out.append(f"{name}cap")
    return out


@dataclass
class Entry:
    """One surface form: its expansion, how often it is a multiword token and a plain word, and (when it is both)
    the weights of the regression that decides it (:func:`context_features` -> weight; positive reads it as a
    multiword token)."""

    words: list[str]
    mwt: int = 0
    plain: int = 0
    weights: dict[str, float] = field(default_factory=dict)

    def expands(self, tokens: list[str], k: int) -> bool:
        """Whether the form, as token ``k`` of the surface tokens ``tokens``, is a multiword token."""
        if not self.plain or not self.mwt:
            return self.mwt > 0
        return sum(self.weights.get(f, 0.0) for f in context_features(tokens, k)) >= 0.0


@dataclass
class MultiwordTable:
    """Surface form (lower case) -> :class:`Entry`."""

    entries: dict[str, Entry] = field(default_factory=dict)

    def words(self, tokens: list[str], k: int) -> list[str] | None:
        """The words token ``k`` of ``tokens`` stands for, in its case, or None where it is one word."""
        entry = self.entries.get(tokens[k].lower())
        if entry is None:
            return None
        return with_case(tokens[k], entry.words) if entry.expands(tokens, k) else None

    def to_json(self) -> dict:
        return {form: {"words": e.words, "mwt": e.mwt, "plain": e.plain, "weights": e.weights}
                for form, e in sorted(self.entries.items())}

    @classmethod
    def from_json(cls, data: dict) -> "MultiwordTable":
        """The table ``to_json`` wrote. An ambiguous form without weights (stored by a seqlab that decided by naive
        Bayes) raises :class:`StaleTable`, so that the caller learns the table again from the training data."""
        entries = {form: Entry(list(e["words"]), int(e["mwt"]), int(e["plain"]),
                               {str(f): float(w) for f, w in e.get("weights", {}).items()})
                   for form, e in data.items()}
        if any(e.mwt and e.plain and not e.weights for e in entries.values()):
            raise StaleTable("the multiword decision was stored by an older seqlab (naive Bayes, no weights)")
        return cls(entries)


class StaleTable(ValueError):
    """A stored table from before the regression decided ambiguous forms."""


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
    seen: dict[str, tuple[list[list[str]], list[bool]]] = defaultdict(lambda: ([], []))
    for row in rows:
        tokens = [surface for surface, _ in row]
        for k, (surface, words) in enumerate(row):
            entry = table.get(surface.lower())
            if entry is None:
                continue
            if len(words) > 1:
                entry.mwt += 1
            else:
                entry.plain += 1
            contexts, readings = seen[surface.lower()]
            contexts.append(context_features(tokens, k))
            readings.append(len(words) > 1)
    for form, entry in table.items():
        if entry.mwt and entry.plain:
            entry.weights = _fit(*seen[form])
    return MultiwordTable(table)


def _fit(contexts: list[list[str]], readings: list[bool]) -> dict[str, float]:
    """The weights of a logistic regression (L2, :data:`STRENGTH`) of the reading on the context features, the
    intercept as :data:`BIAS`'s weight."""
    from sklearn.feature_extraction import DictVectorizer
    from sklearn.linear_model import LogisticRegression

    vectorizer = DictVectorizer()
    features = vectorizer.fit_transform([dict.fromkeys(c, 1) for c in contexts])
    model = LogisticRegression(C=STRENGTH, max_iter=5000).fit(features, readings)
    sign = 1.0 if model.classes_[1] else -1.0  # classes_ are sorted: [False, True]
    weights = {name: sign * float(w) for name, w in zip(vectorizer.get_feature_names_out(), model.coef_[0])}
    weights[BIAS] = weights.get(BIAS, 0.0) + sign * float(model.intercept_[0])
    return {name: round(w, 6) for name, w in weights.items() if abs(w) >= 1e-6}


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
