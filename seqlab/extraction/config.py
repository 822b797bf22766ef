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
        if not self.ner.data.labelling.has_spans:
            raise ConfigError(f"ner.data.tag_scheme: the tagger finds the entities, so it needs a span scheme "
                              f"(bilou, iob2, ...), got {self.ner.data.tag_scheme!r}")


def load_extraction_config(path: str | Path, overrides: Sequence[str] = ()) -> ExtractionConfig:
    """Read an extraction config strictly (see :mod:`seqlab.core.strict`)."""
    return load_strict(path, overrides, root=ExtractionConfig)
