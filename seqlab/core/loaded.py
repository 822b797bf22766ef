"""The loaded-model protocol: what every trained model that ``seqlab.load`` returns offers, whatever its task
(a :class:`~seqlab.tagging.api.SequenceTagger`, a :class:`~seqlab.relation.api.RelationModel`) or backend.

The CLI verbs and ``seqlab serve`` use a model through these members only, so a new task or backend needs no
``isinstance`` switch anywhere above it:

* ``task``: the config's ``task`` name (``tagging``, ``relation``);
* ``labels``: what the model tells apart (a tagger's span types, a relation model's directed relations);
* ``inputs``: the kinds of input :meth:`~LoadedModel.predict` takes, its default first (a tagger: ``texts``
  raw text, ``tokens`` pre-tokenised sentences; a relation model: ``sentences`` with marked nominals);
* ``predict(items, kind=..., **options)``: the results for a batch of inputs of one kind;
* ``encode(result)``: a result as the one JSON schema writes it (:mod:`seqlab.core.schema`);
* ``metadata()``: task, labels, backend, device and the resolved config, as JSON-ready data.
"""
from __future__ import annotations

from typing import Any, Protocol, Sequence, runtime_checkable

from seqlab.core.errors import SeqlabError

#: The backend a model is loaded with unless another is named: its trained torch modules. The backends
#: themselves are a table on the apps floor (:data:`seqlab.apps.backends.BACKENDS`).
DEFAULT_BACKEND = "torch"

#: The keys of :meth:`LoadedModel.metadata`.
METADATA_FIELDS = ("task", "labels", "backend", "device", "config")


@runtime_checkable
class LoadedModel(Protocol):
    """A trained model ready to predict: the members the CLI and ``seqlab serve`` use (module docstring)."""

    task: str
    backend: str
    inputs: tuple[str, ...]

    @property
    def labels(self) -> list[str]: ...

    def predict(self, items: Sequence[Any], *, kind: str | None = None, **options: Any) -> list[Any]: ...

    def encode(self, result: Any) -> dict[str, Any]: ...

    def metadata(self) -> dict[str, Any]: ...


def check_kind(model: LoadedModel, kind: str | None) -> str:
    """``kind`` (None: the model's default input kind), refused in one line when the model does not take it."""
    if kind is None:
        return model.inputs[0]
    if kind not in model.inputs:
        raise SeqlabError(f"a {model.task} model predicts from {', '.join(model.inputs)}; got input kind {kind!r}")
    return kind


def model_metadata(model: LoadedModel, device: Any, config: Any) -> dict[str, Any]:
    """:meth:`LoadedModel.metadata` of ``model``, on ``device``, with its resolved ``config`` as a plain tree."""
    from seqlab.core.strict import to_tree

    return {"task": model.task, "labels": model.labels, "backend": model.backend, "device": str(device),
            "config": to_tree(config)}
