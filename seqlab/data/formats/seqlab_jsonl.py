"""seqlab's own JSON lines: what ``seqlab tag --format jsonl`` and ``seqlab convert --to jsonl`` write, read back
to the very tokens, labels and sentences written (``data.format: seqlab``).

Two shapes of object, told apart per line (:mod:`seqlab.core.schema` names the fields):

* a sentence of ``seqlab tag --format jsonl``: ``{"line", "tokens", "offsets", "labels", "spans"}`` (detected
  by ``tokens``, ``offsets`` and ``labels``); consecutive sentences of one input ``line`` are one document, whose
  text is rebuilt from the tokens at their offsets;
* a document, as ``Document.to_dict`` and :func:`seqlab.data.formats.jsonl.write_span_jsonl` write it: ``{"text",
  "sentences": [{"tokens", "offsets", "labels"}, ...]}`` (``id`` names it; ``spans`` is read past, the labels
  being what it was made from).

Sentences have the columns ``word`` and ``ner`` (the labels as written, in any tag scheme); ``extra`` holds the
document's ``doc_id`` and ``text``, the tokens' ``offsets`` into it and each token's ``lines``. ``offsets`` may be
left out: the tokens are then joined by spaces.
"""
from __future__ import annotations

import json
from pathlib import Path
from typing import Any, Iterable, Iterator, Sequence

from seqlab.core.errors import DataFormatError
from seqlab.core.schema import encode_line
from seqlab.data.conll import ColumnSentence
from seqlab.data.encoding import DEFAULT_ENCODING
from seqlab.data.formats.align import TAG, WORD, SpanDocument, documents_of
from seqlab.data.formats.files import json_head, json_objects, json_suffix
from seqlab.data.formats.format import Format

Offsets = tuple[tuple[int, int], ...]
#: The fields that make a JSON object one of seqlab tag's sentences, for detection.
SENTENCE_KEYS = frozenset({"tokens", "offsets", "labels"})
#: A sentence as read: its tokens, labels and offsets (None: not given), and the line it was read from.
_Parsed = tuple[tuple[str, ...], tuple[str, ...], "Offsets | None", int]


def joined_offsets(words: Sequence[str], start: int = 0) -> Offsets:
    """The offsets of ``words`` in their text joined by single spaces, the first at ``start``."""
    offsets, cursor = [], start
    for word in words:
        offsets.append((cursor, cursor + len(word)))
        cursor += len(word) + 1
    return tuple(offsets)


def sentence_offsets(sentence: ColumnSentence, word_column: str) -> Offsets:
    """A sentence's offsets into its document's text, as :func:`seqlab.data.formats.align.documents_of` places
    it: an offset reader's, else its words joined by spaces."""
    offsets = sentence.extra.get("offsets")
    if isinstance(sentence.extra.get("text"), str) and offsets is not None:
        return tuple(tuple(pair) for pair in offsets)  # type: ignore[union-attr]
    return joined_offsets(sentence[word_column])


def encode_sentences(group: Iterable[ColumnSentence], word_column: str = WORD,
                     tag_column: str = TAG) -> list[dict[str, Any]]:
    """The ``sentences`` of a written document: each sentence's tokens, offsets and labels."""
    return [{"tokens": list(s[word_column]), "offsets": [list(p) for p in sentence_offsets(s, word_column)],
             "labels": list(s[tag_column])} for s in group]


def document_groups(sentences: Iterable[ColumnSentence], *, word_column: str = WORD,
                    tag_column: str = TAG) -> Iterator[tuple[SpanDocument, list[ColumnSentence]]]:
    """:func:`seqlab.data.formats.align.documents_of`, each document with the sentences it was made of."""
    pending: list[ColumnSentence] = []
    finished = [False]

    def feed() -> Iterator[ColumnSentence]:
        for sentence in sentences:
            pending.append(sentence)
            yield sentence
        finished[0] = True

    for doc in documents_of(feed(), word_column=word_column, tag_column=tag_column):
        cut = len(pending) if finished[0] else len(pending) - 1  # the next document's first sentence was read
        yield doc, pending[:cut]
        del pending[:cut]


def _strings(value: object, key: str, path: str, line: int) -> tuple[str, ...]:
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        raise DataFormatError(path, line, f"{key}: expected a list of strings, got {json.dumps(value)[:80]}")
    return tuple(value)


def _offsets(value: object, count: int, key: str, path: str, line: int) -> Offsets | None:
    if value is None:
        return None
    ok = isinstance(value, list) and len(value) == count and all(
        isinstance(p, list) and len(p) == 2 and all(isinstance(v, int) and not isinstance(v, bool) for v in p)
        and 0 <= p[0] <= p[1] for p in value)
    if not ok:
        raise DataFormatError(path, line, f"{key}: expected {count} [start, end] character offsets (one per "
                                          f"token), got {json.dumps(value)[:80]}")
    return tuple((p[0], p[1]) for p in value)  # type: ignore[index, union-attr]


def _parse(item: object, where: str, path: str, line: int) -> _Parsed:
    """One sentence object: ``tokens``, ``labels`` of the same length, ``offsets`` (optional)."""
    if not isinstance(item, dict):
        raise DataFormatError(path, line, f"{where}: expected a sentence object, got {type(item).__name__}")
    prefix = f"{where}." if where else ""
    tokens = _strings(item.get("tokens"), f"{prefix}tokens", path, line)
    labels = _strings(item.get("labels"), f"{prefix}labels", path, line)
    if len(tokens) != len(labels):
        raise DataFormatError(path, line, f"{prefix}labels: expected one per token ({len(tokens)}), got "
                                          f"{len(labels)}")
    return tokens, labels, _offsets(item.get("offsets"), len(tokens), f"{prefix}offsets", path, line), line


def _rebuilt(parsed: list[_Parsed]) -> str:
    """A text with every token at its offsets, spaces between."""
    chars = [" "] * max((o[-1][1] for _, _, o, _ in parsed if o), default=0)
    for tokens, _, offsets, _ in parsed:
        for token, (start, end) in zip(tokens, offsets or ()):
            chars[start:end] = token[:end - start].ljust(end - start)
    return "".join(chars)


def _document(parsed: list[_Parsed], ident: str, text: object, path: str) -> Iterator[ColumnSentence]:
    """The sentences of one document: offsets given for all of them or for none (then the tokens are joined)."""
    if any(o is None for _, _, o, _ in parsed):
        placed, cursor = [], 0
        for tokens, labels, _, line in parsed:
            placed.append((tokens, labels, joined_offsets(tokens, cursor), line))
            cursor += sum(map(len, tokens)) + len(tokens)
        parsed, text = placed, "\n".join(" ".join(tokens) for tokens, _, _, _ in parsed)
    if not isinstance(text, str):
        text = _rebuilt(parsed)
    for k, (tokens, labels, offsets, line) in enumerate(parsed):
        if offsets and offsets[-1][1] > len(text):
            raise DataFormatError(path, line, f"offsets: token end {offsets[-1][1]} is past the end of the text "
                                              f"({len(text)} characters)")
        if tokens:
            yield ColumnSentence({WORD: tokens, TAG: labels}, path=path, line=line, doc_start=k == 0,
                                 extra={"doc_id": ident, "text": text, "offsets": offsets,
                                        "lines": (line,) * len(tokens)})


def read_seqlab_jsonl(path: str | Path, *, encoding: str = DEFAULT_ENCODING) -> Iterator[ColumnSentence]:
    """Stream the sentences of a seqlab JSONL file (module docstring), every line checked."""
    where, stem = str(path), Path(path).stem
    run: list[_Parsed] = []  # the sentences of one input line of seqlab tag's output
    run_line: object = None
    for number, obj in json_objects(path, encoding):
        if run and ("sentences" in obj or obj.get("line") != run_line):
            yield from _document(run, f"{stem}-line{run_line}", None, where)
            run = []
        if "sentences" in obj:
            items = obj["sentences"]
            if not isinstance(items, list):
                raise DataFormatError(where, number, f"sentences: expected a list, got {type(items).__name__}")
            ident = obj.get("id")
            parsed = [_parse(item, f"sentences[{k}]", where, number) for k, item in enumerate(items)]
            yield from _document(parsed, str(ident) if ident is not None else f"{stem}-{number}", obj.get("text"),
                                 where)
        else:
            run.append(_parse(obj, "", where, number))
            run_line = obj.get("line")
    if run:
        yield from _document(run, f"{stem}-line{run_line}", None, where)


def is_seqlab_jsonl(path: Path) -> bool:
    """A JSON file whose first object is a seqlab document (``sentences``) or tagged sentence (``tokens``,
    ``offsets`` and ``labels``; Hugging Face files have tokens but no offsets)."""
    if not json_suffix(path):
        return False
    head = json_head(path)
    return isinstance(head, dict) and (isinstance(head.get("sentences"), list) or SENTENCE_KEYS <= set(head))


def render_jsonl(number: int, document: Any, token_labels: bool = False) -> str:
    """What ``seqlab tag --format jsonl`` writes of a document: one :func:`seqlab.core.schema.encode_line` object
    per sentence, with the relations an extraction model found among that sentence's spans."""
    related = bool(getattr(document, "relations", None))
    return "".join(json.dumps(encode_line(number, s, document.sentence_relations(k) if related else ()),
                              ensure_ascii=False) + "\n" for k, s in enumerate(document.sentences))


def _read(path: Path, *, encoding: str = DEFAULT_ENCODING, columns: Sequence[str] | None = None,
          report: object = None, offsets: str = "auto") -> Iterator[ColumnSentence]:
    return read_seqlab_jsonl(path, encoding=encoding)


FORMAT = Format("seqlab", is_seqlab_jsonl, _read, render=render_jsonl, output="jsonl", unit="documents")
