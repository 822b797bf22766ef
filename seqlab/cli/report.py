"""``seqlab report RUN [RUN ...]``: a training run's report, ``RUN/report.html``, or several runs' side by side
(:mod:`seqlab.apps.report`)."""
from __future__ import annotations

import argparse
from pathlib import Path

from seqlab.cli._util import add_device_option, model_device
from seqlab.core.errors import SeqlabError


def cmd_report(args: argparse.Namespace) -> int:
    from seqlab.apps.report import write_report

    for run in args.runs:
        if not Path(run).is_dir():
            raise SeqlabError(f"{run}: not a directory; expected a training run's directory (with metrics.json)")
    print(write_report(*args.runs, output=args.output, device=str(model_device(args.device))))
    return 0


def add_parsers(sub: argparse._SubParsersAction) -> None:
    r = sub.add_parser("report", help="write a training run's report.html: dev score per epoch, scores per type, "
                                      "confusion matrix, span errors, reliability diagram (plots need matplotlib)")
    r.add_argument("runs", nargs="+", metavar="RUN", help="a training run's directory; several: their reports side "
                                                            "by side in --output")
    r.add_argument("--output", metavar="FILE.html", help="where to write the page (default RUN/report.html; "
                                                         "needed for several runs)")
    add_device_option(r)
    r.set_defaults(func=cmd_report)
