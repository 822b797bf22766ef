"""Every reader under random astral text, random offsets in every unit and deep JSON: it reads (and each span's
tokens spell the span's text) or refuses with a SeqlabError; never another exception."""
from __future__ import annotations

import json
from pathlib import Path

from hypothesis import HealthCheck, given, settings, strategies as st

from seqlab.core.errors import SeqlabError
from seqlab.data.conllu import read_conllu
from seqlab.data.formats.align import AlignmentReport
from seqlab.data.formats.brat import read_brat
from seqlab.data.formats.hf import read_hf_jsonl
from seqlab.data.formats.jsonl import read_span_jsonl
from seqlab.data.formats.labelstudio import read_label_studio
from seqlab.data.schemes import spans

SETTINGS = settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
ALPHABET = st.sampled_from(list("ab Zë.\n\t") + ["\U0001F600", "\U00010348", "\u00e9", "\u4e2d", "\u200b"])
TEXTS = st.text(ALPHABET, min_size=1, max_size=40)
OFFSET = st.integers(min_value=-2, max_value=60)


def _spans(draw: st.DrawFn, text: str) -> list[dict]:
    out = []
    for _ in range(draw(st.integers(0, 4))):
        start, end = draw(OFFSET), draw(OFFSET)
        own = draw(st.sampled_from([None, text[max(start, 0):max(end, 0)], "zz"]))
        out.append({"start": start, "end": end, "label": draw(st.sampled_from(["PER", "LOC"])),
                    **({"text": own} if own is not None else {})})
    return out


@st.composite
def documents(draw: st.DrawFn) -> tuple[str, list[dict]]:
    text = draw(TEXTS)
    return text, _spans(draw, text)


def _consistent(sentences: list) -> None:
    """Each span's tokens, read at their offsets, are the document's text there."""
    for s in sentences:
        offsets, text = s.extra["offsets"], s.extra["text"]
        for _, a, b in spans(s["ner"]):
            assert text[offsets[a][0]:offsets[b - 1][1]].strip()
        for word, (a, b) in zip(s["word"], offsets):
            assert word.strip() and (text[a:b] == word or len(text[a:b]) > 0)


def _read(reader, path: Path, **options) -> None:
    try:
        _consistent(list(reader(path, report=AlignmentReport(), **options)))
    except SeqlabError:
        pass


@SETTINGS
@given(doc=documents(), offsets=st.sampled_from(["auto", "chars", "utf8", "utf16"]))
def test_span_jsonl_and_label_studio_read_or_refuse(tmp_path: Path, doc: tuple[str, list[dict]], offsets: str) -> None:
    text, items = doc
    path = tmp_path / "x.jsonl"
    path.write_text(json.dumps({"text": text, "spans": items}, ensure_ascii=False) + "\n", encoding="utf-8")
    _read(read_span_jsonl, path, offsets=offsets)
    regions = [{"type": "labels", "value": {"start": s["start"], "end": s["end"], "labels": [s["label"]],
                                            **({"text": s["text"]} if "text" in s else {})}} for s in items]
    path = tmp_path / "x.json"
    path.write_text(json.dumps([{"data": {"text": text}, "annotations": [{"result": regions}]}]), encoding="utf-8")
    _read(read_label_studio, path, offsets=offsets)


@SETTINGS
@given(doc=documents(), fragments=st.lists(st.tuples(OFFSET, OFFSET), min_size=1, max_size=3),
       policy=st.sampled_from(["fragments", "first", "refuse"]))
def test_brat_reads_or_refuses(tmp_path: Path, doc: tuple[str, list[dict]], fragments: list, policy: str) -> None:
    text, items = doc
    (tmp_path / "x.txt").write_text(text, encoding="utf-8", newline="")
    lines = [f"T{k}\t{s['label']} {abs(s['start'])} {abs(s['end'])}\t{s.get('text', '')}" for k, s in enumerate(items)]
    lines.append("T9\tPER " + ";".join(f"{abs(a)} {abs(b)}" for a, b in fragments) + "\tx")
    (tmp_path / "x.ann").write_text("\n".join(lines) + "\n", encoding="utf-8")
    try:
        report = AlignmentReport()
        _consistent(list(read_brat(tmp_path, discontinuous=policy, report=report)))
        assert report.spans_read == report.aligned + report.lost
    except SeqlabError:
        pass


@SETTINGS
@given(tokens=st.lists(TEXTS, min_size=0, max_size=5), depth=st.integers(0, 120),
       surrogate=st.booleans())
def test_hf_jsonl_and_deep_json_read_or_refuse(tmp_path: Path, tokens: list[str], depth: int, surrogate: bool) -> None:
    body = json.dumps({"tokens": tokens, "ner_tags": ["O"] * len(tokens), "x": 0}, ensure_ascii=False)
    body = body.replace('"x": 0', '"x": ' + "[" * depth + "]" * depth)
    if surrogate:
        body = body.replace('"x"', '"\\ud800"')
    path = tmp_path / "x.jsonl"
    path.write_text(body + "\n", encoding="utf-8")
    try:
        sentences = list(read_hf_jsonl(path))
        assert depth <= 64 and not surrogate
        assert [list(s["word"]) for s in sentences] == [t for t in [tokens] if t]
    except SeqlabError as err:
        assert "\n" not in str(err) and "x.jsonl:1:" in str(err)


@SETTINGS
@given(forms=st.lists(TEXTS.map(lambda t: t.replace("\t", "").replace("\n", "") or "a"), min_size=1, max_size=4),
       last=st.integers(1, 7))
def test_conllu_multiword_ranges_read_or_refuse(tmp_path: Path, forms: list[str], last: int) -> None:
    lines = ["1-%d\t%s\t_\t_\t_\t_\t_\t_\t_\t_" % (last, "".join(forms))] if last > 1 else []
    lines += [f"{k}\t{form}\t_\tX\t_\t_\t0\troot\t_\t_" for k, form in enumerate(forms, start=1)]
    path = tmp_path / "x.conllu"
    path.write_text("\n".join(lines) + "\n\n", encoding="utf-8")
    try:
        [sentence] = read_conllu(path)
        assert last <= len(forms) and sentence["form"] == tuple(forms)
    except SeqlabError as err:
        assert last > len(forms) and "x.conllu:1: multiword token ends at word" in str(err)
