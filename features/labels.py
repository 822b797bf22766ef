"""Label-frequency features: how often each label was given to a word in the training data.

For every word, the relative frequency of each label among its training occurrences,
and a bucket of how often the word occurred at all. These features read gold labels,
so they must be fitted on the training split only: fitted on dev or test data they
leak the answers into the evaluation. :meth:`LabelFrequencies.fit` therefore records
where its counts came from (``source``), and :meth:`LabelFrequencies.check_not_fitted_on`
lets a tagger refuse an extractor fitted on the data it is evaluated on.
"""
from __future__ import annotations

from collections import Counter, defaultdict
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from features.orthographic import NotFittedError, bucket, bucket_names

#: Lower bounds of the buckets of a word's training count (powers of two).
COUNT_BUCKETS = (1, 2, 4, 8, 16, 32)


class LeakageError(ValueError):
    """A label-based extractor fitted on data it is now asked to be evaluated on."""


def _same_source(a: str, b: str) -> bool:
    """Names match as given, or as paths to the same file."""
    if a == b:
        return True
    pa, pb = Path(a), Path(b)
    return pa.exists() and pb.exists() and pa.resolve() == pb.resolve()


class LabelFrequencies:
    """Per-word label distribution and count bucket, from training data only.

    ``LabelFrequencies().fit(sentences, labels, source="conll2003/train.txt")`` counts, for
    each word (as written, or lower-cased with ``lowercase=True``), how often each label was
    assigned to it. ``__call__`` gives an array of shape ``(len(tokens), dim)`` with
    ``dim = len(labels) + len(COUNT_BUCKETS)``: first the relative frequency of each label
    (columns in the order of :attr:`labels`, summing to 1 for a known word), then a one-hot
    bucket of the word's training count (``1``, ``2-3``, ``4-7``, ..., ``32+``). A word not
    seen in training gets all zeros. :meth:`frequencies` gives the first block alone.
    """

    def __init__(
        self,
        *,
        labels: Sequence[str] | None = None,
        counts: Mapping[str, Mapping[str, int]] | None = None,
        source: str | None = None,
        lowercase: bool = False,
    ) -> None:
        self.lowercase = lowercase
        self.labels: tuple[str, ...] | None = None
        self.counts: dict[str, dict[str, int]] = {}
        self.source = source
        if labels is not None or counts is not None:
            if labels is None or counts is None or source is None:
                raise ValueError("labels, counts and source must be given together (the state fit records)")
            self._set(tuple(labels), {w: dict(c) for w, c in counts.items()})

    def _set(self, labels: tuple[str, ...], counts: dict[str, dict[str, int]]) -> None:
        unknown = {label for c in counts.values() for label in c} - set(labels)
        if unknown:
            raise ValueError(f"counts use labels missing from labels: {sorted(unknown)}")
        self.labels, self.counts = labels, counts
        index = {label: i for i, label in enumerate(labels)}
        width = len(labels)
        self._rows: dict[str, np.ndarray] = {}
        for word, by_label in counts.items():
            row = np.zeros(width + len(COUNT_BUCKETS), dtype=np.float32)
            total = sum(by_label.values())
            for label, n in by_label.items():
                row[index[label]] = n / total
            row[width + bucket_names(COUNT_BUCKETS).index(bucket(total, COUNT_BUCKETS))] = 1.0
            self._rows[word] = row

    def fit(
        self, sentences: Iterable[Sequence[str]], labels: Iterable[Sequence[str]], *, source: str
    ) -> "LabelFrequencies":
        """Count labels per word in the TRAINING data; ``source`` names it (a split name or path).

        Never fit on dev or test data; taggers call :meth:`check_not_fitted_on` with the
        names of the data they evaluate on.
        """
        if not isinstance(source, (str, Path)) or not str(source):
            raise ValueError(f"source must name the training data (e.g. 'train' or its path), but got {source!r}")
        counts: defaultdict[str, Counter[str]] = defaultdict(Counter)
        seen: set[str] = set()
        n_sentences = 0
        for n_sentences, (tokens, tags) in enumerate(_zip_strict(sentences, labels), start=1):
            if isinstance(tokens, str) or isinstance(tags, str):
                raise TypeError(f"sentence {n_sentences}: tokens and labels must be sequences, not single strings")
            if len(tokens) != len(tags):
                raise ValueError(
                    f"sentence {n_sentences}: labels must match tokens in length, "
                    f"but got {len(tags)} labels and {len(tokens)} tokens"
                )
            for word, tag in zip(tokens, tags):
                counts[self._key(word)][tag] += 1
                seen.add(tag)
        if not counts:
            raise ValueError(f"cannot fit LabelFrequencies on no tokens (source {source!r})")
        self.source = str(source)
        self._set(tuple(sorted(seen)), {w: dict(c) for w, c in counts.items()})
        return self

    def check_not_fitted_on(self, *names: str | Path) -> None:
        """Raise :class:`LeakageError` if this was fitted on any of ``names`` (e.g. ``"dev"``, ``"test"``)."""
        self._fitted()
        for name in names:
            if _same_source(str(self.source), str(name)):
                raise LeakageError(
                    f"label frequencies were fitted on {self.source!r}, which is evaluation data here; "
                    f"fit them on the training split only"
                )

    def _fitted(self) -> tuple[str, ...]:
        if self.labels is None or self.source is None:
            raise NotFittedError("LabelFrequencies is not fitted: call fit(train_sentences, train_labels, source=...)")
        return self.labels

    def _key(self, word: str) -> str:
        return word.lower() if self.lowercase else word

    @property
    def dim(self) -> int:
        return len(self._fitted()) + len(COUNT_BUCKETS)

    def feature_names(self) -> list[str]:
        """``freq=LABEL`` for each label, then ``count=BUCKET``."""
        labels = self._fitted()
        return [f"freq={label}" for label in labels] + [f"count={b}" for b in bucket_names(COUNT_BUCKETS)]

    def __call__(self, tokens: Sequence[str]) -> np.ndarray:  # shape: (len(tokens), dim), float32
        _check_tokens(tokens)
        out = np.zeros((len(tokens), self.dim), dtype=np.float32)  # shape: (len(tokens), dim)
        for i, word in enumerate(tokens):
            row = self._rows.get(self._key(word))
            if row is not None:
                out[i] = row
        return out

    def frequencies(self, tokens: Sequence[str]) -> np.ndarray:  # shape: (len(tokens), len(labels))
        """The relative label frequencies alone (zeros for unseen words)."""
        return self(tokens)[:, : len(self._fitted())]

    def feature_dicts(self, tokens: Sequence[str]) -> list[dict[str, Any]]:
        """crfsuite-style: ``freq=LABEL`` with a float weight for each label seen, and ``count``.

        An unseen word gets ``{"count": "0"}``.
        """
        self._fitted()
        _check_tokens(tokens)
        out: list[dict[str, Any]] = []
        for word in tokens:
            by_label = self.counts.get(self._key(word))
            if by_label is None:
                out.append({"count": "0"})
                continue
            total = sum(by_label.values())
            row: dict[str, Any] = {f"freq={label}": n / total for label, n in sorted(by_label.items())}
            row["count"] = bucket(total, COUNT_BUCKETS)
            out.append(row)
        return out


def _check_tokens(tokens: Sequence[str]) -> None:
    if isinstance(tokens, str):
        raise TypeError(f"tokens must be a sequence of words, but got the single string {tokens!r}")


def _zip_strict(a: Iterable[Any], b: Iterable[Any]) -> Iterable[tuple[Any, Any]]:
    try:
        yield from zip(a, b, strict=True)
    except ValueError as err:
        raise ValueError(f"sentences and labels must have the same number of sentences ({err})") from None
