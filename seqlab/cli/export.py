"""``seqlab export MODEL --format onnx --out DIR``: a tagger's emissions graph for onnxruntime
(:mod:`seqlab.apps.onnx_export`); ``seqlab tag --backend onnx DIR`` and ``seqlab.load(DIR, backend="onnx")``
run it."""
from __future__ import annotations

import argparse
import json

from seqlab.cli._util import use_threads

FORMATS = ("onnx",)


def cmd_export(args: argparse.Namespace) -> int:
    from seqlab.apps.onnx_export import export_onnx

    use_threads(1)
    manifest = export_onnx(args.model, args.out, opset=args.opset)
    print(json.dumps({"out": args.out, "inputs": manifest["inputs"], "opset": manifest["opset"],
                      "sha256": manifest["sha256"]}))
    return 0


def add_parser(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("export", help="export a tagger's emissions graph (ONNX) with its model file into a folder",
                       description="seqlab export MODEL --format onnx --out DIR: DIR gets model.onnx (the "
                                   "emissions graph, dynamic batch and length), model.seqlab (vocabularies, "
                                   "features, CRF transitions) and onnx.json; tag with seqlab tag --backend onnx DIR.")
    p.add_argument("model", help="a run directory, a .seqlab file or an installed model's name (en-ner-conll03)")
    p.add_argument("--format", choices=FORMATS, required=True)
    p.add_argument("--out", required=True, help="the folder to write")
    p.add_argument("--opset", type=int, default=17, help="ONNX opset version (default 17)")
    p.set_defaults(func=cmd_export)
