"""Which gold spans each of several taggers gets right, and how much of a teacher's lead over a baseline a student
took over, printed as JSON.

    python -m benchmarks.span_agreement --system teacher=T.txt --system baseline=B.txt --system student=S.txt
        [--system ...] --teacher teacher --baseline baseline [--out FILE]

Each FILE is a ``token ... gold pred`` file of the same gold sentences (``seqlab eval MODEL GOLD --output FILE``
writes one; a run directory's ``test.predictions.txt`` is one). Spans are conlleval's chunks (type, first, last),
read by :func:`seqlab.data.metrics.chunks`; a gold span is *right* for a system when the system predicts exactly
it. The JSON gives

* ``systems``: each system's span F1 against the gold;
* ``agreement``: for each pair, the F1 of one's predicted spans scored against the other's (symmetric), and over
  the gold spans how many both, only the first, only the second and neither got right;
* with ``--teacher`` and ``--baseline``, for every other system: of the gold spans the teacher got right and the
  baseline missed (the teacher's lead), the share the system gets right (``took``), and of those the baseline got
  right and the teacher missed, the share the system keeps (``kept``). A student that learnt exactly the teacher
  has ``took`` 1 and ``kept`` 0.

Nothing is run: the script reads the files, so it costs a second.
"""
from __future__ import annotations

import argparse
import itertools
import json
import sys
from pathlib import Path
from typing import Any

from benchmarks.sidebyside import command_line, portable_path
from seqlab.core.errors import SeqlabError
from seqlab.data.metrics import chunks, read_prediction_file, score

Span = tuple[str, int, int]


def read_systems(named: dict[str, Path]) -> tuple[set[Span], dict[str, set[Span]], dict[str, float]]:
    """The gold spans, each system's predicted spans and each system's F1; every file must have the gold of the
    first (same sentences, same tags), else a SystemExit naming the two files."""
    gold_spans: set[Span] | None = None
    gold_tags: list[list[str]] | None = None
    first = ""
    predicted: dict[str, set[Span]] = {}
    f1: dict[str, float] = {}
    for name, path in named.items():
        try:
            gold, pred, _ = read_prediction_file(path)
        except (OSError, SeqlabError) as err:
            raise SystemExit(f"span_agreement: {path}: {err}") from None
        if gold_tags is None:
            gold_tags, gold_spans, first = gold, set(chunks(gold)), str(path)
        elif gold != gold_tags:
            raise SystemExit(f"span_agreement: {path}: its gold column differs from {first}'s: the files must be "
                             "predictions on the same gold file")
        predicted[name] = set(chunks(pred))
        f1[name] = round(score(gold, pred).f1, 2)
    assert gold_spans is not None
    return gold_spans, predicted, f1


def span_f1(reference: set[Span], found: set[Span]) -> float:
    """conlleval's F1 of ``found`` scored against ``reference``."""
    both = len(reference & found)
    return round(200.0 * both / (len(reference) + len(found)), 2) if reference or found else 100.0


def agreement(gold: set[Span], predicted: dict[str, set[Span]]) -> list[dict[str, Any]]:
    rows = []
    for a, b in itertools.combinations(predicted, 2):
        right_a, right_b = gold & predicted[a], gold & predicted[b]
        rows.append({"pair": [a, b], "f1_of_one_against_the_other": span_f1(predicted[a], predicted[b]),
                     "gold_spans": {"both_right": len(right_a & right_b), f"only_{a}": len(right_a - right_b),
                                    f"only_{b}": len(right_b - right_a), "neither": len(gold - right_a - right_b)}})
    return rows


def transfer(gold: set[Span], predicted: dict[str, set[Span]], teacher: str, baseline: str) -> dict[str, Any]:
    right = {name: gold & spans for name, spans in predicted.items()}
    lead = right[teacher] - right[baseline]
    behind = right[baseline] - right[teacher]
    out: dict[str, Any] = {"teacher_lead_spans": len(lead), "baseline_lead_spans": len(behind), "systems": {}}
    for name in predicted:
        if name in (teacher, baseline):
            continue
        took, kept = len(lead & right[name]), len(behind & right[name])
        out["systems"][name] = {
            "took": took, "took_share": round(took / len(lead), 4) if lead else None,
            "kept": kept, "kept_share": round(kept / len(behind), 4) if behind else None,
            "right_where_both_right": len(right[teacher] & right[baseline] & right[name]),
            "right_where_both_wrong": len((gold - right[teacher] - right[baseline]) & right[name]),
        }
    return out


def main(argv: list[str] | None = None) -> None:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--system", action="append", required=True, metavar="NAME=FILE",
                   help="a system's prediction file (repeat; at least two)")
    p.add_argument("--teacher", help="the system whose lead over --baseline is followed")
    p.add_argument("--baseline")
    p.add_argument("--out", help="also write the JSON here")
    args = p.parse_args(argv)
    named: dict[str, Path] = {}
    for item in args.system:
        name, sep, file = item.partition("=")
        if not sep or not name or not file:
            p.error(f"--system {item!r}: expected NAME=FILE")
        if name in named:
            p.error(f"--system {name!r} is given twice")
        named[name] = Path(file)
    if len(named) < 2:
        p.error("give at least two --system")
    if (args.teacher is None) != (args.baseline is None):
        p.error("--teacher and --baseline go together")
    for role in (args.teacher, args.baseline):
        if role is not None and role not in named:
            p.error(f"{role!r} is not a --system name ({', '.join(named)})")
    gold, predicted, f1 = read_systems(named)
    result: dict[str, Any] = {
        "command": command_line(),
        "gold_spans": len(gold), "systems": {name: {"file": portable_path(path), "f1": f1[name],
                                                    "spans_found": len(predicted[name]),
                                                    "gold_spans_right": len(gold & predicted[name])}
                                             for name, path in named.items()},
        "agreement": agreement(gold, predicted),
    }
    if args.teacher is not None:
        result["transfer"] = {"teacher": args.teacher, "baseline": args.baseline,
                              **transfer(gold, predicted, args.teacher, args.baseline)}
    text = json.dumps(result, indent=2) + "\n"
    sys.stdout.write(text)
    if args.out:
        Path(args.out).parent.mkdir(parents=True, exist_ok=True)
        Path(args.out).write_text(text, encoding="utf-8")


if __name__ == "__main__":
    main()
