"""The training loop's model-selection state (seqlab.core.trainer): score terms, and runs written with the old keys.

Runs written before the score got a measure-neutral name hold ``best_f1`` in their checkpoint and ``dev_f1`` in
each epoch's history; ``--resume`` and ``seqlab summarize`` read them as ``best_score`` and ``dev_score``.
"""
from __future__ import annotations

import contextlib
import io
import json
from pathlib import Path

import pytest
import torch

from seqlab.cli import main
from seqlab.core.trainer import OLD_KEYS, record_epoch, upgrade_state
from tests.conftest import forget_new_log_handlers

NER = Path(__file__).parents[1] / "fixtures" / "ner"


def _old(state: dict) -> dict:
    """``state`` as a run of the old key names wrote it."""
    back = {new: old for old, new in OLD_KEYS.items()}
    state = {back.get(key, key): value for key, value in state.items()}
    state["history"] = [{back.get(key, key): value for key, value in h.items()} for h in state["history"]]
    return state


NEW = {"epoch": 2, "best_score": 91.5, "best_epoch": 1, "bad_epochs": 1, "world_size": 1,
       "history": [{"epoch": 1, "dev_score": 91.5, "loss": 0.3}, {"epoch": 2, "dev_score": 90.0, "loss": 0.2}]}


@pytest.mark.parametrize("state", [NEW, _old(NEW)], ids=["today's keys", "old keys"])
def test_upgrade_state_reads_either_age_as_todays_keys(state):
    assert upgrade_state(json.loads(json.dumps(state))) == NEW


def test_the_old_state_really_has_the_old_keys():  # so that the test above can fail
    old = _old(NEW)
    assert "best_f1" in old and "best_score" not in old and "dev_f1" in old["history"][0]


def test_record_epoch_keeps_the_best_score_and_counts_bad_epochs():
    state = upgrade_state(_old({**NEW, "history": list(NEW["history"])}))
    assert record_epoch(state, 3, 92.0, {"epoch": 3, "dev_score": 92.0}) is True
    assert (state["best_score"], state["best_epoch"], state["bad_epochs"]) == (92.0, 3, 0)
    assert record_epoch(state, 4, 92.0, {"epoch": 4, "dev_score": 92.0}) is False  # a tie is no gain
    assert (state["best_epoch"], state["bad_epochs"], state["epoch"]) == (3, 1, 4)


def test_a_run_checkpointed_with_the_old_keys_resumes(tmp_path, monkeypatch):
    monkeypatch.setenv("SEQLAB_DATA", str(NER))
    run = tmp_path / "run"
    fast = ["--set", "train.threads=1", "--quiet"]
    with forget_new_log_handlers(), contextlib.redirect_stdout(io.StringIO()):
        assert main(["train", str(NER / "tiny.yaml"), "--set", "train.epochs=1", *fast, "--output", str(run)]) == 0
        checkpoint = torch.load(run / "checkpoint.pt", weights_only=True)
        checkpoint["state"] = json.dumps(_old(json.loads(checkpoint["state"])))
        torch.save(checkpoint, run / "checkpoint.pt")
        assert main(["train", "--resume", str(run), "--set", "train.epochs=2", "--quiet"]) == 0
    metrics = json.loads((run / "metrics.json").read_text(encoding="utf-8"))
    assert metrics["epochs"] == 2 and metrics["measure"] == "F1"
    assert [sorted(set(h) & {"dev_score", "dev_f1"}) for h in metrics["history"]] == [["dev_score"], ["dev_score"]]
