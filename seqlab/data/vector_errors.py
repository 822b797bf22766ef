"""Errors that name the file and line for a word-vector file gensim refused or misread.

gensim says little more than "could not convert string to float"; these helpers find the first
line it cannot have read right (mirroring how gensim splits lines), or tell text from binary
files read with the wrong ``fmt``. Used by :mod:`seqlab.data.pretrained`.
"""
from __future__ import annotations

import math
import zlib
from pathlib import Path

from seqlab.core.errors import DataFormatError, SeqlabError


def binary_error(path: Path, err: Exception | None) -> SeqlabError:
    """The error for a file gensim could not read as word2vec binary (``err``) or read as text by mistake."""
    header = _first_line(path)
    problem = _bad_header(header)
    if problem is not None:
        hint = "; text files need fmt='glove' or 'word2vec', fastText models fmt='fasttext_bin'"
        return DataFormatError(str(path), 1, problem + hint)
    if is_text_vectors(path, int(str(header).split()[1])):
        return DataFormatError(str(path), 2, "this is word2vec text, not binary; text files need fmt='word2vec'")
    return SeqlabError(
        f"{path}: cannot read word2vec binary vectors ({type(err).__name__}: {err}); the file may be truncated"
    )


def text_error(path: Path, fmt: str, err: Exception) -> SeqlabError:
    """The error for a text file gensim refused: the first bad line if one can be found."""
    try:
        problem = find_bad_line(path, fmt != "glove")
    except (OSError, EOFError, zlib.error) as scan_err:
        return SeqlabError(f"{path}: cannot read {fmt} vectors ({scan_err})")
    if problem is not None:
        return located(path, *problem)
    return SeqlabError(f"{path}: cannot read {fmt} vectors ({type(err).__name__}: {err})")


def located(path: Path, line: int | None, problem: str) -> SeqlabError:
    return DataFormatError(str(path), line, problem) if line is not None else SeqlabError(f"{path}: {problem}")


def find_bad_line(path: Path, header: bool) -> tuple[int | None, str] | None:
    """(line number or None, problem) for the first thing gensim cannot have read right, or None.

    Mirrors how gensim splits a line (on single spaces, after stripping its end), so only
    runs after gensim failed or left traces of a bad line.
    """
    from gensim import utils

    expected = declared = None
    origin = ""
    lineno = 0
    with utils.open(str(path), "rb") as fin:
        for lineno, raw in enumerate(fin, start=1):
            try:
                text = raw.rstrip().decode("utf-8")
            except UnicodeDecodeError as err:
                return lineno, (
                    f"not UTF-8 text ({err.reason} at byte {err.start}); "
                    f"binary files need fmt='word2vec_bin' or 'fasttext_bin'"
                )
            if header and lineno == 1:
                problem = _bad_header(text)
                if problem is not None:
                    return 1, problem + "; files without a header need fmt='glove'"
                declared, expected = (int(x) for x in text.split())
                origin = "as declared in the header"
                continue
            fields = text.split(" ")
            if not header and lineno == 1 and _bad_header(text) is None:
                return 1, (
                    f"expected a word and its values, but got the header {text!r}; "
                    f"files with a '<count> <dim>' header need fmt='word2vec' or 'fasttext_vec'"
                )
            if expected is None:
                expected, origin = len(fields) - 1, f"as on line {lineno}"
            if expected == 0 or len(fields) - 1 != expected:
                spacing = "; fields must be separated by single spaces" if len(fields) == 1 or "\t" in text else ""
                return lineno, (
                    f"expected a word and {expected} values ({origin}), but got {len(fields) - 1} values "
                    f"in {_clip(text)!r}{spacing}"
                )
            problem = _bad_number(fields[1:])
            if problem is not None:
                return lineno, problem
    if lineno == 0:
        return None, "the file is empty"
    if declared is not None and lineno - 1 < declared:
        return 1, f"the header declares {declared} vectors, but the file has only {lineno - 1}"
    return None


def _bad_header(line: str | None) -> str | None:
    """What is wrong with a word2vec header line ``<count> <dim>``, or None."""
    if line is not None:
        fields = line.split()
        if len(fields) == 2 and all(f.isdecimal() for f in fields):
            return None
    shown = "a line that is not text" if line is None else repr(_clip(line))
    return f"expected a header '<count> <dim>', got {shown}"


def _bad_number(values: list[str]) -> str | None:
    for value in values:
        try:
            number = float(value)
        except ValueError:
            spacing = "" if value else "; fields must be separated by single spaces"
            return f"expected a number, got {value!r}{spacing}"
        if not math.isfinite(number):
            return f"expected a finite number, got {value!r}"
    return None


def _first_line(path: Path) -> str | None:
    """The first line of a (possibly compressed) file as text, or None if it is not text."""
    try:
        return _head(path, 1)[0].rstrip().decode("utf-8")
    except UnicodeDecodeError:
        return None


def is_text_vectors(path: Path, dim: int) -> bool:
    """Whether a file gensim read as binary is word2vec text: its second line is a word and ``dim`` numbers."""
    try:
        fields = _head(path, 2)[1].rstrip().decode("utf-8").split(" ")
    except UnicodeDecodeError:
        return False
    return len(fields) == dim + 1 and _bad_number(fields[1:]) is None


def _head(path: Path, lines: int) -> list[bytes]:
    """The first ``lines`` lines of a (possibly compressed) file, each cut at 64 KiB."""
    from gensim import utils

    try:
        with utils.open(str(path), "rb") as fin:
            return [fin.readline(1 << 16) for _ in range(lines)]
    except (OSError, EOFError, zlib.error) as err:
        raise SeqlabError(f"{path}: cannot read ({err})") from None


def _clip(text: str, width: int = 60) -> str:
    return text if len(text) <= width else text[:width] + "..."
