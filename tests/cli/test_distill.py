"""``seqlab distill label``: a tiny teacher labels a tiny text into shards with marginals; a killed or limited
labelling goes on where it stopped, without a line twice; worker processes write the same corpus."""
from __future__ import annotations

import gzip
import json
from pathlib import Path

import pytest

from seqlab.cli import main
from seqlab.data.schemes import split_tag
from seqlab.tagging.teacher import PROGRESS, SUMMARY, corpus_records
from tests.conftest import tiny_run

LINES = [
    "EU rejects German call to boycott British lamb. Peter Blackburn said so.",
    "",
    "The European Commission said on Thursday it disagreed with German advice.",
    "BRUSSELS 1996-08-22",
    "Zorglub met Mr. Smith in Brussels (Belgium).",
    "Germany's representative to the European Union said.",
    "British farmers denied on Thursday there was any danger to human health.",
]


@pytest.fixture(scope="module")
def teacher(tmp_path_factory) -> Path:
    """A tiny tagger trained on the NER fixture, standing in for the contextual teacher."""
    return tiny_run(tmp_path_factory.mktemp("distill") / "teacher", "ner", ("train.threads=1",))


@pytest.fixture(scope="module")
def text(tmp_path_factory) -> Path:
    path = tmp_path_factory.mktemp("text") / "text.txt"
    path.write_text("\n".join(LINES) + "\n", encoding="utf-8")
    return path


def label(teacher: Path, text: Path, out: Path, *extra: str) -> int:
    return main(["distill", "label", str(teacher), str(text), "--output", str(out), "--lines-per-shard", "3", *extra])


def shards(out: Path) -> dict[str, str]:
    return {p.name: p.read_text(encoding="utf-8") for p in sorted(out.glob("part-*.jsonl"))}


@pytest.fixture(scope="module")
def labelled(teacher, text, tmp_path_factory) -> Path:
    """The text labelled at one go: what every interrupted, limited or parallel labelling must end with."""
    out = tmp_path_factory.mktemp("whole") / "corpus"
    assert label(teacher, text, out) == 0
    return out


def test_a_corpus_holds_each_sentence_with_its_marginals_and_path_confidence(labelled, capsys):
    assert list(shards(labelled)) == ["part-00000.jsonl", "part-00001.jsonl", "part-00002.jsonl"]
    records = list(corpus_records(labelled))
    assert sorted({r["line"] for r in records}) == [1, 3, 4, 5, 6, 7]  # line 2 is blank
    assert [(r["line"], r["sentence"]) for r in records][:2] == [(1, 0), (1, 1)]
    progress = json.loads((labelled / PROGRESS).read_text())
    assert progress["scheme"] == "bilou" and progress["finished"] and progress["lines_per_shard"] == 3
    for r in records:
        assert len(r["tokens"]) == len(r["labels"]) == len(r["marginals"])
        assert all(split_tag(label)[0] in "OBILU" for label in r["labels"])  # the teacher's own scheme
        assert 0 < r["path_confidence"] <= min(r["marginals"]) + 1e-4
        assert len(r["distributions"]) == len(r["tokens"])  # each token's labels at p >= 0.001, its best among them
        for label_, p, spread in zip(r["labels"], r["marginals"], r["distributions"]):
            assert spread[label_] == p and min(spread.values()) >= 1e-3 and sum(spread.values()) <= 1 + 1e-3
    summary = json.loads((labelled / SUMMARY).read_text())
    assert summary["corpus"]["words"] == sum(len(r["tokens"]) for r in records) == summary["this_run"]["words"]
    assert summary["corpus"]["input_words"] == sum(len(line.split()) for line in LINES)
    assert summary["this_run"]["words_per_second"] > 0 and summary["tagging"]["cpu_seconds_per_million_words"] > 0


def test_a_killed_labelling_goes_on_without_a_line_twice(teacher, text, labelled, tmp_path):
    out = tmp_path / "corpus"
    assert label(teacher, text, out) == 0
    progress = json.loads((out / PROGRESS).read_text())
    progress["shards"].pop()  # killed after writing shard 2 whole, before listing it; its file then cut short
    progress["finished"] = False
    (out / PROGRESS).write_text(json.dumps(progress))
    (out / "part-00002.jsonl").write_text((out / "part-00002.jsonl").read_text()[:50])
    (out / ".part-00003.jsonl.x1.tmp").write_text('{"line": 1')  # a write that a kill interrupted
    assert label(teacher, text, out) == 0
    assert shards(out) == shards(labelled) and not list(out.glob(".*.tmp"))
    summary = json.loads((out / SUMMARY).read_text())
    assert summary["this_run"]["shards"] == 1 and summary["corpus"]["shards"] == 3
    lines = [(r["line"], r["sentence"]) for r in corpus_records(out)]
    assert len(lines) == len(set(lines)) == len(list(corpus_records(labelled)))


def test_a_word_limit_cuts_the_last_shard_and_a_rerun_without_it_finishes(teacher, text, labelled, tmp_path):
    out = tmp_path / "corpus"
    first_shard = sum(len(r["tokens"]) for r in corpus_records(labelled) if r["line"] <= 3)
    assert label(teacher, text, out, "--limit-words", str(first_shard + 1)) == 0  # line 4 passes the limit
    progress = json.loads((out / PROGRESS).read_text())
    assert not progress["finished"] and [(s["lines"], s["cut"]) for s in progress["shards"]] == [(3, False), (1, True)]
    assert sum(len(r["tokens"]) for r in corpus_records(out)) > first_shard
    assert label(teacher, text, out, "--limit-words", "5") == 0  # labelled already: nothing to do
    assert json.loads((out / SUMMARY).read_text())["this_run"]["shards"] == 0
    assert label(teacher, text, out) == 0
    assert shards(out) == shards(labelled)


def test_a_rerun_with_another_shard_size_is_refused(teacher, text, labelled, capsys):
    assert main(["distill", "label", str(teacher), str(text), "--output", str(labelled),
                 "--lines-per-shard", "2"]) == 2
    assert "this corpus was begun with lines_per_shard 3, and this run has 2" in capsys.readouterr().err


def test_worker_processes_and_gzipped_text_give_the_same_corpus(teacher, text, labelled, tmp_path):
    packed = tmp_path / "text.txt.gz"
    packed.write_bytes(gzip.compress(text.read_bytes()))
    assert label(teacher, packed, tmp_path / "gz") == 0
    assert shards(tmp_path / "gz") == shards(labelled)
    assert label(teacher, text, tmp_path / "workers", "--workers", "2") == 0
    assert shards(tmp_path / "workers") == shards(labelled)
    assert json.loads((tmp_path / "workers" / SUMMARY).read_text())["this_run"]["workers"] == 2


def test_ray_actors_give_the_same_corpus_written_by_this_process(teacher, text, labelled, tmp_path, capsys):
    ray = pytest.importorskip("ray", reason="Ray is an optional extra: pip install -e '.[ray]'")
    assert label(teacher, text, tmp_path / "cuda", "--ray", "local", "--device", "cuda") == 2
    assert "the Ray actors run the teacher on the CPU" in capsys.readouterr().err
    assert label(tmp_path / "nowhere", text, tmp_path / "bad", "--ray", "local") == 2  # said before Ray starts
    assert "nowhere" in capsys.readouterr().err
    # the first shard here, the rest on Ray: a Ray run goes on from a folder as a local one does (an actor pool
    # takes tens of seconds to start, so the test starts one)
    assert label(teacher, text, tmp_path / "ray", "--limit-words", "6") == 0
    assert label(teacher, text, tmp_path / "ray", "--ray", "local", "--workers", "2") == 0
    assert shards(tmp_path / "ray") == shards(labelled)
    assert not ray.is_initialized()  # the run that connected disconnected
    run = json.loads((tmp_path / "ray" / SUMMARY).read_text())["this_run"]
    assert (run["ray"], run["actors"]) == ("local", 2) and run["cpu_seconds"] > 0


def test_a_token_label_teacher_labels_text_and_a_student_trains_on_it(text, tmp_path):
    """The same machinery for POS: a UPOS teacher's corpus is in the token scheme, and a UPOS student takes it."""
    pos_teacher = tiny_run(tmp_path / "pos_teacher", "pos", ("train.threads=1", "train.epochs=1"))
    corpus = tmp_path / "pos_corpus"
    assert label(pos_teacher, text, corpus) == 0
    progress = json.loads((corpus / PROGRESS).read_text(encoding="utf-8"))
    assert progress["scheme"] == "token"
    records = list(corpus_records(corpus))
    assert records and all(len(r["labels"]) == len(r["tokens"]) == len(r["marginals"]) for r in records)
    student = tiny_run(tmp_path / "pos_student", "pos", (
        "train.threads=1", "train.epochs=1", f"train.teacher={{corpus: {corpus}, threshold: 0.0, mix: 1.0}}"))
    metrics = json.loads((student / "metrics.json").read_text(encoding="utf-8"))
    assert metrics["teacher"]["sentences"] + metrics["teacher"]["same_as_dev_or_test"] == len(records)


def test_a_student_trains_on_the_teachers_distributions_from_a_labelled_corpus(labelled, tmp_path):
    """The soft loss end to end: the corpus seqlab distill label wrote, read by a student in the teacher's scheme."""
    student = tiny_run(tmp_path / "soft_student", "ner", (
        "train.threads=1", "train.epochs=1", f"train.teacher={{corpus: {labelled}, loss: soft}}"))
    metrics = json.loads((student / "metrics.json").read_text(encoding="utf-8"))
    teacher = metrics["teacher"]  # some lines of the text are sentences of the fixture's dev file: left out
    assert teacher["loss"] == "soft" and teacher["same_as_dev_or_test"] > 0
    assert teacher["sentences"] + teacher["same_as_dev_or_test"] == len(list(corpus_records(labelled)))


def test_text_in_several_files_is_one_text_and_a_rerun_must_name_the_same_files(teacher, text, labelled, tmp_path,
                                                                              capsys):
    head, tail = tmp_path / "head.txt", tmp_path / "tail.txt.gz"
    head.write_text("\n".join(LINES[:4]) + "\n", encoding="utf-8")  # a file ends mid-shard: shards go on across it
    tail.write_bytes(gzip.compress(("\n".join(LINES[4:]) + "\n").encode("utf-8")))
    out = tmp_path / "corpus"
    argv = ["distill", "label", str(teacher), str(head), str(tail), "--output", str(out), "--lines-per-shard", "3"]
    assert main(argv) == 0
    assert shards(out) == shards(labelled)
    assert json.loads((out / PROGRESS).read_text())["input"] == [str(head.resolve()), str(tail.resolve())]
    assert main([*argv[:3], str(tail), str(head), *argv[5:]]) == 2
    assert "this corpus was begun with input" in capsys.readouterr().err
