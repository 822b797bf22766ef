"""train.teacher (seqlab.tagging.teacher, TeacherConfig): a strict section, the pool it takes from a corpus, and a
student trained on gold and teacher-labelled sentences together."""
from __future__ import annotations

import json
import math
from pathlib import Path

import pytest
import torch

from seqlab.core.errors import ConfigError, SeqlabError
from seqlab.data.labelling import labelling
from seqlab.data.schemes import convert
from seqlab.tagging.config import TeacherConfig, load_config
from seqlab.tagging.teacher import FORMAT, PROGRESS, SoftTargets, corpus_records, draw, read_teacher, shard_name
from seqlab.tagging.teacher import write_json, write_shard
from tests.conftest import tiny_run

#: Sentences "a teacher labelled", in IOB2, with their path confidences; Zorglub is in no fixture file.
SENTENCES = [
    ("Zorglub met Peter Blackburn in Brussels .", "B-PER O B-PER I-PER O B-LOC O", 0.9),
    ("The European Commission said so .", "O B-ORG I-ORG O O O", 0.2),
    ("Germany 's representative said .", "B-LOC O O O O", 0.7),
    ("British lamb .", "B-MISC O O", 0.95),
]


def make_corpus(folder: Path, sentences=SENTENCES, scheme: str = "iob2", distributions: bool = False) -> Path:
    """A corpus folder as seqlab distill label writes one: two shards of two lines, and the progress file; with
    ``distributions``, each entity token's label at 0.8 and O at 0.2, an O token's O at 1."""
    records = [{"line": n, "sentence": 0, "tokens": text.split(), "labels": labels.split(),
                "marginals": [1.0] * len(text.split()), "path_confidence": confidence}
               for n, (text, labels, confidence) in enumerate(sentences, start=1)]
    for record in records if distributions else ():
        record["distributions"] = [{"O": 1.0} if label == "O" else {label: 0.8, "O": 0.2}
                                   for label in record["labels"]]
    shards = []
    for index in range(0, len(records), 2):
        write_shard(folder, index // 2, records[index:index + 2])
        shards.append({"file": shard_name(index // 2), "first_line": index + 1, "lines": 2, "cut": False,
                       "sentences": 2, "words": sum(len(r["tokens"]) for r in records[index:index + 2])})
    write_json(folder, PROGRESS, {"format": FORMAT, "teacher": "a-teacher", "input": "text.txt", "input_bytes": 1,
                                  "lines_per_shard": 2, "scheme": scheme, "finished": True, "shards": shards})
    return folder


MINIMAL = "data:\n  train: a.txt\n  dev: b.txt\n"


@pytest.mark.parametrize("overrides,message", [
    (["train.teacher={corpus: c, wrods: 10}"], r"train.teacher.wrods: unknown key; did you mean 'words'\?"),
    (["train.teacher.corpus=c", "train.teacher.wrods=10"], r"--set train.teacher.wrods: unknown key"),
    (["train.teacher={words: 10}"], r"train.teacher.corpus: required key is missing"),
    (["train.teacher={corpus: c, loss: kl}"], r"train.teacher.loss: expected one of \['hard', 'soft'\], got 'kl'"),
    (["train.teacher={corpus: c, threshold: 1.5}"], r"train.teacher.threshold: expected a path confidence in \[0, 1\]"),
    (["train.teacher={corpus: c, mix: 0}"], r"train.teacher.mix: expected a positive number"),
    (["train.teacher={corpus: c, words: 0}"], r"train.teacher.words: expected a number from 1"),
])
def test_the_teacher_section_is_strict(tmp_path, overrides, message):
    path = tmp_path / "c.yaml"
    path.write_text(MINIMAL)
    with pytest.raises(ConfigError, match=message):
        load_config(path, overrides)


def test_an_unknown_key_in_a_yaml_teacher_section_names_the_file(tmp_path):
    (tmp_path / "base.yaml").write_text(MINIMAL)
    (tmp_path / "c.yaml").write_text("base: base.yaml\ntrain:\n  teacher: {corpus: c, treshold: 0.5}\n")
    with pytest.raises(ConfigError, match=r"c.yaml: train.teacher.treshold: unknown key; did you mean 'threshold'\?"):
        load_config(tmp_path / "c.yaml")
    assert load_config(tmp_path / "base.yaml").train.teacher is None


def test_the_pool_leaves_out_low_confidence_sentences_then_takes_the_words_asked_for(tmp_path):
    folder = make_corpus(tmp_path / "corpus")
    assert [r["line"] for r in corpus_records(folder)] == [1, 2, 3, 4]
    bilou = labelling("bilou", "iob1")
    everything = read_teacher(TeacherConfig(corpus=str(folder)), bilou)
    assert len(everything.split.tokens) == 4 and everything.below_threshold == 0
    pool = read_teacher(TeacherConfig(corpus=str(folder), threshold=0.5, words=8), bilou)
    assert pool.split.tokens == [SENTENCES[0][0].split(), SENTENCES[2][0].split()]  # 7 words, then past 8
    assert pool.split.tags[0] == ["U-PER", "O", "B-PER", "L-PER", "O", "U-LOC", "O"]  # the student's scheme
    assert pool.record(gold=5) | {"corpus": None} == {
        "corpus": None, "teacher": "a-teacher", "loss": "hard", "threshold": 0.5, "mix": 1.0, "sentences": 2,
        "words": 12, "below_threshold": 1, "same_as_dev_or_test": 0, "sentences_per_epoch": 5}


def test_a_sentence_the_dev_or_test_set_holds_is_left_out_of_the_pool(tmp_path, caplog):
    folder = make_corpus(tmp_path / "corpus")
    evaluation = [SENTENCES[2][0].split(), "British lamb".split()]  # the second is not a whole teacher sentence
    pool = read_teacher(TeacherConfig(corpus=str(folder)), labelling("bilou", "iob1"), evaluation)
    assert [" ".join(s) for s in pool.split.tokens] == [SENTENCES[0][0], SENTENCES[1][0], SENTENCES[3][0]]
    assert pool.held_out == 1 and pool.record(gold=1)["same_as_dev_or_test"] == 1
    assert "1 sentences of" in caplog.text and "same tokens as a dev or test sentence" in caplog.text


def test_a_corpus_of_another_kind_of_labels_or_none_is_refused(tmp_path):
    with pytest.raises(ConfigError, match="holds no progress.json; make the corpus with seqlab distill label"):
        read_teacher(TeacherConfig(corpus=str(tmp_path)), labelling("bilou"))
    folder = make_corpus(tmp_path / "pos", [("EU rejects", "NNP VBZ", 0.9)], scheme="token")
    with pytest.raises(ConfigError, match="span labels and token labels do not mix"):
        read_teacher(TeacherConfig(corpus=str(folder)), labelling("bilou"))


def test_draws_repeat_no_sentence_while_the_pool_lasts():
    generator = torch.Generator().manual_seed(0)
    assert sorted(draw(5, 5, generator).tolist()) == [0, 1, 2, 3, 4]
    twice = draw(3, 7, generator).tolist()
    assert sorted(twice[:3]) == sorted(twice[3:6]) == [0, 1, 2] and len(twice) == 7


def test_a_student_trains_an_epoch_on_gold_and_teacher_sentences(tmp_path):
    folder = make_corpus(tmp_path / "corpus")
    run = tiny_run(tmp_path / "student", "ner", ("train.epochs=1", "train.threads=1",
                                                 f"train.teacher={{corpus: {folder}, mix: 0.6, threshold: 0.5}}"))
    metrics = json.loads((run / "metrics.json").read_text())
    assert metrics["epochs"] == 1 and metrics["teacher"]["sentences"] == 3
    assert metrics["teacher"]["sentences_per_epoch"] == 3  # 0.6 of the fixture's 5 gold sentences
    assert metrics["teacher"]["words"] == 7 + 5 + 3 and metrics["teacher"]["below_threshold"] == 1
    assert "Zorglub" in json.loads((run / "vocabs.json").read_text())["words"]["itos"]  # teacher text is training text
    log = (run / "train.log").read_text()
    assert "8 train/" in log and "/3 teacher sentences" in log


def test_a_student_leaves_out_teacher_sentences_its_dev_or_test_file_holds(tmp_path):
    dev = ("EU rejects German call to boycott British lamb .", "B-ORG O B-MISC O O O B-MISC O O", 0.9)
    folder = make_corpus(tmp_path / "corpus", [dev, *SENTENCES[:3]])
    run = tiny_run(tmp_path / "student", "ner", ("train.epochs=1", "train.threads=1",
                                                 f"train.teacher={{corpus: {folder}}}"))
    record = json.loads((run / "metrics.json").read_text())["teacher"]
    assert record["sentences"] == 3 and record["same_as_dev_or_test"] == 1


def test_a_teacher_type_the_gold_data_lacks_is_refused(tmp_path):
    folder = make_corpus(tmp_path / "corpus", [("Zorglub rules", "B-ALIEN O", 0.9)])
    with pytest.raises(SeqlabError, match="the teacher labels type 'ALIEN', which the gold training data never shows"):
        tiny_run(tmp_path / "student", "ner", ("train.epochs=1", f"train.teacher={{corpus: {folder}}}"))
    assert not (tmp_path / "student").exists()


def test_soft_targets_are_kept_flat_and_made_dense_per_batch():
    targets = SoftTargets.collect([[{"O": 1.0}, {"B-PER": 0.6, "O": 0.3}], [{"U-LOC": 1.0}]])
    assert targets.offsets.tolist() == [0, 3, 4] and targets.labels == ["O", "B-PER", "U-LOC"]
    ids = torch.tensor([0, 2, -1])  # the student lacks U-LOC
    dense = targets.dense(torch.tensor([1, 0]), 3, ids)
    assert dense.shape == (2, 3, 3) and dense[0].sum() == 0  # sentence 1's only label is one the student lacks
    torch.testing.assert_close(dense[1, :2], torch.tensor([[1.0, 0.0, 0.0], [1 / 3, 0.0, 2 / 3]]))
    assert dense[1, 2].sum() == 0  # beyond the sentence
    assert SoftTargets.collect([[{"O": 1.0}], [{"U-LOC": 0.5}]]).subset([1]).probs.tolist() == [0.5]


def test_a_soft_loss_needs_the_distributions_and_the_teachers_scheme(tmp_path):
    bare = make_corpus(tmp_path / "bare", scheme="bilou")
    with pytest.raises(SeqlabError, match="has no distributions .* train.teacher.loss: hard"):
        read_teacher(TeacherConfig(corpus=str(bare), loss="soft"), labelling("bilou", "iob1"))
    iob2 = make_corpus(tmp_path / "iob2", distributions=True)
    with pytest.raises(ConfigError, match="in scheme 'iob2', and this model trains in 'bilou'; set data.tag_scheme"):
        read_teacher(TeacherConfig(corpus=str(iob2), loss="soft"), labelling("bilou", "iob1"))
    pool = read_teacher(TeacherConfig(corpus=str(iob2), loss="soft", threshold=0.5), labelling("iob2", "iob1"))
    assert len(pool.split.tokens) == 3 and pool.targets.offsets.tolist() == [0, 7 + 4, 11 + 5 + 1, 17 + 3 + 1]


def test_a_student_trains_an_epoch_on_the_teachers_distributions(tmp_path):
    sentences = [(text, " ".join(convert(labels.split(), "bilou", "iob2")), p) for text, labels, p in SENTENCES]
    folder = make_corpus(tmp_path / "corpus", sentences, scheme="bilou", distributions=True)
    run = tiny_run(tmp_path / "student", "ner", ("train.epochs=1", "train.threads=1",
                                                 f"train.teacher={{corpus: {folder}, loss: soft}}"))
    metrics = json.loads((run / "metrics.json").read_text())
    assert metrics["teacher"]["loss"] == "soft" and metrics["teacher"]["sentences"] == 4
    assert math.isfinite(metrics["history"][0]["loss"])
