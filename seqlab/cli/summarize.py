"""``seqlab summarize``: one table of several runs, or two groups compared (:mod:`seqlab.apps.summarize`)."""
from __future__ import annotations

import argparse
import json
import sys


def cmd_summarize(args: argparse.Namespace) -> int:
    from seqlab.apps.summarize import render, render_versus, summarize, to_json, versus

    summary = summarize(args.runs)
    if not args.versus:
        sys.stdout.write(to_json(summary) + "\n" if args.json else render(summary))
        return 0
    other = summarize(args.versus)
    result = versus(summary, other)
    if args.json:
        sys.stdout.write(json.dumps({"a": json.loads(to_json(summary)), "b": json.loads(to_json(other)),
                                     "versus": result}, indent=2) + "\n")
    else:
        sys.stdout.write(f"A\n\n{render(summary)}\nB\n\n{render(other)}\n{render_versus(result)}")
    return 0


def add_parsers(sub: argparse._SubParsersAction) -> None:
    """The ``seqlab summarize`` verb."""
    s = sub.add_parser("summarize", help="one table of several runs (e.g. seeds), with mean ± std")
    s.add_argument("runs", nargs="+", metavar="RUN_DIR", help="run directories (taggers, or relation classifiers), "
                   "or summaries saved with --json")
    s.add_argument("--versus", nargs="+", metavar="RUN_DIR",
                   help="a second group of runs (another config's seeds; run directories or a saved summary): both "
                        "tables, the difference of the mean dev and test scores, and an exact permutation test "
                        "over seeds")
    s.add_argument("--json", action="store_true", help="one JSON object instead of the markdown table (with each "
                   "run's resolved config: save it to compare against these runs once their directories are gone)")
    s.set_defaults(func=cmd_summarize)
