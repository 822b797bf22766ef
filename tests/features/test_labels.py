"""features.labels: label frequencies per word, worked by hand on a tiny corpus, and the leakage guard."""
from __future__ import annotations

import numpy as np
import pytest
from sklearn.linear_model import LogisticRegression
from sklearn.pipeline import Pipeline

from features.base import DiscreteExtractor, SentenceTransformer
from features.labels import COUNT_BUCKETS, LabelFrequencies, LeakageError
from features.orthographic import NotFittedError

SENTENCES = [["EU", "rejects", "German", "call"], ["German", "EU", "talks"], ["EU", "call"]]
LABELS = [["B-ORG", "O", "B-MISC", "O"], ["B-MISC", "B-ORG", "O"], ["I-ORG", "O"]]
# By hand: EU is B-ORG twice and I-ORG once (3 times), German B-MISC twice, call O twice,
# rejects and talks O once. Labels sorted: B-MISC, B-ORG, I-ORG, O. Count buckets: 1, 2-3, 4-7, ...


@pytest.fixture
def freqs() -> LabelFrequencies:
    return LabelFrequencies().fit(SENTENCES, LABELS, source="train")


def test_hand_worked_frequencies(freqs):
    assert freqs.labels == ("B-MISC", "B-ORG", "I-ORG", "O")
    assert freqs.dim == 4 + len(COUNT_BUCKETS) == 10
    arr = freqs(["EU", "German", "rejects", "Germany"])
    assert arr.dtype == np.float32
    np.testing.assert_allclose(arr, [
        # B-MISC B-ORG I-ORG  O    | 1  2-3 4-7 8-15 16-31 32+
        [0, 2 / 3, 1 / 3, 0, 0, 1, 0, 0, 0, 0],
        [1, 0, 0, 0, 0, 1, 0, 0, 0, 0],
        [0, 0, 0, 1, 1, 0, 0, 0, 0, 0],
        [0, 0, 0, 0, 0, 0, 0, 0, 0, 0],  # unseen in training: zeros
    ], rtol=1e-6)
    np.testing.assert_allclose(freqs.frequencies(["EU"]), [[0, 2 / 3, 1 / 3, 0]], rtol=1e-6)
    assert freqs.feature_names()[:5] == ["freq=B-MISC", "freq=B-ORG", "freq=I-ORG", "freq=O", "count=1"]


def test_feature_dicts(freqs):
    assert freqs.feature_dicts(["EU", "talks", "eu"]) == [
        {"freq=B-ORG": 2 / 3, "freq=I-ORG": 1 / 3, "count": "2-3"},
        {"freq=O": 1.0, "count": "1"},
        {"count": "0"},  # case-sensitive by default
    ]
    assert isinstance(freqs, DiscreteExtractor)


def test_lowercase_and_count_buckets():
    sentences = [["The"] * 3 + ["the"] * 5, ["x"] * 40]
    labels = [["O"] * 7 + ["B-PER"], ["O"] * 40]
    freqs = LabelFrequencies(lowercase=True).fit(sentences, labels, source="train")
    assert freqs.feature_dicts(["THE", "x"]) == [
        {"freq=B-PER": 1 / 8, "freq=O": 7 / 8, "count": "8-15"},
        {"freq=O": 1.0, "count": "32+"},
    ]


def test_rebuilt_from_state(freqs):
    again = LabelFrequencies(labels=freqs.labels, counts=freqs.counts, source=freqs.source)
    np.testing.assert_array_equal(again(SENTENCES[1]), freqs(SENTENCES[1]))
    assert again.source == "train"


def test_leakage_guard_by_name(freqs):
    assert freqs.source == "train"
    freqs.check_not_fitted_on("dev", "test")
    with pytest.raises(LeakageError, match="fitted on 'train', which is evaluation data here"):
        freqs.check_not_fitted_on("dev", "train")


def test_leakage_guard_by_path(tmp_path):
    (tmp_path / "data").mkdir()
    test_file = tmp_path / "test.txt"
    test_file.write_text("x\n")
    freqs = LabelFrequencies().fit(SENTENCES, LABELS, source=str(test_file))
    freqs.check_not_fitted_on(tmp_path / "dev.txt")
    with pytest.raises(LeakageError, match=r"test\.txt"):
        freqs.check_not_fitted_on(tmp_path / "data" / ".." / "test.txt")


@pytest.mark.parametrize(
    "call, error, message",
    [
        (lambda: LabelFrequencies().fit(SENTENCES, LABELS, source=""), ValueError,
         "source must name the training data"),
        (lambda: LabelFrequencies().fit(SENTENCES, LABELS), TypeError, "source"),
        (lambda: LabelFrequencies().fit([["a", "b"]], [["O"]], source="train"), ValueError,
         "sentence 1: labels must match tokens in length, but got 1 labels and 2 tokens"),
        (lambda: LabelFrequencies().fit(SENTENCES, LABELS[:2], source="train"), ValueError,
         "sentences and labels must have the same number of sentences"),
        (lambda: LabelFrequencies().fit(["EU"], ["B-ORG"], source="train"), TypeError, "not single strings"),
        (lambda: LabelFrequencies().fit([], [], source="train"), ValueError,
         "cannot fit LabelFrequencies on no tokens"),
        (lambda: LabelFrequencies()(["EU"]), NotFittedError, r"call fit\(train_sentences, train_labels, source=...\)"),
        (lambda: LabelFrequencies().check_not_fitted_on("dev"), NotFittedError, "not fitted"),
        (lambda: LabelFrequencies(labels=["O"], counts={"a": {"X": 1}}, source="train"), ValueError,
         r"counts use labels missing from labels: \['X'\]"),
        (lambda: LabelFrequencies(labels=["O"], counts={}), ValueError, "must be given together"),
    ],
)
def test_errors(call, error, message):
    with pytest.raises(error, match=message):
        call()


def test_not_fitted_has_no_dim():
    assert not hasattr(LabelFrequencies(), "dim")


def test_sklearn_adapter_in_a_pipeline(freqs):
    flat_labels = [label for labels in LABELS for label in labels]
    pipe = Pipeline([("freq", SentenceTransformer(freqs)), ("clf", LogisticRegression(C=100.0, max_iter=1000))])
    pipe.fit(SENTENCES, flat_labels)
    assert list(pipe.predict([["German", "call", "EU"]])) == ["B-MISC", "O", "B-ORG"]
    assert SentenceTransformer(freqs).transform(SENTENCES).shape == (9, freqs.dim)
