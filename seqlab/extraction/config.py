"""Extraction configs: ``task: extraction`` with the whole config of each half, ``ner`` (a tagger's,
:class:`seqlab.tagging.config.Config`) and ``relation`` (:class:`seqlab.relation.config.RelationConfig`), read
as strictly as either is alone (``--set ner.train.epochs=1``)."""
from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Sequence

from seqlab.core.errors import ConfigError
from seqlab.core.strict import choice, load_strict
from seqlab.relation.config import RelationConfig
from seqlab.tagging.config import Config

TASK = "extraction"
#: The sub-runs of an extraction run directory, one per half.
NER_RUN, RELATION_RUN = "ner", "relation"


@dataclass(frozen=True)
class ExtractionConfig:
    """A tagger and a relation classifier trained one after the other into one run directory."""

    ner: Config
    relation: RelationConfig
    task: str = TASK

    def __post_init__(self) -> None:
        choice("task", self.task, (TASK,))
        if self.relation.data.negative_label is None:
            raise ConfigError("relation.data.negative_label: an extraction model classifies every entity pair and "
                              "needs the label of no relation (no_relation for SpERT data); got null")
        self.ner.data.labelling.require_spans("ner.data.tag_scheme", "the tagger finds the entities")

    def halves(self) -> tuple[tuple[str, Config | RelationConfig], ...]:
        """The two halves in training order, each with the run subfolder it trains into."""
        return (NER_RUN, self.ner), (RELATION_RUN, self.relation)


def load_extraction_config(path: str | Path, overrides: Sequence[str] = ()) -> ExtractionConfig:
    """Read an extraction config strictly (see :mod:`seqlab.core.strict`)."""
    return load_strict(path, overrides, root=ExtractionConfig)
