"""Label Studio JSON exports: a JSON list of tasks, each ``{"id", "data": {"text": ...}, "annotations": [...]}``.

An annotation's ``result`` holds regions; those of type ``labels`` give spans, ``value.start``, ``value.end``
and ``value.labels`` (character offsets into ``data.text``). Policies, each counted in the report: the first
annotation that was not cancelled is read (a task annotated by several people gives one document); a task with
none is skipped (unlabelled, not "no entities"); a region with several labels takes the first; results of
other types (choices, relations, text areas) and the ``predictions`` are ignored. Spans are aligned to tokens
by :mod:`seqlab.data.formats.align`; messages name the line where a task begins.
"""
from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any, Iterator

from seqlab.core.errors import DataFormatError, SeqlabError
from seqlab.core.json_limits import lone_surrogate, record_fault
from seqlab.data.conll import ColumnSentence
from seqlab.data.formats.align import AlignmentReport, CharSpan, SpanDocument, align_documents
from seqlab.data.encoding import DEFAULT_ENCODING
from seqlab.data.formats.files import integer, json_head, json_list, json_suffix
from seqlab.data.formats.format import Format, offset_reader
from seqlab.data.formats.offsets import in_chars


def _region(result: dict[str, Any], where: str, path: str, line: int, report: AlignmentReport) -> CharSpan:
    value = result.get("value")
    labels = value.get("labels") if isinstance(value, dict) else None
    if not isinstance(labels, list) or not labels or not isinstance(labels[0], str):
        raise DataFormatError(path, line, f"{where}: expected value.labels, a list of label names, got "
                                          f"{json.dumps(value)[:80]}")
    if len(labels) > 1:
        report.notes["regions with several labels (the first read)"] += 1
    return CharSpan(integer(value.get("start"), f"{where} value.start", path, line),
                    integer(value.get("end"), f"{where} value.end", path, line), labels[0], line,
                    str(result.get("id", "")), text=value["text"] if isinstance(value.get("text"), str) else None)


def task_document(task: object, number: int, path: str, line: int, report: AlignmentReport, *,
                  text_key: str = "text") -> SpanDocument | None:
    """The document of one task, or None for a task with no annotation to read."""
    where = f"task {number}"
    data = task.get("data") if isinstance(task, dict) else None
    if not isinstance(task, dict) or not isinstance(data, dict) or not isinstance(data.get(text_key), str):
        raise DataFormatError(path, line, f"{where}: expected an object with data.{text_key} (a string)"
                                          + (f"; data has {sorted(data)}" if isinstance(data, dict) else ""))
    annotations = [a for a in task.get("annotations") or [] if isinstance(a, dict) and not a.get("was_cancelled")]
    if not annotations:
        report.notes["tasks without an annotation (skipped)"] += 1
        return None
    if len(annotations) > 1:
        report.notes["tasks with several annotations (the first read)"] += 1
    spans = []
    for k, result in enumerate(annotations[0].get("result") or []):
        if not isinstance(result, dict) or result.get("type", "labels") != "labels":
            report.notes["results other than labels ignored"] += 1
            continue
        spans.append(_region(result, f"{where} result {k}", path, line, report))
    ident = str(task["id"]) if task.get("id") is not None else f"{Path(path).stem}-{number}"
    return SpanDocument(ident, data[text_key], tuple(spans), path=path, line=line)


def label_studio_documents(path: str | os.PathLike[str], report: AlignmentReport, *, text_key: str = "text",
                           offsets: str = "auto", strict: bool = False,
                           encoding: str = DEFAULT_ENCODING) -> Iterator[SpanDocument]:
    """The documents of a Label Studio JSON export, offsets read in the unit ``offsets`` names
    (:mod:`seqlab.data.formats.offsets`)."""
    count = 0
    for number, (line, task) in enumerate(json_list(path, encoding, expected="a JSON list of tasks (Label Studio's JSON export)",
                                                           item="task")):
        doc = task_document(task, number, str(path), line, report, text_key=text_key)
        count += 1
        if doc is not None:
            yield in_chars(doc, offsets, report, strict=strict)
    if not count:
        raise SeqlabError(f"{path}: no tasks (an empty JSON list)")


def read_label_studio(path: str | os.PathLike[str], *, strict: bool = False, text_key: str = "text",
                      report: AlignmentReport | None = None, encoding: str = DEFAULT_ENCODING,
                      offsets: str = "auto") -> Iterator[ColumnSentence]:
    """Stream the sentences of a Label Studio JSON export, tagged IOB2 in the columns ``word`` and ``ner``;
    the report (counts and problems) is logged at the end, unless the caller passes its own ``report``;
    ``offsets``: the unit the offsets count (:data:`seqlab.data.formats.offsets.UNITS`)."""
    own, report = report is None, report if report is not None else AlignmentReport()
    yield from align_documents(label_studio_documents(path, report, text_key=text_key, offsets=offsets,
                                                      strict=strict, encoding=encoding), report, strict=strict)
    if own:  # a caller that passes its report reads it (seqlab convert prints it)
        report.log(str(path))


def is_label_studio(path: Path) -> bool:
    """A JSON file that is a list (Label Studio's export; JSON lines hold objects)."""
    return json_suffix(path) and json_head(path) == "["


FORMAT = Format("labelstudio", is_label_studio, offset_reader(read_label_studio, units=True), spans=True)
