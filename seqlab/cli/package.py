"""``seqlab package RUN --out NAME.seqlab``: a trained model as one portable file (:mod:`seqlab.apps.package`);
``seqlab inspect`` prints a model file's manifest, ``seqlab models`` the installed models
(:mod:`seqlab.apps.installed`)."""
from __future__ import annotations

import argparse
import json
from pathlib import Path

from seqlab.cli._util import add_encoding_option, add_offsets_option


def cmd_package(args: argparse.Namespace) -> int:
    from seqlab.apps.card import read_about
    from seqlab.apps.installed import MODELS, model_path
    from seqlab.apps.package import SUFFIX, package
    from seqlab.core.errors import SeqlabError

    source = model_path(args.run) if args.run in MODELS else Path(args.run)
    if args.out is None and (source.is_file() and args.run in MODELS):
        raise SeqlabError(f"{args.run} is an installed model; give --out NEW.seqlab for the repackaged copy")
    out = Path(args.out) if args.out else source.with_suffix(SUFFIX)
    about = read_about(args.about) if args.about else None
    manifest = package(source, out, prune=not args.full_features, about=about, calibrate=not args.no_calibrate)
    size = out.stat().st_size
    print(json.dumps({"model": str(out), "bytes": size, "task": manifest["task"], "scores": manifest["scores"],
                      "members": len(manifest["members"])}))
    return 0


def cmd_inspect(args: argparse.Namespace) -> int:
    """``seqlab inspect``: the model card as text (``--json``: the checked manifest with the card)."""
    from seqlab.apps.card import render
    from seqlab.apps.installed import model_path, read_card
    from seqlab.apps.model_file import read_manifest

    path = model_path(args.model)
    manifest, card = read_manifest(path), read_card(path)
    if args.json:
        print(json.dumps(manifest | {"card": card}, indent=2))
        return 0
    sizes = manifest.get("sizes") or {}
    print((render(card) if card else f"{path}: no model card (packaged before cards; `seqlab package {path} "
                                     f"--about ABOUT.yaml --out NEW.seqlab` writes one)\n") +
          f"  file:        {path} ({path.stat().st_size / 1e6:.1f} MB; {len(manifest['members'])} members, "
          f"{sum(sizes.values()) / 1e6:.1f} MB unpacked; format {manifest.get('format_version')}, made by seqlab "
          f"{manifest.get('seqlab_version')})")
    return 0


def cmd_calibrate(args: argparse.Namespace) -> int:
    """``seqlab calibrate MODEL DEV_FILE``: fit the confidences' temperature on labelled data and store it."""
    from seqlab.apps.installed import model_path, read_json_member
    from seqlab.apps.loader import load
    from seqlab.apps.onnx_runtime import PACKAGE, is_export
    from seqlab.apps.package import refresh
    from seqlab.core import rundir
    from seqlab.core.errors import SeqlabError
    from seqlab.data.encoding import check_encoding

    if not Path(args.dev_file).exists():  # a file or a brat folder: whatever seqlab eval reads
        raise SeqlabError(f"{args.dev_file}: no such file or folder")
    encoding = check_encoding(args.encoding)
    path = model_path(args.model)
    if is_export(path):
        raise SeqlabError(f"{path}: an export folder; calibrate its model file ({path / PACKAGE}, with --out) or the "
                          "run it came from, then export again")
    if path.is_file():
        if args.out is None and args.model != str(path):
            raise SeqlabError(f"{args.model} is an installed model; give --out NEW.seqlab for the calibrated copy")
        out = Path(args.out or path)
        refresh(path, out, calibrate_on=args.dev_file, encoding=encoding, offsets=args.offsets)
        print(json.dumps({"model": str(out), **(read_json_member(out, rundir.CALIBRATION) or {})}))
        return 0
    if args.out is not None:
        raise SeqlabError("--out applies to a model file; a run directory gets its calibration.json in place")
    model = load(path, "cpu")
    if model.task != "tagging":
        raise SeqlabError(f"{path}: seqlab calibrate needs a tagger; this is a {model.task} model")
    from seqlab.tagging.calibration import calibrate
    from seqlab.tagging.gold import read_gold

    gold = read_gold(model.config.data, args.dev_file, encoding=encoding, offsets=args.offsets)
    _, summary = calibrate(model, gold, strict=True)
    rundir.save_json(path, rundir.CALIBRATION, summary)
    print(json.dumps({"model": str(path), **summary}))
    return 0


def cmd_models(args: argparse.Namespace) -> int:
    """``seqlab models``: every installed model, as text or (``--json``) one JSON list."""
    from seqlab.apps.card import calibration_line
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
              f"  language:      {card['language']}\n"
              f"  labels:        {' '.join(card['labels'])}\n"
              f"  training data: {data}\n"
              f"  scores:        {scores or 'not recorded'}\n"
              f"  speed:         {card['speed'] or 'not recorded'}\n"
              f"  memory:        {card['memory'] or 'not recorded'}\n"
              f"  calibration:   {calibration_line(card['calibration'])}\n"
              f"  requires:      {', '.join(needs['packages'])}; {needs['seqlab']}; data: {needs['data']}\n"
              f"  file:          {card['file']}\n")
    return 0


def add_parsers(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("package", help="write a trained run as one portable .seqlab model file (or rewrite a model "
                                       "file's card)")
    p.add_argument("run", help="a finished run directory; or a .seqlab file (or installed model's name), rewritten "
                               "with a new card")
    p.add_argument("--out", help="the model file to write (default RUN.seqlab)")
    p.add_argument("--full-features", action="store_true",
                   help="embed feature files (Brown paths, word vectors, LS tables) whole, not pruned to the words "
                        "of the model's vocabulary and data files")
    p.add_argument("--about", metavar="ABOUT.yaml",
                   help="the model card's person-written part: name, description, data, licence, selection, "
                        "speed, memory, limitations (seqlab/apps/card.py)")
    p.add_argument("--no-calibrate", action="store_true",
                   help="do not fit the confidences' temperature on the dev set (a tagger is calibrated by default)")
    p.set_defaults(func=cmd_package)
    i = sub.add_parser("inspect", help="check a .seqlab model file and print its model card")
    i.add_argument("model", help="a .seqlab model file, or an installed model's name")
    i.add_argument("--json", action="store_true", help="the checked manifest and the card as one JSON object")
    i.set_defaults(func=cmd_inspect)
    c = sub.add_parser("calibrate", help="fit a tagger's confidence temperature on labelled data (the dev set)")
    c.add_argument("model", help="a run directory, a .seqlab file or an installed model's name")
    c.add_argument("dev_file", help="labelled data in the model's layout, not the test set")
    c.add_argument("--out", metavar="FILE.seqlab", help="a model file: write the calibrated copy here (default: "
                                                       "rewrite it in place)")
    add_encoding_option(c, "DEV_FILE")
    add_offsets_option(c, default=None)
    c.set_defaults(func=cmd_calibrate)
    m = sub.add_parser("models", help="list the installed models: task, labels, size, training data, scores, "
                                      "speed, requirements")
    m.add_argument("--json", action="store_true", help="one JSON list instead of the text")
    m.set_defaults(func=cmd_models)
