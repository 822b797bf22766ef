"""Sentence splitting and tokenization of raw English text, CoNLL-2003 style.

CoNLL-2003 English (Tjong Kim Sang & De Meulder, 2003) is Reuters newswire tokenized much
like the Penn Treebank: punctuation, brackets and ``"`` are split off; ``'s`` and ``n't``
and the other clitics are split, in any case (``do n't``, ``ca n't``, ``DO N'T``); abbreviations, dotted acronyms
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
``features/resources/abbreviations.txt``). A blank line and the end of the text end one too.

Text is tokenized in Unicode normal form NFC, so decomposed (NFD) text tokenizes like composed
text (``Montre\u0301al`` is one token, ``Montréal``). A token's offsets are into the input as
given: ``tok.text == unicodedata.normalize("NFC", text[tok.start:tok.end])``, which is the
slice itself for NFC input (nearly all text). Tokens are in order and do not overlap, and only
whitespace and the invisible separators of :data:`SEPARATORS` (a zero-width space, a stray
byte-order mark) lie between them. Combining marks, joiners (ZWJ, soft hyphen), emoji modifiers
and flag pairs stay with the character they belong to (a flag emoji is one token).
Curly quotes and apostrophes are treated like their ASCII forms but never rewritten. The
measured match with CoNLL-2003 is in tests/features/test_tokenize.py.
"""
from __future__ import annotations

import functools
import re
from bisect import bisect_left
import unicodedata
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from importlib import resources
from itertools import accumulate, chain
from operator import sub
from typing import NamedTuple

from features.base import FeatureFileError

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


#: Invisible characters that separate tokens like a space (``str.isspace`` says they are not spaces).
SEPARATORS = "\u200b\ufeff"  # zero-width space; zero-width no-break space (a byte-order mark in mid-text)
_TO_SPACE = {ord(c): " " for c in SEPARATORS}
#: Characters that join what is on both sides of them into one token.
JOINERS = frozenset("\u200d\u00ad\u2060")  # zero-width joiner, soft hyphen, word joiner
_REGIONAL = range(0x1F1E6, 0x1F200)  # regional indicators: two make a flag
#: A cheap test for the characters :func:`_glue` looks at (marks, joiners, modifiers, flags, tags).
_GLUE_HINT = re.compile(
    "[\u0300-\u036f\u0483-\u0489\u0591-\u05c7\u0610-\u061a\u064b-\u065f\u0670\u06d6-\u06ed"
    "\u0900-\u0dff\u0e31-\u0e4e\u0eb1-\u0ecd\u1ab0-\u1aff\u1dc0-\u1dff\u00ad\u200d\u2060\u20d0-\u20ff"
    "\u302a-\u302f\u3099\u309a\ufe00-\ufe0f\ufe20-\ufe2f\U0001F1E6-\U0001F1FF\U0001F3FB-\U0001F3FF"
    "\U000E0020-\U000E007F\U000E0100-\U000E01EF]")


@dataclass(frozen=True, slots=True)
class Token:
    """One token: its text and its character span ``[start, end)`` in the original string."""

    text: str
    start: int
    end: int


def parse_abbreviations(text: str, source: str = "abbreviations.txt") -> dict[str, str]:
    """Parse an abbreviation list (``ABBREV KIND`` per line, ``#`` comments) into {abbrev: kind}."""
    table: dict[str, str] = {}
    for number, raw in enumerate(text.splitlines(), start=1):
        fields = raw.split("#", 1)[0].split()
        if not fields:
            continue
        if len(fields) != 2:
            raise FeatureFileError(source, number, f"expected 'ABBREVIATION KIND', but got {raw!r}")
        abbrev, kind = fields
        if kind not in ABBREVIATION_KINDS:
            raise FeatureFileError(source, number, f"kind must be one of {ABBREVIATION_KINDS}, but got {kind!r}")
        if not abbrev.endswith(".") or len(abbrev) < 2:
            raise FeatureFileError(source, number, f"abbreviation must end with '.', but got {abbrev!r}")
        table[abbrev] = kind
    return table


_APOSTROPHES = ("'", "\u2019")
#: The token pattern's first alternative: most tokens are a plain ASCII word or number before a space or a
#: closing mark that no alternative continues. Every other alternative needs a '.', '@', ':', an apostrophe or
#: another mark in it or after it, so trying this one first gives the same tokens (tested; and the same on 100k
#: Wikipedia sentences), with ``findall`` about twice as fast.
_PLAIN_WORD = r"""[A-Za-z0-9]+(?=[\s)\]"!?;]|\Z|,(?!\d)) |"""
#: The second: a mark that only the last alternative (``\S``, one character) can match, since no other one
#: starts with it: most punctuation, and an apostrophe that starts no clitic. Tried early, it makes lines of
#: punctuation about twice as fast; the tokens are the same (tested like :data:`_PLAIN_WORD`).
_LONE_MARK = r"""[^\w\s.+\-'\u2019\u2026\u2014\u2015*=$] | ['\u2019](?!(?i:s|re|ve|ll|d|m)(?!\w)) |"""


def _build_pattern(abbreviations: Iterable[str], *, links: bool = True, clitics: bool = True,
                   negations: bool = True) -> re.Pattern[str]:
    """The token pattern, as ``(whitespace before)(token)`` pairs for ``findall``.

    ``links`` (URLs, e-mail addresses), ``clitics`` and ``negations`` (``do|n't``) add the
    alternatives that only text holding ``@``/``://``/``www.``, an apostrophe or ``n't`` can
    match: leaving them out where they cannot match gives the same tokens, faster.

    Linear time: ``findall`` tries the pattern at each token start, so no alternative may look far
    ahead and then fail, leaving a short token (``_+_+...`` read from every ``_`` to its end is
    quadratic). An e-mail address is therefore tried only where its run of ``[\\w.+-]`` begins; each
    other unbounded alternative reads no further than the token that the pattern then matches there
    (checked in tests/features/test_tokenize.py). Trailing whitespace, where only ``(\\s*)`` would match
    and fail at each of its characters, is cut off by :func:`_scan`.
    """
    listed = "|".join(re.escape(a) for a in sorted(abbreviations, key=len, reverse=True))
    letter = r"[^\W\d_]"
    apostrophe = "['\u2019]"
    clitic = rf"(?i:{apostrophe}(?:s|re|ve|ll|d|m)|n{apostrophe}t)(?!\w)"
    url = r"""(?:https?|ftp)://[^\s<>"\u201c\u201d]*[^\s<>"\u201c\u201d.,;:!?)\]'\u2019]
        | www\.[^\s<>"\u201c\u201d]*[^\s<>"\u201c\u201d.,;:!?)\]'\u2019]
        | (?<![\w.+-])[\w.+-]*\w@\w[\w-]*(?:\.\w[\w-]*)+ |"""  # from where its run starts only
    negation = rf"\w+?(?=(?i:n{apostrophe}t)(?!\w)) |"                # do|n't, ca|n't, DO|N'T
    clitics_ = rf"(?<=[\w.)]){clitic} | (?<!\S){clitic}(?!\S) |"        # 's 're 've 'll 'd 'm n't
    return re.compile(
        rf"""
        (\s*)(
        {_PLAIN_WORD} {_LONE_MARK}
        {url if links else ""} {negation if negations else ""} {clitics_ if clitics else ""}
          (?<!\w)(?={letter}[\w.]{{0,6}}\.)(?:{listed})                 # listed abbreviation ...
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
        )""",
        re.VERBOSE,
    )


@dataclass(frozen=True)
class _Rules:
    """The shipped abbreviation list: every entry, and those of kind ``prefix``."""

    abbreviations: tuple[str, ...]
    prefixes: frozenset[str]


@functools.cache
def _rules() -> _Rules:
    path = resources.files("features").joinpath("resources/abbreviations.txt")
    table = parse_abbreviations(path.read_text(encoding="utf-8"), source=str(path))
    prefixes = frozenset(a for a, kind in table.items() if kind == "prefix")
    return _Rules(abbreviations=tuple(table), prefixes=prefixes)


@functools.cache
def _pattern(links: bool, clitics: bool, negations: bool) -> re.Pattern[str]:
    return _build_pattern(_rules().abbreviations, links=links, clitics=clitics, negations=negations)


def _pattern_for(text: str) -> re.Pattern[str]:
    """The token pattern without the alternatives that cannot match in ``text`` (a cheap scan)."""
    links = "@" in text or "://" in text or "www." in text
    clitics = "'" in text or "\u2019" in text
    negations = clitics and any(n in text for n in ("n'", "N'", "n\u2019", "N\u2019"))
    return _pattern(links, clitics, negations)


_LIST_MARKER = re.compile(r"(\s*)(\d{1,3}[.=])(?!\S)")
_PARAGRAPH_BREAK = re.compile(r"\n[^\S\n]*\n")
_TERMINAL_CHARS = frozenset(".?!\u2026")
_TERMINAL_CHAR = re.compile("[.?!\u2026]")


def _check_str(value: object, what: str) -> None:
    if not isinstance(value, str):
        raise TypeError(f"{what} must be str, but got {type(value).__name__}")


def _scan(text: str) -> tuple[list[str], list[str]]:
    """The tokens of ``text`` and the whitespace before each (``""``: attached to the one before)."""
    pairs: list[tuple[str, str]] = []
    pos = 0
    marker = _LIST_MARKER.match(text)
    if marker:
        pairs.append(marker.groups())  # type: ignore[arg-type]
        pos = marker.end()
    end = len(text.rstrip())  # no token in trailing whitespace: trying one at each of its characters is quadratic
    pairs.extend(_pattern_for(text).findall(text, pos, end))
    if not pairs:
        return [], []
    spaces, words = zip(*pairs)
    if not text.isascii() and _GLUE_HINT.search(text):
        return _glue(list(words), list(spaces))
    return list(words), list(spaces)


def _attaches(last: str, word: str, flag_run: int) -> bool:
    """Whether ``word``, written right after a token ending in ``last`` (and in ``flag_run`` regional
    indicators), belongs to the same token: it starts with a combining mark, a joiner, a variation selector or
    an emoji modifier; the token ends with a joiner, or with a mark and ``word`` goes on with letters; or the
    two complete a flag (regional indicators)."""
    first = word[0]
    if last in JOINERS or first in JOINERS or unicodedata.category(first) in ("Mn", "Mc", "Me"):
        return True
    if first.isalnum() and unicodedata.category(last) in ("Mn", "Mc", "Me"):
        return True  # a word goes on after a mark that has no precomposed form (q̃al, Devanagari's virama)
    if 0x1F3FB <= ord(first) <= 0x1F3FF or 0xE0020 <= ord(first) <= 0xE007F:  # skin tone; a subdivision flag's tags
        return True
    if ord(first) in _REGIONAL and ord(last) in _REGIONAL:
        return flag_run % 2 == 1  # the indicator before is still waiting for its partner
    return False


_REGIONAL_CHARS = "".join(map(chr, _REGIONAL))


def _flag_run(word: str, before: int) -> int:
    """How many regional indicators end a token once ``word`` is added to one that ends in ``before``."""
    kept = len(word.rstrip(_REGIONAL_CHARS))
    return before + len(word) if kept == 0 else len(word) - kept


def _glue(words: list[str], spaces: list[str]) -> tuple[list[str], list[str]]:
    """Join each token to the one before it where :func:`_attaches` says they are one (the pieces of a token
    are joined once, at its end: adding to a growing string each time is quadratic in its length)."""
    out_words, out_spaces = [], [spaces[0]]
    pieces = [words[0]]
    flag_run = _flag_run(words[0], 0)
    for word, space in zip(words[1:], spaces[1:]):
        if not space and _attaches(pieces[-1][-1], word, flag_run):
            pieces.append(word)
            flag_run = _flag_run(word, flag_run)
        else:
            out_words.append("".join(pieces))
            out_spaces.append(space)
            pieces = [word]
            flag_run = _flag_run(word, 0)
    out_words.append("".join(pieces))
    return out_words, out_spaces


@dataclass(frozen=True)
class _Normalized:
    """Text as the tokenizer reads it (NFC, invisible separators as spaces), with the way back: the
    character ``i`` of ``text`` comes from ``[starts[i], ends[i])`` of the original (None: the same place)."""

    text: str
    starts: list[int] | None = None
    ends: list[int] | None = None


def _normalize(text: str) -> _Normalized:
    """NFC ``text`` with its :data:`SEPARATORS` as spaces; offsets map back by normalizing each run of a
    character and the combining characters after it on its own (NFC never joins across such runs)."""
    if any(c in text for c in SEPARATORS):
        text = text.translate(_TO_SPACE)  # same length: offsets stay
    if text.isascii() or unicodedata.is_normalized("NFC", text):
        return _Normalized(text)
    pieces, starts, ends = [], [], []
    begin = 0
    for i in range(1, len(text) + 1):
        if i < len(text) and (unicodedata.combining(text[i]) or 0x1160 <= ord(text[i]) <= 0x11FF):
            continue  # a combining mark (or a Hangul vowel or final jamo) joins the run
        piece = unicodedata.normalize("NFC", text[begin:i])
        pieces.append(piece)
        if piece == text[begin:i]:  # unchanged: character by character
            starts.extend(range(begin, i))
            ends.extend(range(begin + 1, i + 1))
        elif piece[0] == text[begin] and len(piece) > 1:  # only the marks changed: the base stays itself
            starts.extend([begin] + [begin + 1] * (len(piece) - 1))
            ends.extend([begin + 1] + [i] * (len(piece) - 1))
        else:  # composed: each character stands for the whole run
            starts.extend([begin] * len(piece))
            ends.extend([i] * len(piece))
        begin = i
    return _Normalized("".join(pieces), starts, ends)


def _is_abbreviation(word: str) -> bool:
    """A token that ends in its own period (``Mr.``, ``U.S.``), not a list marker (``2.``)."""
    return len(word) > 1 and word[-1] == "." and word[-2].isalpha()


def _closes(words: list[str], spaces: list[str], j: int) -> bool:
    """Whether token ``j``, after a sentence-final mark, still belongs to that sentence.

    A closer attached to the token before it does (``."``, ``.)``); so does a quote standing
    alone between spaces or at the end (``wars. " Israel``), as CoNLL-2003 puts it there.
    """
    word = words[j]
    if word not in CLOSERS:
        return False
    if not spaces[j]:
        return True
    return word in QUOTES and (j + 1 == len(words) or bool(spaces[j + 1]))


def _ends_sentence(words: list[str], spaces: list[str], i: int, prefixes: frozenset[str]) -> int:
    """If a sentence ends at token ``i`` (plus its closers), return the index after it, else 0."""
    word = words[i]
    abbreviation = _is_abbreviation(word)
    if word not in TERMINALS and not abbreviation:
        return 0
    j = i + 1
    while j < len(words) and _closes(words, spaces, j):
        j += 1
    if j == len(words):
        return j
    if not spaces[j]:
        return 0
    following = words[j]
    first = following[0]
    if abbreviation:
        if word in prefixes:
            return 0
        return j if first in QUOTE_OPENERS or following in SENTENCE_STARTERS else 0
    if first.isupper() or first.isdigit() or first in OPENERS or following in BULLETS:
        return j
    return 0


def _bounds(text: str, words: list[str], spaces: list[str], ends: list[int]) -> list[tuple[int, int]]:
    """``(begin, end)`` token indices of the sentences (``ends``: each token's end in ``text``); only tokens
    ending in ``.?!…`` and paragraph breaks are looked at, so the loop is over candidates, not every token:
    they are found from where ``.?!…`` occur in the text (a search in C), not by looking at every token."""
    n = len(words)
    candidates = []
    k = 0
    for match in _TERMINAL_CHAR.finditer(text):
        k = bisect_left(ends, match.end(), k)  # the token that ends right after this mark, if one does
        if k < n and ends[k] == match.end():
            candidates.append(k)
    breaks: set[int] = set()
    if "\n" in text:
        breaks = {k - 1 for k in range(1, n) if "\n" in spaces[k] and _PARAGRAPH_BREAK.search(spaces[k])}
        candidates = sorted(set(candidates) | breaks)
    prefixes = _rules().prefixes
    bounds: list[tuple[int, int]] = []
    begin = 0
    for i in candidates:
        if i < begin:
            continue
        end = _ends_sentence(words, spaces, i, prefixes) if words[i][-1] in _TERMINAL_CHARS else 0
        if not end and i in breaks:
            end = i + 1
        if end:
            bounds.append((begin, end))
            begin = end
    if begin < n:
        bounds.append((begin, n))
    return bounds


def _final_abbreviation(words: list[str], begin: int, end: int) -> int:
    """The index of a sentence-final abbreviation (before closing quotes) in ``[begin, end)``, or -1.

    CoNLL-2003 splits its period off: ``U.S.`` -> ``U.S`` ``.``.
    """
    last = end - 1
    while last > begin and words[last] in QUOTES:
        last -= 1
    return last if _is_abbreviation(words[last]) else -1


class SentenceTokens(NamedTuple):
    """One sentence as parallel lists, with no object per token: the tokens' text and their character
    spans ``[starts[k], ends[k])`` in the original string (as :class:`Token` gives them)."""

    words: list[str]
    starts: list[int]
    ends: list[int]


def _sentences(text: str) -> tuple[_Normalized, list[str], list[str], list[int], list[tuple[int, int]]]:
    """The normalized text, its tokens, the whitespace before each, their ends in it and the sentence bounds."""
    _check_str(text, "text")
    normal = _normalize(text)
    words, spaces = _scan(normal.text)
    # every token's end: the running length of (whitespace, token) pieces, at each token
    ends = list(accumulate(map(len, chain.from_iterable(zip(spaces, words)))))[1::2]
    return normal, words, spaces, ends, _bounds(normal.text, words, spaces, ends)


def count_tokens(text: str) -> int:
    """How many tokens :func:`tokenize` gives for ``text``, without building them or mapping their offsets:
    for a limit on the size of a request, checked before anything is tagged. Linear in ``len(text)``."""
    _, words, _, _, bounds = _sentences(text)
    return len(words) + sum(_final_abbreviation(words, begin, end) >= 0 for begin, end in bounds)


def sentence_tokens(text: str) -> list[SentenceTokens]:
    """Split a paragraph (or a line) into sentences, each as parallel lists of token strings and offsets: the
    one implementation behind :func:`split_sentences` and :func:`sentence_words`, for tagging and streaming
    large corpora without building a :class:`Token` per token."""
    normal, words, spaces, ends, bounds = _sentences(text)
    starts = list(map(sub, ends, map(len, words)))
    if normal.starts is not None and normal.ends is not None:  # not NFC (rare): offsets into the input as given
        starts = [normal.starts[k] for k in starts]
        ends = [normal.ends[k - 1] for k in ends]
    sentences = []
    for begin, end in bounds:
        sentence = SentenceTokens(words[begin:end], starts[begin:end], ends[begin:end])
        last = _final_abbreviation(words, begin, end)
        if last >= 0:  # it ends in an ASCII period, which normalizing leaves in place
            k, stop = last - begin, ends[last]
            sentence.words[k : k + 1] = [words[last][:-1], "."]
            sentence.starts[k + 1 : k + 1] = [stop - 1]
            sentence.ends[k : k + 1] = [stop - 1, stop]
        sentences.append(sentence)
    return sentences


def sentence_words(text: str) -> list[list[str]]:
    """The sentences of a paragraph as lists of token strings: :func:`sentence_tokens` without offsets."""
    return [sentence.words for sentence in sentence_tokens(text)]


def split_sentences(text: str) -> list[list[Token]]:
    """Split a paragraph (or a line) into sentences of tokens; a blank line also ends a sentence."""
    return [list(map(Token, *sentence)) for sentence in sentence_tokens(text)]


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
