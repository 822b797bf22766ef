"""What the neural embedding trainers (:mod:`features.cw`, :mod:`features.hlbl`) share.

- :class:`Vocabulary` and :func:`encode`: a corpus of token lists → a word index and one
  n-gram window per token (:func:`windows`), in a single pass over the corpus, so the
  sentences may come from a generator.
- :class:`Embeddings`: the learned table (words, float32 matrix, training statistics), an
  extractor in the sense of :mod:`features.base`, with ``nearest`` by cosine and file I/O in
  word2vec text format (written by gensim) and in the layout of Turian et al.'s (2010)
  published ``embeddings-scaled.EMBEDDING_SIZE=50.txt`` (a word then its numbers, no header).
  Files are read by :func:`features.vectors.read_vectors`, the one reader of both layouts.

Nothing here imports torch or seqlab.
"""
from __future__ import annotations

import difflib
import gzip
import os
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Iterable, Sequence

import numpy as np

from features.atomic import atomic_path
from features.embeddings import nearest_rows, unit_rows
from features.vectors import read_vectors

PADDING = "PADDING"  # fills windows at a sentence's left edge; Turian's files use these two names
UNKNOWN = "*UNKNOWN*"  # every word seen fewer than ``min_count`` times
SPECIALS = (PADDING, UNKNOWN)


@dataclass(frozen=True)
class Vocabulary:
    """Word ↔ id: 0 is PADDING, 1 is UNKNOWN, then words by falling count (ties alphabetically)."""

    words: tuple[str, ...]
    counts: tuple[int, ...]
    index: dict[str, int] = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "index", {w: i for i, w in enumerate(self.words)})

    def __len__(self) -> int:
        return len(self.words)

    def ids(self, tokens: Sequence[str]) -> np.ndarray:  # shape: (len(tokens),), int32
        unk = self.index[UNKNOWN]
        return np.fromiter((self.index.get(t, unk) for t in tokens), dtype=np.int32, count=len(tokens))


def encode(sentences: Iterable[Sequence[str]], *, min_count: int = 1,
           vocabulary: Vocabulary | None = None) -> tuple[Vocabulary, np.ndarray, np.ndarray]:
    """Token ids of a whole corpus in one pass: ``(vocabulary, ids, sentence lengths)``.

    With ``vocabulary`` given (held-out text) it is used as is; otherwise it is built from
    these sentences, keeping words seen at least ``min_count`` times. A token spelled like a
    special (``PADDING``, ``*UNKNOWN*``) maps to that special.
    """
    if min_count < 1:
        raise ValueError(f"min_count must be at least 1, but got {min_count}")
    if vocabulary is not None:
        parts = [vocabulary.ids(list(s)) for s in sentences]
        lengths = np.array([len(p) for p in parts], dtype=np.int64)
        ids = np.concatenate(parts) if parts else np.zeros(0, dtype=np.int32)
        return vocabulary, ids, lengths
    first: dict[str, int] = {}  # word → provisional id, in order of first appearance
    flat: list[int] = []
    lengths_list: list[int] = []
    for sentence in sentences:
        if isinstance(sentence, str):
            raise TypeError("sentences must be sequences of tokens, but got a str; split it into tokens first")
        n = 0
        for token in sentence:
            flat.append(first.setdefault(token, len(first)))
            n += 1
        lengths_list.append(n)
    provisional = np.array(flat, dtype=np.int64)
    counts = np.bincount(provisional, minlength=len(first))
    kept = sorted((w for w, i in first.items() if counts[i] >= min_count and w not in SPECIALS),
                  key=lambda w: (-counts[first[w]], w))
    words = SPECIALS + tuple(kept)
    final = {w: i for i, w in enumerate(words)}
    remap = np.array([final.get(w, final[UNKNOWN]) for w in first], dtype=np.int32)
    ids = remap[provisional] if len(first) else np.zeros(0, dtype=np.int32)
    word_counts = np.bincount(ids, minlength=len(words)).astype(np.int64)
    vocab = Vocabulary(words, tuple(int(c) for c in word_counts))
    return vocab, ids.astype(np.int32, copy=False), np.array(lengths_list, dtype=np.int64)


def windows(ids: np.ndarray, lengths: np.ndarray, n: int, pad_id: int = 0) -> np.ndarray:
    """One n-gram per token, ending at that token: ``(n_tokens, n)`` int32.

    Each sentence is padded on the left with ``n - 1`` PADDING ids, so a window never
    crosses a sentence boundary and the last column is always a real token.
    """
    if n < 1:
        raise ValueError(f"window size must be at least 1, but got {n}")
    if int(lengths.sum()) != len(ids):
        raise ValueError(f"sentence lengths must add up to the number of ids, but got {int(lengths.sum())} and {len(ids)}")
    starts = np.concatenate([[0], np.cumsum(lengths)[:-1]]).astype(np.int64)
    padded = np.full(len(ids) + (n - 1) * len(lengths), pad_id, dtype=np.int32)
    # token j of sentence s sits at (n - 1) * (s + 1) + starts[s] + j in the padded array
    offsets = np.repeat((n - 1) * np.arange(1, len(lengths) + 1), lengths)
    positions = np.arange(len(ids), dtype=np.int64) + offsets
    padded[positions] = ids
    return padded[positions[:, None] + np.arange(-(n - 1), 1)]  # shape: (n_tokens, n)


@dataclass
class TrainingStats:
    """How an embedding was trained: windows (= tokens) seen, updates, seconds, losses."""

    windows_seen: int
    updates: int
    seconds: float
    final_loss: float  # moving average of the per-window training loss before each update
    heldout: dict[str, float] = field(default_factory=dict)  # e.g. {"ranking_loss": ...} or {"perplexity": ...}

    @property
    def windows_per_second(self) -> float:
        return self.windows_seen / self.seconds if self.seconds > 0 else float("nan")


FORMATS = ("word2vec", "turian")


@dataclass
class Embeddings:
    """A word-vector table learned by :func:`features.cw.train_cw` or :func:`features.hlbl.train_hlbl`.

    An extractor (:mod:`features.base`): ``emb(tokens)`` gives a ``(len(tokens), dim)`` array;
    a word outside the table gets the ``*UNKNOWN*`` row when there is one, zeros otherwise.
    Lookup is exact (no case folding), as in Turian et al. (2010), whose embeddings keep case.
    """

    words: list[str]
    matrix: np.ndarray  # shape: (len(words), dim), float32
    stats: TrainingStats | None = None
    index: dict[str, int] = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        self.words = list(self.words)
        self.matrix = np.ascontiguousarray(self.matrix, dtype=np.float32)
        if self.matrix.ndim != 2 or self.matrix.shape[0] != len(self.words):
            raise ValueError(f"matrix must have shape ({len(self.words)}, dim) to match the words, "
                             f"but got {self.matrix.shape}")
        self.index = {w: i for i, w in enumerate(self.words)}
        if len(self.index) != len(self.words):
            dup = next(w for w, c in Counter(self.words).items() if c > 1)
            raise ValueError(f"words must be unique, but {dup!r} appears more than once")

    @property
    def dim(self) -> int:
        return int(self.matrix.shape[1])

    def __len__(self) -> int:
        return len(self.words)

    def __contains__(self, word: str) -> bool:
        return word in self.index

    def __call__(self, tokens: Sequence[str]) -> np.ndarray:  # shape: (len(tokens), dim), float32
        fallback = self.index.get(UNKNOWN, -1)
        rows = np.array([self.index.get(t, fallback) for t in tokens], dtype=np.int64)
        out = np.zeros((len(rows), self.dim), dtype=np.float32)
        out[rows >= 0] = self.matrix[rows[rows >= 0]]
        return out

    def nearest(self, word: str, k: int = 10) -> list[tuple[str, float]]:
        """The ``k`` words with the highest cosine similarity to ``word`` (itself left out)."""
        if word not in self.index:
            hint = difflib.get_close_matches(word, self.words[:20_000], n=1)  # the frequent words: fast enough
            raise KeyError(f"{word!r} is not in the embeddings" + (f"; did you mean {hint[0]!r}?" if hint else ""))
        return [(self.words[j], sim) for j, sim in nearest_rows(unit_rows(self.matrix), self.index[word], k)]

    def save(self, path: str | os.PathLike[str], *, format: str = "word2vec") -> None:
        """Write the table atomically: ``word2vec`` text (a ``count dim`` header) or ``turian`` (no header).

        A path ending in ``.gz`` is gzipped.
        """
        if format not in FORMATS:
            hint = difflib.get_close_matches(format, FORMATS, n=1)
            raise ValueError(f"format must be one of {FORMATS}, but got {format!r}"
                             + (f"; did you mean {hint[0]!r}?" if hint else ""))
        if any(not w or any(c.isspace() for c in w) for w in self.words):
            bad = next(w for w in self.words if not w or any(c.isspace() for c in w))
            raise ValueError(f"words must be non-empty and free of whitespace to be written as text, but got {bad!r}")
        path = Path(path)
        with atomic_path(path, ".tmp.gz" if path.name.endswith(".gz") else ".tmp") as tmp:
            if format == "word2vec":
                self._write_word2vec(str(tmp))
            else:
                self._write_turian(str(tmp))

    def _write_word2vec(self, tmp: str) -> None:
        """word2vec's text layout: Turian's lines under a ``count dim`` header (the rows in vocabulary order)."""
        self._write_turian(tmp, header=f"{len(self.words)} {self.dim}\n")

    def _write_turian(self, tmp: str, header: str = "") -> None:
        opener = gzip.open if tmp.endswith(".gz") else open
        with opener(tmp, "wt", encoding="utf-8", newline="\n") as out:
            out.write(header)
            for word, row in zip(self.words, self.matrix):
                out.write(word + " " + " ".join(f"{x:.9g}" for x in row) + "\n")  # 9 digits: exact float32

    @classmethod
    def load(cls, path: str | os.PathLike[str]) -> "Embeddings":
        """Read word2vec text (a ``count dim`` header line) or Turian's layout (no header), gzipped or not.

        Parsed by :func:`features.vectors.read_vectors`: a malformed line raises
        :class:`~features.base.FeatureFileError` naming the file and line.
        """
        words, matrix = read_vectors(path)
        return cls(words, matrix)
