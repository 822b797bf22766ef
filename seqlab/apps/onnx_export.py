"""``seqlab export MODEL --format onnx --out DIR``: a tagger's graphs as ONNX, beside its model file.

A tagger that reads words' spelling gets two graphs, as the torch backend computes it: the character BiLSTM
runs once per word type (its vectors kept from batch to batch), and the emissions graph reads those vectors
per token. ``DIR`` holds

* ``model.onnx``: the emissions graph, from a batch's ids, spelling vectors and feature tensors to the label
  scores (inputs: :data:`INPUTS` that the model reads; output ``emissions`` (B, T, K)), with dynamic batch and
  sentence-length axes;
* ``spelling.onnx`` (a model with a character BiLSTM): word types' characters to their spelling vectors
  (inputs :data:`SPELLING_INPUTS`, output ``spelling`` (U, C_dim)); the backend feeds it word types of one
  length at a time, so no padded character is computed;
* ``model.seqlab``: the model as ``seqlab package`` writes it (config, vocabularies, fitted features, the
  feature tables it reads, and the weights, whose CRF transitions and constraints decode the emissions);
* ``onnx.json``: what the export is (format, version, graphs and their inputs, opset, quantization, the sha256
  of every file).

``--quantize int8`` stores the graphs' weights as int8 (onnxruntime's dynamic quantization: LSTM, MatMul and
embedding Gather), a smaller file whose labels may differ from torch's in a few tokens.
Decoding stays outside the graph, by the same decoder module the torch path uses (Viterbi under the tag
scheme's allowed transitions, and the CRF's forward-backward marginals for confidences): the two backends
then differ only in how the emissions are computed, so a label can differ only if the emissions do, and
the time-step loops stay in the decoder that is already tuned for them instead of an ONNX ``Loop``.
``seqlab.load(DIR, backend="onnx")`` runs the graphs with onnxruntime (:mod:`seqlab.apps.onnx_runtime`);
``seqlab.load(DIR)`` loads ``model.seqlab`` with torch.
"""
from __future__ import annotations

import copy
import hashlib
import io
import json
import logging
import shutil
import tempfile
import warnings
from pathlib import Path
from typing import Any

import torch
from torch import nn

from seqlab.apps.onnx_runtime import (FORMAT, FORMAT_VERSION, MANIFEST, ONNX, PACKAGE, SPELLING, open_runtime,
                                      require)
from seqlab.core import rundir
from seqlab.core.atomic import atomic_open
from seqlab.core.errors import SeqlabError
from seqlab.data.batching import Batch
from seqlab.modules.rnn import BiLSTM

OPSET = 17
#: Every input an emissions graph may read, with its dynamic axes; a graph has those its embedder uses.
INPUTS = {
    "words": {0: "batch", 1: "length"},  # int64 (B, T) word ids
    "caps": {0: "batch", 1: "length"},  # int64 (B, T) capitalization ids
    "char_vectors": {0: "batch", 1: "length"},  # float32 (B, T, C_dim) spelling vectors (the spelling graph's)
    "features": {0: "batch", 1: "length"},  # float32 (B, T, F) fixed feature vectors
    "feature_ids": {0: "batch", 1: "length"},  # int64 (B, T, k) discrete feature ids
    "lengths": {0: "batch"},  # int64 (B,) sentence lengths
}
#: The spelling graph's inputs: the characters of U word types, padded to the longest, and their lengths.
SPELLING_INPUTS = {
    "chars": {0: "types", 1: "word_length"},  # int64 (U, C) char ids
    "char_lengths": {0: "types"},  # int64 (U,)
}
#: The largest difference between a graph's and torch's outputs that an export accepts (float32 rounding).
TOLERANCE = 1e-3
#: What ``--quantize`` may name: None (float32) or int8 (dynamic quantization of the weights).
QUANTIZE = (None, "int8")


def input_names(model: nn.Module) -> list[str]:
    """The emissions graph's inputs for a tagger, in :data:`INPUTS` order."""
    e = model.embedder
    used = {"words": e.words is not None, "caps": e.caps is not None, "char_vectors": e.chars is not None,
            "features": bool(e.feature_dim), "feature_ids": len(e.discrete) > 0, "lengths": True}
    return [name for name in INPUTS if used[name]]


class EmissionsGraph(nn.Module):
    """A tagger's eval-mode ``emissions`` as a function of plain tensors, named by :func:`input_names`; spelling
    vectors come in precomputed (:class:`SpellingGraph`)."""

    def __init__(self, model: nn.Module) -> None:
        super().__init__()
        self.model, self.names = model, input_names(model)

    def forward(self, *inputs: torch.Tensor) -> torch.Tensor:
        given = dict(zip(self.names, inputs))
        lengths = given["lengths"]  # shape: (B,)
        reference = given.get("words", given.get("char_vectors", given.get("features", given.get("feature_ids"))))
        steps = torch.arange(reference.shape[1], device=lengths.device)  # shape: (T,)
        mask = steps.unsqueeze(0) < lengths.unsqueeze(1)  # shape: (B, T)
        empty = torch.zeros(0, dtype=torch.long)
        batch = Batch(words=given.get("words", empty), caps=given.get("caps", empty), mask=mask, chars=empty,
                      char_lengths=empty, type_index=empty, features=given.get("features"), tags=None,
                      indices=empty, char_vectors=given.get("char_vectors"), feature_ids=given.get("feature_ids"))
        return self.model.emissions(batch)  # shape: (B, T, K)


class SpellingGraph(nn.Module):
    """A tagger's character BiLSTM (eval mode): word types' characters (U, C) and lengths (U,) to their
    spelling vectors (U, C_dim)."""

    def __init__(self, model: nn.Module) -> None:
        super().__init__()
        self.chars = model.embedder.chars

    def forward(self, chars: torch.Tensor, lengths: torch.Tensor) -> torch.Tensor:
        return self.chars(chars, lengths)  # shape: (U, C_dim)


def _onnx_gates(weight: torch.Tensor, hidden: int) -> torch.Tensor:
    """An LSTM weight's gate blocks in ONNX's order (input, output, forget, cell) from torch's (input, forget,
    cell, output); shape: (4H, ...) either way."""
    i, f, c, o = weight.split(hidden)
    return torch.cat([i, o, f, c])


class _LSTMOp(torch.autograd.Function):
    """A :class:`BiLSTM`'s outputs while tracing (computed by the BiLSTM itself), exported as ONNX ``LSTM`` ops:
    one bidirectional op per layer with ``sequence_lens``, whose backward direction reads each sequence reversed
    within its length as the BiLSTM does, in place of the traced gathers, transposes and two one-way LSTMs."""

    @staticmethod
    def forward(ctx: Any, inputs: torch.Tensor, lengths: torch.Tensor, outputs: torch.Tensor, final: torch.Tensor,
                hidden: int, *weights: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        return outputs.clone(), final.clone()

    @staticmethod
    def symbolic(g: Any, inputs: Any, lengths: Any, outputs: Any, final: Any, hidden: int, *weights: Any) -> Any:
        shape = lambda *dims: g.op("Constant", value_t=torch.tensor(dims))  # noqa: E731
        x = g.op("Transpose", inputs, perm_i=[1, 0, 2])  # shape: (T, B, D)
        lens = g.op("Cast", lengths, to_i=6)  # int32, as the LSTM op reads sequence_lens
        layers = len(weights) // 3
        for depth in range(layers):
            w, r, b = weights[3 * depth: 3 * depth + 3]
            y, last, _ = g.op("LSTM", x, w, r, b, lens, direction_s="bidirectional", hidden_size_i=hidden,
                              outputs=3)  # shapes: (T, 2, B, H), (2, B, H), (2, B, H)
            if depth + 1 < layers:
                x = g.op("Reshape", g.op("Transpose", y, perm_i=[0, 2, 1, 3]), shape(0, 0, -1))  # shape: (T, B, 2H)
        out = g.op("Reshape", g.op("Transpose", y, perm_i=[2, 0, 1, 3]), shape(0, 0, -1))  # shape: (B, T, 2H)
        return out, g.op("Reshape", g.op("Transpose", last, perm_i=[1, 0, 2]), shape(0, -1))  # (B, 2H)


class _ExportBiLSTM(nn.Module):
    """A :class:`BiLSTM` that traces into ONNX ``LSTM`` ops with sequence lengths (:class:`_LSTMOp`), its
    weights held in ONNX's layout; it computes what the BiLSTM computes."""

    def __init__(self, bilstm: BiLSTM) -> None:
        super().__init__()
        self.bilstm, h = bilstm, bilstm.hidden
        for depth, (fwd, bwd) in enumerate(zip(bilstm.forward_layers, bilstm.backward_layers)):
            pair = (fwd, bwd)
            self.register_buffer(f"w{depth}", torch.stack([_onnx_gates(m.weight_ih_l0, h) for m in pair]).detach())
            self.register_buffer(f"r{depth}", torch.stack([_onnx_gates(m.weight_hh_l0, h) for m in pair]).detach())
            self.register_buffer(f"b{depth}", torch.stack([torch.cat([_onnx_gates(m.bias_ih_l0, h),
                                                                      _onnx_gates(m.bias_hh_l0, h)])
                                                           for m in pair]).detach())  # shape: (2, 8H)

    def forward(self, inputs: torch.Tensor, lengths: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        outputs, final = self.bilstm(inputs, lengths)  # shapes: (B, T, 2H), (B, 2H)
        weights = [getattr(self, f"{kind}{depth}") for depth in range(len(self.bilstm.forward_layers))
                   for kind in "wrb"]
        return _LSTMOp.apply(inputs, lengths, outputs, final, self.bilstm.hidden, *weights)


def for_export(model: nn.Module) -> nn.Module:
    """A copy of ``model`` (eval mode) whose BiLSTMs trace into ONNX ``LSTM`` ops with sequence lengths."""
    model = copy.deepcopy(model).eval()
    for parent in list(model.modules()):
        for name, child in list(parent.named_children()):
            if isinstance(child, BiLSTM):
                setattr(parent, name, _ExportBiLSTM(child))
    return model


def example_inputs(model: nn.Module) -> tuple[torch.Tensor, ...]:
    """Emissions graph inputs of two sentences (3 and 2 tokens) for tracing and checking the graph."""
    e, gen = model.embedder, torch.Generator().manual_seed(0)
    ids = lambda high, *shape: torch.randint(1, max(2, high), shape, generator=gen)  # noqa: E731
    made = {
        "words": ids(e.words.num_embeddings, 2, 3) if e.words is not None else None,
        "caps": ids(e.caps.num_embeddings, 2, 3) if e.caps is not None else None,
        "char_vectors": torch.randn(2, 3, e.chars.output_dim, generator=gen) if e.chars is not None else None,
        "features": torch.randn(2, 3, e.feature_dim, generator=gen) if e.feature_dim else None,
        "feature_ids": torch.stack([ids(t.num_embeddings, 2, 3) for t in e.discrete], -1) if len(e.discrete) else None,
        "lengths": torch.tensor([3, 2]),
    }
    return tuple(made[name] for name in input_names(model))


def spelling_example(model: nn.Module) -> tuple[torch.Tensor, torch.Tensor]:
    """Spelling graph inputs: three word types of 4, 2 and 3 characters."""
    gen = torch.Generator().manual_seed(0)
    chars = torch.randint(1, max(2, model.embedder.chars.embedding.num_embeddings), (3, 4), generator=gen)
    lengths = torch.tensor([4, 2, 3])
    return chars * (torch.arange(4).unsqueeze(0) < lengths.unsqueeze(1)), lengths  # padding ids 0


def to_onnx(model: nn.Module, *, opset: int = OPSET) -> dict[str, bytes]:
    """A tagger's graphs (eval mode) by file name: ``model.onnx``, and ``spelling.onnx`` for a model with a
    character BiLSTM; each checked against torch on an example."""
    model = for_export(model)
    graphs = {ONNX: _trace(EmissionsGraph(model).eval(), example_inputs(model), input_names(model), INPUTS,
                           "emissions", {0: "batch", 1: "length"}, opset)}
    if model.embedder.chars is not None:
        graphs[SPELLING] = _trace(SpellingGraph(model).eval(), spelling_example(model), list(SPELLING_INPUTS),
                                  SPELLING_INPUTS, "spelling", {0: "types"}, opset)
    return graphs


def _trace(graph: nn.Module, example: tuple[torch.Tensor, ...], names: list[str], axes: dict[str, dict[int, str]],
           output: str, output_axes: dict[int, str], opset: int) -> bytes:
    """``graph`` traced into ONNX, refused if its output differs from torch's by more than :data:`TOLERANCE`."""
    buffer = io.BytesIO()
    with warnings.catch_warnings():  # the TorchScript exporter's deprecation and tracer notes
        warnings.simplefilter("ignore")
        # dynamo=False: the TorchScript exporter maps nn.LSTM to ONNX's LSTM op and needs no onnxscript
        torch.onnx.export(graph, example, buffer, dynamo=False, opset_version=opset, input_names=names,
                          output_names=[output], dynamic_axes={**{n: axes[n] for n in names}, output: output_axes})
    data = buffer.getvalue()
    with torch.inference_mode():
        expected = graph(*example)  # shape: (B, T, K) or (U, C_dim)
    got = torch.from_numpy(open_runtime(data, threads=1).run(None, {n: x.numpy() for n, x in zip(names, example)})[0])
    if output == "emissions":  # padding positions are not compared
        lengths = example[names.index("lengths")]  # shape: (B,)
        real = (torch.arange(expected.shape[1]).unsqueeze(0) < lengths.unsqueeze(1)).unsqueeze(-1)  # (B, T, 1)
        got, expected = got * real, expected * real
    gap = float((got - expected).abs().max())
    if not gap <= TOLERANCE:
        raise SeqlabError(f"the exported graph's {output} differ from torch's by {gap:.2g} "
                          f"(more than {TOLERANCE}); this model cannot be exported faithfully")
    return data


def quantize_int8(data: bytes) -> bytes:
    """A graph with its weights stored as int8: onnxruntime's dynamic quantization (LSTM, MatMul and embedding
    Gather weights as signed int8, activations quantized per call)."""
    from onnxruntime.quantization import QuantType, quantize_dynamic

    with tempfile.TemporaryDirectory(prefix="seqlab-quantize-") as tmp:
        source, target = Path(tmp) / "float.onnx", Path(tmp) / "int8.onnx"
        source.write_bytes(data)
        before = logging.root.manager.disable
        logging.disable(logging.WARNING)  # the quantizer's notes to the root logger (pre-processing advice)
        try:
            quantize_dynamic(source, target, weight_type=QuantType.QInt8)
        finally:
            logging.disable(before)
        return target.read_bytes()


def _sha256(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def export_onnx(model: str | Path | None, out: str | Path, *, opset: int = OPSET,
                quantize: str | None = None) -> dict[str, Any]:
    """Export the tagger ``model`` (a run directory, a ``.seqlab`` file, an export folder, an installed short name,
    or None for the default model) into the folder ``out`` (see the module notes), its graphs' weights as
    ``quantize`` names (:data:`QUANTIZE`); returns the written ``onnx.json``."""
    from seqlab.apps.model_file import read_manifest
    from seqlab.apps.package import package
    from seqlab.apps.installed import DEFAULT_MODEL, MODELS, model_path
    from seqlab.apps.loader import load as load_any
    from seqlab.apps.tasks import DEFAULT_TASK
    from seqlab.core.strict import read_mapping
    from seqlab.core.version import __version__
    from seqlab.tagging.api import SequenceTagger

    if quantize not in QUANTIZE:
        raise SeqlabError(f"--quantize: expected one of {[q for q in QUANTIZE if q]}, got {quantize!r}")
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
    graphs = to_onnx(tagger.model, opset=opset)
    for name, data in graphs.items():
        with atomic_open(out / name, "wb") as handle:
            handle.write(quantize_int8(data) if quantize == "int8" else data)
    if SPELLING not in graphs:
        (out / SPELLING).unlink(missing_ok=True)  # an earlier export's, of another model
    manifest = {"format": FORMAT, "format_version": FORMAT_VERSION, "seqlab_version": __version__,
                "torch_version": torch.__version__, "opset": opset, "quantize": quantize,
                "source": str(model or DEFAULT_MODEL) if model is None or str(model) in MODELS else Path(str(model)).name,
                "encoder": tagger.config.model.encoder, "decoder": tagger.config.model.decoder,
                "inputs": input_names(tagger.model), "outputs": ["emissions"],
                "spelling": {"inputs": list(SPELLING_INPUTS), "outputs": ["spelling"]} if SPELLING in graphs else None,
                "sha256": {name: _sha256(out / name) for name in [ONNX, *([SPELLING] if SPELLING in graphs else []),
                                                                  PACKAGE]}}
    with atomic_open(out / MANIFEST, "w") as handle:
        handle.write(json.dumps(manifest, indent=2) + "\n")
    return manifest
