"""``seqlab package RUN --out NAME.seqlab``: a trained model as one portable file (:mod:`seqlab.apps.package`);
``seqlab inspect`` prints a model file's manifest, ``seqlab models`` the installed models
(:mod:`seqlab.apps.installed`)."""
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
    from seqlab.apps.installed import model_path
    from seqlab.apps.package import read_manifest

    print(json.dumps(read_manifest(model_path(args.model)), indent=2))
    return 0


def cmd_models(args: argparse.Namespace) -> int:
    """``seqlab models``: every installed model, as text or (``--json``) one JSON list."""
    from seqlab.apps.installed import MODELS, model_card

    cards = [model_card(name) for name in sorted(MODELS)]
    if args.json:
        print(json.dumps(cards, indent=2))
        return 0
    for card in cards:
        scores = ", ".join(f"{split} {card['measure']} {value:.2f}" for split, value in card["scores"].items()
                           if value is not None)
        data = ", ".join(f"{split} {path}" for split, path in card["training_data"].items())
        needs = card["requires"]
        print(f"{card['name']}  ({card['task']}, {card['architecture']}, {card['bytes'] / 1e6:.1f} MB)\n"
              f"  {card['description']}\n"
              f"  labels:        {' '.join(card['labels'])}\n"
              f"  training data: {data}\n"
              f"  scores:        {scores or 'not recorded'}\n"
              f"  speed:         {card['speed'] or 'not recorded'}\n"
              f"  requires:      {', '.join(needs['packages'])}; {needs['seqlab']}; data: {needs['data']}\n"
              f"  file:          {card['file']}\n")
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
    i.add_argument("model", help="a .seqlab model file, or an installed model's name")
    i.set_defaults(func=cmd_inspect)
    m = sub.add_parser("models", help="list the installed models: task, labels, size, training data, scores, "
                                      "speed, requirements")
    m.add_argument("--json", action="store_true", help="one JSON list instead of the text")
    m.set_defaults(func=cmd_models)
