"""Teacher-labelled corpora: what ``seqlab distill label`` writes, and the sentences a student's ``train.teacher``
takes from one.

A corpus is a folder of shards, ``part-00000.jsonl``, ``part-00001.jsonl``, ..., shard ``k`` holding the labelled
sentences of input lines ``k * L + 1`` to ``(k + 1) * L`` (``L``: the progress file's ``lines_per_shard``), one JSON
object per sentence (:func:`sentence_record`):

* ``line``: its input line (from 1), and ``sentence``: its index among that line's sentences (from 0);
* ``tokens``, and ``labels``: the teacher's best path (Viterbi), in the teacher's own training scheme (the progress
  file's ``scheme``);
* ``marginals``: each token's posterior marginal of its label, p(y_t = label | x), and ``path_confidence``: the
  probability of the whole path, p(y = labels | x), both at the teacher's calibrated temperature;
* ``distributions``: each token's posterior over the labels, ``{label: p}`` for every label with
  p >= :data:`seqlab.tagging.predict.DISTRIBUTION_FLOOR` (nearly always one or two), at that temperature: what a
  student's ``soft`` loss learns from. A corpus written before they were kept lacks them; only ``hard`` reads it.

``progress.json`` names the teacher, the input and the scheme, and lists the finished shards in order with their
counts: it is what a reader trusts (a shard file it does not list is no part of the corpus). Every file is written
atomically, whole or not at all, so a labelling killed at any point leaves a corpus of the shards listed.
"""
from __future__ import annotations

import json
import logging
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Iterator

import torch

from seqlab.core.atomic import atomic_open
from seqlab.core.errors import ConfigError, SeqlabError
from seqlab.core.json_limits import load_json, read_json
from seqlab.core.paths import resolve_data_path
from seqlab.data.batching import Batch, Encoded, bucketed_batches, make_batch
from seqlab.data.dataset import Split
from seqlab.data.labelling import TOKEN, Labelling

log = logging.getLogger("seqlab")

PROGRESS = "progress.json"  # the teacher, the input, the scheme and the finished shards
SUMMARY = "summary.json"  # what the labelling took: counts and throughput
FORMAT = 1  # the version of the shard records and the progress file
#: Decimals kept of every marginal and path confidence written.
DIGITS = 4


def shard_name(index: int) -> str:
    """The file name of shard ``index`` (from 0)."""
    return f"part-{index:05d}.jsonl"


def sentence_record(line: int, index: int, sentence: Any) -> dict[str, Any]:
    """One line of a shard: a sentence tagged with ``marginals=True`` (:class:`seqlab.tagging.document.Sentence`),
    the ``index``-th of input line ``line``."""
    return {"line": line, "sentence": index, "tokens": list(sentence.tokens), "labels": list(sentence.labels),
            "marginals": [round(p, DIGITS) for p in sentence.marginals],
            "path_confidence": round(sentence.path_confidence, DIGITS),
            "distributions": [{label: round(p, DIGITS) for label, p in token.items()}
                              for token in sentence.distributions]}


def write_json(folder: Path, name: str, value: dict[str, Any]) -> None:
    """Write ``folder/name`` as JSON, atomically."""
    with atomic_open(Path(folder) / name) as out:
        json.dump(value, out, indent=1)


def write_shard(folder: Path, index: int, records: list[dict[str, Any]]) -> None:
    """Write shard ``index``'s sentence records, atomically."""
    with atomic_open(Path(folder) / shard_name(index)) as out:
        out.writelines(json.dumps(r, ensure_ascii=False) + "\n" for r in records)


def read_progress(folder: Path) -> dict[str, Any] | None:
    """A corpus folder's progress file, or None when it has none."""
    path = Path(folder) / PROGRESS
    if not path.is_file():
        return None
    progress = read_json(path)
    if not isinstance(progress, dict) or progress.get("format") != FORMAT \
            or not isinstance(progress.get("shards"), list):
        raise SeqlabError(f"{path}: not the progress file of a teacher-labelled corpus (format {FORMAT})")
    return progress


def corpus_records(folder: Path) -> Iterator[dict[str, Any]]:
    """The sentence records of a corpus, shard after shard as its progress file lists them."""
    progress = read_progress(folder)
    if progress is None:
        raise SeqlabError(f"{folder}: no {PROGRESS}; not a corpus written by seqlab distill label")
    for shard in progress["shards"]:
        path = Path(folder) / Path(str(shard.get("file"))).name
        with open(path, "rb") as handle:
            for number, raw in enumerate(handle, start=1):
                yield _checked(load_json(raw, f"{path}:{number}"), f"{path}:{number}")


def _checked(record: Any, where: str) -> dict[str, Any]:
    """A sentence record, refused in one line naming ``where`` unless it has tokens and as many labels."""
    if not isinstance(record, dict) or not isinstance(record.get("tokens"), list) or not record["tokens"] \
            or not isinstance(record.get("labels"), list) or len(record["labels"]) != len(record["tokens"]) \
            or not isinstance(record.get("path_confidence"), (int, float)):
        raise SeqlabError(f"{where}: expected a sentence record with tokens, as many labels and a path_confidence")
    return record


@dataclass
class TeacherData:
    """The teacher-labelled sentences a student may train on (its pool; each epoch draws from it), and what the
    run records of them (:meth:`record`)."""

    split: Split  # tokens, the corpus labels (file_tags) and the student's training labels (tags)
    corpus: str  # the config's train.teacher.corpus
    progress: dict[str, Any]
    below_threshold: int  # sentences left out for a path confidence under the threshold
    mix: float
    loss: str
    threshold: float

    def per_epoch(self, gold: int) -> int:
        """Teacher sentences drawn for each epoch of ``gold`` gold sentences (``mix`` of them per gold one)."""
        return max(1, round(self.mix * gold))

    def record(self, gold: int) -> dict[str, Any]:
        """What metrics.json (and the model card) say of the teacher data: the teacher, the pool and each
        epoch's draw."""
        return {"corpus": self.corpus, "teacher": self.progress.get("teacher"), "loss": self.loss,
                "threshold": self.threshold, "mix": self.mix, "sentences": len(self.split.tokens),
                "words": self.split.num_tokens, "below_threshold": self.below_threshold,
                "sentences_per_epoch": self.per_epoch(gold)}


def read_teacher(config: Any, labelling: Labelling) -> TeacherData:
    """The pool a ``train.teacher`` section (:class:`seqlab.tagging.config.TeacherConfig`) names: the corpus's
    sentences in order, those whose path confidence is under ``threshold`` left out, until ``words`` tokens are
    taken (null: all), their labels in the student's training scheme (``labelling``)."""
    folder = resolve_data_path(config.corpus, key="train.teacher.corpus")
    progress = read_progress(folder)
    if progress is None:
        raise ConfigError(f"train.teacher.corpus: {folder} holds no {PROGRESS}; make the corpus with "
                          f"seqlab distill label TEACHER TEXT --output {config.corpus}")
    if (progress.get("scheme") == TOKEN) != (labelling.name == TOKEN):
        raise ConfigError(f"train.teacher.corpus: the teacher's labels are in scheme {progress.get('scheme')!r}, "
                          f"and this model trains {labelling.name!r}: span labels and token labels do not mix")
    tokens, file_tags, tags, dropped, taken = [], [], [], 0, 0
    for record in corpus_records(folder):
        if config.words is not None and taken >= config.words:
            break
        if record["path_confidence"] < config.threshold:
            dropped += 1
            continue
        tokens.append([str(t) for t in record["tokens"]])
        file_tags.append([str(t) for t in record["labels"]])
        tags.append(labelling.training_labels(file_tags[-1]))
        taken += len(tokens[-1])
    if not tokens:
        raise ConfigError(f"train.teacher: no sentence of {folder} is left (threshold {config.threshold} dropped "
                          f"{dropped} of them)")
    split = Split("teacher", folder, tokens, file_tags, tags)
    log.info("teacher data: %d sentences, %d words from %s (%d below path confidence %s left out)", len(tokens),
             taken, folder, dropped, config.threshold)
    return TeacherData(split, config.corpus, progress, dropped, config.mix, config.loss, config.threshold)


def check_teacher_types(teacher: TeacherData, labels: list[str], labelling: Labelling, *, smoke: bool) -> None:
    """Refuse a teacher that labels a type (or token label) the student's label vocabulary lacks; in a smoke run
    (``smoke``: ``data.limit``), leave its sentences out instead, as dev and test sentences are."""
    known = labelling.classes(labels)
    unseen = sorted(labelling.classes(t for s in teacher.split.tags for t in s) - known)
    if unseen and smoke:
        keep = [i for i, tags in enumerate(teacher.split.tags) if labelling.classes(tags) <= known]
        log.warning("data.limit: %d of the %d teacher sentences left out: they hold %s, which the limited training "
                    "split never shows", len(teacher.split.tags) - len(keep), len(teacher.split.tags),
                    ", ".join(unseen))
        teacher.split = teacher.split.subset(keep)
    elif unseen:
        raise SeqlabError(f"train.teacher.corpus: the teacher labels {labelling.label_word} {unseen[0]!r}, which the "
                          f"gold training data never shows ({', '.join(sorted(known))})")
    if not teacher.split.tokens:
        raise SeqlabError("train.teacher: no teacher sentence is left to train on")


def draw(pool: int, count: int, generator: torch.Generator) -> torch.Tensor:
    """``count`` rows of a pool of ``pool`` sentences, at random without repeats while the pool lasts (a larger
    count goes through it again in another order)."""
    rounds = -(-count // pool)
    return torch.cat([torch.randperm(pool, generator=generator) for _ in range(rounds)])[:count]


def mixed_batches(gold: Encoded, teacher: Encoded, drawn: torch.Tensor, batch_size: int, *, bucket_factor: int,
                  generator: torch.Generator, shard: tuple[int, int] = (0, 1)) -> Iterator[Batch]:
    """One epoch's training batches: every gold sentence and the teacher rows ``drawn``, each side bucketed by
    length (:func:`seqlab.data.batching.bucketed_batches`), the batches of both in one random order."""
    options = {"generator": generator, "bucket_factor": bucket_factor, "shard": shard}
    batches = [(gold, rows) for rows in bucketed_batches(gold.lengths, batch_size, **options)]
    batches += [(teacher, drawn[rows]) for rows in bucketed_batches(teacher.lengths[drawn], batch_size, **options)]
    for k in torch.randperm(len(batches), generator=generator).tolist():
        data, rows = batches[k]
        yield make_batch(data, rows)
