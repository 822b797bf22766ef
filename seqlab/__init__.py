"""seqlab: sequence labelling (NER, chunking) and relation classification, with word representations.

The Python API in three lines::

    import seqlab
    tagger = seqlab.load("runs/conll03_glove")
    print(tagger.tag("Angela Merkel visited Paris."))      # [PER Angela Merkel] visited [LOC Paris].

:func:`load` returns a :class:`SequenceTagger` (``tag``, ``tag_many``, ``tag_tokens``, ``evaluate``) or a
:class:`RelationModel` (``classify``, ``classify_many``, ``evaluate``); :func:`train` trains any config.
"""
from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any, Union

from seqlab.core.loaded import DEFAULT_BACKEND
from seqlab.core.version import __version__

if TYPE_CHECKING:
    import torch

    from seqlab.relation.api import Relation, RelationModel
    from seqlab.tagging.api import SequenceTagger
    from seqlab.tagging.document import Document, Sentence, Span

__all__ = ["load", "train", "read_config", "SequenceTagger", "RelationModel", "Document", "Sentence", "Span",
           "Relation", "__version__"]

_LAZY = {  # torch is imported on first use, so `import seqlab` stays cheap
    "SequenceTagger": "seqlab.tagging.api", "RelationModel": "seqlab.relation.api", "Relation": "seqlab.relation.api",
    "Document": "seqlab.tagging.document", "Sentence": "seqlab.tagging.document", "Span": "seqlab.tagging.document",
}


def load(path: str | Path | None = None, device: "str | torch.device" = "auto", *,
         backend: str = DEFAULT_BACKEND) -> "Union[SequenceTagger, RelationModel]":
    """A trained model: a run directory ``seqlab train`` wrote (``--output``), a ``.seqlab`` file
    (``seqlab package``), or an installed model's short name; with no argument, the English NER model
    installed with seqlab (``en-ner-conll03``). Returns a :class:`SequenceTagger` for a tagging model, a
    :class:`RelationModel` for a relation model. ``device``: ``auto`` (the GPU when there is one), ``cpu``,
    ``cuda`` or ``cuda:N``. Weights load with ``torch.load(weights_only=True)``. ``backend="onnx"``: a
    tagger exported by ``seqlab export MODEL --format onnx --out DIR`` (pass DIR), whose emissions
    onnxruntime computes on the CPU (``pip install 'seqlab[onnx]'``); labels and confidences are decoded as
    with torch."""
    from seqlab.apps.loader import load as load_any

    return load_any(path, device, backend)


def train(config: Any, output: str | Path, *, overrides: tuple[str, ...] = (), resume: bool = False,
          progress: bool = True) -> dict[str, Any]:
    """Train a config (a YAML path, or a config object from :func:`read_config`) into the run directory
    ``output``; ``overrides`` are ``"a.b=c"`` strings as for ``--set``. Returns the run's metrics."""
    from seqlab.apps.tasks import read_config as read
    from seqlab.apps.training import train as train_any

    if isinstance(config, (str, Path)):
        config = read(config, overrides)
    elif overrides:
        raise TypeError("overrides apply to a config file; pass a path, or apply them with read_config")
    return train_any(config, output, resume=resume, progress=progress)


def read_config(path: str | Path, overrides: tuple[str, ...] = ()) -> Any:
    """Read and check a config of any task (its ``task`` key picks the schema), with ``a.b=c`` overrides."""
    from seqlab.apps.tasks import read_config as read

    return read(path, overrides)


def __getattr__(name: str) -> Any:
    if name in _LAZY:
        import importlib

        return getattr(importlib.import_module(_LAZY[name]), name)
    raise AttributeError(f"module 'seqlab' has no attribute {name!r}")
