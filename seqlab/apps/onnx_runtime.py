"""The onnxruntime backend of a tagger: ``seqlab.load(DIR, backend="onnx")`` for a folder that
``seqlab export`` wrote (:mod:`seqlab.apps.onnx_export`).

:class:`OnnxEmissions` is an :class:`~seqlab.tagging.predict.Emissions` backend: the
:class:`~seqlab.tagging.predict.Predictor` asks it for each batch's emissions and decodes them with the
model's own decoder module (built from the config, its CRF transitions loaded from the model file), exactly as
for the torch backend. Spelling vectors are computed as torch computes them, once per word type of a whole
stream (:class:`~seqlab.tagging.predict.SpellingCache`), by the spelling graph over word types of one length
at a time (:class:`OnnxSpelling`). The graphs run on the CPU with ``threads`` intra-op threads (default:
torch's setting, which ``seqlab tag --threads`` sets) and no spinning thread pool.
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
from seqlab.tagging.predict import SpellingCache
from seqlab.core.runfiles import ONNX_MANIFEST

#: An export folder's files (written by :mod:`seqlab.apps.onnx_export`) and the format its manifest names.
ONNX, SPELLING, PACKAGE, MANIFEST = "model.onnx", "spelling.onnx", "model.seqlab", ONNX_MANIFEST
#: Version 2: spelling vectors from their own graph, once per word type (version 1 ran the character BiLSTM
#: inside the emissions graph, on every batch's word types).
FORMAT, FORMAT_VERSION = "seqlab-onnx", 2
#: The rank of every input and output a graph of an export may have (onnx_export.INPUTS, SPELLING_INPUTS).
RANKS = {"words": 2, "caps": 2, "char_vectors": 3, "features": 3, "feature_ids": 3, "lengths": 1, "emissions": 3,
         "chars": 2, "char_lengths": 1, "spelling": 2}


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
    """An onnxruntime CPU inference runtime over a graph (bytes or a file), on ``threads`` threads (default:
    torch's): sequential execution, every graph optimisation, and threads that sleep instead of spinning when
    idle (a spinning pool burns CPU between the calls of a decoding loop)."""
    ort = _onnxruntime()
    options = ort.SessionOptions()
    options.intra_op_num_threads = threads or torch.get_num_threads()
    options.inter_op_num_threads = 1
    options.execution_mode = ort.ExecutionMode.ORT_SEQUENTIAL
    options.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_ALL
    options.add_session_config_entry("session.intra_op.allow_spinning", "0")
    options.add_session_config_entry("session.inter_op.allow_spinning", "0")
    options.log_severity_level = 3  # errors only: no notes about unused initializers on stderr
    source = model if isinstance(model, bytes) else str(model)
    return ort.InferenceSession(source, sess_options=options, providers=["CPUExecutionProvider"])


class OnnxSpelling:
    """The spelling graph as :class:`~seqlab.tagging.predict.SpellingCache` asks a tagger for spelling vectors
    (``spells``, ``spelling_table``): word types are run grouped by their number of characters, so every row of
    a call is as long as the longest and no padded cell is computed."""

    spells = True

    def __init__(self, runtime: Any) -> None:
        self.runtime = runtime

    def spelling_table(self, data: Encoded, rows: torch.Tensor | None = None) -> torch.Tensor:
        """Spelling vectors of the word types of ``data`` (all, or those at ``rows``); shape: (n, C_dim)."""
        chars, lengths = data.type_chars, data.type_char_lengths  # shapes: (n_types, C_max), (n_types,)
        if rows is not None:
            chars, lengths = chars[rows], lengths[rows]
        order = torch.argsort(lengths, stable=True)  # shape: (n,)
        counts = torch.unique_consecutive(lengths[order], return_counts=True)[1].tolist()
        out: torch.Tensor | None = None
        for part in order.split(counts):  # the types of one length
            width = int(lengths[part[0]])
            feed = {"chars": chars[part, :width].numpy(), "char_lengths": lengths[part].numpy()}
            vectors = torch.from_numpy(self.runtime.run(None, feed)[0])  # shape: (len(part), C_dim)
            if out is None:
                out = torch.empty(len(order), vectors.shape[1])  # shape: (n, C_dim)
            out[part] = vectors
        return out if out is not None else torch.empty(0, 0)


class OnnxEmissions:
    """Emissions computed by onnxruntime over a tagger's exported graphs, decoded by ``decoder``; ``spelling``:
    the spelling graph's runtime (None for a tagger that does not read spelling)."""

    def __init__(self, runtime: Any, decoder: nn.Module, spelling: Any | None = None) -> None:
        self.runtime, self.decoder = runtime, decoder
        self.device = torch.device("cpu")
        self.names = [node.name for node in runtime.get_inputs()]
        self.speller = OnnxSpelling(spelling) if spelling is not None else None
        self.spelling = SpellingCache()  # kept from call to call: once per word type of a whole stream

    def scorer(self, data: Encoded) -> Callable[[torch.Tensor, torch.Tensor], torch.Tensor]:
        table = self.spelling.table(self.speller, data) if self.speller is not None else None  # (n_types, C_dim)

        def score(indices: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
            batch = make_batch(data, indices, table)  # spelling vectors gathered per token
            given = {"words": batch.words, "caps": batch.caps, "char_vectors": batch.char_vectors,
                     "features": batch.features, "feature_ids": batch.feature_ids, "lengths": data.lengths[indices]}
            feed = {name: given[name].numpy() for name in self.names}
            return torch.from_numpy(self.runtime.run(None, feed)[0])  # shape: (B, T, K)
        return score


def is_export(path: str | Path) -> bool:
    """Whether ``path`` is a folder that ``seqlab export`` wrote (the backends' loaders ask,
    :mod:`seqlab.apps.backends`)."""
    return (Path(path) / MANIFEST).is_file()


def read_export(folder: str | Path) -> dict[str, Any]:
    """``onnx.json`` of an export folder, after checking its format, its version and the sha256 of its files. An
    export of an older format is refused with the command that exports its model file again."""
    folder = Path(folder)
    manifest = read_json(folder / MANIFEST)  # unreadable, not JSON or nested too deep: one line naming it
    if not isinstance(manifest, dict) or manifest.get("format") != FORMAT:
        raise SeqlabError(f"{folder / MANIFEST}: not a seqlab ONNX export (format is not {FORMAT!r})")
    version = manifest.get("format_version")
    if isinstance(version, int) and not isinstance(version, bool) and version < FORMAT_VERSION:
        raise SeqlabError(f"{folder / MANIFEST}: export format version {version}, written by an older seqlab; "
                          f"export it again (its model file is kept): seqlab export {folder} --format onnx --out {folder}")
    if version != FORMAT_VERSION:
        raise SeqlabError(f"{folder / MANIFEST}: export format version {version!r}; "
                          f"this seqlab reads version {FORMAT_VERSION}")
    sums = manifest.get("sha256") if isinstance(manifest.get("sha256"), dict) else {}
    for name in (ONNX, *([SPELLING] if manifest.get("spelling") else []), PACKAGE):
        path = folder / name
        if not path.is_file():
            raise SeqlabError(f"{folder}: {name} is missing from the export")
        if hashlib.sha256(path.read_bytes()).hexdigest() != sums.get(name):
            raise SeqlabError(f"{path}: fails its sha256 check in {MANIFEST} (the file was altered or corrupted)")
    spelling = manifest.get("spelling") if isinstance(manifest.get("spelling"), dict) else {}
    check_graph(folder / ONNX, manifest.get("inputs"), manifest.get("outputs"))
    if manifest.get("spelling"):
        check_graph(folder / SPELLING, spelling.get("inputs"), spelling.get("outputs"))
    return manifest


def _signature(path: Path) -> tuple[list[tuple[str, int]], list[tuple[str, int]]]:
    """The (name, rank) of each input and output of the ONNX graph at ``path``; a file that is no ONNX model is a
    one-line SeqlabError naming it."""
    require("onnx")
    import onnx

    try:
        graph = onnx.load(str(path), load_external_data=False).graph
    except Exception as err:  # noqa: BLE001 (protobuf's DecodeError and onnx's own errors: any means "not a graph")
        raise SeqlabError(f"{path}: not an ONNX model ({type(err).__name__}); export the model again") from None
    initializers = {init.name for init in graph.initializer}

    def ranks(values: Any) -> list[tuple[str, int]]:
        return [(v.name, len(v.type.tensor_type.shape.dim)) for v in values if v.name not in initializers]
    return ranks(graph.input), ranks(graph.output)


def check_graph(path: Path, inputs: Any, outputs: Any) -> None:
    """Refuse the graph at ``path`` unless its inputs and outputs are those ``onnx.json`` names, each of the rank
    seqlab feeds it (a model.onnx and spelling.onnx swapped, or another graph, fails here, not in onnxruntime)."""
    if not isinstance(inputs, list) or not isinstance(outputs, list):
        raise SeqlabError(f"{path.parent / MANIFEST}: expected lists of the graphs' inputs and outputs")
    got_in, got_out = _signature(path)
    for kind, got, names in (("inputs", got_in, inputs), ("outputs", got_out, outputs)):
        expected = [(name, RANKS.get(name, -1)) for name in names]
        if got != expected:
            raise SeqlabError(f"{path}: graph {kind} {_shown(got)}, but {MANIFEST} and seqlab expect {_shown(expected)}"
                              f" (files swapped or replaced? export the model again)")


def _shown(pairs: list[tuple[str, int]]) -> str:
    return "[" + ", ".join(f"{name} (rank {rank})" for name, rank in pairs) + "]"


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
    unpacked only while its parts load (:func:`seqlab.apps.model_cache.unpacked`: with the cache off, the temporary
    copy is removed before this returns)."""
    from seqlab.apps.model_cache import unpacked
    from seqlab.tagging.api import SequenceTagger
    from seqlab.tagging.calibration import stored_temperature
    from seqlab.tagging.config import load_config
    from seqlab.tagging.parts import load_token_features

    if str(device) not in ("auto", "cpu"):
        raise SeqlabError(f"the onnx backend runs on the CPU (onnxruntime's CPUExecutionProvider); "
                          f"device must be auto or cpu, got {str(device)!r}")
    folder = Path(folder)
    manifest = read_export(folder)
    runtime = open_runtime(folder / ONNX, threads=threads)
    spelling = open_runtime(folder / SPELLING, threads=threads) if manifest.get("spelling") else None
    with unpacked(folder / PACKAGE) as run_dir:
        config = load_config(run_dir / rundir.CONFIG)
        vocabs = load_vocabs(run_dir / rundir.VOCABS)
        features = load_token_features(config.model.features, state=rundir.load_feature_state(run_dir))
        decoder = load_decoder(run_dir, config, vocabs["tags"].itos)
        temperature = stored_temperature(run_dir)  # the confidences' calibration, as the torch backend reads it
    return SequenceTagger(config, vocabs, features, OnnxEmissions(runtime, decoder, spelling),
                          backend=backend, temperature=temperature)

