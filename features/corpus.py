"""Unlabelled text prepared for inducing word representations (Brown clusters, embeddings).

The pipeline is the one of Turian, Ratinov & Bengio (2010), who induced their
representations from cleaned RCV1 newswire:

1. **Tokenise** each line (a paragraph) as CoNLL-2003 does and split it into sentences
   (:func:`features.tokenize.sentence_words`).
2. **Clean** (optional; Liang 2005, as used by Turian et al. 2010): drop every sentence in
   which fewer than 90% of the characters, whitespace not counted, are ``a``-``z``
   (:func:`is_clean`).
3. **Lower-case** (optional).
4. **Normalise numbers** (optional; :func:`normalize_number`): a token made only of digits
   and punctuation, with at least one digit, becomes its digit shape in a ``*...*``
   wrapper: every decimal digit becomes ``D``, other characters stay. ``1980`` →
   ``*DDDD*``, ``3.5`` → ``*D.D*``, ``1,234.5`` → ``*D,DDD.D*``, ``08/22`` → ``*DD/DD*``.
   Tokens with a letter (``1980s``, ``F-16``) and tokens without a digit (``.``) are kept.

:func:`read_corpus` streams the result as token lists from plain or gzipped UTF-8 files,
one paragraph per line (the layout of ``shared/data/unlabeled``); :func:`write_corpus`
writes one sentence per line, atomically; :func:`corpus_stats` counts it.

Tokenisation and sentence splitting are those of :mod:`features.tokenize` (CoNLL-2003
conventions, the same as ``seqlab tag`` uses), through its offset-free
:func:`features.tokenize.sentence_words`.
"""
from __future__ import annotations

import gzip
import logging
import os
import zlib
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass
from fractions import Fraction
from pathlib import Path
from typing import BinaryIO, Union

from features.atomic import atomic_open
from features.base import FeatureFileError
from features.tokenize import sentence_words

PathLike = Union[str, "os.PathLike[str]"]

logger = logging.getLogger(__name__)

#: Liang's (2005) cleaning: the least share of ``a``-``z`` among non-space characters.
CLEAN_FRACTION = Fraction(9, 10)
#: What :func:`read_corpus` reads from a folder: files with these suffixes, in name order.
CORPUS_SUFFIXES = (".txt", ".txt.gz")

#: What :func:`is_clean` counts as prose: ``ascii``, Liang's ``a``-``z``; ``letters``, the lower-case (or caseless)
#: letters of every script, so that French, Greek or Russian prose passes as English prose does.
CLEANINGS = ("letters", "ascii")


def is_clean(tokens: Sequence[str], letters: str = "ascii") -> bool:
    """Liang's (2005) test: at least 90% of the non-space characters are ``a``-``z`` (``letters="ascii"``), or
    lower-case or caseless letters of any script (``letters="letters"``: ``é``, ``σ``, ``я``, ``中``).

    An empty sentence is not clean. Exact (integer) arithmetic, so 63 of 70 passes.
    """
    if letters not in CLEANINGS:
        raise ValueError(f"letters: expected one of {', '.join(CLEANINGS)}, got {letters!r}")
    chars = "".join(tokens)
    total = sum(not c.isspace() for c in chars)
    if letters == "ascii":
        lower = sum("a" <= c <= "z" for c in chars)
    else:
        lower = sum(c.isalpha() and not c.isupper() and not c.istitle() for c in chars)
    return total > 0 and lower * CLEAN_FRACTION.denominator >= total * CLEAN_FRACTION.numerator


def normalize_number(token: str) -> str:
    """``*DDDD*`` for ``1980``: digits → ``D`` in ``*...*``, for tokens of only digits and punctuation.

    A token is rewritten when it has at least one decimal digit and every character is
    a decimal digit or neither a letter, digit nor space; other tokens come back as given.
    """
    if not any(c.isdecimal() for c in token):
        return token
    if any(c.isalpha() or c.isspace() or (c.isnumeric() and not c.isdecimal()) for c in token):
        return token
    return "*" + "".join("D" if c.isdecimal() else c for c in token) + "*"


def corpus_files(path_or_paths: PathLike | Iterable[PathLike]) -> list[Path]:
    """The files a corpus argument names: files as given; folders expanded to their ``*.txt[.gz]``."""
    if isinstance(path_or_paths, (str, os.PathLike)):
        path_or_paths = [path_or_paths]
    files: list[Path] = []
    for item in path_or_paths:
        path = Path(item)
        if path.is_dir():
            found = sorted(p for p in path.iterdir() if p.is_file() and p.name.endswith(CORPUS_SUFFIXES))
            if not found:
                raise ValueError(f"corpus folder {path} holds no {' or '.join(CORPUS_SUFFIXES)} files")
            files.extend(found)
        elif path.is_file():
            files.append(path)
        else:
            raise FileNotFoundError(f"corpus file not found: {path}")
    if not files:
        raise ValueError("no corpus files given")
    return files


def read_corpus(
    path_or_paths: PathLike | Iterable[PathLike],
    *,
    tokenize: bool = True,
    clean: bool | str = False,
    normalize_numbers: bool = False,
    lowercase: bool = False,
) -> Iterator[list[str]]:
    """Stream the sentences of UTF-8 text files (gzipped or not) as token lists.

    Each line is a paragraph: with ``tokenize`` it is tokenised and split into sentences
    (:func:`features.tokenize.sentence_words`); without, it is one already tokenised sentence, split on
    whitespace (the layout :func:`write_corpus` writes). Blank lines yield nothing. Then,
    in this order: ``clean`` drops sentences that fail :func:`is_clean` (``True`` or ``"ascii"``: Liang's ``a``-``z``;
    ``"letters"``: letters of every script), ``lowercase``
    lower-cases, and ``normalize_numbers`` applies :func:`normalize_number`.

    Files are checked before the first sentence is read (``FileNotFoundError``). Bytes that
    are not UTF-8 or a damaged gzip stream raise :class:`FeatureFileError` with file and
    line; a corpus with no sentence (left) raises ``ValueError`` naming its files.
    """
    files = corpus_files(path_or_paths)
    cleaning = "ascii" if clean is True else clean or None
    if cleaning is not None and cleaning not in CLEANINGS:
        raise ValueError(f"clean: expected True, False or one of {', '.join(CLEANINGS)}, got {clean!r}")
    return _read(files, tokenize, cleaning, normalize_numbers, lowercase)


def _read(files: list[Path], tokenize: bool, clean: str | None, numbers: bool,
          lowercase: bool) -> Iterator[list[str]]:
    seen = kept = 0
    for path in files:
        logger.info("reading corpus file %s", path)
        for line in read_lines(path):
            for sentence in sentence_words(line) if tokenize else [line.split()]:
                if not sentence:
                    continue
                seen += 1
                if clean and not is_clean(sentence, clean):
                    continue
                if lowercase:
                    sentence = [t.lower() for t in sentence]
                if numbers:
                    sentence = [normalize_number(t) for t in sentence]
                kept += 1
                yield sentence
    if kept == 0:
        names = ", ".join(str(p) for p in files)
        why = f" after cleaning (all {seen} sentences were dropped)" if seen else ""
        raise ValueError(f"empty corpus: no sentences in {names}{why}")


def _open_bytes(path: Path) -> BinaryIO:
    with open(path, "rb") as probe:
        gzipped = probe.read(2) == b"\x1f\x8b"  # gzip magic, whatever the file is called
    return gzip.open(path, "rb") if gzipped else open(path, "rb")  # type: ignore[return-value]


def read_lines(path: PathLike) -> Iterator[str]:
    """The lines of a UTF-8 text file, gzipped or not, without line ends; errors name the file and line."""
    path = Path(path)
    number = 0
    with _open_bytes(path) as handle:
        try:
            for number, raw in enumerate(handle, start=1):
                try:
                    line = raw.decode("utf-8")
                except UnicodeDecodeError as err:
                    raise FeatureFileError(
                        str(path), number, f"not UTF-8 text ({err.reason} at byte {err.start} of the line)"
                    ) from None
                if number == 1:
                    line = line.removeprefix("\ufeff")
                yield line.rstrip("\r\n")
        except (OSError, EOFError, zlib.error) as err:  # a damaged or truncated gzip stream
            raise FeatureFileError(str(path), number + 1, f"cannot read ({type(err).__name__}: {err})") from None


@dataclass(frozen=True)
class CorpusStats:
    """Size of a corpus: sentences, tokens and distinct token types."""

    sentences: int
    tokens: int
    types: int

    def __str__(self) -> str:
        return f"{self.sentences:,} sentences, {self.tokens:,} tokens, {self.types:,} types"


def corpus_stats(sentences: Iterable[Sequence[str]], *, progress: bool = False) -> CorpusStats:
    """Count sentences, tokens and types, e.g. ``corpus_stats(read_corpus(path, clean=True))``."""
    n_sentences = n_tokens = 0
    types: set[str] = set()
    for sentence in _progress(sentences, progress):
        n_sentences += 1
        n_tokens += len(sentence)
        types.update(sentence)
    return CorpusStats(n_sentences, n_tokens, len(types))


def write_corpus(sentences: Iterable[Sequence[str]], path: PathLike, *, progress: bool = True) -> CorpusStats:
    """Write one sentence per line, tokens separated by single spaces (gzipped if ``path`` ends in ``.gz``).

    The file appears complete or not at all (a temporary file renamed into place). A token
    that is empty or holds whitespace, or no sentence at all, is a ``ValueError``.
    ``progress`` shows a progress bar on a terminal.
    """
    path = Path(path)
    n_sentences = n_tokens = 0
    types: set[str] = set()
    with atomic_open(path, "wb") as raw:
        out = gzip.GzipFile(fileobj=raw, mode="wb", mtime=0) if path.name.endswith(".gz") else raw
        for n_sentences, sentence in enumerate(_progress(sentences, progress), start=1):
            line = " ".join(sentence)
            if len(line.split()) != len(sentence) or not sentence:
                raise ValueError(
                    f"sentence {n_sentences}: tokens must be non-empty and hold no whitespace, "
                    f"but got {list(sentence)[:20]!r}"
                )
            out.write(line.encode("utf-8") + b"\n")
            n_tokens += len(sentence)
            types.update(sentence)
        if out is not raw:
            out.close()
        if n_sentences == 0:
            raise ValueError(f"no sentences to write to {path}")
    return CorpusStats(n_sentences, n_tokens, len(types))


def _progress(items: Iterable[Sequence[str]], show: bool) -> Iterable[Sequence[str]]:
    if not show:
        return items
    from tqdm import tqdm

    return tqdm(items, unit=" sentences", disable=None)  # disable=None: shown on a terminal only
