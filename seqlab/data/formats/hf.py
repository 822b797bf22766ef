"""Hugging Face-style token JSONL: one sentence per line, ``{"tokens": [...], "ner_tags": [...]}``.

Tags are label strings (``B-PER``), or integers into a label list (a ``datasets`` ``ClassLabel``): the list is
given (``labels``), or found beside the file, first of: ``<stem>.labels.txt`` or ``labels.txt`` (one label per
line), or ``dataset_info.json`` (``features.ner_tags.feature.names``, as ``datasets`` writes it). An integer
outside the list, a tag that is neither, or token and tag lists of different lengths are errors naming the file
and line. Sentences have the columns ``word`` and ``ner``; ``extra`` holds ``id`` and ``lines``.
:func:`write_hf_jsonl` writes sentences in the same shape, tags as strings.
"""
from __future__ import annotations

import json
import logging
import os
from pathlib import Path
from typing import Any, Iterable, Iterator, Sequence

from seqlab.core.atomic import atomic_open
from seqlab.core.errors import DataFormatError, SeqlabError
from seqlab.data.conll import ColumnSentence
from seqlab.data.formats.align import TAG, WORD
from seqlab.data.encoding import DEFAULT_ENCODING
from seqlab.data.formats.files import json_head, json_objects, json_suffix, read_text
from seqlab.data.formats.format import Format

#: Label-list files looked for beside ``<stem>.jsonl``, in order (one label per line).
LABEL_FILES = ("{stem}.labels.txt", "labels.txt")
DATASET_INFO = "dataset_info.json"


def sidecar_labels(path: str | os.PathLike[str], tag_field: str = "ner_tags") -> tuple[list[str], Path] | None:
    """The label list beside ``path`` and the file it came from (module docstring), or None."""
    path = Path(path)
    for pattern in LABEL_FILES:
        candidate = path.parent / pattern.format(stem=path.stem)
        if candidate.is_file():
            return label_names(read_text(candidate).splitlines(), candidate), candidate
    info = path.parent / DATASET_INFO
    if info.is_file():
        try:
            names = json.loads(info.read_text(encoding="utf-8"))["features"][tag_field]["feature"]["names"]
        except (json.JSONDecodeError, KeyError, TypeError):
            raise SeqlabError(f"{info}: expected features.{tag_field}.feature.names, the label list") from None
        return list(map(str, names)), info
    return None


def label_names(lines: Sequence[str], source: Path) -> list[str]:
    """A label file's labels, one a line (blank lines skipped; the byte-order mark is dropped by read_text); a
    label written in quotes (``'B-PER'``, ``"B-PER"``, as a Python list printed) is unquoted, with a warning."""
    names = [line.strip() for line in lines if line.strip()]
    quoted = [k for k, name in enumerate(names) if len(name) > 1 and name[0] == name[-1] and name[0] in "'\""]
    if quoted:
        logging.getLogger("seqlab").warning("%s: %d labels written in quotes (the first %s, line %d); read without "
                                            "them", source, len(quoted), names[quoted[0]], quoted[0] + 1)
    return [name[1:-1].strip() if k in set(quoted) else name for k, name in enumerate(names)]


class _Labels:
    """Integer tags to label strings, the list read when the first integer tag is met."""

    def __init__(self, path: Path, labels: Sequence[str] | None, tag_field: str) -> None:
        self.path, self.tag_field = path, tag_field
        self.names = list(labels) if labels is not None else None
        self.source = "the labels given"

    def name(self, tag: object, index: int, line: int) -> str:
        if isinstance(tag, str):
            return tag
        if isinstance(tag, bool) or not isinstance(tag, int):
            raise DataFormatError(str(self.path), line, f"{self.tag_field}[{index}]: expected a label string or an "
                                                        f"integer, got {tag!r}")
        if self.names is None:
            found = sidecar_labels(self.path, self.tag_field)
            if found is None:
                raise DataFormatError(str(self.path), line, f"{self.tag_field} holds integers; give the label list "
                                      f"(labels=[...]) or put it beside the file in {self.path.stem}.labels.txt, "
                                      f"labels.txt or {DATASET_INFO}")
            self.names, self.source = found[0], str(found[1])
        if not 0 <= tag < len(self.names):
            raise DataFormatError(str(self.path), line, f"{self.tag_field}[{index}] = {tag}: out of range; "
                                  f"{self.source} has {len(self.names)} labels (0 to {len(self.names) - 1})")
        return self.names[tag]


def _sentence(obj: dict[str, Any], path: Path, line: int, labels: _Labels, token_field: str,
              tag_field: str) -> ColumnSentence:
    tokens, tags = obj.get(token_field), obj.get(tag_field)
    for key, value in ((token_field, tokens), (tag_field, tags)):
        if not isinstance(value, list):
            raise DataFormatError(str(path), line, f"expected a list under {key!r}, got "
                                  f"{'no such key' if value is None else type(value).__name__}; keys: {sorted(obj)}")
    if len(tokens) != len(tags):
        raise DataFormatError(str(path), line, f"{len(tokens)} {token_field} but {len(tags)} {tag_field}")
    for k, token in enumerate(tokens):
        if not isinstance(token, str) or not token.strip():
            raise DataFormatError(str(path), line, f"{token_field}[{k}]: expected a non-blank string, got {token!r}")
    names = tuple(labels.name(tag, k, line) for k, tag in enumerate(tags))
    return ColumnSentence({WORD: tuple(tokens), TAG: names}, path=str(path), line=line,
                          extra={"id": obj.get("id"), "lines": (line,) * len(tokens)})


def read_hf_jsonl(path: str | os.PathLike[str], *, labels: Sequence[str] | None = None, token_field: str = "tokens",
                  tag_field: str = "ner_tags", encoding: str = DEFAULT_ENCODING) -> Iterator[ColumnSentence]:
    """Stream the sentences of a Hugging Face-style JSONL file (module docstring); empty sentences are skipped
    and counted in the log."""
    path = Path(path)
    names = _Labels(path, labels, tag_field)
    empty = 0
    for line, obj in json_objects(path, encoding):
        sentence = _sentence(obj, path, line, names, token_field, tag_field)
        if len(sentence):
            yield sentence
        else:
            empty += 1
    if empty:
        logging.getLogger("seqlab").info("%s: %d empty sentences skipped", path, empty)


def write_hf_jsonl(path: str | os.PathLike[str], sentences: Iterable[ColumnSentence], *, word_column: str = WORD,
                   tag_column: str = TAG) -> int:
    """Write sentences as Hugging Face-style JSONL, ``{"id", "tokens", "ner_tags"}`` per line with the tags as
    label strings (what :func:`read_hf_jsonl` reads back), atomically; returns how many sentences."""
    count = 0
    with atomic_open(path) as out:
        for count, sentence in enumerate(sentences, start=1):
            ident = sentence.extra.get("id") or sentence.extra.get("sent_id") or count - 1
            out.write(json.dumps({"id": ident, "tokens": list(sentence[word_column]),
                                  "ner_tags": list(sentence[tag_column])}, ensure_ascii=False) + "\n")
    return count


def is_hf_jsonl(path: Path) -> bool:
    """A JSON file whose first object has ``tokens`` (after seqlab's own, which have them too)."""
    head = json_head(path) if json_suffix(path) else None
    return isinstance(head, dict) and "tokens" in head


def _read(path: Path, *, encoding: str = DEFAULT_ENCODING, columns: Sequence[str] | None = None,
          report: object = None, offsets: str = "auto") -> Iterator[ColumnSentence]:
    return read_hf_jsonl(path, encoding=encoding)


FORMAT = Format("hf", is_hf_jsonl, _read, write_hf_jsonl)
