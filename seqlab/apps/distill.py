"""Unlabeled text labelled by a teacher tagger, for a fast student to train on: ``seqlab distill label``.

The text (one sentence or paragraph per line, UTF-8, gzipped or not; one file, or several read as one text in
the order given, their lines numbered through) is cut into shards of ``lines_per_shard`` lines. Each shard is tagged with per-token marginals (``tag_many(..., marginals=True)``), written whole into the
corpus folder (:mod:`seqlab.tagging.teacher` describes it), then listed in the folder's progress file; the
progress file is what makes a shard part of the corpus. So a labelling killed at any point resumes by running
it again: the shards listed are skipped, any other is tagged (again) and written over whatever a killed write
left. ``limit_words`` stops once that many words (tokens, as the teacher split them; what ``train.teacher.words``
counts) are labelled, the last shard cut after the line that reaches it; a later run with a higher limit (or
none) tags that shard again and goes on. With ``workers`` > 1 the shards are tagged in that many processes (one
torch thread each, :mod:`seqlab.apps.parallel`) and written in input order; with ``ray`` (an address: ``local``,
``auto``, ``ray://HEAD:10001``) they are tagged by that many Ray actors across a cluster's machines
(:func:`seqlab.apps.ray.in_actors`) and still written here, in input order, by this one process.

``summary.json`` says what the labelling took: this run's words per second and CPU seconds per million words
(the teacher's loading included, and the workers' CPU time; on Ray, this process's and the actors' tagging, their
start-up not counted), and the tagging alone over every shard.
"""
from __future__ import annotations

import itertools
import logging
import resource
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable, Iterable, Iterator, Sequence

from features.corpus import read_lines
from seqlab.apps.parallel import in_workers, worker_tagger
from seqlab.core.errors import SeqlabError
from seqlab.core.paths import require_file
from seqlab.core.rundir import remove_stale_temp_files, run_lock
from seqlab.tagging.teacher import FORMAT, PROGRESS, SUMMARY, read_progress, sentence_record, shard_name
from seqlab.tagging.teacher import write_json, write_shard

log = logging.getLogger("seqlab")

#: Input lines per shard: about 50,000 words of Wikipedia paragraphs, a few minutes of a MiniLM teacher's time on
#: one CPU thread; a kill loses at most one shard's work.
LINES_PER_SHARD = 1000
#: What a rerun must share with the run that began a corpus folder: the shards would not line up otherwise.
SETTINGS = ("teacher", "input", "input_bytes", "lines_per_shard")


@dataclass(frozen=True)
class Job:
    """A shard to tag: its index, its first input line's number (from 1), its lines, and the most words worth
    tagging in it (None: all)."""

    index: int
    first: int
    lines: list[str]
    budget: int | None


@dataclass
class Labelled:
    """A tagged shard: the sentence records of each of its lines tagged (a job's budget may stop it early), each
    line's words as the input had them (whitespace-separated), the labels' scheme, and the time it took."""

    job: Job
    records: list[list[dict[str, Any]]]
    input_words: list[int]
    scheme: str
    cpu_seconds: float
    wall_seconds: float


def label_job(tagger: Any, job: Job, batch_size: int) -> Labelled:
    """Tag one shard with ``tagger`` (its labels in its own training scheme, with their marginals), line by line
    until the job's budget of words is reached."""
    wall, cpu = time.perf_counter(), time.process_time()
    scheme = tagger.labelling.name
    documents = tagger.tag_many(job.lines, batch_size=batch_size, scheme=scheme, marginals=True)
    records: list[list[dict[str, Any]]] = []
    words = 0
    for number, document in zip(itertools.count(job.first), documents):
        records.append([sentence_record(number, k, s) for k, s in enumerate(document.sentences)])
        words += sum(len(r["tokens"]) for r in records[-1])
        if job.budget is not None and words >= job.budget:
            break
    input_words = [len(line.split()) for line in job.lines[:len(records)]]
    return Labelled(job, records, input_words, scheme, time.process_time() - cpu, time.perf_counter() - wall)


def _label_in_worker(part: list[Job], batch_size: int) -> Labelled:
    """A worker's task (:func:`seqlab.apps.parallel.in_workers`): tag its one shard with its own teacher."""
    (job,) = part
    return label_job(worker_tagger(), job, batch_size)


def jobs(paths: Sequence[Path], start: int, lines_per_shard: int, budget: Callable[[], int | None]) -> Iterator[Job]:
    """The shards of the text in ``paths`` (one after the other) from shard ``start`` on, each with the budget of
    words left when it is made (``budget()``: the limit less the words labelled so far)."""
    lines = itertools.chain.from_iterable(read_lines(path) for path in paths)
    for _ in itertools.islice(lines, start * lines_per_shard):
        pass
    for index in itertools.count(start):
        chunk = list(itertools.islice(lines, lines_per_shard))
        if not chunk:
            return
        yield Job(index, index * lines_per_shard + 1, chunk, budget())


def teacher_key(teacher: str) -> str:
    """How a progress file names a teacher: a run directory or model file by its absolute path, an installed
    model by its name."""
    path = Path(teacher)
    return str(path.resolve()) if path.exists() else teacher


def begin(output: Path, teacher: str, texts: Sequence[Path], lines_per_shard: int) -> dict[str, Any]:
    """The progress of the corpus in ``output``: the one there, checked to be of this teacher, input and shard
    size, or a new one. One input file is named by its path and size, several by a list of each."""
    paths, sizes = [str(text.resolve()) for text in texts], [text.stat().st_size for text in texts]
    settings = {"teacher": teacher_key(teacher), "input": paths[0] if len(paths) == 1 else paths,
                "input_bytes": sizes[0] if len(sizes) == 1 else sizes, "lines_per_shard": lines_per_shard}
    progress = read_progress(output)
    if progress is None:
        return {"format": FORMAT, **settings, "scheme": None, "finished": False, "shards": []}
    for key in SETTINGS:
        if progress.get(key) != settings[key]:
            raise SeqlabError(f"{output / PROGRESS}: this corpus was begun with {key} {progress.get(key)!r}, and this "
                              f"run has {settings[key]!r}; rerun it as it began, or give another --output")
    return progress


def reopen(progress: dict[str, Any], output: Path, limit: int | None) -> None:
    """Make ``progress`` ready to go on: shards whose file is gone are dropped (with those after them), and so is
    a last shard that a limit cut when this run's limit asks for more."""
    shards = progress["shards"]
    for k, shard in enumerate(shards):
        if not (output / shard["file"]).is_file():
            log.warning("%s: %s is listed but missing; labelling again from there", output, shard["file"])
            del shards[k:]
            progress["finished"] = False
            break
    if shards and shards[-1]["cut"] and (limit is None or words_of(shards) < limit):
        shards.pop()
        progress["finished"] = False


def words_of(shards: Iterable[dict[str, Any]], key: str = "words") -> int:
    """The total of ``key`` over shard entries."""
    return sum(shard[key] for shard in shards)


def commit(output: Path, progress: dict[str, Any], labelled: Labelled, limit: int | None) -> bool:
    """Write a tagged shard (cut after the line that reaches ``limit``), then list it in the progress file;
    whether the limit is reached."""
    if progress["scheme"] not in (None, labelled.scheme):
        raise SeqlabError(f"the teacher labels in scheme {labelled.scheme}, and {output} holds labels in "
                          f"{progress['scheme']}")
    progress["scheme"] = labelled.scheme
    left = None if limit is None else limit - words_of(progress["shards"])
    lines, words = len(labelled.records), 0
    for n, line in enumerate(labelled.records, start=1):
        words += sum(len(r["tokens"]) for r in line)
        if left is not None and words >= left:
            lines = n
            break
    records = [r for line in labelled.records[:lines] for r in line]
    write_shard(output, labelled.job.index, records)
    progress["shards"].append({
        "file": shard_name(labelled.job.index), "first_line": labelled.job.first, "lines": lines,
        "cut": lines < len(labelled.job.lines), "sentences": len(records),
        "words": sum(len(r["tokens"]) for r in records),
        "input_words": sum(labelled.input_words[:lines]), "cpu_seconds": round(labelled.cpu_seconds, 3),
        "wall_seconds": round(labelled.wall_seconds, 3)})
    write_json(output, PROGRESS, progress)
    return left is not None and words >= left


def rates(words: int, input_words: int, wall: float, cpu: float) -> dict[str, Any]:
    """Throughput of ``words`` (tokens) and ``input_words`` (whitespace-separated) in ``wall`` and ``cpu`` seconds."""
    per_million = lambda n: round(cpu / n * 1e6, 1) if n else None  # noqa: E731
    return {"words": words, "input_words": input_words, "wall_seconds": round(wall, 2), "cpu_seconds": round(cpu, 2),
            "words_per_second": round(words / wall, 1) if wall > 0 else None,
            "cpu_seconds_per_million_words": per_million(words),
            "cpu_hours_per_million_words": round(cpu / words * 1e6 / 3600, 3) if words else None,
            "cpu_seconds_per_million_input_words": per_million(input_words)}


def process_cpu() -> float:
    """CPU seconds (user and system) of this process and of its ended children (the workers, once stopped)."""
    own, children = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
    return own.ru_utime + own.ru_stime + children.ru_utime + children.ru_stime


def summary(progress: dict[str, Any], before: int, started: tuple[float, float], workers: int,
            ray: str | None = None) -> dict[str, Any]:
    """``summary.json``: the corpus's counts, this run's throughput (from ``started``, the wall clock and
    :func:`process_cpu` when it began; its shards are those after the first ``before``; on Ray, whose actors are
    no children of this process, their shards' tagging seconds are added), and the tagging's alone over every
    shard (per process: the workers' seconds summed)."""
    shards, new = progress["shards"], progress["shards"][before:]
    corpus = {"shards": len(shards), "lines": words_of(shards, "lines"), "sentences": words_of(shards, "sentences"),
              "words": words_of(shards), "input_words": words_of(shards, "input_words"),
              "finished": progress["finished"]}
    cpu = process_cpu() - started[1] + (words_of(new, "cpu_seconds") if ray is not None else 0.0)
    run = rates(words_of(new), words_of(new, "input_words"), time.perf_counter() - started[0], cpu)
    tagging = rates(corpus["words"], corpus["input_words"], words_of(shards, "wall_seconds"),
                    words_of(shards, "cpu_seconds"))
    where = {"workers": workers} if ray is None else {"ray": ray, "actors": workers}
    return {**{key: progress[key] for key in ("teacher", "input", "scheme", "lines_per_shard")}, "corpus": corpus,
            "this_run": {**where, "shards": len(new), **run}, "tagging": tagging}


def label(teacher: str, text: str | Path | Sequence[str | Path], output: str | Path, *, workers: int = 1,
          limit_words: int | None = None, lines_per_shard: int = LINES_PER_SHARD, batch_size: int = 100,
          device: str = "auto", ray: str | None = None) -> dict[str, Any]:
    """Label ``text`` (a file, or several read one after the other) with ``teacher`` (a run directory, a
    ``.seqlab`` file or an installed model's name) into the corpus folder ``output``, going on from where an
    earlier run there stopped, in ``workers`` processes here or, with ``ray`` (a Ray address), ``workers`` Ray
    actors; returns (and writes) the summary."""
    started = (time.perf_counter(), process_cpu())
    texts = [require_file(t) for t in ([text] if isinstance(text, (str, Path)) else text)]
    if not texts:
        raise SeqlabError("seqlab distill label: expected at least one text file")
    output = Path(output)
    output.mkdir(parents=True, exist_ok=True)
    with run_lock(output, "labelling"):
        remove_stale_temp_files(output)
        progress = begin(output, teacher, texts, lines_per_shard)
        reopen(progress, output, limit_words)
        before = len(progress["shards"])
        if not progress["finished"] and (limit_words is None or words_of(progress["shards"]) < limit_words):
            _run(progress, output, teacher, texts, workers, limit_words, batch_size, device, ray)
        result = summary(progress, before, started, workers, ray)
        write_json(output, SUMMARY, result)
    return result


def _run(progress: dict[str, Any], output: Path, teacher: str, texts: Sequence[Path], workers: int,
         limit: int | None, batch_size: int, device: str, ray: str | None) -> None:
    """Tag and commit the shards after those ``progress`` lists, until the input ends or ``limit`` is reached."""
    budget = lambda: None if limit is None else limit - words_of(progress["shards"])  # noqa: E731
    pending = jobs(texts, len(progress["shards"]), progress["lines_per_shard"], budget)
    if ray is not None:
        from seqlab.apps.ray import in_actors

        results: Iterator[Labelled] = in_actors(teacher, pending, workers, label_job, (batch_size,), ray)
    elif workers > 1:
        results = in_workers(teacher, pending, workers, _label_in_worker, (batch_size,), chunk=1)
    else:
        from seqlab.apps.loader import load

        tagger = load(teacher, device)
        if tagger.task != "tagging":
            raise SeqlabError(f"{teacher}: a teacher must be a tagger, and this is a {tagger.task} model")
        results = (label_job(tagger, job, batch_size) for job in pending)
    try:
        for labelled in results:
            reached = commit(output, progress, labelled, limit)
            log.info("%s: shard %d written (%d lines from line %d); %d words labelled", output,
                     labelled.job.index, progress["shards"][-1]["lines"], labelled.job.first,
                     words_of(progress["shards"]))
            if reached:
                return
        progress["finished"] = True
        write_json(output, PROGRESS, progress)
    finally:
        close = getattr(results, "close", None)
        if close is not None:
            close()  # the workers stop (and their CPU time is counted) before the summary is made
