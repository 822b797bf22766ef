"""Helpers the tests share: the one trainer set up for a tagging or a relation config."""
from __future__ import annotations

from pathlib import Path
from typing import Any

from seqlab.core.trainer import Trainer


def tagger_trainer(config: Any, out_dir: str | Path, **options: Any) -> Trainer:
    """The trainer of a tagging config (its task, with data and vocabularies, is ``trainer.task``)."""
    from seqlab.tagging.task import prepare

    return Trainer(prepare, config, Path(out_dir), **options)


def relation_trainer(config: Any, out_dir: str | Path, **options: Any) -> Trainer:
    """The trainer of a relation config."""
    from seqlab.relation.task import prepare

    return Trainer(prepare, config, Path(out_dir), **options)
