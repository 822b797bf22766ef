"""Orthographic (spelling-shape) features and POS one-hot vectors, per token.

The features of Turian, Bergstra & Bengio (2009, section 4):

* **first-character type**: ``A`` upper-case letter, ``a`` other letter, ``n`` digit,
  else the character itself (``(`` for ``(1)``);
* **word length**, in the buckets :data:`LENGTH_BUCKETS` (``1``, ``2``, ..., ``10+``);
* **compressed word type**: each character mapped to ``A``/``a``/``n``/itself, then runs
  of the same symbol compressed to one: ``Label-making`` → ``Aa-a``, ``U.S.`` → ``A.A.``,
  ``1,234.5`` → ``n,n.n``;
* **capitalization pattern**, one of :data:`CAPITALIZATION`.

Each is available as crfsuite-style dicts (:meth:`OrthographicFeatures.feature_dicts`,
no fitting needed) and as one-hot blocks of a fixed-width array (``__call__``), whose
first-character and word-type vocabularies are fitted on training sentences; symbols not
seen in fitting go to an unknown slot.
"""
from __future__ import annotations

import bisect
import re
import string
from collections import Counter
from collections.abc import Iterable, Sequence
from typing import Any

import numpy as np

#: Lower bounds of the word-length buckets; a bucket is named ``lo`` or ``lo-hi`` or ``lo+``.
LENGTH_BUCKETS = (1, 2, 3, 4, 5, 7, 10)
#: Capitalization patterns, in the order they are tested (see :func:`capitalization`).
CAPITALIZATION = ("noAlphaNum", "numeric", "allLower", "allUpper", "upperFirst", "upperNotFirst")
#: Name of the slot that takes symbols not seen when fitting.
UNKNOWN = "<unk>"


class NotFittedError(ValueError, AttributeError):
    """An extractor whose vocabulary has not been fitted yet (also an ``AttributeError``,
    so ``hasattr(extractor, "dim")`` is False until fitted, as in scikit-learn)."""


def bucket(value: int, bounds: Sequence[int]) -> str:
    """Name of the bucket of ``value``, given sorted lower ``bounds``: ``5-6``, ``10+``; ``0`` below them."""
    i = bisect.bisect_right(bounds, value) - 1
    if i < 0:
        return "0"
    lo = bounds[i]
    if i + 1 == len(bounds):
        return f"{lo}+"
    hi = bounds[i + 1] - 1
    return str(lo) if hi == lo else f"{lo}-{hi}"


def bucket_names(bounds: Sequence[int]) -> tuple[str, ...]:
    """Names of all buckets of ``bounds``, in order."""
    return tuple(bucket(lo, bounds) for lo in bounds)


def char_type(char: str) -> str:
    """``A`` for an upper-case letter, ``a`` another letter, ``n`` a digit, else ``char`` itself."""
    if char.isupper():
        return "A"
    if char.isalpha():
        return "a"
    if char.isdigit():
        return "n"
    return char


#: :func:`char_type` of the ASCII letters and digits (every other ASCII character maps to itself).
_ASCII_TYPES = str.maketrans({**{c: "A" for c in string.ascii_uppercase}, **{c: "a" for c in string.ascii_lowercase},
                              **{c: "n" for c in string.digits}})
_RUNS, _REPEAT = re.compile(r"(.)\1+", re.DOTALL), re.compile(r"(.)\1", re.DOTALL)
_UPPER, _LOWER, _DIGITS = re.compile("AA+"), re.compile("aa+"), re.compile("nn+")


def word_type(word: str) -> str:
    """Compressed word type: :func:`char_type` of each character, runs of one symbol merged."""
    if word.isascii():  # the common case, in C: map every character, then merge the runs
        kinds = _DIGITS.sub("n", _LOWER.sub("a", _UPPER.sub("A", word.translate(_ASCII_TYPES))))
        return _RUNS.sub(r"\1", kinds) if _REPEAT.search(kinds) else kinds  # runs of punctuation are rare
    out: list[str] = []
    for char in word:
        symbol = char_type(char)
        if not out or out[-1] != symbol:
            out.append(symbol)
    return "".join(out)


#: What counts as a number: digits with ``. , : / -`` between them, an optional sign and a final ``%``.
_NUMERIC = re.compile(r"^[+\-]?[\d.,:/\-]*\d[\d.,:/\-]*%?$")


def capitalization(word: str) -> str:
    """The capitalization pattern of ``word``, one of :data:`CAPITALIZATION`.

    ``numeric``: a number as written (``1,234``, ``-0.5``, ``5%``, ``1996-08-22``);
    ``noAlphaNum``: no letter or digit (``.``, ``--``); ``allUpper``: upper-case letters
    and no lower-case one (``EU``, ``U.S.``, ``I``); ``allLower``: no upper-case letter
    (``cat``, ``1980s``, ``(1)``, uncased scripts); ``upperFirst``: the first character
    is upper-case (``Label-making``, ``McDonald``); else ``upperNotFirst`` (``iPhone``).
    This is also the class of the seqlab tagger's capitalization embedding
    (``seqlab.data.vocab.capitalization``), whose ids trained models depend on.
    """
    if _NUMERIC.match(word):
        return "numeric"
    if word.isascii():  # the common case: one pass in C gives which classes occur
        kinds = word.translate(_ASCII_TYPES)
        upper, lower = "A" in kinds, "a" in kinds
        if not (upper or lower):
            return "allLower" if "n" in kinds else "noAlphaNum"
        if not upper:
            return "allLower"
        if not lower:
            return "allUpper"
        return "upperFirst" if kinds[0] == "A" else "upperNotFirst"
    if not any(ch.isalnum() for ch in word):
        return "noAlphaNum"
    if word.isupper():
        return "allUpper"
    if word.islower() or not any(ch.isupper() for ch in word):
        return "allLower"
    return "upperFirst" if word[0].isupper() else "upperNotFirst"


def _one_hot_block(symbols: Sequence[str], index: dict[str, int], width: int) -> np.ndarray:
    """Rows of a one-hot block; symbols missing from ``index`` go to column 0 (unknown)."""
    block = np.zeros((len(symbols), width), dtype=np.float32)  # shape: (len, width)
    block[np.arange(len(symbols)), [index.get(s, 0) for s in symbols]] = 1.0
    return block


def _check_tokens(tokens: Sequence[str]) -> None:
    if isinstance(tokens, str):
        raise TypeError(f"tokens must be a sequence of words, but got the single string {tokens!r}")


def _check_words(tokens: Sequence[str]) -> None:
    """A sequence of non-empty strings (every orthographic feature reads a first character)."""
    _check_tokens(tokens)
    bad = next((i for i, w in enumerate(tokens) if not isinstance(w, str) or not w), None)
    if bad is not None:
        raise ValueError(f"tokens must be non-empty strings, but token {bad} is {tokens[bad]!r}")


class OrthographicFeatures:
    """Spelling-shape features of Turian, Bergstra & Bengio (2009, section 4).

    ``OrthographicFeatures().fit(train_sentences)`` learns the first-character types and
    compressed word types seen in training (those seen at least ``min_count`` times). The
    array is the concatenation of one-hot blocks, in this order: first-character type
    (unknown slot first), length bucket, compressed word type (unknown slot first),
    capitalization pattern; :meth:`feature_names` names each column. The fitted state is
    the constructor's arguments, so ``OrthographicFeatures(first_types=..., word_types=...)``
    rebuilds a fitted extractor.
    """

    def __init__(self, *, first_types: Sequence[str] | None = None, word_types: Sequence[str] | None = None) -> None:
        if (first_types is None) != (word_types is None):
            raise ValueError("first_types and word_types must be given together (both from fit), or neither")
        self.first_types = None if first_types is None else tuple(first_types)
        self.word_types = None if word_types is None else tuple(word_types)
        self._columns: tuple[tuple[str, ...], tuple[str, ...], list[tuple[dict[str, int], int]]] | None = None

    def fit(self, sentences: Iterable[Sequence[str]], *, min_count: int = 1) -> "OrthographicFeatures":
        """Learn the vocabularies of first-character and word types from training sentences."""
        if isinstance(min_count, bool) or not isinstance(min_count, int) or min_count < 1:
            raise ValueError(f"min_count must be a positive int, but got {min_count!r}")
        firsts: Counter[str] = Counter()
        types: Counter[str] = Counter()
        for sentence in sentences:
            for row in self.feature_dicts(sentence):
                firsts[row["first"]] += 1
                types[row["type"]] += 1
        if not types:
            raise ValueError("cannot fit OrthographicFeatures on no tokens")
        self.first_types = tuple(sorted(t for t, n in firsts.items() if n >= min_count))
        self.word_types = tuple(sorted(t for t, n in types.items() if n >= min_count))
        return self

    def _fitted(self) -> tuple[tuple[str, ...], tuple[str, ...]]:
        if self.first_types is None or self.word_types is None:
            raise NotFittedError("OrthographicFeatures is not fitted: call fit(training_sentences) first")
        return self.first_types, self.word_types

    @property
    def dim(self) -> int:
        firsts, types = self._fitted()
        return (len(firsts) + 1) + len(LENGTH_BUCKETS) + (len(types) + 1) + len(CAPITALIZATION)

    def feature_names(self) -> list[str]:
        """A name for each column of the array, e.g. ``first=A``, ``length=5-6``, ``type=Aa-a``."""
        firsts, types = self._fitted()
        return (
            [f"first={s}" for s in (UNKNOWN, *firsts)]
            + [f"length={b}" for b in bucket_names(LENGTH_BUCKETS)]
            + [f"type={s}" for s in (UNKNOWN, *types)]
            + [f"cap={c}" for c in CAPITALIZATION]
        )

    def feature_dicts(self, tokens: Sequence[str]) -> list[dict[str, Any]]:
        """crfsuite-style features per token: ``first``, ``length``, ``type``, ``cap`` (no fit needed)."""
        _check_words(tokens)
        return [
            {
                "first": char_type(w[0]),
                "length": bucket(len(w), LENGTH_BUCKETS),
                "type": word_type(w),
                "cap": capitalization(w),
            }
            for w in tokens
        ]

    def _block_columns(self) -> list[tuple[dict[str, int], int]]:
        """Per block (first, length, type, cap): symbol → column of the array, and the block's first
        column (where unseen symbols go). Built once per fitted vocabulary, not at every call."""
        firsts, types = self._fitted()
        if getattr(self, "_columns", None) is None or self._columns[0] is not firsts or self._columns[1] is not types:
            blocks = [(UNKNOWN, *firsts), bucket_names(LENGTH_BUCKETS), (UNKNOWN, *types), CAPITALIZATION]
            columns, offset = [], 0
            for symbols in blocks:
                columns.append(({s: offset + i for i, s in enumerate(symbols) if s != UNKNOWN}, offset))
                offset += len(symbols)
            self._columns = (firsts, types, columns)
        return self._columns[2]

    def __call__(self, tokens: Sequence[str]) -> np.ndarray:  # shape: (len(tokens), dim), float32
        (first, f0), (_, l0), (kind, k0), (cap, c0) = self._block_columns()
        _check_words(tokens)
        n = len(tokens)
        hot = np.empty((n, 4), dtype=np.int64)  # the column of each block's one, as feature_dicts names them
        hot[:, 0] = [first.get(char_type(w[0]), f0) for w in tokens]
        lengths = np.fromiter(map(len, tokens), dtype=np.int64, count=n)
        hot[:, 1] = l0 + np.searchsorted(LENGTH_BUCKETS, lengths, side="right") - 1  # bucket() of each length
        hot[:, 2] = [kind.get(word_type(w), k0) for w in tokens]
        hot[:, 3] = [cap.get(capitalization(w), c0) for w in tokens]
        out = np.zeros((n, self.dim), dtype=np.float32)  # shape: (len(tokens), dim)
        out[np.arange(n)[:, None], hot] = 1.0  # 4 ones per row
        return out


class POSOneHot:
    """One-hot part-of-speech tags, a feature of Turian, Bergstra & Bengio (2009, section 4).

    POS tags are not in the words, so they are passed alongside: ``pos(tokens, tags)``, or
    ``pos(pairs)`` with ``pairs`` a sentence of ``(word, tag)`` tuples; the second form is
    what :class:`features.base.SentenceTransformer` passes when given sentences of pairs.
    Column 0 is the unknown slot (tags not seen in :meth:`fit`); then ``tags`` in order.
    """

    def __init__(self, tags: Sequence[str] | None = None) -> None:
        self.tags = None if tags is None else tuple(tags)

    def fit(self, tag_sequences: Iterable[Sequence[str]]) -> "POSOneHot":
        """Learn the tag set from the training sentences' tags."""
        seen: set[str] = set()
        for tags in tag_sequences:
            _check_tokens(tags)
            seen.update(tags)
        if not seen:
            raise ValueError("cannot fit POSOneHot on no tags")
        self.tags = tuple(sorted(seen))
        return self

    def _fitted(self) -> tuple[str, ...]:
        if self.tags is None:
            raise NotFittedError("POSOneHot is not fitted: call fit(training_tag_sequences) first")
        return self.tags

    @property
    def dim(self) -> int:
        return len(self._fitted()) + 1

    def feature_names(self) -> list[str]:
        return [f"pos={t}" for t in (UNKNOWN, *self._fitted())]

    @staticmethod
    def _split(tokens: Sequence[Any], tags: Sequence[str] | None) -> list[str]:
        if tags is None:
            bad = next((t for t in tokens if not (isinstance(t, (tuple, list)) and len(t) == 2)), None)
            if bad is not None:
                raise TypeError(f"without tags, tokens must be (word, tag) pairs, but got {bad!r}")
            return [tag for _, tag in tokens]
        _check_tokens(tags)
        if len(tags) != len(tokens):
            raise ValueError(f"tags must match tokens in length, but got {len(tags)} tags and {len(tokens)} tokens")
        return list(tags)

    def feature_dicts(self, tokens: Sequence[Any], tags: Sequence[str] | None = None) -> list[dict[str, Any]]:
        """``[{"pos": tag}, ...]`` (no fit needed)."""
        return [{"pos": tag} for tag in self._split(tokens, tags)]

    def __call__(self, tokens: Sequence[Any], tags: Sequence[str] | None = None) -> np.ndarray:  # shape: (len, dim)
        known = self._fitted()
        index = {t: i + 1 for i, t in enumerate(known)}
        return _one_hot_block(self._split(tokens, tags), index, len(known) + 1)
