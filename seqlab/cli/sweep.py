"""``seqlab sweep``: train a grid of config overrides (:func:`seqlab.apps.sweep.run_sweep`)."""
from __future__ import annotations

import argparse
import json


def cmd_sweep(args: argparse.Namespace) -> int:
    from seqlab.apps.sweep import run_sweep

    for row in run_sweep(args.sweep, dry_run=args.dry_run):
        print(json.dumps(row))
    return 0


def add_parsers(sub: argparse._SubParsersAction) -> None:
    """The ``seqlab sweep`` verb."""
    s = sub.add_parser("sweep", help="train a grid of config overrides; write a table and a plot")
    s.add_argument("sweep", help="sweep YAML (config, output, set, grid, skip, plot)")
    s.add_argument("--dry-run", action="store_true", help="check every point's config and list them; train nothing")
    s.set_defaults(func=cmd_sweep)
