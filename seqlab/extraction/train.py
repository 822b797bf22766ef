"""Training an extraction model: the tagger into ``RUN/ner``, then the relation classifier into
``RUN/relation``, each by the one trainer, then the relation threshold fitted end to end on the dev file
(:mod:`seqlab.extraction.threshold`); ``RUN`` gets the resolved config, both halves' metrics and the threshold."""
from __future__ import annotations

import logging
from pathlib import Path
from typing import Any

from seqlab.core import rundir
from seqlab.core.strict import dump_config
from seqlab.core.trainer import train as train_task
from seqlab.extraction.config import NER_RUN, RELATION_RUN, ExtractionConfig
from seqlab.extraction.threshold import fit_decision

log = logging.getLogger(__name__)


def train(config: ExtractionConfig, out_dir: str | Path, *, resume: bool = False,
          progress: bool = True) -> dict[str, Any]:
    """Train both halves of ``config`` into ``out_dir`` (module docstring); with ``resume``, a half already
    finished is not trained again and an unfinished one continues. Returns ``{"ner": ..., "relation": ...}``."""
    from seqlab.relation.task import prepare as relation
    from seqlab.tagging.task import prepare as tagging

    out_dir = Path(out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    rundir.save_config(out_dir, dump_config(config))
    metrics = {}
    prepares = {NER_RUN: tagging, RELATION_RUN: relation}
    for name, half in config.halves():
        prepare = prepares[name]
        where = out_dir / name
        done = rundir.load_json(where, rundir.METRICS) if resume else None
        if done is None:
            log.info("extraction: training the %s half into %s", name, where)
            done = train_task(prepare, half, where, resume=resume and rundir.has_checkpoint(where), progress=progress)
        metrics[name] = done
    dev = config.relation.data.dev
    if dev:  # the relation decision, fitted end to end once both halves are trained (again on a resume: cheap)
        from seqlab.extraction.model import ExtractionModel

        metrics["decision"] = fit_decision(ExtractionModel.load(out_dir, config.relation.train.device), dev, out_dir)
        log.info("extraction: relation threshold %.2f fitted on %s (dev strict macro-F1 %.2f; %.2f by the argmax)",
                 metrics["decision"]["threshold"], dev, metrics["decision"]["dev_macro_f1"],
                 metrics["decision"]["dev_macro_f1_argmax"])
    rundir.save_metrics(out_dir, metrics)
    return metrics
