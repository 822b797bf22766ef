"""Bulk tagging on a Ray cluster: a ``seqlab.load``-ed tagger mapped over a Ray Dataset of texts.

``pip install 'seqlab[ray]'`` (in a checkout: ``pip install -e '.[ray]'``), then::

    import ray
    from seqlab.apps.ray import tag_dataset

    ray.init()                                   # or ray.init("ray://HEAD:10001") for a cluster
    texts = ray.data.read_text("corpus/*.txt.gz")  # one text per line, in a column "text"
    tagged = tag_dataset(texts, "en-ner-conll03", actors=8)
    tagged.write_parquet("tagged/")              # columns: text, spans, sentences (seqlab.core.schema)

:func:`tag_dataset` runs ``Dataset.map_batches`` with a pool of ``actors`` Ray actors, one CPU and one torch
thread each; every actor loads the model once and tags its batches on the path ``seqlab tag`` streams a file
through (:meth:`seqlab.tagging.api.SequenceTagger.tag_many` with ``pool=POOL_BATCHES``: sentences sorted by
length into batches), so the spans are the ones ``seqlab tag`` gives. The two columns added are built from
flat lists of every token, label and offset of a batch (:func:`row_columns`), not from a dictionary per row.
The input's columns pass through (an ``id`` column keeps each row's identity; Ray Data does not keep row order
unless ``DataContext.get_current().execution_options.preserve_order`` is set). The actors hold ``actors``
CPUs for the whole run: on a machine with no more CPUs than that, read the input with a task that needs
none (``ray.data.read_text(path, num_cpus=0)``), or the read waits for a CPU that never comes free; write the
result from the driver (``iter_batches(batch_format="pyarrow")`` into a ``pyarrow.parquet.ParquetWriter``) or
with write tasks that need none (``write_parquet(path, ray_remote_args={"num_cpus": 0})``).

:func:`in_actors` is ``seqlab distill label --ray``'s pool: Ray actors that each hold a teacher tag the shards of
unlabeled text, and the driver writes them (:mod:`seqlab.apps.distill`).
"""
from __future__ import annotations

import itertools
import zipfile
from collections import deque
from pathlib import Path
from typing import Any, Callable, Iterable, Iterator, Sequence

from seqlab.core.errors import SeqlabError
from seqlab.core.schema import CONFIDENCE_DIGITS, SPAN_FIELDS
from seqlab.tagging.document import Document
from seqlab.core.runfiles import CONFIG

INSTALL_HINT = "pip install 'seqlab[ray]' (in a checkout: pip install -e '.[ray]')"


def _ray() -> Any:
    try:
        import ray
        import ray.data
    except ImportError:
        raise SeqlabError(f"tagging on Ray needs Ray Data, which is not installed: {INSTALL_HINT}") from None
    return ray


def _schema() -> tuple[Any, Any]:
    """The Arrow types of the two columns added: ``spans`` and ``sentences`` (:mod:`seqlab.core.schema`)."""
    import pyarrow as pa

    span = pa.struct([("text", pa.string()), ("label", pa.string()), ("start", pa.int64()), ("end", pa.int64()),
                      ("confidence", pa.float64()), ("token_start", pa.int64()), ("token_end", pa.int64())])
    sentence = pa.struct([("tokens", pa.list_(pa.string())), ("offsets", pa.list_(pa.list_(pa.int64()))),
                          ("labels", pa.list_(pa.string())), ("spans", pa.list_(span))])
    return pa.list_(span), pa.list_(sentence)


def _starts(counts: list[int]) -> Any:
    """The offsets of an Arrow list array whose lists hold ``counts`` items: 0, then the running sums."""
    import numpy as np
    import pyarrow as pa

    starts = np.zeros(len(counts) + 1, dtype=np.int32)
    np.cumsum(counts, out=starts[1:])
    return pa.array(starts)


def row_columns(documents: Sequence[Document]) -> dict[str, Any]:
    """The columns :func:`tag_dataset` adds for a batch of tagged rows, as Arrow arrays of :func:`_schema`'s
    types: per row, the ``spans`` and ``sentences`` of :meth:`Document.to_dict
    <seqlab.tagging.document.Document.to_dict>`. Every token, label, offset and span field of the batch goes
    into one flat list, and the nesting is Arrow offsets over them: Python work per sentence and per span, not
    per token."""
    import numpy as np
    import pyarrow as pa

    spans_type, sentences_type = _schema()
    tokens: list[str] = []
    labels: list[str] = []
    offsets: list[int] = []  # start, end of every token
    spans: list[Any] = []
    per_doc, per_sentence, spans_per_sentence, spans_per_doc = [], [], [], []
    for doc in documents:
        per_doc.append(len(doc.sentences))
        before = len(spans)
        for sentence in doc.sentences:
            per_sentence.append(len(sentence.tokens))
            tokens.extend(sentence.tokens)
            labels.extend(sentence.labels)
            offsets.extend(itertools.chain.from_iterable(sentence.offsets))
            spans_per_sentence.append(len(sentence.spans))
            spans.extend(sentence.spans)
        spans_per_doc.append(len(spans) - before)
    span_type = spans_type.value_type
    fields = {name: [getattr(span, name) for span in spans] for name in SPAN_FIELDS}
    fields["confidence"] = [round(value, CONFIDENCE_DIGITS) for value in fields["confidence"]]
    span_rows = pa.StructArray.from_arrays([pa.array(fields[f.name], f.type) for f in span_type], fields=list(span_type))
    pairs = pa.ListArray.from_arrays(pa.array(np.arange(0, len(offsets) + 1, 2, dtype=np.int32)),
                                     pa.array(offsets, pa.int64()))
    sentence_type = sentences_type.value_type
    sentence_rows = pa.StructArray.from_arrays([
        pa.ListArray.from_arrays(_starts(per_sentence), pa.array(tokens, pa.string())),
        pa.ListArray.from_arrays(_starts(per_sentence), pairs),
        pa.ListArray.from_arrays(_starts(per_sentence), pa.array(labels, pa.string())),
        pa.ListArray.from_arrays(_starts(spans_per_sentence), span_rows, type=sentence_type.field("spans").type),
    ], fields=list(sentence_type))
    return {"spans": pa.ListArray.from_arrays(_starts(spans_per_doc), span_rows, type=spans_type),
            "sentences": pa.ListArray.from_arrays(_starts(per_doc), sentence_rows, type=sentences_type)}


def _actor_model(model: str | None) -> Any:
    """An actor's model: loaded once on the CPU, with one torch thread (an actor holds one CPU), then frozen out of
    the garbage collector's scans, as in ``seqlab tag``."""
    import gc

    import torch

    from seqlab.apps.loader import load

    torch.set_num_threads(1)
    loaded = load(model, "cpu")
    gc.freeze()
    return loaded


class _Tagger:
    """A Ray actor's callable: the model, loaded once on the CPU with one torch thread, tags a batch."""

    def __init__(self, model: str | None, column: str, options: dict[str, Any]) -> None:
        from seqlab.tagging.config import POOL_BATCHES

        self.tagger = _actor_model(model)
        if self.tagger.task != "tagging":
            raise SeqlabError(f"tag_dataset: {model} is a {self.tagger.task} model, not a tagging model")
        self.column, self.options = column, {"pool": POOL_BATCHES, **options}

    def __call__(self, batch: Any) -> Any:  # a pyarrow.Table → the same rows with spans and sentences
        import pyarrow.compute as pc

        texts = pc.fill_null(batch.column(self.column), "").to_pylist()
        columns = row_columns(list(self.tagger.tag_many(texts, **self.options)))
        return batch.append_column("spans", columns["spans"]).append_column("sentences", columns["sentences"])


def _task(model: str | Path | None) -> str:
    """The ``task`` of ``model``'s config, read from the ``.seqlab`` file or run directory without loading the
    model (nor importing torch, as :mod:`seqlab.core.rundir` does); anything else (an export folder, a file that
    is no model) is loaded here, so that its one-line error comes once, before any actor starts."""
    import yaml

    from seqlab.apps.installed import model_path
    from seqlab.core.strict import load_yaml, read_mapping

    where = model_path(model)  # a misspelt installed name is refused here
    try:
        if where.is_file():
            with zipfile.ZipFile(where) as zf:
                tree = load_yaml(zf.read(CONFIG).decode("utf-8"))
        else:
            tree = read_mapping(where / CONFIG)
        if isinstance(tree, dict):
            return str(tree.get("task", "tagging"))
    except (OSError, zipfile.BadZipFile, KeyError, UnicodeDecodeError, yaml.YAMLError, SeqlabError):
        pass
    from seqlab.apps.loader import load

    return load(model, "cpu").task


def tag_dataset(dataset: Any, model: str | Path | None = None, *, text_column: str = "text", actors: int = 2,
                lines_per_call: int = 2048, batch_size: int = 100, scheme: str | None = None,
                confidences: bool = True) -> Any:
    """Tag every text of ``dataset`` (a ``ray.data.Dataset`` with a string column ``text_column``) with
    ``model`` (a ``.seqlab`` file, a run directory or an installed model's name, readable on every node;
    ``None``: the installed English NER model) in a pool of ``actors`` Ray actors (one CPU each), handing
    each actor ``lines_per_call`` rows at a time (as ``seqlab tag --workers`` hands its workers 2,048 lines: enough
    sentences to sort by length). Returns a lazy Dataset with the input's columns and

    * ``spans``: per row, a list of ``{text, label, start, end, confidence, token_start, token_end}``
      (character offsets into the text);
    * ``sentences``: per row, a list of ``{tokens, offsets, labels, spans}``, labels in ``scheme`` (default the
      model's);

    both as ``Document.to_dict`` gives them (:mod:`seqlab.core.schema`).

    ``batch_size``, ``scheme`` and ``confidences`` mean what they mean for ``tag_many``. The model's config is
    read here first (not the model: the driver does not import torch), so a bad path or a relation model fails
    at once, not in every actor."""
    ray = _ray()
    for name, value in (("actors", actors), ("lines_per_call", lines_per_call), ("batch_size", batch_size)):
        if value < 1:
            raise SeqlabError(f"tag_dataset: {name} must be a positive number, got {value}")
    if not isinstance(dataset, ray.data.Dataset):
        raise SeqlabError(f"tag_dataset: expected a ray.data.Dataset, got {type(dataset).__name__}")
    schema = dataset.schema(fetch_if_missing=False)  # known without reading the input, or None
    if schema is not None and text_column not in schema.names:
        raise SeqlabError(f"tag_dataset: the dataset has no column {text_column!r} (it has "
                          f"{', '.join(schema.names)}); say which with text_column=")
    if model is not None and Path(model).exists():
        model = Path(model).resolve()  # actors may start in another working directory
    task = _task(model)
    if task != "tagging":
        raise SeqlabError(f"tag_dataset: {model} is a {task} model, not a tagging model")
    options = {"batch_size": batch_size, "scheme": scheme, "confidences": confidences}
    return dataset.map_batches(
        _Tagger, batch_format="pyarrow", batch_size=lines_per_call, num_cpus=1,
        # two calls in flight per actor: one tagged, one waiting; no deeper queue that an idle actor could not take
        # over at the end of the input
        compute=ray.data.ActorPoolStrategy(size=actors, max_tasks_in_flight_per_actor=2),
        udf_modifying_row_count=False,
        fn_constructor_kwargs={"model": None if model is None else str(model), "column": text_column,
                               "options": options})


class _Worker:
    """A Ray actor of :func:`in_actors`: a tagger loaded once on the CPU with one torch thread, which runs the
    tasks it is handed on it."""

    def __init__(self, model: str) -> None:
        self.tagger = _actor_model(model)

    def run(self, task: Callable[..., Any], item: Any, args: tuple[Any, ...]) -> Any:
        return task(self.tagger, item, *args)


def connect(address: str) -> tuple[Any, bool]:
    """Ray, connected: to the running instance if this process has one, else ``ray.init(address)`` (``local``:
    a new instance on this machine; ``auto``: the cluster this machine is part of; ``ray://HEAD:10001``: a remote
    one); and whether this call started the connection (and so should end it)."""
    ray = _ray()
    if ray.is_initialized():
        return ray, False
    try:
        ray.init(address=None if address == "local" else address, include_dashboard=False, log_to_driver=False)
    except (ConnectionError, RuntimeError, ValueError) as err:
        raise SeqlabError(f"--ray {address}: no Ray cluster could be reached ({err}); give 'local' to start one on "
                          "this machine, 'auto' for the cluster this machine is part of, or ray://HEAD:10001") from None
    return ray, True


def in_actors(model: str, items: Iterable[Any], actors: int, task: Callable[..., Any], args: tuple[Any, ...],
              address: str) -> Iterator[Any]:
    """``task(tagger, item, *args)`` for each of ``items`` in one of ``actors`` Ray actors (one CPU each) that hold
    ``model`` as ``tagger`` (a ``.seqlab`` file, a run directory or an installed name, readable at that path on
    every node; a tagging model), the results in input order, at most two per actor in flight: the pool of
    ``seqlab distill label --ray`` (:mod:`seqlab.apps.distill`), as :func:`seqlab.apps.parallel.in_workers` is
    of its local workers. ``task`` must be importable by the actors (a module-level function). The caller writes
    the results, so its output keeps one writer. Closing the iterator ends the actors (and the connection, if this
    call made it)."""
    if actors < 1:
        raise SeqlabError(f"--workers: expected a positive number of Ray actors, got {actors}")
    if Path(model).exists():
        model = str(Path(model).resolve())  # actors may start in another working directory
    kind = _task(model)  # a bad path or a relation model is said once, before any actor starts
    if kind != "tagging":
        raise SeqlabError(f"{model}: expected a tagging model, and this is a {kind} model")
    ray, started = connect(address)
    worker = ray.remote(num_cpus=1)(_Worker)
    pool = [worker.remote(model) for _ in range(actors)]
    pending: deque = deque()
    try:
        for k, item in enumerate(items):
            pending.append(pool[k % actors].run.remote(task, item, args))
            if len(pending) >= 2 * actors:
                yield _result(ray, pending.popleft())
        while pending:
            yield _result(ray, pending.popleft())
    finally:
        for actor in pool:
            ray.kill(actor)
        if started:
            ray.shutdown()


def _result(ray: Any, ref: Any) -> Any:
    """A task's result; its :class:`SeqlabError` as itself, a lost actor or node as a :class:`SeqlabError` that says
    the shards written are kept."""
    try:
        return ray.get(ref)
    except ray.exceptions.RayTaskError as err:
        if isinstance(err.cause, SeqlabError):
            raise err.cause from None
        raise
    except (ray.exceptions.RayActorError, ray.exceptions.ObjectLostError) as err:
        raise SeqlabError(f"a Ray actor was lost ({type(err).__name__}: {str(err).splitlines()[0]}); the shards "
                          "written are kept: run the same command again to go on") from None
