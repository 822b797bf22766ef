"""SpERT-style JSON (Eberts & Ulges 2020): sentences with entity spans and the relations between them.

A file is one JSON list with an object per sentence::

    {"tokens": ["John", "lives", "in", "Paris"],
     "entities": [{"type": "Peop", "start": 0, "end": 1}, {"type": "Loc", "start": 3, "end": 4}],
     "relations": [{"type": "Live_In", "head": 0, "tail": 1}], "orig_id": 17}

``start``/``end`` are token indices, ``end`` exclusive; ``head``/``tail`` index the sentence's ``entities``;
relations are directed. ``orig_id`` (optional) names the sentence; ``relations`` may be left out. A types file
beside the data (``conll04_types.json`` for ``conll04_train.json``: the file's stem up to its last ``_``, then
``_types.json``, as SpERT ships them), when there is one, lists the entity and relation types allowed.

Two readings: :func:`read_spert_tags` gives tagger sentences (columns ``word`` and ``ner``, IOB2 tags from the
spans; ``data.format: spert``), and :func:`read_spert` the sentences whole, from which
:mod:`seqlab.relation.pairs` makes the relation classifier's entity pairs. Every malformed sentence is one
:class:`~seqlab.core.errors.SeqlabError` naming the file, the sentence (index and ``orig_id``) and the field.
"""
from __future__ import annotations

import json
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Iterator, Sequence

from seqlab.core.errors import SeqlabError
from seqlab.core.paths import require_file
from seqlab.data.conll import UTF8_BOM, ColumnSentence
from seqlab.data.encoding import DEFAULT_ENCODING
from seqlab.data.formats.align import TAG, WORD
from seqlab.data.formats.files import SNIFF_BYTES, json_head, json_list, json_suffix
from seqlab.data.formats.format import Format
from seqlab.data.semeval import RelationExample

SENTENCE_KEYS = frozenset({"tokens", "entities", "relations", "orig_id"})
ENTITY_KEYS = frozenset({"type", "start", "end"})
RELATION_KEYS = frozenset({"type", "head", "tail"})
TYPES_SUFFIX = "_types.json"


@dataclass(frozen=True)
class Entity:
    """A typed token span ``[start, end)``."""

    type: str
    start: int
    end: int

    def overlaps(self, other: "Entity") -> bool:
        return self.start < other.end and other.start < self.end


@dataclass(frozen=True)
class Relation:
    """A directed relation between two entities of a sentence, by their indices."""

    type: str
    head: int
    tail: int


@dataclass(frozen=True)
class SpertSentence:
    """One sentence of a SpERT file: its tokens, entities and relations, and where it came from."""

    tokens: tuple[str, ...]
    entities: tuple[Entity, ...]
    relations: tuple[Relation, ...]
    ident: str
    index: int
    path: str = ""
    line: int = 1  # where the sentence's object begins in the file


@dataclass(frozen=True)
class Types:
    """The entity and relation types a types file allows (None: any)."""

    entities: frozenset[str] | None = None
    relations: frozenset[str] | None = None


class _Where:
    """Names a sentence in errors: ``file:line: sentence 3 (orig_id 17): field: ...``."""

    def __init__(self, path: str, index: int, obj: dict[str, Any], line: int = 1) -> None:
        ident = obj.get("orig_id")
        self.prefix = f"{path}:{line}: sentence {index}" + (f" (orig_id {ident})" if ident is not None else "")

    def error(self, field: str, message: str) -> SeqlabError:
        return SeqlabError(f"{self.prefix}: {field}: {message}")


def types_beside(path: str | os.PathLike[str]) -> Types:
    """The types of the types file beside ``path`` (module docstring), or :class:`Types` allowing any."""
    path = Path(path)
    found = path.with_name(path.stem.rsplit("_", 1)[0] + TYPES_SUFFIX)
    if "_" not in path.stem or not found.is_file():
        return Types()
    try:
        value = json.loads(found.read_text(encoding="utf-8"))
        return Types(frozenset(value["entities"]), frozenset(value["relations"]))
    except (ValueError, KeyError, TypeError):
        raise SeqlabError(f"{found}: expected a JSON object with 'entities' and 'relations' (the types by name)") \
            from None


def _keys(value: object, allowed: frozenset[str], required: frozenset[str], field: str, where: _Where) -> dict:
    if not isinstance(value, dict):
        raise where.error(field, f"expected a JSON object, got {type(value).__name__}")
    unknown, missing = sorted(set(value) - allowed), sorted(required - set(value))
    if unknown or missing:
        what = f"unknown key {unknown[0]!r}" if unknown else f"missing key {missing[0]!r}"
        raise where.error(field, f"{what}; expected the keys {sorted(allowed)}")
    return value


def _index(value: object, field: str, where: _Where) -> int:
    if isinstance(value, bool) or not isinstance(value, int):
        raise where.error(field, f"expected an integer, got {json.dumps(value)[:40]}")
    return value


def _type(value: object, allowed: frozenset[str] | None, field: str, where: _Where) -> str:
    if not isinstance(value, str) or not value.strip() or any(c in value for c in " \t\r\n"):
        raise where.error(field, f"expected a type name without spaces, got {json.dumps(value)[:40]}")
    if allowed is not None and value not in allowed:
        raise where.error(field, f"unknown type {value!r}; the types file allows {', '.join(sorted(allowed))}")
    return value


def _entity(value: object, k: int, size: int, types: Types, where: _Where) -> Entity:
    field = f"entities[{k}]"
    item = _keys(value, ENTITY_KEYS, ENTITY_KEYS, field, where)
    start, end = _index(item["start"], f"{field}.start", where), _index(item["end"], f"{field}.end", where)
    if not 0 <= start < end <= size:
        raise where.error(field, f"span [{start}, {end}) is not within the {size} tokens "
                                 f"(expected 0 <= start < end <= {size}, end exclusive)")
    return Entity(_type(item["type"], types.entities, f"{field}.type", where), start, end)


def _relation(value: object, k: int, entities: tuple[Entity, ...], types: Types, where: _Where) -> Relation:
    field = f"relations[{k}]"
    item = _keys(value, RELATION_KEYS, RELATION_KEYS, field, where)
    ends = [_index(item[key], f"{field}.{key}", where) for key in ("head", "tail")]
    for key, index in zip(("head", "tail"), ends):
        if not 0 <= index < len(entities):
            raise where.error(f"{field}.{key}", f"entity index {index} is out of range (the sentence has "
                                                f"{len(entities)} entities)")
    head, tail = ends
    if entities[head].overlaps(entities[tail]):
        raise where.error(field, f"head entities[{head}] and tail entities[{tail}] overlap; a relation joins two "
                                 f"separate mentions")
    return Relation(_type(item["type"], types.relations, f"{field}.type", where), head, tail)


def _tokens(value: object, where: _Where) -> tuple[str, ...]:
    if not isinstance(value, list) or not value:
        raise where.error("tokens", f"expected a non-empty list of strings, got {json.dumps(value)[:40]}")
    for k, token in enumerate(value):
        if not isinstance(token, str) or not token.strip():
            raise where.error(f"tokens[{k}]", f"expected a non-blank string, got {json.dumps(token)}")
    return tuple(value)


def _list(obj: dict[str, Any], key: str, where: _Where) -> list[Any]:
    value = obj.get(key, [])
    if not isinstance(value, list):
        raise where.error(key, f"expected a list, got {type(value).__name__}")
    return value


def parse_sentence(value: object, index: int, path: str, types: Types = Types(), line: int = 1) -> SpertSentence:
    """One sentence object of a SpERT file (module docstring), beginning on ``line``, checked."""
    where = _Where(path, index, value if isinstance(value, dict) else {}, line)
    obj = _keys(value, SENTENCE_KEYS, frozenset({"tokens", "entities"}), "sentence", where)
    tokens = _tokens(obj["tokens"], where)
    entities = tuple(_entity(e, k, len(tokens), types, where) for k, e in enumerate(_list(obj, "entities", where)))
    relations = tuple(_relation(r, k, entities, types, where) for k, r in enumerate(_list(obj, "relations", where)))
    ident = obj.get("orig_id")
    return SpertSentence(tokens, entities, relations, str(index if ident is None else ident), index, path, line)


def read_spert(path: str | os.PathLike[str], *, encoding: str = DEFAULT_ENCODING) -> list[SpertSentence]:
    """The sentences of a SpERT JSON file, each checked (module docstring); types by the types file beside it."""
    path = require_file(path)
    types = types_beside(path)
    listed = json_list(path, encoding, expected="a JSON list of sentences (SpERT's format)", item="sentence")
    sentences = [parse_sentence(value, k, str(path), types, line) for k, (line, value) in enumerate(listed)]
    if not sentences:
        raise SeqlabError(f"{path}: no sentences (an empty JSON list); expected SpERT's sentences")
    return sentences


def iob2_tags(sentence: SpertSentence) -> tuple[str, ...]:
    """The sentence's entities as IOB2 tags; overlapping entities cannot be tagged and are an error."""
    tags = ["O"] * len(sentence.tokens)
    for k, entity in enumerate(sentence.entities):
        if any(tag != "O" for tag in tags[entity.start:entity.end]):
            where = _Where(sentence.path, sentence.index, {"orig_id": sentence.ident}, sentence.line)
            raise where.error(f"entities[{k}]", f"span [{entity.start}, {entity.end}) overlaps another entity; "
                                                f"IOB2 tags hold one entity per token")
        tags[entity.start:entity.end] = [f"B-{entity.type}"] + [f"I-{entity.type}"] * (entity.end - entity.start - 1)
    return tuple(tags)


def read_spert_tags(path: str | os.PathLike[str], *,
                    encoding: str = DEFAULT_ENCODING) -> Iterator[ColumnSentence]:
    """The sentences of a SpERT JSON file for a tagger: columns ``word`` and ``ner`` (IOB2); ``extra`` holds
    ``id`` (the ``orig_id``)."""
    for sentence in read_spert(path, encoding=encoding):
        yield ColumnSentence({WORD: sentence.tokens, TAG: iob2_tags(sentence)}, path=sentence.path, line=sentence.line,
                             extra={"id": sentence.ident})


#: The relation classifier's label for an ordered entity pair with no relation in the data.
NO_RELATION = "no_relation"


@dataclass(frozen=True)
class EntityPair:
    """An ordered pair of distinct entities of a sentence and the type of the relation from head to tail, or
    None when the data holds none."""

    sentence: SpertSentence
    head: int
    tail: int
    label: str | None

    @property
    def ident(self) -> str:
        return f"{self.sentence.ident}/{self.head}/{self.tail}"

    def example(self) -> RelationExample:
        """The pair as the relation classifier reads it: head as ``e1``, tail as ``e2`` (inclusive spans), and
        :data:`NO_RELATION` for no relation."""
        head, tail = (self.sentence.entities[k] for k in (self.head, self.tail))
        return RelationExample(self.ident, self.sentence.tokens, (head.start, head.end - 1), (tail.start, tail.end - 1),
                               self.label if self.label is not None else NO_RELATION, types=(head.type, tail.type))


def entity_pairs(sentence: SpertSentence) -> list[EntityPair]:
    """Every ordered pair (head, tail) of distinct, non-overlapping entities of ``sentence`` with its relation
    type, or None. Two relations of one pair are refused: a classifier gives a pair one label."""
    labels: dict[tuple[int, int], str] = {}
    for k, relation in enumerate(sentence.relations):
        key = (relation.head, relation.tail)
        if labels.get(key, relation.type) != relation.type:
            where = _Where(sentence.path, sentence.index, {"orig_id": sentence.ident}, sentence.line)
            raise where.error(f"relations[{k}]", f"entities {key[0]} and {key[1]} already hold a {labels[key]} "
                                                 f"relation; a pair is given one relation type")
        labels[key] = relation.type
    entities = sentence.entities
    return [EntityPair(sentence, h, t, labels.get((h, t)))
            for h in range(len(entities)) for t in range(len(entities))
            if h != t and not entities[h].overlaps(entities[t])]


def read_spert_pairs(path: str | os.PathLike[str]) -> list[RelationExample]:
    """The relation classifier's examples of a SpERT file: every entity pair of every sentence
    (:func:`entity_pairs`), labelled with its relation type or :data:`NO_RELATION`."""
    return [pair.example() for sentence in read_spert(path) for pair in entity_pairs(sentence)]


def is_spert(path: Path) -> bool:
    """A JSON file that is a list whose first object has ``tokens`` and ``entities`` (Label Studio's lists hold
    tasks with ``data``)."""
    if not json_suffix(path) or json_head(path) != "[":
        return False
    try:
        with open(path, "rb") as handle:
            head = handle.read(SNIFF_BYTES).removeprefix(UTF8_BOM).decode("utf-8", "replace")
    except OSError:
        return False
    first = head[head.index("[") + 1:].lstrip()
    return first.startswith("{") and '"tokens"' in first and '"entities"' in first and '"annotations"' not in first


def _read(path: Path, *, encoding: str = DEFAULT_ENCODING, columns: Sequence[str] | None = None,
          report: object = None, offsets: str = "auto") -> Iterator[ColumnSentence]:
    return read_spert_tags(path, encoding=encoding)


FORMAT = Format("spert", is_spert, _read, spans=True)
