"""Probes of the offset formats' and the verbs' trust in their input: offset units, brat discontinuous spans, a
label file's byte-order mark, CoNLL-U ranges, JSON bounds, alignment time, label maps, calibration, ONNX export
folders and FIFOs. Each ``ok`` probe checks its result (spans against the input text, counts, round trips)."""
from __future__ import annotations

import json
import os
import shutil
import threading
from pathlib import Path
from typing import Callable

from probes.runner import Result, Sweep
from probes.tamper import tamper_export

TEXT = "I \U0001F600 met Zoë in Paris ."  # an astral character before a non-ASCII one
WORDS = (("Zoë", "PER"), ("Paris", "LOC"))


def _units(start: int, end: int, unit: str) -> tuple[int, int]:
    codec = {"utf8": "utf-8", "utf16": "utf-16-le"}.get(unit)
    if codec is None:
        return start, end
    size = 2 if unit == "utf16" else 1
    return len(TEXT[:start].encode(codec)) // size, len(TEXT[:end].encode(codec)) // size


def spans_written(path: Path, expected: list[tuple[str, str]]) -> Callable[[Result], str | None]:
    """A span JSONL output whose spans, read at their offsets, are ``expected`` (label, text) and say so."""
    def check(r: Result) -> str | None:
        if not path.is_file():
            return f"{path.name} not written"
        found = []
        for line in path.read_text(encoding="utf-8").splitlines():
            doc = json.loads(line)
            for s in doc["spans"]:
                if s.get("text") != doc["text"][s["start"]:s["end"]]:
                    return f"span {s} does not point at its text"
                found.append((s["label"], s["text"]))
        return None if found == expected else f"spans {found}, expected {expected}"
    return check


def _offset_probes(sw: Sweep, folder: Path) -> None:
    expected = [(label, word) for word, label in WORDS]
    for unit in ("chars", "utf8", "utf16"):
        spans = []
        for word, label in WORDS:
            a = TEXT.index(word)
            start, end = _units(a, a + len(word), unit)
            spans.append({"start": start, "end": end, "label": label, "text": word})
        src = folder / f"{unit}.jsonl"
        src.write_text(json.dumps({"id": "d", "text": TEXT, "spans": spans}, ensure_ascii=False) + "\n", "utf-8")
        out = folder / f"{unit}.out.jsonl"
        sw.probe(f"trust offsets: span jsonl in {unit}", ["convert", str(src), str(out), "--to", "jsonl"], "ok",
                 spans_written(out, expected))
        task = {"id": 1, "data": {"text": TEXT}, "annotations": [{"result": [
            {"type": "labels", "value": {"start": s["start"], "end": s["end"], "labels": [s["label"]],
                                         "text": s["text"]}} for s in spans]}]}
        src = folder / f"{unit}.ls.json"
        src.write_text(json.dumps([task], ensure_ascii=False), "utf-8")
        out = folder / f"{unit}.ls.out.jsonl"
        sw.probe(f"trust offsets: label studio in {unit}", ["convert", str(src), str(out), "--to", "jsonl"], "ok",
                 spans_written(out, expected))


def _brat_probes(sw: Sweep, folder: Path) -> None:
    brat = folder / "brat"
    brat.mkdir()
    (brat / "x.txt").write_text("ovarian and other tumours.\n", encoding="utf-8")
    (brat / "x.ann").write_text("T1\tDisease 18 25;0 7\tovarian tumours\n", encoding="utf-8")
    out = folder / "brat.jsonl"
    sw.probe("trust brat: discontinuous span read as its fragments", ["convert", str(brat), str(out), "--to", "jsonl"],
             "ok", spans_written(out, [("Disease", "ovarian"), ("Disease", "tumours")]))


def _label_file_probes(sw: Sweep, folder: Path) -> None:
    hf = folder / "hf"
    hf.mkdir()
    (hf / "labels.txt").write_bytes("\ufeffO\nB-PER\nI-PER\n".encode("utf-8"))
    (hf / "x.jsonl").write_text(json.dumps({"tokens": ["Ann", "Lee", "ran"], "ner_tags": [1, 2, 0]}) + "\n")
    out = folder / "hf.conll"

    def tags(r: Result) -> str | None:
        rows = [line.split() for line in out.read_text(encoding="utf-8").splitlines() if line.strip()]
        got = [row[-1] for row in rows if row[0] != "-DOCSTART-"]
        return None if got == ["B-PER", "I-PER", "O"] else f"tags {got}, expected B-PER I-PER O"
    sw.probe("trust hf: labels.txt with a byte-order mark", ["convert", str(hf / "x.jsonl"), str(out), "--to", "conll"],
             "ok", tags)


def _refusal_probes(sw: Sweep, relation: Path, folder: Path) -> None:
    row = lambda i, form: f"{i}\t{form}\t_\tX\t_\t_\t0\troot\t_\t_\n"  # noqa: E731
    files = {
        "conllu: range whose last word never comes": ("x.conllu", row(1, "a") + row("2-3", "bc") + row(2, "b")),
        "json: lone surrogate in span jsonl": ("s.jsonl", '{"text": "a \\ud800", "spans": []}\n'),
        "json: nested 100,000 deep in span jsonl": ("d.jsonl", '{"text": ' + "[" * 100_000 + "]" * 100_000 + "}\n"),
        "json: lone surrogate in label studio": ("s.json", '[{"data": {"text": "\\udc00"}, "annotations": []}]'),
        "json: nested 100,000 deep in label studio": ("d.json", "[" * 100_000 + "]" * 100_000),
        "json: lone surrogate in hf jsonl": ("h.jsonl", '{"tokens": ["\\ud800"], "ner_tags": ["O"]}\n'),
    }
    for name, (file, body) in files.items():
        (folder / file).write_text(body, encoding="utf-8")
        sw.probe(f"trust {name}", ["convert", str(folder / file), str(folder / "refused.out"), "--to", "jsonl"],
                 "clear-error", says=file)
    relations = folder / "r.jsonl"
    relations.write_text('{"id": 1, "text": "a \\ud800 b", "e1": [0, 1], "e2": [4, 5]}\n')
    sw.probe("trust json: lone surrogate in relation jsonl", ["classify", str(relation), str(relations)],
             "clear-error", says="r.jsonl")
    brat = folder / "brat"
    for name, value in {"tag": "B-Disease=X", "nothing maps": "Nope=X"}.items():
        sw.probe(f"trust label map: {name}", ["convert", str(brat), str(folder / "m.conll"), "--to", "conll",
                                        "--label-map", value], "clear-error", says="label map")
    empty = folder / "empty.yaml"
    empty.write_text("# no entries\n")
    sw.probe("trust label map: an empty file", ["convert", str(brat), str(folder / "m.conll"), "--to", "conll",
                                          "--label-map", str(empty)], "clear-error", says="empty.yaml")


def _alignment_probe(sw: Sweep, folder: Path) -> None:
    words = [str(i) for i in range(100_000)]  # lengths grow along the text: the quadratic overlap step's case
    text, spans, at = " ".join(words), [], 0
    for w in words:
        spans.append([at, at + len(w), "X"])
        at += len(w) + 1
    src, out = folder / "many.jsonl", folder / "many.out.jsonl"
    src.write_text(json.dumps({"id": "d", "text": text, "spans": spans}) + "\n")

    def count(r: Result) -> str | None:
        found = sum(len(json.loads(line)["spans"]) for line in out.read_text().splitlines())
        return None if found == len(words) else f"{found} spans written, expected {len(words)}"
    sw.probe("trust alignment: 10^5 spans of growing length", ["convert", str(src), str(out), "--to", "jsonl"], "ok",
             count, cpu=60, timeout=240)


def _calibrate_probes(sw: Sweep, tagger: Path, folder: Path) -> None:
    none = folder / "no_entities.txt"
    none.write_text("Nothing NN B-NP O\nhere RB B-ADVP O\n\nAgain RB B-ADVP O\n. . O O\n")
    one = folder / "one.txt"
    one.write_text("Paris NNP B-NP I-LOC\n. . O O\n")
    record = tagger / "calibration.json"
    stored = lambda: record.read_bytes() if record.is_file() else None  # noqa: E731
    cases = {"no entities": none, "one sentence": one, "types disjoint (a brat folder)": folder / "brat"}
    for name, path in cases.items():
        before = stored()
        sw.probe(f"trust calibrate: {name}", ["calibrate", str(tagger), str(path)], "clear-error",
                 says="cannot calibrate",
                 after=lambda b=before: None if stored() == b else "calibration.json was replaced")
    utf16 = folder / "utf16.jsonl"  # written by _offset_probes: one document, so read it is too little to fit
    for unit, says in (("chars", "look like UTF-16 code units"), ("utf16", "cannot calibrate: 1 sentence")):
        before = stored()
        sw.probe(f"trust calibrate: span jsonl in utf16, --offsets {unit}",
                 ["calibrate", str(tagger), str(utf16), "--offsets", unit], "clear-error", says=says,
                 after=lambda b=before: None if stored() == b else "calibration.json was replaced")


def _onnx_probes(sw: Sweep, packaged: Path, folder: Path) -> None:
    export = folder / "onnx"
    argv = ["export", str(packaged), "--format", "onnx", "--out", str(export)]
    if not sw.wants("trust onnx: ") or sw.probe("trust onnx: export", argv, "ok") is None or not export.is_dir():
        return
    for case in ("swapped", "random"):
        copy = folder / f"onnx_{case}"
        shutil.copytree(export, copy)
        tamper_export(copy, case)
        sw.probe(f"trust onnx: graphs {case}, checksums recomputed", ["tag", str(copy), "-", "--backend", "onnx"],
                 "clear-error", says="model.onnx")


def _fifo_probe(sw: Sweep, tagger: Path, folder: Path) -> None:
    if not hasattr(os, "mkfifo") or not sw.wants("trust fifo: "):
        return
    pipe = folder / "pipe"
    os.mkfifo(pipe)
    data = "Ann met Bob in Paris .\nZoë \U0001F600 left .\n".encode("utf-8")

    def feed() -> None:
        with open(pipe, "wb") as handle:
            handle.write(data)
    threading.Thread(target=feed, daemon=True).start()

    def tokens(r: Result) -> str | None:
        rows = [line for line in r.out.splitlines() if line.strip()]
        return None if len(rows) == 10 else f"{len(rows)} token lines, expected 10"
    sw.probe("trust fifo: tag a named pipe, as <(cmd) gives", ["tag", str(tagger), str(pipe), "--format", "conll"],
             "ok", tokens, timeout=120)


def trust_probes(sw: Sweep, tagger: Path, packaged: Path, relation: Path) -> None:
    """Every probe of this module, in a folder of their own."""
    folder = sw.scratch / "trust"
    folder.mkdir()
    _offset_probes(sw, folder)
    _brat_probes(sw, folder)
    _label_file_probes(sw, folder)
    _refusal_probes(sw, relation, folder)
    _alignment_probe(sw, folder)
    _calibrate_probes(sw, tagger, folder)
    _onnx_probes(sw, packaged, folder)
    _fifo_probe(sw, tagger, folder)
