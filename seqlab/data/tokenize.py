"""Sentence splitting and tokenization of raw English text, CoNLL-2003 style.

CoNLL-2003 English (Tjong Kim Sang & De Meulder, 2003) is Reuters newswire tokenized much
like the Penn Treebank: punctuation, brackets and ``"`` are split off; ``'s`` and ``n't``
and the other clitics are split (``do n't``, ``ca n't``); abbreviations, dotted acronyms
and initials keep their period (``Mr.``, ``U.S.``, ``J.``); hyphenated words, numbers,
dates and times stay whole (``two-year-old``, ``1,234.56``, ``1996-08-22``, ``1:54.342``);
``%`` and currency signs (``$``, ``C$``, ``US$``) are tokens of their own; a leading
minus is split off (``-5`` -> ``-`` ``5``) but a leading plus is kept (``+0.05``).

Conventions of the data that surprise:

* a sentence never ends in an abbreviation token: the last period is split off,
  so ``... in the U.S.`` becomes ``U.S`` ``.`` (CoNLL-2003 train has ``U.S .`` and
  ``Inc .`` at sentence ends, and no sentence-final ``U.S.``);
* a rank at the start of a line keeps its mark (``2. Colin Jackson``, tied ``10= Ertl``);
* a quote after a full stop goes with the sentence that ends there when it stands alone
  (``he said. " We``), and opens the next one when attached to it (``he said. "We``).

Sentences end at ``.``, ``?``, ``!`` or an ellipsis (with any closing quotes and brackets)
before an upper-case word, a digit, an opening quote or bracket or a bullet dash; after an
abbreviation only before a typical sentence opener (``The``, ``He``, ...) or a quote, and
never after a title or month (``Mr.``, ``Gen.``, ``Jan.``; the ``prefix`` entries of
``seqlab/resources/abbreviations.txt``). A blank line and the end of the text end one too.

Every token is a slice of the input: ``text[tok.start:tok.end] == tok.text``, tokens are
in order and do not overlap, and only whitespace lies between them. Curly quotes and
apostrophes are treated like their ASCII forms but never rewritten. The measured match with
CoNLL-2003 is in tests/data/test_tokenize.py.
"""
from __future__ import annotations

import functools
import re
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from importlib import resources

from seqlab.core.errors import DataFormatError

ABBREVIATION_KINDS = ("prefix", "plain")

#: Tokens that can end a sentence.
TERMINALS = frozenset({".", "?", "!", "..", "...", "....", "\u2026"})
#: Tokens that stay with the sentence they close (`."`, `.)`); see :func:`_closes`.
CLOSERS = frozenset({'"', "'", ")", "]", "}", "\u201d", "\u2019", "\u00bb"})
#: Closing quotes: they may follow a sentence-final abbreviation (`U.S."` -> `U.S` `.` `"`).
QUOTES = frozenset({'"', "'", "\u201d", "\u2019", "\u00bb"})
#: First characters of a token that opens a quotation.
QUOTE_OPENERS = frozenset({'"', "'", "`", "\u201c", "\u2018", "\u00ab"})
#: First characters that can open a sentence besides an upper-case letter or a digit.
OPENERS = QUOTE_OPENERS | {"(", "["}
#: Tokens that open a new sentence after a full stop (bylines, bullet points).
BULLETS = frozenset({"-", "--", "---", "*", "**", "\u2013", "\u2014", "\u2022"})
#: Words that, after an abbreviation that is not a ``prefix`` (``Inc.``, ``U.S.``, ``J.``),
#: show that a new sentence began.
SENTENCE_STARTERS = frozenset(
    """A An The This That These Those There Here It Its He His She Her They Their We Our I You
    Your My In On At By For From With After Before During Since Until When While Where If As
    But And Or So Yet However Meanwhile Also Then Now Some Many Most Several Both All Each
    Although Though Because Despite What Who Why How Which""".split()
)


@dataclass(frozen=True, slots=True)
class Token:
    """One token: its text and its character span ``[start, end)`` in the original string."""

    text: str
    start: int
    end: int


@dataclass(frozen=True)
class _Rules:
    pattern: re.Pattern[str]
    prefixes: frozenset[str]


def parse_abbreviations(text: str, source: str = "abbreviations.txt") -> dict[str, str]:
    """Parse an abbreviation list (``ABBREV KIND`` per line, ``#`` comments) into {abbrev: kind}."""
    table: dict[str, str] = {}
    for number, raw in enumerate(text.splitlines(), start=1):
        fields = raw.split("#", 1)[0].split()
        if not fields:
            continue
        if len(fields) != 2:
            raise DataFormatError(source, number, f"expected 'ABBREVIATION KIND', but got {raw!r}")
        abbrev, kind = fields
        if kind not in ABBREVIATION_KINDS:
            raise DataFormatError(source, number, f"kind must be one of {ABBREVIATION_KINDS}, but got {kind!r}")
        if not abbrev.endswith(".") or len(abbrev) < 2:
            raise DataFormatError(source, number, f"abbreviation must end with '.', but got {abbrev!r}")
        table[abbrev] = kind
    return table


def _build_pattern(abbreviations: Iterable[str]) -> re.Pattern[str]:
    listed = "|".join(re.escape(a) for a in sorted(abbreviations, key=len, reverse=True))
    letter = r"[^\W\d_]"
    apostrophe = "['\u2019]"
    clitic = rf"(?i:{apostrophe}(?:s|re|ve|ll|d|m)|n{apostrophe}t)(?!\w)"
    return re.compile(
        rf"""
        (?:https?|ftp)://[^\s<>"\u201c\u201d]*[^\s<>"\u201c\u201d.,;:!?)\]'\u2019]  # URL
        | www\.[^\s<>"\u201c\u201d]*[^\s<>"\u201c\u201d.,;:!?)\]'\u2019]
        | [\w.+-]*\w@\w[\w-]*(?:\.\w[\w-]*)+                          # e-mail
        | \w+?(?=n{apostrophe}t(?!\w))                                 # do|n't, ca|n't
        | (?<=[\w.)]){clitic} | (?<!\S){clitic}(?!\S)                 # 's 're 've 'll 'd 'm n't
        | (?<!\w)(?={letter}[\w.]{{0,6}}\.)(?:{listed})                 # listed abbreviation ...
          (?:(?:-\w+)+|(?![\w.]))                                      # ... or Gen.-led
        | (?:{letter}\.){{2,}}(?:(?:-\w+)+|(?![\w.]))                  # U.S. a.m. U.S.-led
        | [A-Z]\.(?![\w.])                                             # initial
        | \.{{2,}} | \u2026 | -{{2,}} | [\u2014\u2015] | \*+ | =+          # runs
        | (?:[A-Z]{{1,3}})?\$                                          # currency: $ C$ US$
        | (?<![\w.])\.\d+                                              # .500
        | (?:\+(?=\d))?\w+                                             # word or number ...
          (?:-(?:{letter}\.){{2,}}(?![\w.])                             # ... joined: Iraq-U.N.
             |(?:\.?[-\u2013]|[./&]|(?<=\d)[,:](?=\d)                 #     a-b 1,234.5 U.S
                 |(?!{clitic}){apostrophe}(?={letter}))\w+)*           #     24.SEP.96 O'Neill
          (?:-(?![-\w]))?                                              # 6-
          (?:\+(?![\w+]))?                                             # AA+
        | \S                                                           # anything else
        """,
        re.VERBOSE,
    )


@functools.cache
def _rules() -> _Rules:
    path = resources.files("seqlab").joinpath("resources/abbreviations.txt")
    table = parse_abbreviations(path.read_text(encoding="utf-8"), source=str(path))
    prefixes = frozenset(a for a, kind in table.items() if kind == "prefix")
    return _Rules(pattern=_build_pattern(table), prefixes=prefixes)


_LIST_MARKER = re.compile(r"\s*(\d{1,3}[.=])(?!\S)")
_PARAGRAPH_BREAK = re.compile(r"\n[^\S\n]*\n")


def _check_str(value: object, what: str) -> None:
    if not isinstance(value, str):
        raise TypeError(f"{what} must be str, but got {type(value).__name__}")


def _raw_tokens(text: str, pattern: re.Pattern[str]) -> list[Token]:
    tokens = []
    pos = 0
    marker = _LIST_MARKER.match(text)
    if marker:
        tokens.append(Token(marker.group(1), marker.start(1), marker.end(1)))
        pos = marker.end(1)
    tokens.extend(Token(m.group(), m.start(), m.end()) for m in pattern.finditer(text, pos))
    return tokens


def _is_abbreviation(word: str) -> bool:
    """A token that ends in its own period (``Mr.``, ``U.S.``), not a list marker (``2.``)."""
    return len(word) > 1 and word[-1] == "." and word[-2].isalpha()


def _closes(tokens: list[Token], j: int) -> bool:
    """Whether token ``j``, after a sentence-final mark, still belongs to that sentence.

    A closer attached to the token before it does (``."``, ``.)``); so does a quote standing
    alone between spaces or at the end (``wars. " Israel``), as CoNLL-2003 puts it there.
    """
    tok = tokens[j]
    if tok.text not in CLOSERS:
        return False
    if tok.start == tokens[j - 1].end:
        return True
    return tok.text in QUOTES and (j + 1 == len(tokens) or tokens[j + 1].start > tok.end)


def _ends_sentence(tokens: list[Token], i: int, prefixes: frozenset[str]) -> int:
    """If a sentence ends at token ``i`` (plus its closers), return the index after it, else 0."""
    word = tokens[i].text
    abbreviation = _is_abbreviation(word)
    if word not in TERMINALS and not abbreviation:
        return 0
    j = i + 1
    while j < len(tokens) and _closes(tokens, j):
        j += 1
    if j == len(tokens):
        return j
    following = tokens[j]
    if following.start == tokens[j - 1].end:
        return 0
    first = following.text[0]
    if abbreviation:
        if word in prefixes:
            return 0
        return j if first in QUOTE_OPENERS or following.text in SENTENCE_STARTERS else 0
    if first.isupper() or first.isdigit() or first in OPENERS or following.text in BULLETS:
        return j
    return 0


def _sentence(tokens: list[Token]) -> list[Token]:
    """CoNLL-2003 splits the period off a sentence-final abbreviation: ``U.S.`` -> ``U.S`` ``.``."""
    last = len(tokens) - 1
    while last > 0 and tokens[last].text in QUOTES:
        last -= 1
    tok = tokens[last]
    if not _is_abbreviation(tok.text):
        return tokens
    split = [Token(tok.text[:-1], tok.start, tok.end - 1), Token(".", tok.end - 1, tok.end)]
    return tokens[:last] + split + tokens[last + 1 :]


def split_sentences(text: str) -> list[list[Token]]:
    """Split a paragraph (or a line) into sentences of tokens; a blank line also ends a sentence."""
    _check_str(text, "text")
    rules = _rules()
    tokens = _raw_tokens(text, rules.pattern)
    sentences: list[list[Token]] = []
    begin = 0
    i = 0
    while i < len(tokens):
        end = 0
        if tokens[i].text[-1] in ".?!\u2026":
            end = _ends_sentence(tokens, i, rules.prefixes)
        if not end and i + 1 < len(tokens) and tokens[i + 1].start - tokens[i].end > 1:
            if _PARAGRAPH_BREAK.search(text, tokens[i].end, tokens[i + 1].start):
                end = i + 1
        if end:
            sentences.append(_sentence(tokens[begin:end]))
            begin = i = end
        else:
            i += 1
    if begin < len(tokens):
        sentences.append(_sentence(tokens[begin:]))
    return sentences


def tokenize(text: str) -> list[Token]:
    """Tokenize a span of text; the same tokens as :func:`split_sentences`, flattened."""
    return [tok for sentence in split_sentences(text) for tok in sentence]


def iter_sentences(lines: Iterable[str]) -> Iterator[tuple[int, list[Token]]]:
    """Yield ``(line_number, tokens)`` for each sentence of each line (1-based; offsets within the line).

    Each line is a paragraph: a sentence never spans lines, and blank lines yield nothing.
    Only one line is held at a time, so a file of any size can be streamed.
    """
    for number, line in enumerate(lines, start=1):
        _check_str(line, f"line {number}")
        for sentence in split_sentences(line):
            yield number, sentence
