"""Bulk tagging on a Ray cluster: a ``seqlab.load``-ed tagger mapped over a Ray Dataset of texts.

``pip install 'seqlab[ray]'`` (in a checkout: ``pip install -e '.[ray]'``), then::

    import ray
    from seqlab.apps.ray import tag_dataset

    ray.init()                                   # or ray.init("ray://HEAD:10001") for a cluster
    texts = ray.data.read_text("corpus/*.txt.gz")  # one text per line, in a column "text"
    tagged = tag_dataset(texts, "en-ner-conll03", actors=8)
    tagged.write_parquet("tagged/")              # columns: text, spans, sentences (seqlab.core.schema)

:func:`tag_dataset` runs ``Dataset.map_batches`` with a pool of ``actors`` Ray actors, one CPU and one torch
thread each; every actor loads the model once and tags its batches with
:meth:`seqlab.tagging.api.SequenceTagger.tag_many`, so the spans are the ones ``seqlab tag`` gives. The
input's columns pass through (an ``id`` column keeps each row's identity; Ray Data does not keep row order
unless ``DataContext.get_current().execution_options.preserve_order`` is set). The actors hold ``actors``
CPUs for the whole run: on a machine with no more CPUs than that, read the input with a task that needs
none (``ray.data.read_text(path, num_cpus=0)``), or the read waits for a CPU that never comes free.
"""
from __future__ import annotations

from pathlib import Path
from typing import Any, Iterable

from seqlab.core.errors import SeqlabError
from seqlab.core.schema import encode_document
from seqlab.tagging.document import Document

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


def row_columns(documents: Iterable[Document]) -> dict[str, list[Any]]:
    """The columns :func:`tag_dataset` adds for a batch of tagged rows: per row, the ``spans`` and ``sentences``
    of :meth:`Document.to_dict <seqlab.tagging.document.Document.to_dict>`."""
    encoded = [encode_document(doc) for doc in documents]
    return {"spans": [doc["spans"] for doc in encoded], "sentences": [doc["sentences"] for doc in encoded]}


class _Tagger:
    """A Ray actor's callable: the model, loaded once on the CPU with one torch thread, tags a batch."""

    def __init__(self, model: str | None, column: str, options: dict[str, Any]) -> None:
        import torch

        from seqlab.apps.loader import load

        torch.set_num_threads(1)
        self.tagger = load(model, "cpu")
        self.column, self.options = column, options
        self.types = _schema()

    def __call__(self, batch: Any) -> Any:  # a pyarrow.Table → the same rows with spans and sentences
        import pyarrow as pa

        texts = ["" if text is None else text for text in batch.column(self.column).to_pylist()]
        columns = row_columns(self.tagger.tag_many(texts, **self.options))
        batch = batch.append_column("spans", pa.array(columns["spans"], type=self.types[0]))
        return batch.append_column("sentences", pa.array(columns["sentences"], type=self.types[1]))


def tag_dataset(dataset: Any, model: str | Path | None = None, *, text_column: str = "text", actors: int = 2,
                lines_per_call: int = 256, batch_size: int = 100, scheme: str | None = None,
                confidences: bool = True) -> Any:
    """Tag every text of ``dataset`` (a ``ray.data.Dataset`` with a string column ``text_column``) with
    ``model`` (a ``.seqlab`` file, a run directory or an installed model's name, readable on every node;
    ``None``: the installed English NER model) in a pool of ``actors`` Ray actors (one CPU each), handing
    each actor ``lines_per_call`` rows at a time. Returns a lazy Dataset with the input's columns and

    * ``spans``: per row, a list of ``{text, label, start, end, confidence, token_start, token_end}``
      (character offsets into the text);
    * ``sentences``: per row, a list of ``{tokens, offsets, labels, spans}``, labels in ``scheme`` (default the
      model's);

    both as ``Document.to_dict`` gives them (:mod:`seqlab.core.schema`).

    ``batch_size``, ``scheme`` and ``confidences`` mean what they mean for ``tag_many``. The model is loaded
    here once first, so a bad path or a relation model fails at once, not in every actor."""
    ray = _ray()
    from seqlab.apps.loader import load

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
    task = load(model, "cpu").task
    if task != "tagging":
        raise SeqlabError(f"tag_dataset: {model} is a {task} model, not a tagging model")
    options = {"batch_size": batch_size, "scheme": scheme, "confidences": confidences}
    return dataset.map_batches(
        _Tagger, batch_format="pyarrow", batch_size=lines_per_call, num_cpus=1,
        compute=ray.data.ActorPoolStrategy(size=actors), udf_modifying_row_count=False,
        fn_constructor_kwargs={"model": None if model is None else str(model), "column": text_column,
                               "options": options})
