"""``seqlab export MODEL --format onnx --out DIR``: a tagger's emissions graph as ONNX, beside its model file.

The graph is everything from a batch's ids and feature tensors to the label scores (emissions), with
dynamic batch, sentence-length, word-type and word-length axes; ``DIR`` holds

* ``model.onnx``: the graph (inputs: :data:`INPUTS` that the model reads; output ``emissions`` (B, T, K));
* ``model.seqlab``: the model as ``seqlab package`` writes it (config, vocabularies, fitted features, the
  feature tables it reads, and the weights, whose CRF transitions and constraints decode the emissions);
* ``onnx.json``: what the export is (format, version, inputs, opset, the sha256 of both files).

Decoding stays outside the graph, by the same decoder module the torch path uses (Viterbi under the tag
scheme's allowed transitions, and the CRF's forward-backward marginals for confidences): the two backends
then differ only in how the emissions are computed, so a label can differ only if the emissions do, and
the time-step loops stay in the decoder that is already tuned for them instead of an ONNX ``Loop``.
``seqlab.load(DIR, backend="onnx")`` runs the graph with onnxruntime (:mod:`seqlab.apps.onnx_runtime`);
``seqlab.load(DIR)`` loads ``model.seqlab`` with torch.
"""
from __future__ import annotations

import hashlib
import io
import json
import shutil
import warnings
from pathlib import Path
from typing import Any

import torch
from torch import nn

from seqlab.apps.onnx_runtime import FORMAT, FORMAT_VERSION, MANIFEST, ONNX, PACKAGE, open_runtime, require
from seqlab.core import rundir
from seqlab.core.atomic import atomic_open
from seqlab.core.errors import SeqlabError
from seqlab.data.batching import Batch

OPSET = 17
#: Every input a tagger's graph may read, with its dynamic axes; a graph has those its embedder uses.
INPUTS = {
    "words": {0: "batch", 1: "length"},  # int64 (B, T) word ids
    "caps": {0: "batch", 1: "length"},  # int64 (B, T) capitalization ids
    "chars": {0: "types", 1: "word_length"},  # int64 (U, C) char ids of the batch's distinct word types
    "char_lengths": {0: "types"},  # int64 (U,)
    "type_index": {0: "batch", 1: "length"},  # int64 (B, T) row of `chars` of each token
    "features": {0: "batch", 1: "length"},  # float32 (B, T, F) fixed feature vectors
    "feature_ids": {0: "batch", 1: "length"},  # int64 (B, T, k) discrete feature ids
    "lengths": {0: "batch"},  # int64 (B,) sentence lengths
}
#: The largest difference between the graph's and torch's emissions that an export accepts (float32 rounding).
TOLERANCE = 1e-3


def input_names(model: nn.Module) -> list[str]:
    """The graph inputs a tagger reads, in :data:`INPUTS` order."""
    e = model.embedder
    used = {"words": e.words is not None, "caps": e.caps is not None, "chars": e.chars is not None,
            "char_lengths": e.chars is not None, "type_index": e.chars is not None, "features": bool(e.feature_dim),
            "feature_ids": len(e.discrete) > 0, "lengths": True}
    return [name for name in INPUTS if used[name]]


class EmissionsGraph(nn.Module):
    """A tagger's eval-mode ``emissions`` as a function of plain tensors, named by :func:`input_names`."""

    def __init__(self, model: nn.Module) -> None:
        super().__init__()
        self.model, self.names = model, input_names(model)

    def forward(self, *inputs: torch.Tensor) -> torch.Tensor:
        given = dict(zip(self.names, inputs))
        lengths = given["lengths"]  # shape: (B,)
        reference = given.get("words", given.get("type_index", given.get("features", given.get("feature_ids"))))
        steps = torch.arange(reference.shape[1], device=lengths.device)  # shape: (T,)
        mask = steps.unsqueeze(0) < lengths.unsqueeze(1)  # shape: (B, T)
        empty = torch.zeros(0, dtype=torch.long)
        batch = Batch(words=given.get("words", empty), caps=given.get("caps", empty), mask=mask,
                      chars=given.get("chars", empty), char_lengths=given.get("char_lengths", empty),
                      type_index=given.get("type_index", empty), features=given.get("features"), tags=None,
                      indices=empty, feature_ids=given.get("feature_ids"))
        return self.model.emissions(batch)  # shape: (B, T, K)


def example_inputs(model: nn.Module) -> tuple[torch.Tensor, ...]:
    """Inputs of two sentences (3 and 2 tokens, 3 word types) for tracing and checking the graph."""
    e, gen = model.embedder, torch.Generator().manual_seed(0)
    ids = lambda high, *shape: torch.randint(1, max(2, high), shape, generator=gen)  # noqa: E731
    lengths = torch.tensor([3, 2])
    made = {
        "words": ids(e.words.num_embeddings, 2, 3) if e.words is not None else None,
        "caps": ids(e.caps.num_embeddings, 2, 3) if e.caps is not None else None,
        "chars": ids(e.chars.embedding.num_embeddings, 3, 4) if e.chars is not None else None,
        "char_lengths": torch.tensor([4, 2, 3]), "type_index": torch.tensor([[0, 1, 2], [2, 1, 0]]),
        "features": torch.randn(2, 3, e.feature_dim, generator=gen) if e.feature_dim else None,
        "feature_ids": torch.stack([ids(t.num_embeddings, 2, 3) for t in e.discrete], -1) if len(e.discrete) else None,
        "lengths": lengths,
    }
    return tuple(made[name] for name in input_names(model))


def to_onnx(model: nn.Module, *, opset: int = OPSET) -> bytes:
    """The ONNX graph of a tagger's emissions (eval mode), checked against torch on an example batch."""
    graph = EmissionsGraph(model).eval()
    example = example_inputs(model)
    names = graph.names
    buffer = io.BytesIO()
    with warnings.catch_warnings():  # the TorchScript exporter's deprecation and tracer notes
        warnings.simplefilter("ignore")
        # dynamo=False: the TorchScript exporter maps nn.LSTM to ONNX's LSTM op and needs no onnxscript
        torch.onnx.export(graph, example, buffer, dynamo=False, opset_version=opset, input_names=names,
                          output_names=["emissions"], dynamic_axes={**{n: INPUTS[n] for n in names},
                                                                    "emissions": {0: "batch", 1: "length"}})
    data = buffer.getvalue()
    _check(data, graph, example, names)
    return data


def _check(data: bytes, graph: nn.Module, example: tuple[torch.Tensor, ...], names: list[str]) -> None:
    """Refuse a graph whose emissions differ from torch's by more than :data:`TOLERANCE` on ``example``."""
    with torch.inference_mode():
        expected = graph(*example)  # shape: (B, T, K)
    got = open_runtime(data, threads=1).run(None, {n: x.numpy() for n, x in zip(names, example)})[0]
    mask = (torch.arange(expected.shape[1]).unsqueeze(0) < example[-1].unsqueeze(1)).unsqueeze(-1)
    gap = float(((torch.from_numpy(got) - expected).abs() * mask).max())
    if not gap <= TOLERANCE:
        raise SeqlabError(f"the exported graph's emissions differ from torch's by {gap:.2g} "
                          f"(more than {TOLERANCE}); this model cannot be exported faithfully")


def _sha256(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def export_onnx(model: str | Path | None, out: str | Path, *, opset: int = OPSET) -> dict[str, Any]:
    """Export the tagger ``model`` (a run directory, a ``.seqlab`` file, an installed short name, or None for
    the default model) into the folder ``out`` (see the module notes); returns the written ``onnx.json``."""
    from seqlab.apps.package import package, read_manifest
    from seqlab.apps.installed import DEFAULT_MODEL, MODELS, model_path
    from seqlab.apps.loader import load as load_any
    from seqlab.apps.tasks import DEFAULT_TASK
    from seqlab.core.strict import read_mapping
    from seqlab.core.version import __version__
    from seqlab.tagging.api import SequenceTagger

    require("onnx")  # the exporter writes its format
    require("onnxruntime")  # the export is checked by running it
    source, out = model_path(model), Path(out)
    if out.exists() and not out.is_dir():
        raise SeqlabError(f"--out {out}: a file, not a folder; name a folder for model.onnx and its model file")
    if (source / MANIFEST).is_file():
        source = source / PACKAGE  # an export folder: export its model file again
    if not source.exists():
        raise SeqlabError(f"{source}: no such run directory or model file")
    task = (read_manifest(source)["task"] if source.is_file()
            else read_mapping(source / rundir.CONFIG).get("task", DEFAULT_TASK))
    if task != "tagging":
        raise SeqlabError(f"{model}: ONNX export covers taggers (BiLSTM-CRF, softmax, windowed); this is a {task} model")
    out.mkdir(parents=True, exist_ok=True)
    target = out / PACKAGE
    if source.is_file():
        if source.resolve() != target.resolve():
            with open(source, "rb") as src, atomic_open(target, "wb") as dst:
                shutil.copyfileobj(src, dst)
    else:
        package(source, target)  # the run's files, portable (feature tables included)
    tagger: SequenceTagger = load_any(target, "cpu")  # a tagger: the task was checked above
    graph = to_onnx(tagger.model, opset=opset)
    with atomic_open(out / ONNX, "wb") as handle:
        handle.write(graph)
    manifest = {"format": FORMAT, "format_version": FORMAT_VERSION, "seqlab_version": __version__,
                "torch_version": torch.__version__, "opset": opset,
                "source": str(model or DEFAULT_MODEL) if model is None or str(model) in MODELS else Path(str(model)).name,
                "encoder": tagger.config.model.encoder, "decoder": tagger.config.model.decoder,
                "inputs": input_names(tagger.model), "outputs": ["emissions"],
                "sha256": {ONNX: _sha256(out / ONNX), PACKAGE: _sha256(target)}}
    with atomic_open(out / MANIFEST, "w") as handle:
        handle.write(json.dumps(manifest, indent=2) + "\n")
    return manifest
