"""A tiny SpERT-format corpus and relation config, written where a test asks (shared by the relation and
extraction tests)."""
from __future__ import annotations

import json
from pathlib import Path

PEOPLE, PLACES, FIRMS = ("John", "Ann", "Bob", "Eve"), ("Paris", "Rome", "Oslo"), ("IBM", "Acme")


def sentences(count: int, offset: int = 0) -> list[dict]:
    """``count`` sentences of three shapes: lives in (Live_In), works for (Work_For), is based in (OrgBased_In)."""
    out = []
    for k in range(offset, offset + count):
        person, place, firm = PEOPLE[k % 4], PLACES[k % 3], FIRMS[k % 2]
        shape = k % 3
        if shape == 0:
            tokens, entities = [person, "lives", "in", place, "."], [("Peop", 0, 1), ("Loc", 3, 4)]
            relations = [("Live_In", 0, 1)]
        elif shape == 1:
            tokens, entities = [person, "works", "for", firm, "in", place, "."], [("Peop", 0, 1), ("Org", 3, 4),
                                                                                 ("Loc", 5, 6)]
            relations = [("Work_For", 0, 1)]
        else:
            tokens, entities = [firm, "is", "based", "in", place, "."], [("Org", 0, 1), ("Loc", 4, 5)]
            relations = [("OrgBased_In", 0, 1)]
        out.append({"tokens": tokens, "entities": [{"type": t, "start": s, "end": e} for t, s, e in entities],
                    "relations": [{"type": t, "head": h, "tail": tl} for t, h, tl in relations], "orig_id": k})
    return out


RELATION_CONFIG = """task: relation
data: {{train: toy_train.json, dev: toy_dev.json, test: toy_test.json, format: spert, negative_label: no_relation}}
model:
  embeddings: {{dim: 8, min_count: 1}}
  heads: 2
  hidden: 6
  position_dim: 4
  max_length: 12
  attention_dim: 5
  latent_types: 3
  dropout_embedding: 0.0
  dropout_lstm: 0.0
  dropout_attention: 0.0
  entity_markers: {markers}
train: {{epochs: 1, patience: 1, batch_size: 4, eval_batch_size: 7, seed: 1, threads: 1}}
"""


def write_corpus(folder: Path, *, markers: bool = True) -> Path:
    """The three splits (12 / 6 / 6 sentences) and ``relations.yaml`` in ``folder``; returns the config."""
    for name, count, offset in (("train", 12, 0), ("dev", 6, 12), ("test", 6, 18)):
        (folder / f"toy_{name}.json").write_text(json.dumps(sentences(count, offset)), encoding="utf-8")
    config = folder / "relations.yaml"
    config.write_text(RELATION_CONFIG.format(markers=str(markers).lower()), encoding="utf-8")
    return config


NER_CONFIG = """  data: {train: toy_train.json, dev: toy_dev.json, test: toy_test.json, format: spert, tag_scheme: bilou}
  model:
    embeddings: {dim: 4, min_count: 1}
    chars: {dim: 8, hidden: 8}
    capitalization: {dim: 4}
    hidden: 16
    dropout: 0.0
  train: {optimizer: adam, lr: 0.02, lr_decay: 1.0, batch_size: 2, epochs: 3, patience: 50, device: cpu,
          eval_batch_size: 3}
"""


def write_pipeline(folder: Path) -> Path:
    """The corpus and ``pipeline.yaml`` (a tiny tagger and relation classifier) in ``folder``; returns the config."""
    relation = write_corpus(folder).read_text(encoding="utf-8")
    relation = "".join(f"  {line}\n" for line in relation.splitlines() if not line.startswith("task:"))
    config = folder / "pipeline.yaml"
    config.write_text(f"task: extraction\nner:\n{NER_CONFIG}relation:\n{relation}", encoding="utf-8")
    return config


#: Enough training for the tiny relation classifier to find the toy relations (AdaDelta at lr 1 needs far more).
RELATIONS_LEARNED = ("relation.train.optimizer=adam", "relation.train.lr=0.02", "relation.train.epochs=12",
                     "relation.train.patience=12")


def extraction_run(folder: Path) -> Path:
    """A tiny extraction model (tagger and relation classifier) trained on the toy SpERT corpus into
    ``folder/run``, until it finds the toy relations."""
    import pytest

    import seqlab
    from tests.conftest import forget_new_log_handlers

    out = folder / "run"
    with pytest.MonkeyPatch.context() as mp, forget_new_log_handlers():
        mp.setenv("SEQLAB_DATA", str(folder))
        seqlab.train(write_pipeline(folder), out, overrides=RELATIONS_LEARNED, progress=False)
    return out
