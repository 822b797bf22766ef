"""Word embeddings as per-token feature vectors (Turian, Ratinov & Bengio 2010, section 7.2).

Two text layouts are read, plain or gzipped, told apart by the first line
(``fmt="auto"``):

* ``word2vec``: a ``<count> <dim>`` header, then one word and ``dim`` numbers per line;
  read by gensim's ``KeyedVectors`` (imported only here, with an install hint);
* ``turian`` (alias ``glove``): no header, one word and its numbers per line, separated
  by single spaces: Turian et al.'s ``embeddings-scaled.EMBEDDING_SIZE=50.txt`` and the
  GloVe files. Read and checked line by line here.

A line with the wrong number of columns, a value that is not a finite number, a
duplicate word or a header that does not match the file raises
:class:`features.base.FeatureFileError` naming the file and line.

:func:`read_vectors` (the words and the matrix, unscaled) is also how
:meth:`features.vocab.Embeddings.load` reads these files; a file it has read once is then read
from a binary cache (:mod:`features.vector_cache`).
"""
from __future__ import annotations

import contextlib
import logging
import math
import os
import time
import zlib
from collections import Counter
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

from features.base import FeatureFileError
from features.corpus import normalize_number, read_lines
from features.scaling import DEFAULT_SIGMA, scale_embeddings
from features.vector_cache import cached_vectors

logger = logging.getLogger(__name__)

FORMATS = ("auto", "word2vec", "turian", "glove")
#: Rows used for words without a vector, in order of preference; zeros if none is present.
UNKNOWN_WORDS = ("*UNKNOWN*", "UNKNOWN", "<unk>", "UUUNKKK")
_CHUNK = 8192  # rows converted to numbers at a time


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
        """Read word vectors from a ``word2vec`` or ``turian``/``glove`` text file (see the module doc)."""
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


def read_vectors(path: str | os.PathLike[str], *, fmt: str = "auto") -> tuple[list[str], np.ndarray]:
    """The words of a vector file and their ``(len(words), dim)`` float32 matrix, checked line by line.

    ``fmt`` is ``auto``, ``word2vec``, ``turian`` or ``glove`` (see the module doc); the file may
    be gzipped. A word2vec header that declares 0 vectors gives an empty ``(0, dim)`` matrix.
    """
    if fmt not in FORMATS:
        raise ValueError(f"fmt must be one of {', '.join(FORMATS)}, but got {fmt!r}")
    path = Path(path)
    if not path.is_file():
        raise FileNotFoundError(f"embedding file not found: {path}")
    layout = detect_format(path) if fmt == "auto" else ("turian" if fmt == "glove" else fmt)
    read = (lambda: _read_word2vec(path)) if layout == "word2vec" else (lambda: _read_text(path, header=False))
    return cached_vectors(path, f"features.embeddings/{layout}", read)  # parsed once, then from the cache


def detect_format(path: str | Path) -> str:
    """``word2vec`` if the first line is a ``<count> <dim>`` header, else ``turian``."""
    first = _first_line(Path(path))
    if first is None:
        raise ValueError(f"{path}: the file is empty (expected word vectors)")
    return "word2vec" if _header(first) is not None else "turian"


def _header(line: str) -> tuple[int, int] | None:
    fields = line.split()
    if len(fields) == 2 and all(f.isdecimal() for f in fields):
        return int(fields[0]), int(fields[1])
    return None


def _clip(text: str, width: int = 60) -> str:
    return text if len(text) <= width else text[:width] + "..."


def _read_text(path: Path, *, header: bool) -> tuple[list[str], np.ndarray]:
    """Parse and check a vector file line by line (both layouts); errors name the file and line."""
    words: list[str] = []
    first_line: dict[str, int] = {}
    chunks: list[np.ndarray] = []
    pending: list[list[str]] = []
    dim = declared = None
    origin = ""
    lineno = 0
    for lineno, line in enumerate(read_lines(path), start=1):
        if header and lineno == 1:
            parsed = _header(line)
            if parsed is None:
                raise FeatureFileError(str(path), 1, f"expected a header '<count> <dim>', but got {_clip(line)!r}")
            declared, dim = parsed
            origin = "as declared in the header"
            continue
        fields = line.rstrip().split(" ")
        if fields == [""]:
            raise FeatureFileError(str(path), lineno, "empty line (expected a word and its values)")
        if dim is None:
            dim, origin = len(fields) - 1, f"as on line {lineno}"
            if dim == 0:
                raise FeatureFileError(str(path), lineno, f"expected a word and its values, but got {_clip(line)!r}")
        if len(fields) != dim + 1:
            raise FeatureFileError(
                str(path), lineno,
                f"expected a word and {dim} values ({origin}), but got {len(fields) - 1} values in {_clip(line)!r}"
                + ("; fields must be separated by single spaces" if "" in fields or "\t" in line else ""),
            )
        word = fields[0]
        if word in first_line:
            raise FeatureFileError(str(path), lineno, f"duplicate word {word!r} (first on line {first_line[word]})")
        first_line[word] = lineno
        words.append(word)
        pending.append(fields[1:])
        if len(pending) == _CHUNK:
            chunks.append(_numbers(path, pending, lineno - len(pending) + 1))
            pending = []
    if pending:
        chunks.append(_numbers(path, pending, lineno - len(pending) + 1))
    if dim is None:
        raise ValueError(f"{path}: the file holds no word vectors")
    if declared is not None and declared != len(words):
        raise FeatureFileError(str(path), 1, f"the header declares {declared} vectors, but the file has {len(words)}")
    return words, np.concatenate(chunks) if chunks else np.zeros((0, dim), dtype=np.float32)


def _numbers(path: Path, rows: list[list[str]], first_lineno: int) -> np.ndarray:
    """``rows`` of number strings as a float32 matrix; a bad value is reported with its line."""
    try:
        with np.errstate(over="ignore"):  # an overflow becomes inf, reported below
            matrix = np.array(rows, dtype=np.float32)  # shape: (len(rows), dim)
    except ValueError:
        matrix = None
    if matrix is not None and np.isfinite(matrix).all():
        return matrix
    for offset, values in enumerate(rows):
        for value in values:
            try:
                number = float(value)
            except ValueError:
                raise FeatureFileError(
                    str(path), first_lineno + offset, f"expected a number, but got {value!r}"
                ) from None
            if not math.isfinite(number) or abs(number) > float(np.finfo(np.float32).max):
                raise FeatureFileError(
                    str(path), first_lineno + offset, f"expected a finite number, but got {value!r}"
                )
    raise ValueError(f"{path}: cannot read the numbers of lines {first_lineno}-{first_lineno + len(rows) - 1}")


def _read_word2vec(path: Path) -> tuple[list[str], np.ndarray]:
    """Read word2vec text with gensim; if gensim fails or reads a damaged line silently, locate it here."""
    try:
        from gensim.models import KeyedVectors
    except ImportError as err:
        raise ImportError(f"reading word2vec files needs gensim ({err}); install it with: pip install gensim") from None
    try:
        kv = KeyedVectors.load_word2vec_format(str(path), binary=False)
    except (ValueError, EOFError, OSError, zlib.error):
        return _read_text(path, header=True)  # raises FeatureFileError at the first bad line
    words = list(kv.index_to_key)
    matrix = np.asarray(kv.vectors[: len(words)], dtype=np.float32)
    # gensim spreads a line with one value over all columns, keeps only the first of duplicate
    # words and turns overflows into inf: if it shows a trace of these, find the line ourselves.
    # (Like gensim, lines past the declared count are not read.)
    flat = kv.vector_size > 1 and bool((matrix == matrix[:, :1]).all(axis=1).any())
    if flat or not np.isfinite(matrix).all() or len(words) != _declared_count(path):
        return _read_text(path, header=True)
    return words, matrix


def _declared_count(path: Path) -> int:
    parsed = _header(_first_line(path) or "")
    return -1 if parsed is None else parsed[0]


def _first_line(path: Path) -> str | None:
    with contextlib.closing(read_lines(path)) as lines:
        return next(lines, None)
