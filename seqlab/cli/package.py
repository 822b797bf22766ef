"""``seqlab package RUN --out NAME.seqlab``: a trained model as one portable file (:mod:`seqlab.apps.package`)."""
from __future__ import annotations

import argparse
import json
from pathlib import Path


def cmd_package(args: argparse.Namespace) -> int:
    from seqlab.apps.package import SUFFIX, package

    out = Path(args.out) if args.out else Path(args.run).with_suffix(SUFFIX)
    manifest = package(args.run, out, prune=not args.full_features)
    size = out.stat().st_size
    print(json.dumps({"model": str(out), "bytes": size, "task": manifest["task"], "scores": manifest["scores"],
                      "members": len(manifest["members"])}))
    return 0


def cmd_inspect(args: argparse.Namespace) -> int:
    from seqlab.apps.package import read_manifest

    print(json.dumps(read_manifest(args.model), indent=2))
    return 0


def add_parsers(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("package", help="write a trained run as one portable .seqlab model file")
    p.add_argument("run", help="a finished run directory")
    p.add_argument("--out", help="the model file to write (default RUN.seqlab)")
    p.add_argument("--full-features", action="store_true",
                   help="embed feature files (Brown paths, word vectors, LS tables) whole, not pruned to the words "
                        "of the model's vocabulary and data files")
    p.set_defaults(func=cmd_package)
    i = sub.add_parser("inspect", help="check a .seqlab model file and print its manifest")
    i.add_argument("model", help="a .seqlab model file")
    i.set_defaults(func=cmd_inspect)
