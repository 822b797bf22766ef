"""Which token labels are right (seqlab.tagging.calibration.Outcomes, token units): the label ids compared at
once give what comparing each token's label string with its gold one gives, a label unknown to the model
included."""
from __future__ import annotations

import numpy as np
import pytest

import seqlab
from seqlab.tagging.calibration import _gold_ids
from tests.conftest import FIXTURES, forget_new_log_handlers

POS = FIXTURES / "pos"


@pytest.fixture(scope="module")
def pos_tagger(tmp_path_factory) -> seqlab.SequenceTagger:
    run = tmp_path_factory.mktemp("pos") / "run"
    with pytest.MonkeyPatch.context() as patch, forget_new_log_handlers():
        patch.setenv("SEQLAB_DATA", str(POS))
        seqlab.train(POS / "tiny.yaml", run, overrides=("train.epochs=8", "train.threads=1"), progress=False)
    return seqlab.load(run, "cpu")


def _label_by_label(outcomes) -> np.ndarray:
    """Each token's predicted label string against its gold one, token by token."""
    names, tags = outcomes.predictor.names, outcomes.split.tags
    return np.array([names[best[r, t]] == tags[i][t]
                     for indices, _, _, best, _, lengths in outcomes.batches
                     for r, i in enumerate(indices.tolist()) for t in range(int(lengths[r]))], dtype=bool)


@pytest.mark.parametrize("batch_size", [1, 2, 100])
def test_token_correctness_is_the_label_by_label_comparison(pos_tagger, tmp_path, batch_size) -> None:
    text = (POS / "dev.conllu").read_text()
    # wrong gold labels: one the model has (mat is no verb) and one it never saw (SYM)
    text = text.replace("6\tmat\tmat\tNOUN", "6\tmat\tmat\tVERB").replace("6\t.\t.\tPUNCT", "6\t.\t.\tSYM")
    (tmp_path / "dev.conllu").write_text(text)
    outcomes = pos_tagger.outcomes(tmp_path / "dev.conllu", batch_size=batch_size)
    assert outcomes.unit == "token" and outcomes.correct.dtype == bool
    assert np.array_equal(outcomes.correct, _label_by_label(outcomes))
    assert 2 <= (~outcomes.correct).sum() < len(outcomes.correct)
    for *_, where, lengths in outcomes.batches:  # each unit one token: (row, t, t + 1), row by row
        assert where.tolist() == [[r, t, t + 1] for r, n in enumerate(lengths.tolist()) for t in range(n)]


def test_gold_ids_pad_with_minus_one_and_mark_unknown_labels() -> None:
    names = np.array(["NOUN", "DET", "VERB"], dtype=object)
    ids = _gold_ids([["DET", "NOUN"], [], ["VERB", "SYM", "DET"]], names)
    assert ids.tolist() == [[1, 0, -1], [-1, -1, -1], [2, -1, 1]]
    assert _gold_ids([], names).shape == (0, 0)
