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
from typing import Any, Iterable, Iterator, Sequence

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


def corpus_records(folder: Path, *, distributions: bool = False) -> Iterator[dict[str, Any]]:
    """The sentence records of a corpus, shard after shard as its progress file lists them; with
    ``distributions``, each checked to hold a distribution per token (a corpus written before they were kept
    is refused, naming the loss that reads it)."""
    progress = read_progress(folder)
    if progress is None:
        raise SeqlabError(f"{folder}: no {PROGRESS}; not a corpus written by seqlab distill label")
    for shard in progress["shards"]:
        path = Path(folder) / Path(str(shard.get("file"))).name
        with open(path, "rb") as handle:
            for number, raw in enumerate(handle, start=1):
                record = _checked(load_json(raw, f"{path}:{number}"), f"{path}:{number}")
                if distributions:
                    _check_distributions(record, f"{path}:{number}")
                yield record


def _checked(record: Any, where: str) -> dict[str, Any]:
    """A sentence record, refused in one line naming ``where`` unless it has tokens and as many labels."""
    if not isinstance(record, dict) or not isinstance(record.get("tokens"), list) or not record["tokens"] \
            or not isinstance(record.get("labels"), list) or len(record["labels"]) != len(record["tokens"]) \
            or not isinstance(record.get("path_confidence"), (int, float)):
        raise SeqlabError(f"{where}: expected a sentence record with tokens, as many labels and a path_confidence")
    return record


def _check_distributions(record: dict[str, Any], where: str) -> None:
    """Refuse a record without one ``{label: probability}`` per token, in one line naming ``where``."""
    spread = record.get("distributions")
    if spread is None:
        raise SeqlabError(f"{where}: this sentence has no distributions (the corpus was written before seqlab distill "
                          "label kept them): label the text again, or train with train.teacher.loss: hard")
    if not isinstance(spread, list) or len(spread) != len(record["tokens"]) or not all(
            isinstance(token, dict) and token and all(isinstance(p, (int, float)) and 0 <= p <= 1
                                                      for p in token.values()) for token in spread):
        raise SeqlabError(f"{where}: expected distributions, one {{label: probability}} per token, with "
                          f"probabilities in [0, 1]")


@dataclass
class SoftTargets:
    """The teacher's token distributions over a pool of sentences, flat: sentence ``i``'s entries are
    ``offsets[i]:offsets[i + 1]``, each a token position, a label (an index into ``labels``) and its probability.
    Flat because a pool of millions of tokens holds one or two entries a token, where a padded (N, T, K) tensor
    would hold K per padded cell."""

    offsets: torch.Tensor  # shape: (N + 1,) int64
    positions: torch.Tensor  # shape: (E,) int64, the token of each entry within its sentence
    codes: torch.Tensor  # shape: (E,) int64, each entry's label, an index into ``labels``
    probs: torch.Tensor  # shape: (E,) float32
    labels: list[str]

    @classmethod
    def collect(cls, distributions: list[list[dict[str, float]]]) -> "SoftTargets":
        """From per-sentence, per-token ``{label: p}`` dicts (the corpus's ``distributions``)."""
        codes: dict[str, int] = {}
        lengths, positions, labels, probs = [], [], [], []
        for sentence in distributions:
            lengths.append(sum(len(token) for token in sentence))
            for position, token in enumerate(sentence):
                for label, p in token.items():
                    positions.append(position)
                    labels.append(codes.setdefault(label, len(codes)))
                    probs.append(p)
        offsets = torch.zeros(len(lengths) + 1, dtype=torch.long)
        torch.cumsum(torch.tensor(lengths, dtype=torch.long), 0, out=offsets[1:])
        return cls(offsets, torch.tensor(positions, dtype=torch.long), torch.tensor(labels, dtype=torch.long),
                   torch.tensor(probs, dtype=torch.float32), list(codes))

    def _entries(self, rows: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        """The entries of sentences ``rows`` (in that order) and the position in ``rows`` of each, by tensor
        indexing."""
        starts = self.offsets[rows]  # shape: (B,)
        counts = self.offsets[rows + 1] - starts  # shape: (B,)
        owner = torch.repeat_interleave(torch.arange(len(rows)), counts)  # shape: (E_b,)
        before = torch.cumsum(counts, 0) - counts  # shape: (B,), the batch entries ahead of each row
        return torch.arange(int(counts.sum())) - before[owner] + starts[owner], owner

    def subset(self, rows: list[int]) -> "SoftTargets":
        """The targets of sentences ``rows``, in that order."""
        index = torch.tensor(rows, dtype=torch.long)
        entries, _ = self._entries(index)
        offsets = torch.zeros(len(rows) + 1, dtype=torch.long)
        torch.cumsum(self.offsets[index + 1] - self.offsets[index], 0, out=offsets[1:])
        return SoftTargets(offsets, self.positions[entries], self.codes[entries], self.probs[entries], self.labels)

    def dense(self, rows: torch.Tensor, width: int, ids: torch.Tensor) -> torch.Tensor:
        """The distributions of sentences ``rows`` as a (B, width, K) tensor over the student's labels, each
        token's renormalised to sum to 1 (the mass under the corpus's floor is left out); ``ids``: the student's
        label id of each of ``labels``, -1 for one it lacks (its mass left out the same way)."""
        entries, owner = self._entries(rows)
        label = ids[self.codes[entries]]  # shape: (E_b,)
        kept = label >= 0
        out = torch.zeros(len(rows), width, int(ids.max()) + 1 if len(ids) else 1)
        out[owner[kept], self.positions[entries][kept], label[kept]] = self.probs[entries][kept]
        return out / out.sum(-1, keepdim=True).clamp_min(1e-12)  # shape: (B, width, K)


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
    targets: SoftTargets | None = None  # the kept sentences' token distributions, for a soft loss
    held_out: int = 0  # sentences left out because a dev or test sentence has the same tokens

    def subset(self, rows: list[int]) -> None:
        """Keep only the pool's sentences ``rows``."""
        self.split = self.split.subset(rows)
        if self.targets is not None:
            self.targets = self.targets.subset(rows)

    def per_epoch(self, gold: int) -> int:
        """Teacher sentences drawn for each epoch of ``gold`` gold sentences (``mix`` of them per gold one)."""
        return max(1, round(self.mix * gold))

    def record(self, gold: int) -> dict[str, Any]:
        """What metrics.json (and the model card) say of the teacher data: the teacher, the pool and each
        epoch's draw."""
        return {"corpus": self.corpus, "teacher": self.progress.get("teacher"), "loss": self.loss,
                "threshold": self.threshold, "mix": self.mix, "sentences": len(self.split.tokens),
                "words": self.split.num_tokens, "below_threshold": self.below_threshold,
                "same_as_dev_or_test": self.held_out, "sentences_per_epoch": self.per_epoch(gold)}


def read_teacher(config: Any, labelling: Labelling,
                 evaluation: Iterable[Sequence[str]] = ()) -> TeacherData:
    """The pool a ``train.teacher`` section (:class:`seqlab.tagging.config.TeacherConfig`) names: the corpus's
    sentences in order, those whose path confidence is under ``threshold`` left out, until ``words`` tokens are
    taken (null: all), their labels in the student's training scheme (``labelling``). A sentence with the same
    tokens as one of ``evaluation`` (the dev and test sentences) is left out too, with a warning: unlabeled text
    that holds the test set would teach the student the teacher's answers to it."""
    folder = resolve_data_path(config.corpus, key="train.teacher.corpus")
    progress = read_progress(folder)
    if progress is None:
        raise ConfigError(f"train.teacher.corpus: {folder} holds no {PROGRESS}; make the corpus with "
                          f"seqlab distill label TEACHER TEXT --output {config.corpus}")
    if (progress.get("scheme") == TOKEN) != (labelling.name == TOKEN):
        raise ConfigError(f"train.teacher.corpus: the teacher's labels are in scheme {progress.get('scheme')!r}, "
                          f"and this model trains {labelling.name!r}: span labels and token labels do not mix")
    soft = config.loss == "soft"
    if soft and progress.get("scheme") != labelling.name:
        raise ConfigError(f"train.teacher.loss: soft reads the teacher's distributions over its labels in scheme "
                          f"{progress.get('scheme')!r}, and this model trains in {labelling.name!r}; set "
                          f"data.tag_scheme: {progress.get('scheme')}, or use loss: hard")
    held = {tuple(sentence) for sentence in evaluation}
    tokens, file_tags, tags, spread, dropped, taken, same = [], [], [], [], 0, 0, 0
    for record in corpus_records(folder, distributions=soft):
        if config.words is not None and taken >= config.words:
            break
        if record["path_confidence"] < config.threshold:
            dropped += 1
            continue
        if tuple(record["tokens"]) in held:
            same += 1
            continue
        tokens.append([str(t) for t in record["tokens"]])
        file_tags.append([str(t) for t in record["labels"]])
        tags.append(labelling.training_labels(file_tags[-1]))
        if soft:
            spread.append(record["distributions"])
        taken += len(tokens[-1])
    if not tokens:
        raise ConfigError(f"train.teacher: no sentence of {folder} is left (threshold {config.threshold} dropped "
                          f"{dropped} of them)")
    split = Split("teacher", folder, tokens, file_tags, tags)
    log.info("teacher data: %d sentences, %d words from %s (%d below path confidence %s left out)", len(tokens),
             taken, folder, dropped, config.threshold)
    if same:
        log.warning("train.teacher.corpus: %d sentences of %s have the same tokens as a dev or test sentence; they "
                    "are left out of the pool", same, folder)
    targets = SoftTargets.collect(spread) if soft else None
    return TeacherData(split, config.corpus, progress, dropped, config.mix, config.loss, config.threshold, targets,
                       same)


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
        teacher.subset(keep)
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
                  generator: torch.Generator, shard: tuple[int, int] = (0, 1),
                  soft: tuple[SoftTargets, torch.Tensor] | None = None) -> Iterator[Batch]:
    """One epoch's training batches: every gold sentence and the teacher rows ``drawn``, each side bucketed by
    length (:func:`seqlab.data.batching.bucketed_batches`), the batches of both in one random order. With
    ``soft`` (the pool's :class:`SoftTargets` and the student's label id of each of their labels), a teacher
    batch carries its distributions as ``targets``, for the soft loss."""
    options = {"generator": generator, "bucket_factor": bucket_factor, "shard": shard}
    batches = [(gold, rows) for rows in bucketed_batches(gold.lengths, batch_size, **options)]
    batches += [(teacher, drawn[rows]) for rows in bucketed_batches(teacher.lengths[drawn], batch_size, **options)]
    for k in torch.randperm(len(batches), generator=generator).tolist():
        data, rows = batches[k]
        batch = make_batch(data, rows)
        if soft is not None and data is teacher:
            batch.targets = soft[0].dense(rows, batch.mask.shape[1], soft[1])
        yield batch
