"""examples/greedy_ner.py: Ratinov & Roth's greedy averaged perceptron with history features, on tiny data."""
from __future__ import annotations

import json

import numpy as np
import pytest

from examples import greedy_ner as greedy
from seqlab.data.schemes import allowed_transitions

# CoNLL-2003 lines (word POS chunk NER, IOB1). "Jordan" is a person after "said" and a place after "in": only the
# window tells them apart; every sentence is its own document-free line group.
TRAIN = """-DOCSTART- -X- -X- O

EU NNP B-NP I-ORG
rejects VBZ B-VP O
German JJ B-NP I-MISC
call NN I-NP O
. . O O

Peter NNP B-NP I-PER
Blackburn NNP I-NP I-PER
said VBD B-VP O
. . O O

talks NNS B-NP O
in IN B-PP O
Jordan NNP B-NP I-LOC
. . O O

Michael NNP B-NP I-PER
Jordan NNP I-NP I-PER
said VBD B-VP O
. . O O

"""


@pytest.fixture
def data(tmp_path, monkeypatch):
    (tmp_path / "conll2003").mkdir()
    (tmp_path / "conll2003" / "train.txt").write_text(TRAIN)
    monkeypatch.setenv("SEQLAB_DATA", str(tmp_path))
    return tmp_path


def _args(tmp_path, *extra):
    return ["--train", "conll2003/train.txt", "--dev", "conll2003/train.txt", "--test", "conll2003/train.txt",
            "--model", str(tmp_path / "out" / "m.npz"), "--predictions", str(tmp_path / "out" / "p.txt"), *extra]


def test_the_perceptron_learns_its_training_sentences_and_writes_its_outputs(data, capsys):
    assert greedy.main(_args(data, "--epochs", "10")) == 0
    results = json.loads(capsys.readouterr().out)
    assert results["dev_f1"] == 100.0 and results["test_f1"] == 100.0
    assert results["epochs"]["chosen"] == 10 and results["features"]["all"] > results["features"]["static"]
    saved = json.loads((data / "out" / "m.npz.json").read_text())
    assert saved["config"]["seed"] == 1 and saved["test_f1"] == 100.0
    with np.load(data / "out" / "m.npz") as model:
        assert model["weights"].shape == (len(model["features"]), len(model["labels"]))
        assert "y-1=<s>" in set(model["features"]) or "y-2=<s>" in set(model["features"])
    rows = [line.split() for line in (data / "out" / "p.txt").read_text().splitlines() if line.strip()]
    assert [r[-1] for r in rows] == [r[-2] for r in rows] and all(r[-1][:2] != "B-" for r in rows)  # IOB1 out


def test_tune_scores_dev_after_the_chosen_epochs_of_one_run(data, capsys):
    assert greedy.main(_args(data, "--tune", "--tune-epochs", "1", "3")) == 0
    tuned = json.loads(capsys.readouterr().out)["epochs"]
    assert set(tuned["dev_f1"]) == {"1", "3"} and tuned["chosen"] in (1, 3)
    assert tuned["dev_f1"][str(tuned["chosen"])] == max(tuned["dev_f1"].values())


def test_history_features_name_the_previous_predictions():
    model = greedy.GreedyPerceptron(["B-PER", "I-PER", "L-PER", "O", "U-PER"])
    contexts = model._contexts(["Peter", "Blackburn", "said"])
    assert model._history(contexts[1], "B-PER", "<s>") == [
        "y-1=B-PER", "y-2=<s>", "y-2,y-1=<s>,B-PER", "w[-2]=|y-1=B-PER", "w[-1]=Peter|y-1=B-PER",
        "w[0]=Blackburn|y-1=B-PER", "w[+1]=said|y-1=B-PER", "w[+2]=|y-1=B-PER"]
    plain = greedy.GreedyPerceptron(["O", "U-PER"], history=False)
    assert plain._history(plain._contexts(["a"])[0], "O", "O") == []


def test_greedy_labels_always_follow_bilou():
    """Whatever the weights say, a label that cannot follow the previous one is never chosen."""
    labels = ["B-LOC", "B-PER", "I-PER", "L-LOC", "L-PER", "O", "U-LOC"]
    model = greedy.GreedyPerceptron(labels)
    allowed, start, _ = allowed_transitions(labels, "bilou")
    rng = np.random.default_rng(0)
    words = [f"w{i}" for i in range(12)]
    static = model.static([{f"f{i % 5}": 1.0, "bias": 1.0} for i in range(12)], grow=True)
    for _ in range(20):
        W = rng.normal(size=(len(model.index), len(labels)))
        tags = model.tag(words, static, W)
        assert start[labels.index(tags[0])]
        assert all(allowed[labels.index(a)][labels.index(b)] for a, b in zip(tags, tags[1:]))


def test_averaged_weights_are_the_mean_over_every_token_seen():
    """The running-sum trick gives the mean of the weight vectors after each training token."""
    model = greedy.GreedyPerceptron(["O", "U-PER"], history=False)
    static = model.static([{"a": 1.0}, {"b": 1.0}, {"a": 1.0, "b": 0.5}], grow=True)
    snapshots = []
    for gold in (["U-PER", "O", "U-PER"], ["O", "U-PER", "O"], ["U-PER", "U-PER", "O"]):
        for i, label in enumerate(gold):  # one token at a time, recording W after each
            model.tag(["x"], [static[i]], model.W, [label])
            snapshots.append(model.W[:len(model.index)].copy())
    assert np.allclose(model.averaged(), np.mean(snapshots, axis=0))


def test_bad_input_is_one_line_naming_it(data, capsys):
    assert greedy.main(["--train", "conll2003/nope.txt", "--dev", "conll2003/train.txt", "--test",
                        "conll2003/train.txt", "--model", str(data / "m.npz"), "--predictions", str(data / "p")]) == 2
    err = capsys.readouterr().err
    assert err.startswith("greedy_ner: error: ") and "nope.txt" in err and len(err.splitlines()) == 1
    assert greedy.main(_args(data, "--epochs", "0")) == 2
    assert "epochs must be >= 1" in capsys.readouterr().err
    assert not (data / "out").exists()


def test_an_earlier_epochs_weights_tag_after_later_epochs_added_features(data, capsys):
    """The best dev epoch can be an early one: features first updated later get zero weight, not an IndexError."""
    assert greedy.main(_args(data, "--tune", "--tune-epochs", "1", "6", "--train-history", "gold")) == 0
    results = json.loads(capsys.readouterr().out)
    with np.load(data / "out" / "m.npz") as model:
        assert model["weights"].shape[0] == len(model["features"]) == results["features"]["all"]
    model = greedy.GreedyPerceptron(["O", "U-PER"])
    model.static([{"a": 1.0}], grow=True)
    early = model.averaged()
    model.static([{"b": 1.0}], grow=True)
    assert model.padded(early).shape == (2, 2) and not model.padded(early)[1].any()


def test_gold_history_reads_the_gold_labels_in_training():
    model = greedy.GreedyPerceptron(["O", "U-PER"], gold_history=True)
    static = model.static([{"a": 1.0}, {"a": 1.0}], grow=True)
    model.tag(["x", "y"], static, model.W, ["U-PER", "O"])  # the first guess (O, all weights 0) is wrong
    assert "y-1=U-PER" in model.index  # the second token's history is the gold U-PER, not the guess O


def test_a_thick_separator_updates_each_label_until_its_margin(data, capsys):
    model = greedy.GreedyPerceptron(["O", "U-PER"], history=False, thickness=2.0)
    static = model.static([{"a": 1.0}], grow=True)
    for _ in range(5):
        model.tag(["x"], static, model.W, ["U-PER"])
    assert model.W[0].tolist() == [-2.0, 2.0]  # two updates each way, then both scores are 2 from 0
    assert greedy.main(_args(data, "--epochs", "8", "--thickness", "1")) == 0
    assert json.loads(capsys.readouterr().out)["test_f1"] == 100.0
    assert greedy.main(_args(data, "--thickness", "-1")) == 2
    assert "thickness must be >= 0" in capsys.readouterr().err
