"""``seqlab tag --format brat`` and ``--format conllu`` (seqlab/cli/tag.py) with the installed English NER model:
each written file reads back, through seqlab's own readers, to the spans and labels of the JSON output."""
from __future__ import annotations

import json
from pathlib import Path

import pytest

from seqlab.cli import main
from seqlab.data.conllu import read_conllu
from seqlab.data.formats.brat import read_brat
from seqlab.data.schemes import spans

TEXT = "Angela Merkel visited Paris.\n\nShares of Volkswagen rose in Frankfurt. Obama met Putin.\r\n"


@pytest.fixture
def news(tmp_path: Path) -> Path:
    path = tmp_path / "news.txt"
    path.write_bytes(TEXT.encode("utf-8"))
    return path


def jsonl_spans(news: Path, capsys) -> list[tuple[int, str, int, int]]:
    assert main(["tag", str(news), "--format", "jsonl"]) == 0
    objects = [json.loads(line) for line in capsys.readouterr().out.splitlines()]
    return [(o["line"], s["label"], s["start"], s["end"]) for o in objects for s in o["spans"]]


def test_brat_writes_the_input_and_its_spans_at_offsets_into_it(news, tmp_path, capsys) -> None:
    expected = jsonl_spans(news, capsys)
    assert len(expected) >= 4
    assert main(["tag", str(news), "--format", "brat", "--output", str(tmp_path / "out")]) == 0
    assert (tmp_path / "out" / "news.txt").read_bytes() == news.read_bytes()
    starts = [0, *[k + 1 for k, c in enumerate(TEXT) if c == "\n"]]
    ann = [line.split("\t") for line in (tmp_path / "out" / "news.ann").read_text(encoding="utf-8").splitlines()]
    got = [(kind, int(a), int(b)) for _, (kind, a, b), _ in ((i, t.split(" "), x) for i, t, x in ann)]
    assert got == [(label, starts[line - 1] + a, starts[line - 1] + b) for line, label, a, b in expected]
    assert all(TEXT[a:b] == text for (_, a, b), (_, _, text) in zip(got, ann))
    again = list(read_brat(tmp_path / "out"))  # reads back with no problem
    assert sum(len(spans(s["ner"])) for s in again) == len(expected)


def test_conllu_reads_back_with_the_labels_of_the_jsonl(news, tmp_path, capsys) -> None:
    assert main(["tag", str(news), "--format", "jsonl"]) == 0
    objects = [json.loads(line) for line in capsys.readouterr().out.splitlines()]
    assert main(["tag", str(news), "--format", "conllu"]) == 0
    (tmp_path / "out.conllu").write_text(capsys.readouterr().out, encoding="utf-8")
    sentences = list(read_conllu(tmp_path / "out.conllu"))
    assert [s["form"] for s in sentences] == [tuple(o["tokens"]) for o in objects]
    assert [tuple(m.split("|")[0].removeprefix("NER=") for m in s["misc"]) for s in sentences] == [
        tuple(o["labels"]) for o in objects]
    assert [s.extra["sent_id"] for s in sentences] == ["1-1", "3-1", "3-2"]
    assert all(s.extra["offsets"] is not None for s in sentences)  # the words spell # text


@pytest.mark.parametrize("argv, message", [
    (["--format", "brat"], "give it with --output DIR"),
    (["--format", "brat", "--output", "x", "--shard", "0/2"], "leave out --shard"),
    (["--output", "x"], "--output applies to --format brat"),
])
def test_brat_options_are_checked_in_one_line(news, argv, message, capsys) -> None:
    assert main(["tag", str(news), *argv]) == 2
    err = capsys.readouterr().err.strip()
    assert message in err and len(err.splitlines()) == 1


@pytest.mark.parametrize("fmt, name", [("jsonl", "gold.jsonl"), ("conll", "gold.txt"), ("conllu", "gold.conllu"),
                                       ("brat", "gold")])
def test_a_model_scores_100_on_its_own_output_read_as_gold(news, tmp_path, capsys, fmt, name) -> None:
    gold = tmp_path / name
    if fmt == "brat":
        assert main(["tag", str(news), "--format", "brat", "--output", str(gold)]) == 0
    else:
        assert main(["tag", str(news), "--format", fmt]) == 0
        gold.write_text(capsys.readouterr().out, encoding="utf-8")
    capsys.readouterr()
    assert main(["eval", "en-ner-conll03", str(gold), "--output", str(tmp_path / "pred.txt")]) == 0
    report = capsys.readouterr().out
    assert "FB1: 100.00" in report.splitlines()[1] and "found: 0 phrases" not in report


def test_tag_jsonl_output_is_training_data_and_converts_keeping_its_sentences(news, tmp_path, capsys) -> None:
    from seqlab.data.config import DataConfig
    from seqlab.data.dataset import read_split

    assert main(["tag", str(news), "--format", "jsonl"]) == 0
    objects = [json.loads(line) for line in capsys.readouterr().out.splitlines()]
    (tmp_path / "out.jsonl").write_text("".join(json.dumps(o) + "\n" for o in objects), encoding="utf-8")
    split = read_split(DataConfig(train=str(tmp_path / "out.jsonl"), dev=str(tmp_path / "out.jsonl")), "train")
    assert split.tokens == [o["tokens"] for o in objects] and split.file_tags == [o["labels"] for o in objects]
    assert main(["convert", str(tmp_path / "out.jsonl"), str(tmp_path / "out.conll"), "--to", "conll"]) == 0
    blocks = [b for b in (tmp_path / "out.conll").read_text(encoding="utf-8").split("\n\n") if b.strip()]
    sentences = [[line.split(" ") for line in b.splitlines() if not line.startswith("-DOCSTART-")] for b in blocks]
    assert [[t for t, _ in s] for s in sentences if s] == [o["tokens"] for o in objects]
