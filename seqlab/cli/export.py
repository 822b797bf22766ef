"""``seqlab export MODEL --format onnx --out DIR [--quantize int8]``: a tagger's emissions and spelling graphs
for onnxruntime (:mod:`seqlab.apps.onnx_export`); ``seqlab tag --backend onnx DIR`` and
``seqlab.load(DIR, backend="onnx")`` run them."""
from __future__ import annotations

import argparse
import json

from seqlab.cli._util import use_threads

FORMATS = ("onnx",)
QUANTIZE = ("int8",)  # as seqlab.apps.onnx_export.QUANTIZE, without importing torch for the parser


def cmd_export(args: argparse.Namespace) -> int:
    from seqlab.apps.onnx_export import export_onnx

    use_threads(1)
    manifest = export_onnx(args.model, args.out, opset=args.opset, quantize=args.quantize)
    print(json.dumps({"out": args.out, "inputs": manifest["inputs"], "opset": manifest["opset"],
                      "quantize": manifest["quantize"], "sha256": manifest["sha256"]}))
    return 0


def add_parsers(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("export", help="export a tagger's emissions graph (ONNX) with its model file into a folder",
                       description="seqlab export MODEL --format onnx --out DIR: DIR gets model.onnx (the "
                                   "emissions graph, dynamic batch and length), spelling.onnx (the character "
                                   "BiLSTM, run once per word type) for a model that reads spelling, model.seqlab "
                                   "(vocabularies, features, CRF transitions) and onnx.json; tag with "
                                   "seqlab tag --backend onnx DIR.")
    p.add_argument("model", help="a run directory, a .seqlab file or an installed model's name (en-ner-conll03)")
    p.add_argument("--format", choices=FORMATS, required=True)
    p.add_argument("--out", required=True, help="the folder to write")
    p.add_argument("--opset", type=int, default=17, help="ONNX opset version (default 17)")
    p.add_argument("--quantize", choices=QUANTIZE, default=None,
                   help="store the graphs' weights as int8 (onnxruntime dynamic quantization: a smaller, usually "
                        "faster graph whose labels may differ from torch's in a few tokens; default: float32)")
    p.set_defaults(func=cmd_export)
