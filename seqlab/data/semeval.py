"""SemEval-2010 Task 8 (Hendrickx et al. 2010): reader, answer-file writer, dev split, known quirks.

A labelled release file (``TRAIN_FILE.TXT``, ``TEST_FILE_FULL.TXT``) holds 4-line records::

    1<TAB>"The system ... an arrayed <e1>configuration</e1> of antenna <e2>elements</e2>."
    Component-Whole(e2,e1)
    Comment: Not a collection: there is structure here, organisation.
    <blank>

The unlabelled ``TEST_FILE.txt`` holds only the first line of each record. Both are read by
:func:`read_semeval`. A sentence is tokenized as seqlab tokenizes raw text (CoNLL-2003 style),
segment by segment between the entity tags, so the tags are always token boundaries.
Answer files (``id<TAB>label``) are the official scorer's input format.
"""
from __future__ import annotations

import random
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Iterable, Iterator, Sequence

from seqlab.core.atomic import atomic_open
from features.tokenize import tokenize
from seqlab.core.errors import DataFormatError, SeqlabError
from seqlab.core.paths import require_file
from seqlab.data.encoding import decode_line

OTHER = "Other"
RELATIONS = (
    "Cause-Effect", "Component-Whole", "Content-Container", "Entity-Destination", "Entity-Origin",
    "Instrument-Agency", "Member-Collection", "Message-Topic", "Product-Producer",
)
DIRECTIONS = ("(e1,e2)", "(e2,e1)")
# The 19 directed labels of the task: 9 relations x 2 directions, and Other (sorted as the scorer sorts).
LABELS = tuple(sorted(r + d for r in RELATIONS for d in DIRECTIONS)) + (OTHER,)

# ---------------------------------------------------------------- known quirks of the release
# Sentences whose entity tag touches the previous word without a space ("doves<e2>moles</e2>",
# "The<e1>staff</e1>"). The reader treats every tag as a token boundary, so these split cleanly.
GLUED_ENTITY_TAGS = frozenset({"213", "2740", "4612", "4784", "6373", "8411", "9867"})
# Entity-Destination(e2,e1) occurs once in training (id 3185) and once in test (id 10717):
# a class a model can hardly learn, kept in the label set because the official scorer counts it.
RARE_LABEL = "Entity-Destination(e2,e1)"
RARE_LABEL_IDS = {"train": ("3185",), "test": ("10717",)}
# The official TEST_FILE_KEY.TXT carries labels WITHOUT direction ("8001\tMessage-Topic"); the
# directed key is TEST_FILE_KEY_DIRECTED.TXT (derived, see the data's PROVENANCE.md) or TEST_FILE_FULL.TXT.
UNDIRECTED_TEST_KEY = "TEST_FILE_KEY.TXT"
# The release keeps CRLF line endings; the reader accepts CRLF and LF alike.
LINE_ENDING = "\r\n"
# Number of training sentences held out for model selection (never the test set).
DEV_SIZE = 800

_SENTENCE = re.compile(r'^(\d+)\t"(.*)"$')
_TAG = re.compile(r"</?e[12]>")
_TAG_ORDER = ("<e1>", "</e1>", "<e2>", "</e2>")
# The tokens :func:`with_markers` inserts: the release's own tags, which the tokenizer never produces.
ENTITY_MARKERS = _TAG_ORDER


@dataclass(frozen=True)
class RelationExample:
    """One sentence with two marked nominals; ``e1``/``e2`` are inclusive token spans ``(first, last)``."""

    id: str
    tokens: tuple[str, ...]
    e1: tuple[int, int]
    e2: tuple[int, int]
    label: str | None = None
    comment: str | None = None
    types: tuple[str, str] | None = None  # the entity types of e1 and e2, where the data or a tagger gives them

    @property
    def e1_text(self) -> str:
        return " ".join(self.tokens[self.e1[0]: self.e1[1] + 1])

    @property
    def e2_text(self) -> str:
        return " ".join(self.tokens[self.e2[0]: self.e2[1] + 1])


@dataclass(frozen=True)
class MarkedSentence:
    """A sentence with its four entity tags taken out: the plain text, and the character spans
    ``[start, end)`` of the two nominals in it (what a relation JSONL line holds, :mod:`seqlab.data.relations`)."""

    text: str
    e1: tuple[int, int]
    e2: tuple[int, int]


def strip_tags(sentence: str, source: str = "<string>", line: int = 0) -> MarkedSentence:
    """The text of a sentence marked with ``<e1>…</e1>`` and ``<e2>…</e2>``, and the nominals' character spans.

    The four tags must each appear once; ``<e1>…</e1>`` may come before or after ``<e2>…</e2>``
    but the two may not overlap.
    """
    found = [(m.group(), m.start(), m.end()) for m in _TAG.finditer(sentence)]
    names = [tag for tag, _, _ in found]
    for tag in _TAG_ORDER:
        if names.count(tag) != 1:
            raise DataFormatError(source, line, f"expected exactly one {tag} tag, but found {names.count(tag)} "
                                  f"in {_clip(sentence)!r}")
    first = names.index("<e1>") < names.index("<e2>")
    expected = list(_TAG_ORDER) if first else ["<e2>", "</e2>", "<e1>", "</e1>"]
    if names != expected:
        raise DataFormatError(source, line, f"entity tags must be {' … '.join(expected)} in that order and not "
                              f"nested, but got {' … '.join(names)}")
    pieces: list[str] = []
    offsets: dict[str, int] = {}
    cursor = length = 0
    for tag, start, end in found:
        pieces.append(sentence[cursor:start])
        length += start - cursor
        offsets[tag] = length
        cursor = end
    pieces.append(sentence[cursor:])
    return MarkedSentence("".join(pieces), (offsets["<e1>"], offsets["</e1>"]), (offsets["<e2>"], offsets["</e2>"]))


def tokenize_around(text: str, spans: Sequence[tuple[int, int]]) -> tuple[list[str], list[tuple[int, int]]]:
    """Tokens of ``text`` as seqlab tokenizes raw text, with every edge of the character ``spans`` a token
    boundary (each piece between edges is tokenized alone), and each span's tokens as ``[first, end)``.

    A span that covers only whitespace gets ``first == end``. The one tokenization of a sentence with two
    nominals, whether they were marked by tags (:func:`parse_marked`) or by offsets (a relation JSONL line).
    """
    cuts = sorted({0, len(text), *(edge for span in spans for edge in span)})
    tokens: list[str] = []
    at: dict[int, int] = {}
    for start, end in zip(cuts, cuts[1:]):
        at[start] = len(tokens)
        tokens.extend(t.text for t in tokenize(text[start:end]))
    at[len(text)] = len(tokens)
    return tokens, [(at[start], at[end]) for start, end in spans]


def parse_marked(sentence: str, source: str = "<string>", line: int = 0) -> tuple[list[str], tuple[int, int], tuple[int, int]]:
    """Tokens and inclusive entity spans of a sentence marked with ``<e1>…</e1>`` and ``<e2>…</e2>``.

    The four tags must each appear once; ``<e1>…</e1>`` may come before or after ``<e2>…</e2>``
    but the two may not overlap or be empty.
    """
    return _tokens(strip_tags(sentence, source, line), sentence, source, line)


def _tokens(marked: MarkedSentence, sentence: str, source: str, line: int
            ) -> tuple[list[str], tuple[int, int], tuple[int, int]]:
    tokens, (e1, e2) = tokenize_around(marked.text, (marked.e1, marked.e2))
    for name, chars, (first, end) in sorted([("e1", marked.e1, e1), ("e2", marked.e2, e2)], key=lambda s: s[1]):
        if first == end:
            raise DataFormatError(source, line, f"entity <{name}> is empty in {_clip(sentence)!r}")
    return tokens, (e1[0], e1[1] - 1), (e2[0], e2[1] - 1)


def read_semeval(path: str | Path) -> list[RelationExample]:
    """Read a SemEval-2010 Task 8 file: labelled 4-line records, or sentence lines only."""
    return [example for example, _ in read_marked_semeval(path)]


def read_marked_semeval(path: str | Path) -> list[tuple[RelationExample, MarkedSentence]]:
    """The examples of a SemEval-2010 Task 8 file, each with its sentence as plain text and character spans
    (what :func:`seqlab.data.relations.semeval_to_jsonl` writes)."""
    path = require_file(path, "a SemEval-2010 Task 8 file")
    examples: list[RelationExample] = []
    sentences: list[MarkedSentence] = []
    seen: dict[str, int] = {}
    pending: dict | None = None
    for number, text in _lines(path):
        if not text.strip():
            continue
        match = _SENTENCE.match(text)
        if match:
            if pending:
                examples.append(RelationExample(**pending))
            sid = match.group(1)
            if sid in seen:
                raise DataFormatError(str(path), number, f"sentence id {sid} already used on line {seen[sid]}")
            seen[sid] = number
            sentences.append(strip_tags(match.group(2), str(path), number))
            tokens, e1, e2 = _tokens(sentences[-1], match.group(2), str(path), number)
            pending = {"id": sid, "tokens": tuple(tokens), "e1": e1, "e2": e2}
        elif pending is None:
            raise DataFormatError(str(path), number, f"expected a sentence line 'ID<TAB>\"sentence\"', got {_clip(text)!r}")
        elif text.startswith("Comment:"):
            pending["comment"] = text[len("Comment:"):].strip()
        elif "label" not in pending and text.strip() in LABELS:
            pending["label"] = text.strip()
        else:
            what = "a comment line 'Comment: ...'" if "label" in pending else f"a label (one of {', '.join(LABELS)})"
            raise DataFormatError(str(path), number, f"expected {what} or a sentence line, got {_clip(text)!r}")
    if pending:
        examples.append(RelationExample(**pending))
    if not examples:
        raise SeqlabError(f"{path}: holds no SemEval-2010 Task 8 sentences")
    return list(zip(examples, sentences))


def parse_raw_lines(lines: Iterable[str], source: str = "<stdin>") -> Iterator[RelationExample]:
    """Sentences for classification, one per line: ``ID<TAB>"sentence"`` or just the marked sentence.

    A line without an id gets its line number as id; blank lines are skipped.
    """
    for number, raw in enumerate(lines, start=1):
        if raw.strip():
            yield parse_raw_line(raw, source, number)


def parse_raw_line(line: str, source: str = "<stdin>", number: int = 0) -> RelationExample:
    """One line of :func:`parse_raw_lines` (not blank): ``ID<TAB>"sentence"`` or the marked sentence, whose id
    is then ``number``."""
    text = line.rstrip("\r\n")
    match = _SENTENCE.match(text)
    sid, sentence = (match.group(1), match.group(2)) if match else (str(number), text)
    tokens, e1, e2 = parse_marked(sentence, source, number)
    return RelationExample(sid, tuple(tokens), e1, e2)


def typed_markers(types: tuple[str, str]) -> tuple[str, str, str, str]:
    """The four entity tags carrying the entities' types: ``<e1:Peop>``, ``</e1:Peop>``, ``<e2:Loc>``,
    ``</e2:Loc>`` (Zhou & Chen 2021's typed entity markers, in the release's tag shape)."""
    return tuple(f"{tag[:-1]}:{kind}>" for tag, kind in zip(ENTITY_MARKERS, (types[0], types[0], types[1], types[1])))


def with_markers(example: RelationExample, *, typed: bool = False) -> RelationExample:
    """The example with its four entity tags kept as tokens around the nominals; ``typed``: tags that name the
    entities' types (:func:`typed_markers`; the example must carry ``types``).

    Zhang & Wang (2015)'s position indicators, which Lee et al. (2019)'s released code keeps in the
    input: the recurrent layer then sees where each nominal begins and ends. The spans move to the
    nominals' words in the longer token sequence (the tags are not part of the entities).
    """
    if typed and example.types is None:
        raise SeqlabError(f"example {example.id}: typed entity markers need the entities' types (SpERT data, or an "
                          f"extraction model's tagger, gives them); set model.typed_markers: false")
    tags = typed_markers(example.types) if typed and example.types else ENTITY_MARKERS
    # (position, closing tags before opening ones where two nominals touch, tag)
    inserts = sorted([(example.e1[0], 1, tags[0]), (example.e1[1] + 1, 0, tags[1]),
                      (example.e2[0], 1, tags[2]), (example.e2[1] + 1, 0, tags[3])])
    tokens: list[str] = []
    moved: dict[int, int] = {}
    cursor = 0
    for position, _, marker in inserts:
        for i in range(cursor, position):
            moved[i] = len(tokens)
            tokens.append(example.tokens[i])
        tokens.append(marker)
        cursor = position
    for i in range(cursor, len(example.tokens)):
        moved[i] = len(tokens)
        tokens.append(example.tokens[i])
    return RelationExample(example.id, tuple(tokens), (moved[example.e1[0]], moved[example.e1[1]]),
                           (moved[example.e2[0]], moved[example.e2[1]]), example.label, example.comment, example.types)


def write_answers(path: str | Path, ids: Sequence[str], labels: Sequence[str]) -> None:
    """Write an answer file in the official scorer's format (``id<TAB>label``), atomically."""
    if len(ids) != len(labels):
        raise ValueError(f"ids and labels must match in length, but got {len(ids)} and {len(labels)}")
    with atomic_open(path) as out:
        for sid, label in zip(ids, labels):
            out.write(f"{sid}\t{label}\n")


def dev_split(examples: Sequence[RelationExample], size: int = DEV_SIZE, seed: int = 1
              ) -> tuple[list[RelationExample], list[RelationExample]]:
    """(train, dev): ``size`` examples sampled with ``seed`` become dev; both keep file order."""
    if not 0 < size < len(examples):
        raise SeqlabError(f"data.dev_size: expected 1..{len(examples) - 1} for {len(examples)} training sentences, "
                          f"got {size}")
    chosen = set(random.Random(seed).sample(range(len(examples)), size))
    train = [e for i, e in enumerate(examples) if i not in chosen]
    dev = [e for i, e in enumerate(examples) if i in chosen]
    return train, dev


def _lines(path: Path) -> Iterator[tuple[int, str]]:
    with open(path, "rb") as handle:
        for number, raw in enumerate(handle, start=1):
            text = decode_line(raw, "utf-8", str(path), number)
            yield number, text.rstrip("\r\n").lstrip("\ufeff") if number == 1 else text.rstrip("\r\n")


def _clip(text: str, width: int = 70) -> str:
    return text if len(text) <= width else text[:width] + "..."
