"""Fuzzing every reader of user input: each generated input gives a result or a ``SeqlabError`` that names the
file (and, for a bad line, the line), never another exception.

The CoNLL reader (and the dataset reader over it, with ``seqlab eval``'s layout detection), the CoNLL-U reader, the
annotation-tool readers (brat standoff, span JSONL, Label Studio JSON, Hugging Face token JSONL), the relation JSONL
reader, the SemEval-2010 Task 8 reader, the YAML config loader, the raw-text tokenizer and both scorers (``seqlab score conll``'s prediction files, SemEval answer files) each get
FEW examples in the default suite and MANY under ``--runslow`` (``pytest -m slow --runslow tests/test_fuzz.py``).
Inputs are built from the pieces real files are made of (tags, separators, markers, keys), mixed with
arbitrary text and bytes, so that most examples get past the first line.
"""
from __future__ import annotations

import re
import tempfile
from pathlib import Path
from typing import Any, Callable

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from features.tokenize import SEPARATORS, split_sentences
from seqlab.core.errors import DataFormatError, SeqlabError
from seqlab.data.metrics import score_conll_file
from seqlab.data.conll import read_conll
from seqlab.data.conllu import read_conllu
from seqlab.data.formats.brat import read_brat
from seqlab.data.formats.hf import read_hf_jsonl
from seqlab.data.formats.jsonl import read_span_jsonl
from seqlab.data.formats.labelstudio import read_label_studio
from seqlab.data.relations import read_relations_jsonl
from seqlab.data.dataset import file_layout, read_split
from seqlab.data.semeval import read_semeval
from seqlab.relation.score import score_files
from seqlab.tagging.config import DataConfig
from seqlab.apps.tasks import read_config

FEW, MANY = 200, 10_000
_SCRATCH = tempfile.TemporaryDirectory(prefix="seqlab-fuzz-")
FILE = Path(_SCRATCH.name) / "input.txt"
KEY = Path(_SCRATCH.name) / "key.txt"


def _write(content: str | bytes, path: Path = FILE) -> Path:
    if isinstance(content, str):
        path.write_text(content, encoding="utf-8")
    else:
        path.write_bytes(content)
    return path


def _named(err: SeqlabError, path: Path) -> None:
    """The error names ``path``; a line error says which line, within the file."""
    assert str(path) in str(err) or path.name in str(err), str(err)
    if isinstance(err, DataFormatError):
        assert err.line >= 1 and re.match(rf"^{re.escape(str(path))}:\d+: ", str(err)), str(err)
    assert "\n" not in str(err).strip() or str(err).count("\n") < 3, str(err)


def _pieces(*words: str) -> st.SearchStrategy[str]:
    """Lines of the given pieces, with arbitrary text now and then."""
    piece = st.one_of(st.sampled_from(words), st.text(max_size=8))
    line = st.lists(piece, max_size=6).map(lambda ws: " ".join(ws))
    return st.lists(line, max_size=12).map("\n".join)


def _as_bytes(text: st.SearchStrategy[str]) -> st.SearchStrategy[str | bytes]:
    return st.one_of(text, st.binary(max_size=200), text.map(lambda t: t.encode("utf-8") + b"\xff\xfe"))


TAGS = ("O", "I-PER", "B-PER", "I-LOC", "B-MISC", "L-ORG", "U-ORG", "E-LOC", "S-PER", "X-PER", "I-", "B", "-")
CONLL = _as_bytes(_pieces("EU", "NNP", "I-NP", "-DOCSTART-", "-X-", "\t", "", " ", *TAGS))
SEMEVAL = _as_bytes(_pieces('1\t"The <e1>cup</e1> of <e2>tea</e2>."', "Component-Whole(e2,e1)", "Other",
                            "Comment:", "<e1>", "</e1>", "<e2>", "</e2>", '"', "\t", "8001", ""))
PREDICTIONS = _as_bytes(_pieces("EU", *TAGS, "\t", ""))
ANSWERS = _as_bytes(_pieces("1\tOther", "2\tCause-Effect(e1,e2)", "3\tCause-Effect(e2,e1)", "\t",
                            "Entity-Origin(e1,e2)", "x"))
YAML_PIECES = ("data:", "  train: train.txt", "  dev: dev.txt", "model:", "  hidden: 16", "  hidden: x", "train:",
               "  epochs: 3", "  epochs: 3", "task: relation", "task: [1]", "- a", "{", "}", ": ", "&a", "*a", "<<: *a",
               "!!python/object:os.system", "\t", "  ", "'", '"', "#", "---", "...", "? ", "%YAML 1.1")
YAML = _as_bytes(st.lists(st.sampled_from(YAML_PIECES) | st.text(max_size=6), max_size=14).map("\n".join))
TEXT = st.one_of(st.text(), st.text(alphabet=st.sampled_from(list(
    "Ab .!?\"'()\n\u0301\u0308\u200b\u200d\ufeff\u00ad\U0001F1EB\U0001F1F7\U0001F3FD\u0928\u094d\u3002\u2026-$%"
    "Mr.U.S.") + list(SEPARATORS)), max_size=80))


CONLLU = _as_bytes(_pieces("# text = a b", "1\ta\ta\tNOUN\t_\t_\t0\troot\t_\t_", "2-3\tdon't\t_\t_\t_\t_\t_\t_\t_\t_",
                            "2\tdo\t_\tAUX\t_\t_\t1\taux\t_\t_", "3.1\tx\t_\t_\t_\t_\t_\t_\t_\t_", "\t", "#", ""))
JSON_PIECES = ('{"text": "EU rejects German call", "spans": [{"start": 0, "end": 2, "label": "ORG"}]}',
               '{"text": "a b", "entities": [[0, 1, "X"], [0, 3, "Y"], [2, 9, "Z"]]}', '{"text": "", "label": []}',
               '{"tokens": ["EU", "rejects"], "ner_tags": ["B-ORG", "O"]}', '{"tokens": ["a"], "ner_tags": [7]}',
               '{"token": ["a", "b", "c"], "h": {"pos": [0, 1]}, "t": {"pos": [2, 3]}, "relation": "r"}',
               '{"text": "a b c", "h": {"pos": [0, 1]}, "t": {"pos": [4, 5]}, "relation": "r"}',
               '[{"data": {"text": "a b"}, "annotations": [{"result": [{"value": {"start": 0, "end": 1, '
               '"labels": ["X"]}}]}]}]', "{", "[", "}", "null", "1e999", '"\\ud800"', "")
JSONL = _as_bytes(st.lists(st.sampled_from(JSON_PIECES) | st.text(max_size=10), max_size=8).map("\n".join))
ANN = _as_bytes(_pieces("T1\tDisease 0 2\tEU", "T2\tDisease 3 1\tx", "T3\tX 0 2;4 9\tab", "N1\tReference T1 x",
                        "R1\tr Arg1:T1 Arg2:T2", "#1\tnote", "\t", ""))


def _readers(content: str | bytes, read: Callable[[Path], Any], name: str = "input.jsonl") -> None:
    path = _write(content, Path(_SCRATCH.name) / name)
    try:
        list(read(path))
    except SeqlabError as err:
        _named(err, path)


def _brat(content: str | bytes) -> None:
    folder = Path(_SCRATCH.name) / "brat"
    folder.mkdir(exist_ok=True)
    _write("EU rejects German call to boycott British lamb.\n", folder / "doc.txt")
    _write(content, folder / "doc.ann")
    try:
        list(read_brat(folder))
    except SeqlabError as err:  # names the .ann file (and its line), the .txt or the folder
        assert "doc.ann" in str(err) or "doc.txt" in str(err) or str(folder) in str(err), str(err)


def _conll(content: str | bytes) -> None:
    path = _write(content)
    try:
        list(read_conll(path, ("word", "pos", "chunk", "ner")))
        config = DataConfig(train=str(path), dev=str(path))
        read_split(config, "train")
        read_split(file_layout(config, path), "eval", path=path)  # what seqlab eval reads: any width
    except SeqlabError as err:
        _named(err, path)


def _semeval(content: str | bytes) -> None:
    path = _write(content)
    try:
        read_semeval(path)
    except SeqlabError as err:
        _named(err, path)


def _config(content: str | bytes) -> None:
    path = _write(content, Path(_SCRATCH.name) / "config.yaml")
    try:
        read_config(path)
    except SeqlabError as err:  # a key's error names the key: only a file-level one must name the file
        if "YAML" in str(err) or "UTF-8" in str(err) or "top level" in str(err):
            _named(err, path)


def _tokenize(text: str) -> None:
    for sentence in split_sentences(text):
        for token in sentence:
            assert 0 <= token.start < token.end <= len(text) and token.text


def _predictions(content: str | bytes) -> None:
    path = _write(content)
    try:
        score_conll_file(path)
    except SeqlabError as err:
        _named(err, path)


def _answers(content: str | bytes) -> None:
    path = _write(content)
    _write("1\tOther\n2\tCause-Effect(e1,e2)\n3\tCause-Effect(e2,e1)\n", KEY)
    try:
        score_files(path, KEY)
    except SeqlabError as err:
        _named(err, path)


CASES: dict[str, tuple[st.SearchStrategy[Any], Callable[[Any], None]]] = {
    "conll reader": (CONLL, _conll),
    "semeval reader": (SEMEVAL, _semeval),
    "config loader": (YAML, _config),
    "tokenizer": (TEXT, _tokenize),
    "conll scorer": (PREDICTIONS, _predictions),
    "semeval scorer": (ANSWERS, _answers),
    "conllu reader": (CONLLU, lambda c: _readers(c, read_conllu, "input.conllu")),
    "span jsonl reader": (JSONL, lambda c: _readers(c, read_span_jsonl)),
    "label studio reader": (JSONL, lambda c: _readers(c, read_label_studio, "input.json")),
    "hf jsonl reader": (JSONL, lambda c: _readers(c, lambda p: read_hf_jsonl(p, labels=["O", "B-X", "I-X"]))),
    "relation jsonl reader": (JSONL, lambda c: _readers(c, read_relations_jsonl)),
    "brat reader": (ANN, _brat),
}


def _fuzz(case: str, examples: int) -> None:
    strategy, check = CASES[case]
    run = settings(max_examples=examples, deadline=None, database=None,
                   suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much])(given(strategy)(check))
    run()


@pytest.mark.parametrize("case", sorted(CASES))
def test_fuzz(case):
    _fuzz(case, FEW)


@pytest.mark.slow
@pytest.mark.parametrize("case", sorted(CASES))
def test_fuzz_many(case):
    _fuzz(case, MANY)
