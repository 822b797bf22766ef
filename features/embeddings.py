"""Word embeddings as per-token feature vectors (Turian, Ratinov & Bengio 2010, section 7.2).

Vector files are read by :func:`features.vectors.read_vectors`, the one reader of word-vector
files (GloVe/Turian text without a header, word2vec/fastText text with one, word2vec binary;
plain or gzipped; ``fmt="auto"`` tells the text layouts apart by the first line). A malformed
line raises :class:`features.base.FeatureFileError` naming the file and line; a file read
once is then read from a binary cache (:mod:`features.vector_cache`).
"""
from __future__ import annotations

import logging
import time
from collections import Counter
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

from features.corpus import normalize_number
from features.scaling import DEFAULT_SIGMA, scale_embeddings
from features.vectors import READ_FORMATS as FORMATS, read_vectors

logger = logging.getLogger(__name__)

#: Rows used for words without a vector, in order of preference; zeros if none is present.
UNKNOWN_WORDS = ("*UNKNOWN*", "UNKNOWN", "<unk>", "UUUNKKK")


class EmbeddingFeatures:
    """Word vectors as an extractor: ``dim``, ``__call__(tokens)`` → ``(len(tokens), dim)`` float32.

    Built from ``words`` and their ``vectors`` (or :meth:`load` from a file). By default
    the matrix is scaled to standard deviation 0.1, as Turian et al. (2010, section 7.2)
    do before using embeddings as features; ``scale=None`` keeps it as read. A token is
    looked up as written, then lower-cased if ``lowercase`` (for lower-cased vocabularies
    such as GloVe 6B), then number-normalised if ``normalize_numbers`` (``1980`` →
    ``*DDDD*``, for vectors induced from a corpus prepared that way). A token found none
    of these ways gets the row of the first of :data:`UNKNOWN_WORDS` present, else zeros.
    """

    def __init__(
        self,
        words: Sequence[str],
        vectors: np.ndarray,
        *,
        lowercase: bool = False,
        normalize_numbers: bool = False,
        scale: float | None = DEFAULT_SIGMA,
    ) -> None:
        vectors = np.asarray(vectors)
        if vectors.ndim != 2 or vectors.shape[0] == 0 or vectors.shape[1] == 0:
            raise ValueError(f"vectors must be a non-empty (words, dim) matrix, but got shape {vectors.shape}")
        if len(words) != vectors.shape[0]:
            raise ValueError(f"words and vectors must match, but got {len(words)} words and {vectors.shape[0]} rows")
        self.words = list(words)
        self.index = {w: i for i, w in enumerate(self.words)}
        if len(self.index) != len(self.words):
            dup = next(w for w, n in Counter(self.words).items() if n > 1)
            raise ValueError(f"words must be unique, but {dup!r} occurs more than once")
        self.vectors = (scale_embeddings(vectors.astype(np.float32), scale) if scale is not None
                        else vectors.astype(np.float32))  # shape: (n_words, dim)
        self.dim = int(vectors.shape[1])
        self.lowercase, self.normalize_numbers, self.scale = lowercase, normalize_numbers, scale
        self.unknown_word = next((w for w in UNKNOWN_WORDS if w in self.index), None)
        self._unknown_row = self.index[self.unknown_word] if self.unknown_word is not None else len(self.words)
        zeros = np.zeros((1, self.dim), dtype=np.float32)
        self._table = np.concatenate([self.vectors, zeros])  # shape: (n_words + 1, dim); last row for no vector
        self._unit: np.ndarray | None = None

    @classmethod
    def load(
        cls,
        path: str | Path,
        *,
        fmt: str = "auto",
        lowercase: bool = False,
        normalize_numbers: bool = False,
        scale: float | None = DEFAULT_SIGMA,
    ) -> "EmbeddingFeatures":
        """Read word vectors from a file in one of :data:`FORMATS` (see :func:`features.vectors.read_vectors`)."""
        start = time.perf_counter()
        words, vectors = read_vectors(path, fmt=fmt)
        if not words:
            raise ValueError(f"{path}: the file holds no word vectors")
        logger.info("loaded %d vectors of dim %d from %s in %.1f s",
                    len(words), vectors.shape[1], path, time.perf_counter() - start)
        return cls(words, vectors, lowercase=lowercase, normalize_numbers=normalize_numbers, scale=scale)

    def key(self, word: str) -> str | None:
        """The vocabulary entry used for ``word`` (see the class doc), or None."""
        if word in self.index:
            return word
        if self.lowercase and word.lower() in self.index:
            return word.lower()
        if self.normalize_numbers:
            shape = normalize_number(word.lower() if self.lowercase else word)
            if shape in self.index:
                return shape
        return None

    def lookup(self, word: str) -> np.ndarray | None:
        """The (scaled) vector for ``word`` as a new array, or None if it has none."""
        key = self.key(word)
        return None if key is None else self.vectors[self.index[key]].copy()

    def __contains__(self, word: object) -> bool:
        return isinstance(word, str) and self.key(word) is not None

    def __len__(self) -> int:
        return len(self.words)

    def __call__(self, tokens: Sequence[str]) -> np.ndarray:  # shape: (len(tokens), dim), float32
        if isinstance(tokens, str):
            raise TypeError(f"tokens must be a sequence of words, but got the single string {tokens!r}")
        rows = [self._row(w) for w in tokens]
        return self._table[np.asarray(rows, dtype=np.int64)]  # shape: (len(tokens), dim)

    def _row(self, word: str) -> int:
        key = self.key(word)
        return self._unknown_row if key is None else self.index[key]

    def feature_names(self) -> list[str]:
        return [f"emb[{j}]" for j in range(self.dim)]

    def feature_dicts(self, tokens: Sequence[str]) -> list[dict[str, Any]]:
        """crfsuite-style real-valued features ``emb[j]`` (how Turian et al. fed embeddings to a CRF)."""
        names = self.feature_names()
        return [dict(zip(names, row.tolist())) for row in self(tokens)]

    def nearest(self, word: str, k: int = 10) -> list[tuple[str, float]]:
        """The ``k`` words closest to ``word`` by cosine similarity, best first, without ``word`` itself."""
        if isinstance(k, bool) or not isinstance(k, int) or k < 1:
            raise ValueError(f"k must be a positive int, but got {k!r}")
        key = self.key(word)
        if key is None:
            raise KeyError(f"{word!r} has no vector (vocabulary of {len(self.words)} words)")
        if self._unit is None:
            self._unit = unit_rows(self.vectors)
        return [(self.words[j], sim) for j, sim in nearest_rows(self._unit, self.index[key], k)]


def unit_rows(matrix: np.ndarray) -> np.ndarray:  # shape: (n, dim), as ``matrix``
    """The rows of ``matrix`` scaled to unit length (all-zero rows stay zero), for cosine similarity."""
    norms = np.linalg.norm(matrix, axis=1, keepdims=True)  # shape: (n, 1)
    return matrix / np.where(norms == 0, 1, norms)


def nearest_rows(unit: np.ndarray, i: int, k: int) -> list[tuple[int, float]]:
    """The ``k`` rows of ``unit`` (see :func:`unit_rows`) with the highest cosine to row ``i``, without ``i``.

    ``(row, cosine)`` pairs, best first; ties go to the lower row.
    """
    sims = unit @ unit[i]  # shape: (n,)
    sims[i] = -np.inf
    k = min(k, len(unit) - 1)
    if k <= 0:
        return []
    top = np.argpartition(-sims, k - 1)[:k]
    return [(j, float(sims[j])) for j in sorted(top.tolist(), key=lambda j: (-sims[j], j))]
