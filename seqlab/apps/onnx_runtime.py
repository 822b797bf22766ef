"""The onnxruntime backend of a tagger: ``seqlab.load(DIR, backend="onnx")`` for a folder that
``seqlab export`` wrote (:mod:`seqlab.apps.onnx_export`).

:class:`OnnxEmissions` is an :class:`~seqlab.tagging.predict.Emissions` backend: the
:class:`~seqlab.tagging.predict.Predictor` asks it for each batch's emissions and decodes them with the
model's own decoder module (built from the config, its CRF transitions loaded from the model file), exactly as
for the torch backend. The graph runs on the CPU with ``threads`` intra-op threads (default: torch's setting,
which ``seqlab tag --threads`` sets).
"""
from __future__ import annotations

import hashlib
from pathlib import Path
from typing import Any, Callable

import torch
from torch import nn

from seqlab.core import rundir
from seqlab.core.errors import SeqlabError
from seqlab.core.json_limits import read_json
from seqlab.data.batching import Encoded, make_batch
from seqlab.data.vocab import load_vocabs

#: An export folder's files (written by :mod:`seqlab.apps.onnx_export`) and the format its manifest names.
ONNX, PACKAGE, MANIFEST = "model.onnx", "model.seqlab", "onnx.json"
FORMAT, FORMAT_VERSION = "seqlab-onnx", 1


def require(module: str) -> None:
    """Import ``module`` (onnx or onnxruntime), or fail with the install hint."""
    try:
        __import__(module)
    except ImportError:
        raise SeqlabError(f"ONNX export and the onnx backend need {module}: pip install 'seqlab[onnx]' "
                          "(onnx and onnxruntime)") from None


def _onnxruntime() -> Any:
    require("onnxruntime")
    import onnxruntime

    return onnxruntime


def open_runtime(model: bytes | str | Path, *, threads: int | None = None) -> Any:
    """An onnxruntime CPU inference runtime over a graph (bytes or a file), on ``threads`` threads (default: torch's)."""
    ort = _onnxruntime()
    options = ort.SessionOptions()
    options.intra_op_num_threads = threads or torch.get_num_threads()
    options.inter_op_num_threads = 1
    options.execution_mode = ort.ExecutionMode.ORT_SEQUENTIAL
    options.log_severity_level = 3  # errors only: no notes about unused initializers on stderr
    source = model if isinstance(model, bytes) else str(model)
    return ort.InferenceSession(source, sess_options=options, providers=["CPUExecutionProvider"])


class OnnxEmissions:
    """Emissions computed by onnxruntime over a tagger's exported graph, decoded by ``decoder``."""

    def __init__(self, runtime: Any, decoder: nn.Module) -> None:
        self.runtime, self.decoder = runtime, decoder
        self.device = torch.device("cpu")
        self.names = [node.name for node in runtime.get_inputs()]

    def scorer(self, data: Encoded) -> Callable[[torch.Tensor, torch.Tensor], torch.Tensor]:
        def score(indices: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
            batch = make_batch(data, indices)  # the batch's distinct word types carry their characters
            given = {"words": batch.words, "caps": batch.caps, "chars": batch.chars,
                     "char_lengths": batch.char_lengths, "type_index": batch.type_index,
                     "features": batch.features, "feature_ids": batch.feature_ids, "lengths": data.lengths[indices]}
            feed = {name: given[name].numpy() for name in self.names}
            return torch.from_numpy(self.runtime.run(None, feed)[0])  # shape: (B, T, K)
        return score


def is_export(path: str | Path) -> bool:
    """Whether ``path`` is a folder that ``seqlab export`` wrote (the backends' loaders ask,
    :mod:`seqlab.apps.backends`)."""
    return (Path(path) / MANIFEST).is_file()


def read_export(folder: str | Path) -> dict[str, Any]:
    """``onnx.json`` of an export folder, after checking its format and the sha256 of both files."""
    folder = Path(folder)
    manifest = read_json(folder / MANIFEST)  # unreadable, not JSON or nested too deep: one line naming it
    if not isinstance(manifest, dict) or manifest.get("format") != FORMAT:
        raise SeqlabError(f"{folder / MANIFEST}: not a seqlab ONNX export (format is not {FORMAT!r})")
    if manifest.get("format_version") != FORMAT_VERSION:
        raise SeqlabError(f"{folder / MANIFEST}: export format version {manifest.get('format_version')!r}; "
                          f"this seqlab reads version {FORMAT_VERSION}")
    for name in (ONNX, PACKAGE):
        path = folder / name
        if not path.is_file():
            raise SeqlabError(f"{folder}: {name} is missing from the export")
        if hashlib.sha256(path.read_bytes()).hexdigest() != (manifest.get("sha256") or {}).get(name):
            raise SeqlabError(f"{path}: fails its sha256 check in {MANIFEST} (the file was altered or corrupted)")
    return manifest


def load_decoder(run_dir: Path, config: Any, labels: list[str]) -> nn.Module:
    """The decoder a run's config names, with its weights (CRF transitions) from the run's model file."""
    from seqlab.tagging.parts import DECODERS

    decoder = DECODERS.get(config.model.decoder, "model.decoder")(labels, config.data.labelling)
    weights = rundir.load_weights(run_dir, "cpu")
    state = {key[len("decoder."):]: value for key, value in weights.items() if key.startswith("decoder.")}
    rundir.load_state(decoder, state, run_dir / rundir.WEIGHTS, "decoder")
    return decoder.eval()


def load_onnx(folder: str | Path, device: torch.device | str = "auto", *, backend: str,
              threads: int | None = None) -> Any:
    """The tagger of an export folder, its emissions computed by onnxruntime (see :func:`seqlab.load`);
    ``backend``: the name it is loaded under (:data:`seqlab.apps.backends.BACKENDS`). The folder's model file is
    unpacked only while its parts load (:func:`seqlab.apps.package.unpacked`: with the cache off, the temporary
    copy is removed before this returns)."""
    from seqlab.apps.package import unpacked
    from seqlab.tagging.api import SequenceTagger
    from seqlab.tagging.config import load_config
    from seqlab.tagging.parts import load_token_features

    if str(device) not in ("auto", "cpu"):
        raise SeqlabError(f"the onnx backend runs on the CPU (onnxruntime's CPUExecutionProvider); "
                          f"device must be auto or cpu, got {str(device)!r}")
    folder = Path(folder)
    read_export(folder)
    runtime = open_runtime(folder / ONNX, threads=threads)
    with unpacked(folder / PACKAGE) as run_dir:
        config = load_config(run_dir / rundir.CONFIG)
        vocabs = load_vocabs(run_dir / rundir.VOCABS)
        features = load_token_features(config.model.features, state=rundir.load_feature_state(run_dir))
        decoder = load_decoder(run_dir, config, vocabs["tags"].itos)
    return SequenceTagger(config, vocabs, features, OnnxEmissions(runtime, decoder), backend=backend)

