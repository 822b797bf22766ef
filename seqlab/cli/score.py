"""``seqlab score conll`` (the conlleval drop-in) and ``seqlab compare`` (paired significance tests)."""
from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from seqlab.cli._util import nonnegative_int, positive_int
from seqlab.core.paths import require_file
from seqlab.core.errors import SeqlabError


def cmd_score(args: argparse.Namespace) -> int:
    from seqlab.data.metrics import score_conll_file

    require_file(args.file)
    sys.stdout.write(score_conll_file(args.file))
    return 0


def cmd_compare(args: argparse.Namespace) -> int:
    """``seqlab compare conll|semeval A B``: paired significance tests of two systems' outputs."""
    from seqlab.apps.compare import compare_conll_files, compare_semeval_files
    from seqlab.core.significance import format_comparison

    written = "test.predictions.txt" if args.format == "conll" else "test.answers.txt"
    a, b = (_test_output(path, written) for path in (args.a, args.b))
    if args.format == "semeval" and not Path(args.key).is_file():
        raise SeqlabError(f"{args.key}: no such file")
    options = {"samples": args.samples, "seed": args.seed}
    if args.format == "conll":
        result, measure = compare_conll_files(a, b, **options), "F1"
    else:
        result, measure = compare_semeval_files(a, b, args.key, **options), "macro-F1"
    if args.json:
        sys.stdout.write(json.dumps({"a": a, "b": b, **result.to_dict()}) + "\n")
    else:
        sys.stdout.write(format_comparison(result, a, b, measure))
    return 0


def _test_output(path: str, written: str) -> str:
    """A prediction file, or the test-set file a training run wrote into its run directory."""
    if Path(path).is_dir():
        inside = Path(path) / written
        if not inside.is_file():
            raise SeqlabError(f"{path}: a directory without {written} (give a file, or a finished run's directory)")
        return str(inside)
    require_file(path)
    return path


def add_parsers(sub: argparse._SubParsersAction) -> None:
    """Register ``score`` (``conll``, and ``semeval`` from :mod:`seqlab.cli.relation`) and ``compare``."""
    from seqlab.cli.relation import add_score_parser

    s = sub.add_parser("score", help="score an existing prediction file")
    s_sub = s.add_subparsers(dest="format", required=True)
    sc = s_sub.add_parser("conll", help="conlleval drop-in: columns 'token ... gold pred'")
    sc.add_argument("file", help="columns 'token ... gold pred', a blank line between sentences (conlleval's input)")
    sc.set_defaults(func=cmd_score)
    add_score_parser(s_sub)

    c = sub.add_parser("compare", help="paired significance tests of two systems on the same test set")
    c_sub = c.add_subparsers(dest="format", required=True)
    cc = c_sub.add_parser("conll", help="two 'token ... gold pred' files of the same sentences, on span F1")
    cs = c_sub.add_parser("semeval", help="two SemEval-2010 Task 8 answer files, on the official macro-F1")
    for q in (cc, cs):
        q.add_argument("a", help="system A's predictions, or a finished run's directory (its test-set output)")
        q.add_argument("b", help="system B's predictions, or a run directory")
        if q is cs:
            q.add_argument("key", help="the answer key, e.g. TEST_FILE_KEY_DIRECTED.TXT")
        q.add_argument("--samples", type=positive_int, default=10_000, help="shuffles and bootstrap draws")
        q.add_argument("--seed", type=nonnegative_int, default=1)
        q.add_argument("--json", action="store_true", help="one JSON object instead of the report")
        q.set_defaults(func=cmd_compare)
