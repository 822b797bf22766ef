"""Tests for ``seqlab tag``: SequenceTagger.tag_many through the conll, jsonl and inline writers, streaming in batches."""
from __future__ import annotations

import io
import json
import logging
import os
import re
import unicodedata
from pathlib import Path

import pytest

from seqlab.cli import main
from seqlab.cli._util import utf8_lines
from seqlab.tagging.config import POOL_BATCHES, load_config
from seqlab.data.schemes import spans
from features.tokenize import split_sentences
from seqlab.cli.tag import write_documents
from seqlab.tagging.api import SequenceTagger
from seqlab.apps.tasks import train

NER = Path(__file__).parents[1] / "fixtures" / "ner"
TYPES = ("PER", "LOC", "ORG", "MISC")
FILE_LABEL = re.compile(r"^(O|[IB]-(PER|LOC|ORG|MISC))$")  # the fixture's file scheme is IOB1
MARK = re.compile(r"\[(?:PER|LOC|ORG|MISC) (.*?)\]")

# Text close to the training fixture, so that the model finds some entities; a blank line,
# a line of spaces, two sentences on one line, and surrounding spaces.
LINES = [
    "EU rejects German call to boycott British lamb. Peter Blackburn said so.",
    "",
    "   ",
    "  The European Commission said on Thursday it disagreed with German advice.  ",
    "BRUSSELS 1996-08-22",
    "Zorglub met Mr. Smith in Brussels (Belgium).",
]


@pytest.fixture(scope="module")
def run_dir(tmp_path_factory) -> Path:
    """A tiny tagger trained long enough on the fixture to predict entities."""
    out = tmp_path_factory.mktemp("tag") / "run"
    seqlab_log = logging.getLogger("seqlab")
    handlers = list(seqlab_log.handlers)
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("SEQLAB_DATA", str(NER))
        train(load_config(NER / "tiny.yaml", ["train.epochs=30", "train.threads=1"]), out, progress=False)
    for handler in set(seqlab_log.handlers) - set(handlers):  # the run's train.log
        seqlab_log.removeHandler(handler)
        handler.close()
    return out


def tag_stream(run_dir, lines, out, *, fmt: str = "conll", batch_size: int = 64, **options) -> None:
    write_documents(SequenceTagger.load(run_dir).tag_many(lines, batch_size=batch_size, **options), out, fmt)


def tagged(run_dir, lines, fmt, **kwargs) -> str:
    out = io.StringIO()
    tag_stream(run_dir, lines, out, fmt=fmt, **kwargs)
    return out.getvalue()


def expected_sentences(lines):
    return [[t.text for t in s] for line in lines for s in split_sentences(line)]


def test_conll_one_token_per_line_and_blank_lines_between_sentences(run_dir):
    text = tagged(run_dir, LINES, "conll")
    assert text.endswith("\n\n")
    blocks = text[:-2].split("\n\n")
    expected = expected_sentences(LINES)
    assert len(blocks) == len(expected) == 5
    for block, tokens in zip(blocks, expected):
        rows = [line.split(" ") for line in block.split("\n")]
        assert all(len(row) == 2 for row in rows), block
        assert [row[0] for row in rows] == tokens
        assert all(FILE_LABEL.match(row[1]) for row in rows), block


def test_jsonl_spans_are_slices_of_their_input_line(run_dir):
    text = tagged(run_dir, LINES, "jsonl")
    objects = [json.loads(line) for line in text.splitlines()]
    assert [o["tokens"] for o in objects] == expected_sentences(LINES)
    assert [o["line"] for o in objects] == [1, 1, 4, 5, 6]  # 1-based; blank lines yield no sentence
    spans = [(o["line"], span) for o in objects for span in o["spans"]]
    assert spans, "the model found no entity at all, so the span checks would be vacuous"
    for number, span in spans:
        assert set(span) == {"start", "end", "label", "text", "confidence", "token_start", "token_end"}
        assert span["text"] == LINES[number - 1][span["start"]:span["end"]]
        assert span["text"] == span["text"].strip() and span["text"]
        assert span["label"] in TYPES
        assert 0.0 < span["confidence"] <= 1.0
    for obj in objects:  # spans within a sentence are in order and do not overlap
        ends = [(s["start"], s["end"]) for s in obj["spans"]]
        assert all(a[1] <= b[0] for a, b in zip(ends, ends[1:]))


def test_jsonl_spans_match_the_conll_labels(run_dir):
    conll = tagged(run_dir, LINES, "conll")[:-2].split("\n\n")
    objects = [json.loads(line) for line in tagged(run_dir, LINES, "jsonl").splitlines()]
    sentences = [s for line in LINES for s in split_sentences(line)]
    for block, obj, sentence in zip(conll, objects, sentences):
        labels = [line.split(" ")[1] for line in block.split("\n")]
        from_labels = [(kind, sentence[s].start, sentence[e - 1].end) for kind, s, e in spans(labels)]
        assert from_labels == [(o["label"], o["start"], o["end"]) for o in obj["spans"]], labels
        assert obj["labels"] == labels  # the same labels in both formats


def test_inline_with_marks_removed_is_the_input(run_dir):
    text = tagged(run_dir, LINES, "inline")
    out_lines = text.split("\n")
    assert out_lines[-1] == ""
    out_lines = out_lines[:-1]
    assert len(out_lines) == len(LINES)  # blank lines are kept, so output lines match input lines
    assert any(MARK.search(line) for line in out_lines)
    for got, line in zip(out_lines, LINES):
        assert MARK.sub(r"\1", got) == line


def test_windows_line_endings_are_not_part_of_the_text(run_dir):
    lines = [line + "\r\n" for line in LINES]
    assert tagged(run_dir, lines, "inline") == tagged(run_dir, LINES, "inline")
    assert tagged(run_dir, lines, "jsonl") == tagged(run_dir, LINES, "jsonl")


def test_batch_size_does_not_change_the_output(run_dir):
    for fmt in ("conll", "inline"):
        assert tagged(run_dir, LINES, fmt, batch_size=1) == tagged(run_dir, LINES, fmt, batch_size=1000), fmt
    one, many = ([json.loads(line) for line in tagged(run_dir, LINES, "jsonl", batch_size=size).splitlines()]
                 for size in (1, 1000))
    conf_one, conf_many = ([[span.pop("confidence") for span in o["spans"]] for o in objs] for objs in (one, many))
    assert one == many  # everything but the confidences, which padding may move in the last digit
    assert conf_one == [pytest.approx(c, abs=2e-4) for c in conf_many]


def test_pooling_sentences_across_lines_does_not_change_the_output(run_dir):
    """seqlab tag decodes a file's sentences POOL_BATCHES batches at a time across lines (sorted by length:
    less padding); the documents are those of decoding batch by batch, in input order."""
    tagger = SequenceTagger.load(run_dir)
    lines = LINES * 5
    plain = [[(s.tokens, s.labels) for s in d.sentences] for d in tagger.tag_many(lines, batch_size=2, pool=1)]
    pooled = [[(s.tokens, s.labels) for s in d.sentences] for d in tagger.tag_many(lines, batch_size=2, pool=4)]
    assert pooled == plain and len(pooled) == len(lines)


class Recorder(io.StringIO):
    """An output that notes how many input lines had been read when it was first written to."""

    def __init__(self, counter: list[int]) -> None:
        super().__init__()
        self.counter = counter
        self.first_write_after: int | None = None

    def write(self, s: str) -> int:
        if self.first_write_after is None:
            self.first_write_after = self.counter[0]
        return super().write(s)


@pytest.mark.parametrize("pool, lag", [({"pool": 1}, 40), ({}, 16 * POOL_BATCHES + 8)])
def test_streams_a_long_input_in_batches(run_dir, pool, lag):
    """Output starts once a batch (pool=1) or the default pool of POOL_BATCHES batches is tagged, not at the end."""
    templates = LINES + ["Peter Blackburn said. German advice. British lamb?", "EU"]
    n = 2000
    counter = [0]

    def lines():
        for i in range(n):
            counter[0] += 1
            yield templates[i % len(templates)]

    out = Recorder(counter)
    tag_stream(run_dir, lines(), out, fmt="jsonl", batch_size=16, **pool)
    assert counter[0] == n
    assert out.first_write_after is not None and out.first_write_after <= lag  # written batch (pool) by batch
    objects = [json.loads(line) for line in out.getvalue().splitlines()]
    per_template = [len(split_sentences(t)) for t in templates]
    assert len(objects) == sum(per_template[i % len(templates)] for i in range(n))
    counts: dict[int, int] = {}
    for obj in objects:
        counts[obj["line"]] = counts.get(obj["line"], 0) + 1
    assert counts == {i + 1: per_template[i % len(templates)] for i in range(n) if per_template[i % len(templates)]}


def test_tag_reads_standard_input(run_dir, monkeypatch, capsys):
    monkeypatch.setattr("sys.stdin", io.StringIO("\n".join(LINES) + "\n"))
    assert main(["tag", str(run_dir), "-", "--format", "inline"]) == 0
    captured = capsys.readouterr()
    assert [MARK.sub(r"\1", line) for line in captured.out.split("\n")[:-1]] == LINES
    assert "error" not in captured.err


def test_tag_reads_standard_input_bytes_as_utf8(run_dir, monkeypatch, capsys):
    raw = "Peter Blackburn said « no » to Zürich.\n".encode("utf-8")
    monkeypatch.setattr("sys.stdin", io.TextIOWrapper(io.BytesIO(raw), encoding="latin-1"))
    assert main(["tag", str(run_dir)]) == 0
    tokens = [line.split(" ")[0] for line in capsys.readouterr().out.splitlines() if line]
    assert tokens == [t.text for t in split_sentences(raw.decode("utf-8"))[0]]


@pytest.mark.parametrize("source", ["file", "stdin"])
def test_bytes_that_are_not_utf8_name_the_line(run_dir, tmp_path, monkeypatch, capsys, source):
    raw = b"Peter Blackburn said so.\n\nEU rejects \xff lamb.\n"
    if source == "file":
        path = tmp_path / "latin.txt"
        path.write_bytes(raw)
        argv, name = ["tag", str(run_dir), str(path)], str(path)
    else:
        monkeypatch.setattr("sys.stdin", io.TextIOWrapper(io.BytesIO(raw), encoding="utf-8"))
        argv, name = ["tag", str(run_dir), "-"], "<stdin>"
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert err == (f"seqlab: error: {name}:3: not valid UTF-8 (byte 0xff at column 12); the file looks like latin-1 "
                   "text: read it with --encoding latin-1 (data.encoding: latin-1 in a config)\n")


def test_decomposed_text_is_tagged_like_composed_text_with_offsets_into_it(run_dir):
    nfc = "EU rejects German call to boycott British lamb. Péter Blackburn saw the Montréal Commission."
    nfd = unicodedata.normalize("NFD", nfc)
    tagger = SequenceTagger.load(run_dir)
    composed, decomposed = tagger.tag(nfc), tagger.tag(nfd)
    assert [s.tokens for s in decomposed.sentences] == [s.tokens for s in composed.sentences]
    assert "Montréal" in decomposed.sentences[-1].tokens
    assert [s.labels for s in decomposed.sentences] == [s.labels for s in composed.sentences]
    a = [span for s in composed.sentences for span in s.spans]
    b = [span for s in decomposed.sentences for span in s.spans]
    assert a and [(x.label, unicodedata.normalize("NFC", x.text)) for x in b] == [(x.label, x.text) for x in a]
    assert all(nfd[x.start:x.end] == x.text for x in b)


def test_a_long_line_is_tagged_in_batches_of_sentences(run_dir, monkeypatch):
    from seqlab.tagging.config import POOL_BATCHES

    tagger = SequenceTagger.load(run_dir)
    line = " ".join([LINES[0], LINES[3].strip(), LINES[5]] * 30)  # 120 sentences on one line
    one_by_one = [s for sentence in split_sentences(line)
                  for s in tagger.tag(line[sentence[0].start:sentence[-1].end]).sentences]
    sizes = []
    predict = SequenceTagger._predict

    def spy(self, sentences, batch_size, confidences=True, **options):
        sizes.append(len(sentences))
        return predict(self, sentences, batch_size, confidences, **options)

    monkeypatch.setattr(SequenceTagger, "_predict", spy)
    texts = ["short line.", line, "Peter Blackburn said so."]
    pool = 2 * POOL_BATCHES  # batches of 2 sentences, decoded POOL_BATCHES batches at a time
    first = next(tagger.tag_many(texts, batch_size=2))
    assert first.text == "short line." and sizes == [pool]  # yielded before the long line is done
    sizes.clear()
    docs = list(tagger.tag_many(texts, batch_size=2))
    assert max(sizes) <= pool and sum(sizes) == 1 + 120 + 1
    assert [s.labels for s in docs[1].sentences] == [s.labels for s in one_by_one]
    assert [s.tokens for s in docs[1].sentences] == [s.tokens for s in one_by_one]
    assert [d.text for d in docs] == ["short line.", line, "Peter Blackburn said so."]


def test_an_over_long_sentence_is_tagged_in_pieces_with_a_warning(run_dir, caplog):
    from seqlab.tagging.stream import MAX_SENTENCE_TOKENS

    words = ("EU rejects German call to boycott British lamb " * 80).split()  # 640 tokens, no sentence end
    line = " ".join(words)
    with caplog.at_level(logging.WARNING, logger="seqlab"):
        doc = SequenceTagger.load(run_dir).tag(line)
    assert [len(s.tokens) for s in doc.sentences] == [MAX_SENTENCE_TOKENS, MAX_SENTENCE_TOKENS,
                                                     len(words) - 2 * MAX_SENTENCE_TOKENS]
    assert [t for s in doc.sentences for t in s.tokens] == words
    assert all(line[a:b] == t for s in doc.sentences for t, (a, b) in zip(s.tokens, s.offsets))
    assert f"text 1: a sentence of {len(words)} tokens is tagged in pieces of at most {MAX_SENTENCE_TOKENS}" \
        in caplog.text


def test_tag_conll_writes_iob2_unless_another_scheme_is_asked_for(run_dir, tmp_path, capsys):
    path = tmp_path / "in.txt"
    path.write_text("\n".join(LINES) + "\n", encoding="utf-8")
    labels = {}
    for scheme in ("default", "iob1", "bilou"):
        extra = [] if scheme == "default" else ["--scheme", scheme]
        assert main(["tag", str(run_dir), str(path), *extra]) == 0
        labels[scheme] = [line.split()[-1] for line in capsys.readouterr().out.splitlines() if line]
    iob2 = labels["default"]
    assert any(label.startswith("B-") for label in iob2)
    assert all(not label.startswith("I-") or (i > 0 and iob2[i - 1][2:] == label[2:] and iob2[i - 1] != "O")
               for i, label in enumerate(iob2))  # every entity opens with B-
    assert spans(iob2) == spans(labels["iob1"]) == spans(labels["bilou"])
    assert any(label.startswith("U-") or label.startswith("L-") for label in labels["bilou"])
    from seqlab.cli import parser

    assert "default iob2" in parser()._subparsers._group_actions[0].choices["tag"].format_help()


@pytest.mark.parametrize("argv, threads", [([], 1), (["--threads", "3"], 3)])
@pytest.mark.parametrize("verb", ["tag", "eval"])
def test_tag_and_eval_use_one_thread_unless_told(run_dir, monkeypatch, capsys, verb, argv, threads):
    import torch

    calls = []
    monkeypatch.setattr(torch, "set_num_threads", calls.append)
    assert main([verb, str(run_dir), str(NER / "dev.txt"), *argv, "--output" if verb == "eval" else "--format",
                 str(run_dir.parent / "pred.txt") if verb == "eval" else "conll"]) == 0
    assert calls == [threads]


def test_ctrl_c_while_tagging_does_not_talk_of_resuming(run_dir, monkeypatch, capsys):
    def interrupted(self, texts, **kwargs):
        raise KeyboardInterrupt
        yield

    monkeypatch.setattr(SequenceTagger, "tag_many", interrupted)
    assert main(["tag", str(run_dir), str(NER / "dev.txt")]) == 130
    assert capsys.readouterr().err == "\nseqlab: interrupted\n"


def test_eval_on_an_iob2_gold_file_writes_and_scores_iob2(run_dir, tmp_path, capsys):
    from seqlab.data.schemes import convert

    rows = [line.split() for line in (NER / "dev.txt").read_text(encoding="utf-8").splitlines()]
    sentences, current = [], []
    for row in rows + [[]]:
        if row and row[0] != "-DOCSTART-":
            current.append(row)
        elif current:
            sentences.append(current)
            current = []
    iob2 = tmp_path / "dev_iob2.txt"
    iob2.write_text("".join("".join(f"{' '.join(r[:-1])} {t}\n" for r, t in zip(s, convert([r[-1] for r in s], "iob2")))
                            + "\n" for s in sentences), encoding="utf-8")
    reports = {}
    for name, path in (("iob1", NER / "dev.txt"), ("iob2", iob2)):
        assert main(["eval", str(run_dir), str(path), "--output", str(tmp_path / f"{name}.pred")]) == 0
        reports[name] = capsys.readouterr().out.splitlines()[1]  # the accuracy line
    assert reports["iob1"] == reports["iob2"]
    gold_pred = [line.split()[1:] for line in (tmp_path / "iob2.pred").read_text().splitlines() if line]
    assert any(p.startswith("B-") for _, p in gold_pred) or all(p == "O" for _, p in gold_pred)
    assert not any(p.startswith("I-") and (i == 0 or gold_pred[i - 1][1][2:] != p[2:]) for i, (_, p) in
                   enumerate(gold_pred))
    assert main(["eval", str(run_dir), str(iob2), "--scheme", "iob1", "--output", str(tmp_path / "x.pred")]) == 0


def test_eval_reads_a_two_column_token_tag_file(run_dir, tmp_path, capsys):
    from seqlab.data.schemes import convert

    sentences, current = [], []
    for line in (NER / "dev.txt").read_text(encoding="utf-8").splitlines() + [""]:
        fields = line.split()
        if fields and fields[0] != "-DOCSTART-":
            current.append(fields)
        elif current:
            sentences.append(current)
            current = []
    two = tmp_path / "two_columns.tsv"
    two.write_text("-DOCSTART-\tO\n\n" + "".join(
        "".join(f"{r[0]}\t{t}\n" for r, t in zip(s, convert([r[-1] for r in s], "iob2"))) + "\n" for s in sentences),
        encoding="utf-8")
    reports = []
    for path in (NER / "dev.txt", two):
        assert main(["eval", str(run_dir), str(path), "--output", str(tmp_path / "pred.txt")]) == 0
        reports.append(capsys.readouterr().out.splitlines()[:2])
    assert reports[0] == reports[1]
    one = tmp_path / "one_column.txt"
    one.write_text("EU\nrejects\n", encoding="utf-8")
    assert main(["eval", str(run_dir), str(one)]) == 2
    assert "one_column.txt:1: expected a token and its tag (at least 2 columns), found 1" in capsys.readouterr().err


def test_confidences_are_computed_only_for_jsonl(run_dir, monkeypatch, tmp_path, capsys):
    from seqlab.tagging.predict import Predictor

    asked = []
    call = Predictor.__call__

    def spy(self, data, *, batch_size=100, confidences=False, **options):
        asked.append(confidences)
        return call(self, data, batch_size=batch_size, confidences=confidences, **options)

    monkeypatch.setattr(Predictor, "__call__", spy)
    path = tmp_path / "in.txt"
    path.write_text("\n".join(LINES) + "\n", encoding="utf-8")
    for fmt in ("conll", "inline", "jsonl"):
        asked.clear()
        assert main(["tag", str(run_dir), str(path), "--format", fmt]) == 0
        assert set(asked) == {fmt == "jsonl"}, fmt
    capsys.readouterr()


def test_a_byte_order_mark_is_not_text_and_offsets_count_from_after_it(run_dir, tmp_path, capsys):
    plain, marked = tmp_path / "plain.txt", tmp_path / "bom.txt"
    plain.write_text(LINES[0] + "\n", encoding="utf-8")
    marked.write_bytes(b"\xef\xbb\xbf" + plain.read_bytes())
    outputs = []
    for path in (plain, marked):
        assert main(["tag", str(run_dir), str(path), "--format", "jsonl"]) == 0
        outputs.append(capsys.readouterr().out)
    assert outputs[0] == outputs[1]
    raw = io.BytesIO(b"\xef\xbb\xbfParis met.\n\xef\xbb\xbfa mark inside a text is kept\n")
    assert list(utf8_lines(raw, "x")) == ["Paris met.\n", "\ufeffa mark inside a text is kept\n"]


def test_device_cpu_tags_as_auto_does_without_a_gpu_and_a_bad_device_is_one_line(run_dir, tmp_path, capsys):
    import torch

    path = tmp_path / "in.txt"
    path.write_text("\n".join(LINES) + "\n", encoding="utf-8")
    outputs = []
    for extra in ([], ["--device", "cpu"]):
        assert main(["tag", str(run_dir), str(path), *extra]) == 0
        outputs.append(capsys.readouterr().out)
    if not torch.cuda.is_available():  # auto is the CPU here
        assert outputs[0] == outputs[1]
    assert main(["eval", str(run_dir), str(NER / "dev.txt"), "--device", "cpu", "--output", str(tmp_path / "p")]) == 0
    capsys.readouterr()
    assert main(["tag", str(run_dir), str(path), "--device", "tpu"]) == 2
    assert capsys.readouterr().err == "seqlab: error: --device: expected auto, cpu, cuda or cuda:N, but got 'tpu'\n"


def test_worker_processes_run_on_the_cpu_and_a_gpu_for_them_is_a_clear_error(run_dir, tmp_path, capsys):
    """tag and serve workers run the model on the CPU: auto means the CPU there, and --device cuda is refused with
    what to do instead (on a machine without a GPU, the refusal says there is none)."""
    from seqlab.cli._util import model_device

    assert model_device("auto") == "auto" and model_device("cpu", 4) == "cpu" and model_device("auto", 2) == "cpu"
    path = tmp_path / "in.txt"
    path.write_text("\n".join(LINES) + "\n", encoding="utf-8")
    assert main(["tag", str(run_dir), str(path), "--workers", "2", "--device", "cuda"]) == 2
    assert re.fullmatch(r"seqlab: error: --device(?: cuda with --workers 2: worker processes run the model on the CPU; "
                        r".*--device cpu|: 'cuda' was asked for, but no CUDA GPU is available; use auto or cpu)\n",
                        capsys.readouterr().err)


#: What `seqlab tag` never needs: other verbs' code, the service, Ray, ONNX, training and metrics libraries, and the
#: compilers torch imports only on demand. Each costs start-up time and memory in every tagging process.
NOT_FOR_TAGGING = ("sklearn", "scipy", "seqeval", "gensim", "fasttext", "numba", "sympy", "onnx", "onnxruntime", "ray",
                   "pyarrow", "pandas", "matplotlib", "transformers", "spacy", "torch._dynamo", "torch._inductor",
                   "torch.onnx", "seqlab.serve", "seqlab.relation", "seqlab.apps.ray", "seqlab.apps.onnx_export",
                   "seqlab.apps.sweep", "seqlab.apps.summarize", "seqlab.cli.train", "seqlab.cli.serve",
                   "seqlab.cli.convert", "seqlab.cli.features", "seqlab.cli.package", "seqlab.cli.score")


def test_tag_imports_nothing_it_does_not_need(tmp_path):
    """A whole `seqlab tag` process with the installed model (a fresh interpreter: what it imported is what a user's
    process would) leaves none of NOT_FOR_TAGGING in sys.modules, and tags."""
    import subprocess
    import sys

    text = tmp_path / "one.txt"
    text.write_text("Angela Merkel visited Paris.\n", encoding="utf-8")
    probe = ("import json, sys, contextlib, io\nfrom seqlab.cli import main\nout = io.StringIO()\n"
             f"with contextlib.redirect_stdout(out):\n    code = main(['tag', 'en-ner-conll03', {str(text)!r}, "
             "'--format', 'jsonl'])\n"
             "print(json.dumps({'code': code, 'out': out.getvalue(), 'modules': sorted(sys.modules)}))")
    done = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, cwd=Path(__file__).parents[2],
                          env={**os.environ, "OMP_NUM_THREADS": "1"}, timeout=120)
    assert done.returncode == 0, done.stderr[-2000:]
    result = json.loads(done.stdout.splitlines()[-1])
    assert result["code"] == 0 and json.loads(result["out"])["spans"], result["out"]
    loaded = set(result["modules"])
    assert "torch" in loaded  # the probe ran the tagger, not an early exit
    assert sorted(loaded & set(NOT_FOR_TAGGING)) == []


def test_tag_many_pools_sentences_by_default_as_seqlab_tag_does(run_dir, monkeypatch):
    """tag_many's default is seqlab tag's fast path: sentences of many texts decoded POOL_BATCHES batches at a time
    (pool=1: each batch as it fills), with the same documents."""
    tagger = SequenceTagger.load(run_dir)
    lines = LINES * 20
    calls = []
    from seqlab.tagging import stream

    flush = stream._flush
    monkeypatch.setattr(stream, "_flush", lambda queue, *a: (calls.append(len(queue)), flush(queue, *a)))
    pooled = [d.to_dict() for d in tagger.tag_many(lines, batch_size=2)]
    pooled_calls, calls[:] = list(calls), []
    plain = [d.to_dict() for d in tagger.tag_many(lines, batch_size=2, pool=1)]
    assert pooled == plain
    assert max(pooled_calls) > 2 * 2 and len(pooled_calls) < len([c for c in calls if c])


@pytest.mark.parametrize("given, expected", [(None, "0"), ("64", "64")])
def test_tag_turns_off_onednn_primitive_cache_unless_told(run_dir, monkeypatch, capsys, given, expected):
    """oneDNN's primitive cache holds memory for every batch shape of a stream: seqlab tag turns it off (its workers
    inherit the setting); a value the user set stays."""
    from seqlab.cli.tag import ONEDNN_CACHE

    name = ONEDNN_CACHE[0]
    monkeypatch.setenv(name, "undone after the test")  # so that monkeypatch restores the variable as it was
    monkeypatch.delenv(name)
    if given is not None:
        monkeypatch.setenv(name, given)
    assert main(["tag", str(run_dir), str(NER / "dev.txt"), "--format", "conll"]) == 0
    assert os.environ[name] == expected


def test_seqlab_tag_as_a_program_ends_without_teardown_and_loses_no_output(run_dir, tmp_path):
    """Run as a program, `seqlab tag` ends with os._exit once its output is flushed: every document reaches a file
    and a pipe, an error still says its one line with status 2, and main() called in a process returns instead."""
    import subprocess
    import sys

    text = tmp_path / "in.txt"
    text.write_text("\n".join(LINES * 30) + "\n", encoding="utf-8")
    expected = tagged(run_dir, LINES * 30, "jsonl", batch_size=100)
    command = [sys.executable, "-m", "seqlab", "tag", str(run_dir), str(text), "--format", "jsonl", "--threads", "1"]
    env = {**os.environ, "OMP_NUM_THREADS": "1"}
    with open(tmp_path / "out.jsonl", "w", encoding="utf-8") as out:  # a file: block-buffered standard output
        done = subprocess.run(command, stdout=out, stderr=subprocess.PIPE, text=True, env=env, timeout=120)
    assert done.returncode == 0, done.stderr[-2000:]
    assert (tmp_path / "out.jsonl").read_text(encoding="utf-8") == expected
    piped = subprocess.run(command, capture_output=True, text=True, env=env, timeout=120)
    assert piped.returncode == 0 and piped.stdout == expected
    missing = subprocess.run(command[:5] + [str(tmp_path / "nowhere.txt")], capture_output=True, text=True, env=env,
                             timeout=120)
    assert missing.returncode == 2 and missing.stdout == ""
    assert missing.stderr.startswith("seqlab: error: ") and missing.stderr.count("\n") == 1, missing.stderr
    probe = (f"from seqlab.cli import main\n"
             f"code = main(['tag', {str(run_dir)!r}, {str(text)!r}, '--format', 'conll'])\n"
             "print('returned', code)")
    inside = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, env=env, timeout=120)
    assert inside.returncode == 0 and inside.stdout.endswith("returned 0\n"), inside.stderr[-2000:]


def test_tokenized_input_is_written_back_exactly(run_dir, tmp_path, capsys):
    lines = ["EU rejects German call to boycott British lamb .", "", "Mr. Smith's U.S.-based (firm)", "a"]
    path = tmp_path / "in.txt"
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    assert main(["tag", str(run_dir), str(path), "--tokenized"]) == 0
    sentences = capsys.readouterr().out.split("\n\n")[:-1]
    assert [[row.split(" ")[0] for row in s.splitlines()] for s in sentences] == [line.split() for line in lines
                                                                                   if line]


def test_tag_many_takes_token_lists_beside_texts(run_dir):
    tagger = SequenceTagger.load(run_dir)
    tokens = [["EU", "rejects", "German", "call", "."], ["Peter", "Blackburn"]]
    docs = list(tagger.tag_many([*tokens, "EU rejects German call."]))
    assert [d.sentences[0].tokens for d in docs[:2]] == tokens
    assert [d.sentences[0].labels for d in docs[:2]] == [s.labels for s in tagger.tag_tokens(tokens)]
    assert docs[0].sentences[0].labels == docs[2].sentences[0].labels


@pytest.mark.parametrize("name, text", [
    ("in.conll", "EU NNP B-ORG\nrejects VBZ O\n\nPeter NNP B-PER\nBlackburn NNP I-PER\n"),
    ("in.conllu", "# text = EU rejects\n1\tEU\t_\tPROPN\t_\t_\t_\t_\t_\t_\n2\trejects\t_\tVERB\t_\t_\t_\t_\t_\t_\n\n"
                  "1\tPeter\t_\tX\t_\t_\t_\t_\t_\t_\n2\tBlackburn\t_\tX\t_\t_\t_\t_\t_\t_\n\n"),
])
def test_conll_and_conllu_files_are_tagged_by_their_tokens(run_dir, tmp_path, capsys, name, text):
    path = tmp_path / name
    path.write_text(text, encoding="utf-8")
    assert main(["tag", str(run_dir), str(path)]) == 0
    rows = [line.split(" ") for line in capsys.readouterr().out.splitlines()]
    assert [r[0] for r in rows if r != [""]] == ["EU", "rejects", "Peter", "Blackburn"]
    assert all(len(r) == 2 for r in rows if r != [""])  # the file's labels are not read


@pytest.mark.parametrize("argv, message", [
    (["--tokenized", "--input-format", "conll"], "cannot be combined with --input-format conll"),
    (["--tokenized", "--format", "brat", "--output", "out"], "--format brat applies to raw text input"),
])
def test_pre_tokenized_input_refuses_what_it_cannot_do(run_dir, tmp_path, capsys, argv, message):
    path = tmp_path / "in.txt"
    path.write_text("EU rejects\n", encoding="utf-8")
    assert main(["tag", str(run_dir), str(path), *argv]) != 0
    assert message in capsys.readouterr().err
