"""Relation examples from JSON lines in OpenNRE's layout, SemEval-2010 Task 8 files converted to it, and the
choice between the two formats.

One JSON object per line (blank lines are skipped)::

    {"text": "Bill Gates founded Microsoft.", "h": {"name": "Bill Gates", "pos": [0, 10]},
     "t": {"name": "Microsoft", "pos": [19, 28]}, "relation": "founded"}
    {"token": ["Bill", "Gates", "founded", "Microsoft", "."], "h": {"pos": [0, 2]}, "t": {"pos": [3, 4]},
     "relation": "founded"}

* ``text`` (a string): ``pos`` are character offsets ``[start, end)`` into it. The text is tokenized as seqlab
  tokenizes raw text, piece by piece between the entities' edges, so every edge is a token boundary
  (:func:`seqlab.data.semeval.tokenize_around`, the SemEval reader's tokenization).
* ``token`` (OpenNRE's key) or ``tokens`` (a list of non-empty strings): ``pos`` are token indices
  ``[start, end)``; the tokens are read as they are. A line holds exactly one of ``text``, ``token``, ``tokens``.
* ``h`` is the head entity and ``t`` the tail, each an object with ``pos``; ``name`` and any other key in them
  are not read (``name`` is not checked against the span). The head is the model's ``e1``, the tail its ``e2``:
  a directed relation is told apart by which entity is the head, or by labels that name the direction.
* The two spans must each cover a token and must not overlap (the model and its entity markers see two
  separate mentions; OpenNRE's encoders assume the same).
* ``relation``: the label, any string without tabs or line breaks (answer files are ``id<TAB>label`` lines).
  A line without it is unlabelled: it can be classified, not trained on or scored.
* ``id`` (optional, a string or an integer): unique in a file; a line without one gets its line number.
* Any other key is not read.

Every malformed line is a :class:`~seqlab.core.errors.DataFormatError` naming the file and line.
"""
from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any, Callable, Iterable, Iterator, Sequence

from seqlab.core.atomic import atomic_open
from seqlab.core.errors import DataFormatError, SeqlabError
from seqlab.data.conll import UTF8_BOM
from seqlab.data.formats.files import json_objects, json_record
from seqlab.data.formats.registry import JSON_SUFFIXES
from seqlab.data.formats.spert import read_spert_pairs
from seqlab.data.semeval import (
    RelationExample, parse_raw_line, read_marked_semeval, read_semeval, tokenize_around,
)

#: The token-list keys of a line: OpenNRE writes ``token``.
TOKEN_KEYS = ("token", "tokens")
_SNIFF_BYTES = 4096


def parse_relation(value: dict[str, Any], source: str, line: int) -> RelationExample:
    """One JSON object of the layout above as a :class:`RelationExample` (its id: ``id``, else ``line``)."""
    found = [key for key in ("text", *TOKEN_KEYS) if key in value]
    if len(found) != 1:
        got = f"{' and '.join(repr(k) for k in found)}" if found else "neither"
        raise DataFormatError(source, line, f"expected exactly one of 'text' (with character offsets) or 'token' / "
                              f"'tokens' (with token indices), got {got}")
    if found[0] == "text":
        tokens, head, tail = _from_text(value, source, line)
    else:
        tokens, head, tail = _from_tokens(value, found[0], source, line)
    return RelationExample(_name(value, "id", source, line, str(line)), tuple(tokens), head, tail,
                           _name(value, "relation", source, line, None))


def read_relations_jsonl(path: str | os.PathLike[str]) -> list[RelationExample]:
    """Read a relation JSONL file (module docstring for the layout); ids must be unique."""
    examples: list[RelationExample] = []
    seen: dict[str, int] = {}
    for number, value in json_objects(path):
        example = parse_relation(value, str(path), number)
        if example.id in seen:
            raise DataFormatError(str(path), number, f"id {example.id!r} already used on line {seen[example.id]} "
                                  f"(ids must be unique; leave 'id' out to number the examples by line)")
        seen[example.id] = number
        examples.append(example)
    if not examples:
        raise SeqlabError(f"{path}: holds no relation examples (expected JSON lines with 'h', 't' and 'relation')")
    return examples


#: The readers by ``data.format`` name.
READERS: dict[str, Callable[[Path], list[RelationExample]]] = {"semeval": read_semeval, "jsonl": read_relations_jsonl,
                                                               "spert": read_spert_pairs}
#: The names ``data.format`` takes in a relation config: a reader's, or ``auto``.
FORMATS = ("auto", *READERS)


def relation_format(path: str | os.PathLike[str], configured: str = "auto") -> str:
    """The reader for ``path``: ``configured``, or with ``auto`` ``jsonl`` for a ``.jsonl``, ``.json`` or ``.ndjson``
    file or one whose first character is ``{`` (OpenNRE names its JSON lines ``.txt``), else ``semeval``."""
    if configured != "auto":
        return configured
    if Path(path).suffix.lower() in JSON_SUFFIXES:
        return "jsonl"
    try:
        with open(path, "rb") as handle:
            head = handle.read(_SNIFF_BYTES).removeprefix(UTF8_BOM).lstrip()
    except OSError:  # missing or unreadable: the SemEval reader says so
        return "semeval"
    return "jsonl" if head.startswith(b"{") else "semeval"


def read_relations(path: str | os.PathLike[str], configured: str = "auto") -> list[RelationExample]:
    """The examples of a SemEval-2010 Task 8 file or a relation JSONL file (:func:`relation_format`)."""
    return READERS[relation_format(path, configured)](Path(path))


def check_labels(examples: Iterable[RelationExample], labels: Sequence[str], source: str) -> None:
    """Refuse an example of ``source`` whose label is not one of ``labels`` (those a model tells apart)."""
    known = set(labels)
    for example in examples:
        if example.label is not None and example.label not in known:
            raise SeqlabError(f"{source}: example {example.id} is labelled {example.label!r}, which is not a label of "
                              f"the training data ({', '.join(labels)})")


def parse_input_lines(lines: Iterable[str], source: str = "<input>") -> Iterator[RelationExample]:
    """Sentences to classify, one per line: a relation JSON object (a line starting with ``{``), or a sentence
    marked with ``<e1>…</e1>`` and ``<e2>…</e2>`` (:func:`seqlab.data.semeval.parse_raw_lines`). Blank lines
    are skipped; an example without an id gets its line number."""
    for number, raw in enumerate(lines, start=1):
        if not raw.strip():
            continue
        if not raw.lstrip().startswith("{"):
            yield parse_raw_line(raw, source, number)
            continue
        value = json_record(raw, source, number)
        if not isinstance(value, dict):
            raise DataFormatError(source, number, f"expected a JSON object, got {type(value).__name__}")
        yield parse_relation(value, source, number)


def semeval_to_jsonl(source: str | os.PathLike[str], target: str | os.PathLike[str], *, tokens: bool = False) -> int:
    """Write the sentences of a SemEval-2010 Task 8 file as relation JSON lines, atomically; returns how many.

    ``e1`` becomes the head and ``e2`` the tail, so the directed labels (``Cause-Effect(e2,e1)``) keep their
    meaning; the sentence id becomes ``id``. By default each line holds the sentence without its tags as
    ``text`` with character offsets; with ``tokens``, the tokens seqlab reads as ``token`` with token indices.
    Either way :func:`read_relations` gives back the examples :func:`seqlab.data.semeval.read_semeval` reads.
    """
    pairs = read_marked_semeval(source)
    with atomic_open(target) as out:
        for example, marked in pairs:
            if tokens:
                line: dict[str, Any] = {"id": example.id, "token": list(example.tokens),
                                        "h": {"name": example.e1_text, "pos": [example.e1[0], example.e1[1] + 1]},
                                        "t": {"name": example.e2_text, "pos": [example.e2[0], example.e2[1] + 1]}}
            else:
                line = {"id": example.id, "text": marked.text,
                        "h": {"name": marked.text[slice(*marked.e1)], "pos": list(marked.e1)},
                        "t": {"name": marked.text[slice(*marked.e2)], "pos": list(marked.e2)}}
            if example.label is not None:
                line["relation"] = example.label
            out.write(json.dumps(line, ensure_ascii=False) + "\n")
    return len(pairs)


#: ``seqlab convert``'s names for relation data: SemEval-2010 Task 8 files are read, relation JSON lines written.
CONVERT_FROM, CONVERT_TO = ("semeval",), ("relations",)


def convert_relations(source: str | os.PathLike[str], target: str | os.PathLike[str], *,
                      source_format: str = "auto", target_format: str = "relations") -> str:
    """``seqlab convert IN OUT --from semeval --to relations``: :func:`semeval_to_jsonl`; returns the line printed."""
    if source_format not in ("auto", *CONVERT_FROM) or target_format not in CONVERT_TO:
        raise SeqlabError(f"--from {source_format} --to {target_format}: relation data converts from "
                          f"{CONVERT_FROM[0]} (SemEval-2010 Task 8 files) to {CONVERT_TO[0]} (relation JSON lines) only")
    return f"{semeval_to_jsonl(source, target)} relation examples written"


# ---------------------------------------------------------------- checks of one line


def _from_text(value: dict[str, Any], source: str, line: int) -> tuple[list[str], tuple[int, int], tuple[int, int]]:
    text = value["text"]
    if not isinstance(text, str) or not text.strip():
        raise DataFormatError(source, line, f"'text': expected a non-empty string, got {_show(text)}")
    head, tail = (_span(value, key, len(text), "characters in 'text'", source, line) for key in ("h", "t"))
    _disjoint(head, tail, source, line)
    tokens, spans = tokenize_around(text, (head, tail))
    for key, chars, (first, end) in zip(("h", "t"), (head, tail), spans):
        if first == end:
            raise DataFormatError(source, line, f"{key}.pos {list(chars)} covers no token, only "
                                  f"{text[chars[0]:chars[1]]!r}")
    return tokens, (spans[0][0], spans[0][1] - 1), (spans[1][0], spans[1][1] - 1)


def _from_tokens(value: dict[str, Any], key: str, source: str, line: int
                 ) -> tuple[list[str], tuple[int, int], tuple[int, int]]:
    tokens = value[key]
    if not isinstance(tokens, list) or not tokens or not all(isinstance(t, str) and t.strip() for t in tokens):
        raise DataFormatError(source, line, f"'{key}': expected a non-empty list of non-empty strings, "
                              f"got {_show(tokens)}")
    head, tail = (_span(value, k, len(tokens), f"tokens in '{key}'", source, line) for k in ("h", "t"))
    _disjoint(head, tail, source, line)
    return tokens, (head[0], head[1] - 1), (tail[0], tail[1] - 1)


def _span(value: dict[str, Any], key: str, limit: int, unit: str, source: str, line: int) -> tuple[int, int]:
    """The ``[start, end)`` of entity ``key`` (``h`` or ``t``), within ``0..limit``."""
    entity = value.get(key)
    if entity is None:
        role = "head" if key == "h" else "tail"
        raise DataFormatError(source, line, f"missing key '{key}' (the {role} entity, {{\"pos\": [start, end]}})")
    if not isinstance(entity, dict) or "pos" not in entity:
        raise DataFormatError(source, line, f"'{key}': expected an object with 'pos': [start, end], "
                              f"got {_show(entity)}")
    pos = entity["pos"]
    if not (isinstance(pos, list) and len(pos) == 2
            and all(isinstance(p, int) and not isinstance(p, bool) for p in pos)):
        raise DataFormatError(source, line, f"{key}.pos: expected [start, end], two integers, got {_show(pos)}")
    start, end = pos
    if not 0 <= start < end <= limit:
        raise DataFormatError(source, line, f"{key}.pos {pos}: expected 0 <= start < end <= {limit} "
                              f"({limit} {unit})")
    return start, end


def _disjoint(head: tuple[int, int], tail: tuple[int, int], source: str, line: int) -> None:
    if head[0] < tail[1] and tail[0] < head[1]:
        raise DataFormatError(source, line, f"h.pos {list(head)} and t.pos {list(tail)} overlap: the head and the "
                              f"tail must be separate mentions")


def _name(value: dict[str, Any], key: str, source: str, line: int, default: str | None) -> str | None:
    """``value[key]`` as a label or id: a non-empty string (an id may be an integer) without tabs or line breaks."""
    if key not in value or value[key] is None:
        return default
    item = value[key]
    if key == "id" and isinstance(item, int) and not isinstance(item, bool):
        item = str(item)
    if not isinstance(item, str) or not item.strip() or any(c in item for c in "\t\r\n"):
        what = "a string or an integer" if key == "id" else "a string"
        raise DataFormatError(source, line, f"'{key}': expected {what}, not empty and without tabs or line breaks, "
                              f"got {_show(item)}")
    return item


def _show(value: object, width: int = 60) -> str:
    text = json.dumps(value, ensure_ascii=False)
    return text if len(text) <= width else text[:width] + "..."
