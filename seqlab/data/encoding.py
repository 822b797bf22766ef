"""Text encodings of the files seqlab reads: one name check, one decoder, and a guess for the error message.

Every reader decodes through :func:`decode_line` (or :func:`decode_text` for a whole file), so a file that is not
in the expected encoding gets the same one-line error everywhere: the file, the line, the byte, the encoding it most
likely is, and the option that reads it (``--encoding`` on the command line, ``data.encoding`` in a config). The
original CoNLL-2002 files, for instance, are ISO-8859-1 (Latin-1).
"""
from __future__ import annotations

import codecs
import re

from seqlab.core.errors import DataFormatError, SeqlabError

DEFAULT_ENCODING = "utf-8"
#: ISO 639-1 (two letters) or ISO 639-3 (three letters) language codes, as UD and spaCy name languages.
LANGUAGE_CODE = re.compile(r"[a-z]{2,3}")

_UTF16_BOMS = (codecs.BOM_UTF16_LE, codecs.BOM_UTF16_BE)
#: Bytes that windows-1252 maps to printable characters (curly quotes, dashes, the euro sign) but ISO-8859-1 to
#: C1 controls, which real text never holds: a file with them is windows-1252.
_CP1252_ONLY = frozenset(range(0x80, 0xA0)) - {0x81, 0x8D, 0x8F, 0x90, 0x9D}


def check_encoding(name: str, key: str = "--encoding") -> str:
    """``name`` in Python's canonical spelling (``latin1`` -> ``iso8859-1``), or an error naming ``key``."""
    try:
        info = codecs.lookup(name)
    except (LookupError, TypeError):
        info = None
    if info is None or not getattr(info, "_is_text_encoding", True):  # hex, base64, rot13: codecs, not encodings
        raise SeqlabError(f"{key}: unknown text encoding {name!r} (e.g. utf-8, latin-1, cp1252, utf-16)")
    return info.name


def is_utf8(encoding: str) -> bool:
    """Whether ``encoding`` names UTF-8 (which seqlab reads line by line as bytes, the fast path)."""
    return codecs.lookup(encoding).name == "utf-8"


def reads_line_by_line(encoding: str) -> bool:
    """Whether a file in ``encoding`` can be decoded one line of bytes at a time: its line end is the one byte
    0x0a, as in UTF-8, Latin-1, cp1252 and the other ASCII-compatible encodings (whose multibyte characters never
    hold that byte); UTF-16 and UTF-32 are decoded whole."""
    return "\n".encode(encoding) == b"\n"


def check_language(code: str, key: str = "data.language") -> str:
    """``code`` if it is an ISO 639-1 or 639-3 code in lower case (``en``, ``fr``, ``grc``), else an error."""
    if not isinstance(code, str) or not LANGUAGE_CODE.fullmatch(code):
        raise SeqlabError(f"{key}: expected an ISO 639 language code of 2 or 3 lower-case letters (en, fr, es, el), "
                          f"got {code!r}")
    return code


def guess_encoding(sample: bytes) -> str | None:
    """The encoding ``sample`` (bytes that are not UTF-8) most likely is: ``utf-16`` for a byte-order mark or
    every other byte NUL, ``cp1252`` where bytes 0x80-0x9f occur, else ``latin-1``; None for empty input."""
    if not sample:
        return None
    if sample.startswith(_UTF16_BOMS) or (len(sample) > 3 and sample[1::2].count(0) > len(sample) // 4):
        return "utf-16"
    if any(byte in _CP1252_ONLY for byte in sample):
        return "cp1252"
    return "latin-1"


def decoding_error(source: str, line: int, raw: bytes, err: UnicodeDecodeError, encoding: str,
                   column: bool = True) -> DataFormatError:
    """The one-line error for ``raw`` (a line, or a whole file) that does not decode as ``encoding``."""
    where = f" at column {err.start + 1}" if column else ""
    message = f"not valid {_display(encoding)} (byte {raw[err.start]:#04x}{where})"
    guess = guess_encoding(raw) if codecs.lookup(encoding).name == "utf-8" else None
    if guess is not None:
        message += (f"; the file looks like {guess} text: read it with --encoding {guess} "
                    f"(data.encoding: {guess} in a config)")
    else:
        message += "; name the file's encoding with --encoding (data.encoding in a config)"
    return DataFormatError(source, line, message)


def decode_line(raw: bytes, encoding: str, source: str, line: int) -> str:
    """``raw`` decoded as ``encoding``, or :func:`decoding_error`."""
    try:
        return raw.decode(encoding)
    except UnicodeDecodeError as err:
        raise decoding_error(source, line, raw, err, encoding) from None


def decode_text(raw: bytes, encoding: str, source: str) -> str:
    """A whole file's bytes decoded as ``encoding``; the error names the line of the first bad byte."""
    try:
        return raw.decode(encoding)
    except UnicodeDecodeError as err:
        line = raw.count(b"\n", 0, err.start) + 1
        raise decoding_error(source, line, raw, err, encoding, column=False) from None


def _display(encoding: str) -> str:
    name = codecs.lookup(encoding).name
    return {"utf-8": "UTF-8", "iso8859-1": "ISO-8859-1 (Latin-1)", "cp1252": "windows-1252"}.get(name, name)
