"""Bulk tagging on one machine: worker processes, one torch thread each, output in input order.

``seqlab tag --workers N`` sends chunks of input lines (raw text, or a pre-tokenized line's or a CoNLL(-U)
sentence's token list) to N processes that each load the model once; each worker renders its chunk's output, at
most ``2 × N`` chunks are in flight, so memory stays bounded however long the input is, and the chunks are written
in input order. ``--shard i/n`` keeps the lines whose number is ``i`` modulo ``n`` (counting from 0), so ``n`` jobs
of an array (Slurm, Kubernetes) tag a corpus between them with no coordination.
"""
from __future__ import annotations

import gc
import itertools
import multiprocessing
from collections import deque
from pathlib import Path
from typing import Any, Callable, Iterable, Iterator

from seqlab.core.errors import SeqlabError
from seqlab.core.loaded import DEFAULT_BACKEND
from seqlab.tagging.document import render

#: An input line: raw text, or a pre-tokenized sentence's tokens (``seqlab tag --tokenized``, ``--input-format``),
#: which ``tag_many`` takes alike.
Line = str | list[str]
_MODEL: Any = None  # a worker's model: (name, backend) until its first chunk loads it, then the model


def parse_shard(text: str) -> tuple[int, int]:
    """``"i/n"`` → (i, n) with 0 ≤ i < n, or a clear error."""
    index, sep, count = text.partition("/")
    try:
        i, n = int(index), int(count)
    except ValueError:
        raise SeqlabError(f"--shard: expected i/n such as 0/4, got {text!r}") from None
    if not sep or n < 1 or not 0 <= i < n:
        raise SeqlabError(f"--shard: expected i/n with 0 <= i < n, got {text!r}")
    return i, n


def shard(lines: Iterable[Line], index: int, count: int) -> Iterator[tuple[int, Line]]:
    """(line number from 1, line) for the lines of shard ``index`` of ``count``."""
    for number, line in enumerate(lines, start=1):
        if (number - 1) % count == index:
            yield number, line


def _start(model: str | None, backend: str = DEFAULT_BACKEND) -> None:
    """A worker's initializer: one torch thread, and which model to load on its first chunk (a failure there
    comes back as that chunk's error; one in an initializer would make the pool start workers forever)."""
    import torch

    global _MODEL
    torch.set_num_threads(1)
    _MODEL = (model, backend)


def worker_tagger() -> Any:
    """The model of this worker process (loaded on its first call): what a task run by :func:`in_workers` tags
    with."""
    global _MODEL
    if isinstance(_MODEL, tuple):
        from seqlab.apps.loader import load

        model, backend = _MODEL
        loaded = load(model, "cpu", backend=backend)
        if loaded.task != "tagging":
            raise SeqlabError(f"{model}: seqlab tag needs a tagging model, and this one is a {loaded.task} model")
        _MODEL = loaded
        gc.freeze()  # as in one process: the modules and model just loaded are not scanned by every collection
    return _MODEL


def _tag_and_render(numbered: list[tuple[int, Line]], options: dict[str, Any], fmt: str) -> str:
    tagger = worker_tagger()
    documents = tagger.tag_many([line for _, line in numbered], **options)
    return render(zip((number for number, _ in numbered), documents), fmt, token_labels=tagger.labelling.conllu_upos)


def render_in_workers(model: str | Path | None, numbered: Iterable[tuple[int, Line]], *, workers: int, fmt: str,
                      options: dict[str, Any] | None = None, chunk: int = 2048,
                      backend: str = DEFAULT_BACKEND) -> Iterator[str]:
    """Tag the lines of (line number, line) pairs in ``workers`` processes (each loading ``model`` with
    ``backend``), ``chunk`` lines a task, each calling ``tag_many(**options)`` (batch_size, scheme, confidences)
    and rendering the chunk's documents in ``fmt`` (:func:`seqlab.tagging.document.render`): what
    ``seqlab tag --workers`` writes, in input order, with no documents sent back to be rendered here."""
    yield from in_workers(model, numbered, workers, _tag_and_render, (options or {}, fmt), chunk, backend)


def in_workers(model: str | Path | None, items: Iterable[Any], workers: int, task: Callable[..., Any],
               args: tuple[Any, ...], chunk: int, backend: str = DEFAULT_BACKEND) -> Iterator[Any]:
    """``task(part, *args)`` for each ``chunk`` of ``items`` in ``workers`` processes that load ``model`` (a task
    gets it from :func:`worker_tagger`), results in input order, at most ``2 × workers`` chunks in flight (the
    items are read ahead by :func:`parts`). Closing the iterator early stops the workers."""
    if workers < 1:
        raise SeqlabError(f"--workers: expected a positive number of processes, got {workers}")
    context = multiprocessing.get_context("spawn")  # a fresh interpreter: no forked torch thread pools
    with context.Pool(workers, initializer=_start, initargs=(None if model is None else str(model), backend)) as pool:
        pending: deque = deque()
        for part in parts(items, chunk, workers):
            pending.append(pool.apply_async(task, (part, *args)))
            if len(pending) >= 2 * workers:
                yield _result(pending.popleft())
        while pending:
            yield _result(pending.popleft())


def parts(items: Iterable[Any], chunk: int, workers: int, smallest: int = 128) -> Iterator[list[Any]]:
    """``chunk``-item lists of ``items``, but the last ``2 × workers`` chunks' worth (read ahead, so memory stays
    bounded) in shrinking parts, each a ``2 × workers``-th of what is left (at most ``chunk``, at least ``smallest``): near the end
    of the input no worker waits idle while another tags a whole chunk (guided self-scheduling)."""
    items, ahead, buffer = iter(items), 2 * workers * chunk, deque()
    while True:
        while len(buffer) < ahead + chunk:
            more = list(itertools.islice(items, chunk))
            buffer.extend(more)
            if len(more) < chunk:
                break
        else:
            yield [buffer.popleft() for _ in range(chunk)]
            continue
        while buffer:
            size = min(len(buffer), chunk, max(smallest, -(-len(buffer) // (2 * workers))))
            yield [buffer.popleft() for _ in range(size)]
        return


def _result(job: Any) -> Any:
    try:
        return job.get()
    except SeqlabError:
        raise
    except Exception as err:  # a worker died or raised: say so in one line
        raise SeqlabError(f"a tagging worker failed: {type(err).__name__}: {err}") from None
