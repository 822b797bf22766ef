"""``seqlab report RUN``: a training run's report, ``RUN/report.html`` (:mod:`seqlab.apps.report`)."""
from __future__ import annotations

import argparse
from pathlib import Path

from seqlab.core.errors import SeqlabError


def cmd_report(args: argparse.Namespace) -> int:
    from seqlab.apps.report import write_report

    run = Path(args.run)
    if not run.is_dir():
        raise SeqlabError(f"{run}: not a directory; expected a training run's directory (with metrics.json)")
    print(write_report(run))
    return 0


def add_parser(sub: argparse._SubParsersAction) -> None:
    r = sub.add_parser("report", help="write a training run's report.html: dev score per epoch, scores per type, "
                                      "confusion matrix, span errors, reliability diagram (plots need matplotlib)")
    r.add_argument("run", help="a training run's directory")
    r.set_defaults(func=cmd_report)
