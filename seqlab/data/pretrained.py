"""Pretrained word vectors (GloVe, word2vec, fastText) for initialising a tagger's word embeddings.

Files are parsed by gensim (text and binary word2vec-style files, gzipped or not, through
smart_open) and by the fasttext package (``.bin`` models, whose character n-grams give
vectors to unseen words; Bojanowski et al. 2017). This module adds what those parsers
leave out: errors that name the file and line, checks for lines gensim would accept
silently, the choice of a vector for each word of a corpus, and a binary cache of parsed
text and word2vec files (:mod:`features.vector_cache`; ``SEQLAB_CACHE=off`` turns it off).
"""
from __future__ import annotations

import contextlib
import difflib
import gzip
import logging
import shutil
import tempfile
import time
import zlib
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Iterable, Iterator, Protocol

import numpy as np

from features.vector_cache import cached_vectors
from seqlab.data.vector_errors import binary_error, find_bad_line, is_text_vectors, located, text_error
from seqlab.core.errors import SeqlabError

logger = logging.getLogger(__name__)

FORMATS = ("glove", "word2vec", "word2vec_bin", "fasttext_vec", "fasttext_bin")

# What gensim, numpy, gzip and smart_open raise on a damaged or mislabelled file.
_READ_ERRORS = (ValueError, TypeError, EOFError, OSError, zlib.error)


class VectorStore(Protocol):
    """Where a :class:`PretrainedVectors` reads vectors from; a ``dict[str, np.ndarray]`` is one."""

    def __contains__(self, word: object) -> bool: ...

    def __len__(self) -> int: ...

    def __getitem__(self, word: str) -> np.ndarray: ...


@dataclass
class PretrainedVectors:
    """A table of pretrained word vectors, looked up by exact key (no case folding).

    ``store`` holds the vectors: rows of a matrix read by gensim, a fastText model, or
    any mapping from words to arrays (handy in tests). With ``has_subwords`` (fastText
    ``.bin`` models, Bojanowski et al. 2017), a word outside the vocabulary still gets a
    vector, the average of its character n-gram vectors.
    """

    dim: int
    has_subwords: bool
    store: VectorStore = field(repr=False)

    def lookup(self, word: str) -> np.ndarray | None:
        """The vector for ``word`` as a new float32 array, or None if there is none."""
        if self.has_subwords or word in self.store:
            return np.array(self.store[word], dtype=np.float32)
        return None

    def __contains__(self, word: str) -> bool:
        return word in self.store

    def __len__(self) -> int:
        return len(self.store)


class _Rows:
    """Rows of a gensim matrix by word (gensim's own ``len`` counts unused rows left by duplicates)."""

    def __init__(self, index: dict[str, int], matrix: np.ndarray) -> None:
        self.index = index
        self.matrix = matrix

    def __contains__(self, word: object) -> bool:
        return word in self.index

    def __len__(self) -> int:
        return len(self.index)

    def __getitem__(self, word: str) -> np.ndarray:
        return self.matrix[self.index[word]]


class _FastTextModel:
    """A fastText model as a store: ``in`` asks the vocabulary; ``[word]`` also builds unseen words."""

    def __init__(self, model: Any) -> None:
        self.model = model
        self.size = len(model.get_words())

    def __contains__(self, word: object) -> bool:
        return isinstance(word, str) and self.model.get_word_id(word) != -1

    def __len__(self) -> int:
        return self.size

    def __getitem__(self, word: str) -> np.ndarray:
        return self.model.get_word_vector(word)


def load_vectors(path: str | Path, fmt: str) -> PretrainedVectors:
    """Read a file of pretrained word vectors in one of :data:`FORMATS` (``.gz`` files too).

    ``glove``: text, one word and its values per line, no header. ``word2vec`` and
    ``fasttext_vec``: the same after a ``<count> <dim>`` header line. ``word2vec_bin``:
    word2vec's binary format. ``fasttext_bin``: a fastText model, with subword vectors.
    """
    if fmt not in FORMATS:
        near = difflib.get_close_matches(str(fmt), FORMATS, n=1)
        hint = f"; did you mean {near[0]!r}?" if near else ""
        raise SeqlabError(f"unknown vector format {fmt!r}: expected one of {', '.join(FORMATS)}{hint}")
    path = Path(path)
    if not path.exists():
        raise SeqlabError(f"{path}: no such file (expected {fmt} word vectors)")
    if not path.is_file():
        raise SeqlabError(f"{path}: not a file (expected {fmt} word vectors)")
    logger.info("loading %s vectors from %s", fmt, path)
    start = time.perf_counter()
    vectors = _LOADERS[fmt](path, fmt)
    if len(vectors) == 0:
        raise SeqlabError(f"{path}: the file holds no word vectors")
    logger.info(
        "loaded %d %s vectors of dim %d from %s in %.1f s%s",
        len(vectors), fmt, vectors.dim, path, time.perf_counter() - start,
        " (with subwords)" if vectors.has_subwords else "",
    )
    return vectors


def select_vectors(
    vectors: PretrainedVectors, words: Iterable[str], *, lowercase_fallback: bool = True
) -> dict[str, np.ndarray]:
    """Vectors for a corpus vocabulary, keyed by the words as written, as float32 arrays.

    A word gets the vector stored for it as written; else, with ``lowercase_fallback``,
    the one for its lower-cased form (GloVe 6B, for one, is lower-cased); else, if the
    vectors have subwords, one built from the character n-grams of the word as written.
    Words found none of these ways are left out.
    """
    if isinstance(words, str):
        raise TypeError(f"words must be an iterable of words, but got the single string {words!r}")
    selected: dict[str, np.ndarray] = {}
    how = {"as written": 0, "lower-cased": 0, "from subwords": 0, "missing": 0}
    for word in dict.fromkeys(words):
        if word in vectors:
            key, kind = word, "as written"
        elif lowercase_fallback and word.lower() in vectors:
            key, kind = word.lower(), "lower-cased"
        elif vectors.has_subwords:
            key, kind = word, "from subwords"
        else:
            how["missing"] += 1
            continue
        vector = vectors.lookup(key)
        if vector is not None:
            selected[word] = vector
            how[kind] += 1
    logger.info("pretrained vectors for %d of %d words (%s)", len(selected), sum(how.values()),
                ", ".join(f"{n} {kind}" for kind, n in how.items()))
    return selected


def _keyed_vectors_class(fmt: str) -> Any:
    try:
        from gensim.models import KeyedVectors
    except ImportError as err:
        raise SeqlabError(
            f"reading {fmt} vectors needs gensim ({err}); install it with: pip install gensim"
        ) from None
    return KeyedVectors


def _load_text(path: Path, fmt: str) -> PretrainedVectors:
    return _rows(cached_vectors(path, f"seqlab.pretrained/{fmt}", lambda: _parse_text(path, fmt)))


def _load_word2vec_bin(path: Path, fmt: str) -> PretrainedVectors:
    return _rows(cached_vectors(path, f"seqlab.pretrained/{fmt}", lambda: _parse_word2vec_bin(path, fmt)))


def _rows(vectors: tuple[list[str], np.ndarray]) -> PretrainedVectors:
    words, matrix = vectors
    return PretrainedVectors(dim=matrix.shape[1], has_subwords=False,
                             store=_Rows({word: i for i, word in enumerate(words)}, matrix))


def _ordered(kv: Any) -> tuple[list[str], np.ndarray]:
    """The words of gensim ``KeyedVectors`` in row order, and their rows (float32)."""
    words = [""] * len(kv.key_to_index)
    for word, i in kv.key_to_index.items():
        words[i] = word
    return words, np.asarray(kv.vectors[: len(words)], dtype=np.float32)


def _parse_text(path: Path, fmt: str) -> tuple[list[str], np.ndarray]:
    header = fmt != "glove"
    KeyedVectors = _keyed_vectors_class(fmt)
    try:
        kv = KeyedVectors.load_word2vec_format(str(path), binary=False, no_header=not header)
    except _READ_ERRORS as err:
        raise text_error(path, fmt, err) from None
    words, matrix = _ordered(kv)
    # gensim spreads a line with one value over all columns and reads tab-separated lines as
    # 0-dimensional; both leave traces that send us looking for the line.
    flat = (matrix == matrix[:, :1]).all(axis=1).any() if kv.vector_size > 1 else False
    if kv.vector_size == 0 or flat or not np.isfinite(matrix).all():
        problem = find_bad_line(path, header)
        if problem is not None:
            raise located(path, *problem)
    return words, matrix


def _parse_word2vec_bin(path: Path, fmt: str) -> tuple[list[str], np.ndarray]:
    KeyedVectors = _keyed_vectors_class(fmt)
    try:
        kv = KeyedVectors.load_word2vec_format(str(path), binary=True)
    except _READ_ERRORS as err:
        raise binary_error(path, err) from None
    if is_text_vectors(path, kv.vector_size):  # gensim can read text as binary without noticing
        raise binary_error(path, None)
    words, matrix = _ordered(kv)
    finite = np.isfinite(matrix).all(axis=1)
    if not finite.all():
        word = words[int(np.argmin(finite))]
        raise SeqlabError(f"{path}: the vector for {word!r} has values that are not finite numbers (nan or inf)")
    return words, matrix


def _load_fasttext_bin(path: Path, fmt: str) -> PretrainedVectors:
    try:
        import fasttext
    except ImportError as err:
        raise SeqlabError(
            f"reading {fmt} models needs fasttext ({err}); install it with: pip install fasttext"
        ) from None
    with _uncompressed(path) as local:
        try:
            model = fasttext.load_model(str(local))
        except ValueError as err:
            raise SeqlabError(
                f"{path}: not a fastText .bin model ({err}); fastText text vectors need fmt='fasttext_vec'"
            ) from None
    has_subwords = model.f.getArgs().maxn > 0
    return PretrainedVectors(dim=model.get_dimension(), has_subwords=has_subwords, store=_FastTextModel(model))


_LOADERS = {
    "glove": _load_text,
    "word2vec": _load_text,
    "word2vec_bin": _load_word2vec_bin,
    "fasttext_vec": _load_text,
    "fasttext_bin": _load_fasttext_bin,
}


@contextlib.contextmanager
def _uncompressed(path: Path) -> Iterator[Path]:
    """``path`` itself, or for a ``.gz`` file a temporary uncompressed copy (fasttext reads only plain files)."""
    if path.suffix != ".gz":
        yield path
        return
    with tempfile.TemporaryDirectory(prefix="seqlab-vectors-") as tmp:
        local = Path(tmp) / path.stem
        try:
            with gzip.open(path, "rb") as src, open(local, "wb") as dst:
                shutil.copyfileobj(src, dst, length=1 << 20)
        except (OSError, EOFError, zlib.error) as err:
            raise SeqlabError(f"{path}: cannot decompress ({err})") from None
        yield local
