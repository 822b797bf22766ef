"""Tampered ONNX export folders, as a careless or hostile user makes them: the two graphs swapped, or the model
graph replaced by random bytes, with ``onnx.json``'s checksums recomputed so that only the graphs' own inputs,
outputs and shapes can tell (the probes and the tests both make them here)."""
from __future__ import annotations

import hashlib
import json
import os
from pathlib import Path

GRAPHS = ("model.onnx", "spelling.onnx")
CASES = ("swapped", "random")


def tamper_export(folder: Path, case: str) -> None:
    """Swap ``folder``'s graphs (``swapped``) or replace its model graph by random bytes (``random``), in place,
    and recompute the manifest's checksums to match."""
    if case not in CASES:
        raise ValueError(f"case: expected one of {CASES}, got {case!r}")
    graphs = (folder / GRAPHS[0]).read_bytes(), (folder / GRAPHS[1]).read_bytes()
    (folder / GRAPHS[0]).write_bytes(graphs[1] if case == "swapped" else os.urandom(len(graphs[0])))
    (folder / GRAPHS[1]).write_bytes(graphs[0] if case == "swapped" else graphs[1])
    manifest = json.loads((folder / "onnx.json").read_text())
    manifest["sha256"].update({name: hashlib.sha256((folder / name).read_bytes()).hexdigest() for name in GRAPHS})
    (folder / "onnx.json").write_text(json.dumps(manifest))
