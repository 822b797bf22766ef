"""Training as ``seqlab train`` and :func:`seqlab.train` run it: any task's config trained into its run directory
(:func:`seqlab.apps.tasks.train`), then the run's ``report.html`` written for a person to look at
(:mod:`seqlab.apps.report`; by the main process of a data-parallel run; ``SEQLAB_REPORT=0`` leaves it out). A
config of two halves (an extraction model's tagger and relation classifier) gets a report in each half's folder."""
from __future__ import annotations

import os
from pathlib import Path
from typing import Any

from seqlab.apps.report import report_after_training
from seqlab.apps.tasks import train as train_task


def train(config: Any, out_dir: str | Path, *, resume: bool = False, progress: bool = True) -> dict[str, Any]:
    """Train ``config`` into ``out_dir`` (``resume``: continue the run there) and write its report; returns the
    run's metrics."""
    metrics = train_task(config, out_dir, resume=resume, progress=progress)
    if os.environ.get("RANK", "0") == "0" and os.environ.get("SEQLAB_REPORT", "1") != "0":
        halves = config.halves() if hasattr(config, "halves") else (("", config),)
        for name, half in halves:
            report_after_training(Path(out_dir) / name, half.train.device)
    return metrics
