"""examples/crfsuite_ner.py: Turian et al. (2010) section 6.2 baseline features, and a tiny end-to-end run."""
from __future__ import annotations

import importlib.util
import json
import re

import pytest

from examples import crfsuite_ner as ner
from seqlab.core.errors import SeqlabError

NEEDS_CRFSUITE = pytest.mark.skipif(importlib.util.find_spec("pycrfsuite") is None,
                                    reason="python-crfsuite is not installed: pip install python-crfsuite")

# CoNLL-2003 format (word POS chunk NER, IOB1), sentences after the real training file.
TRAIN = """-DOCSTART- -X- -X- O

EU NNP B-NP I-ORG
rejects VBZ B-VP O
German JJ B-NP I-MISC
call NN I-NP O
. . O O

Peter NNP B-NP I-PER
Blackburn NNP I-NP I-PER

BRUSSELS NNP B-NP I-LOC
1996-08-22 CD I-NP O

"""
DEV = """Germany NNP B-NP I-LOC
's POS B-NP O
representative NN I-NP O

"""
PATHS = "0110\tEU\t5\n0111010\tgerman\t3\n10\trejects\t9\n"
SENTENCE = ["EU", "rejects", "Bosnia-Herzegovina", "call", "."]


def test_baseline_features_of_a_hyphenated_middle_token():
    feats = ner.NerFeatures()(SENTENCE)[2]
    assert feats == dict.fromkeys([
        "w[-2]=EU", "w[-1]=rejects", "w[0]=Bosnia-Herzegovina", "w[+1]=call", "w[+2]=.",
        "cap[-2]=allUpper", "cap[-1]=allLower", "cap[0]=upperFirst", "cap[+1]=allLower", "cap[+2]=noAlphaNum",
        "cap[-2..+2]=allUpper allLower upperFirst allLower noAlphaNum",
        "type[0]=Aa-Aa",
        "pre1=B", "pre2=Bo", "pre3=Bos", "pre4=Bosn", "suf1=a", "suf2=na", "suf3=ina", "suf4=vina",
        "hyph=Bosnia", "hyph=Herzegovina",
    ], 1.0)


def test_the_first_token_sees_padding_and_short_words_get_no_whole_word_affix():
    feats = ner.NerFeatures()(SENTENCE)[0]
    assert {"w[-2]=", "w[-1]=", "cap[-1]=", "cap[-2..+2]=  allUpper allLower upperFirst"} <= set(feats)
    assert {"pre1=E", "suf1=U"} <= set(feats) and "pre2=EU" not in feats and "suf2=EU" not in feats
    assert not [name for name in feats if name.startswith("hyph")]


def test_brown_paths_of_the_window_with_a_lower_case_fallback(tmp_path):
    from features.brown import BrownClusters

    (tmp_path / "paths.txt").write_text(PATHS)
    brown = BrownClusters.load(tmp_path / "paths.txt")
    exact = ner.NerFeatures([brown])(["EU", "German", "rejects"])[1]
    assert {"brown4[-1]=0110", "brown4[+1]=10"} <= set(exact) and not [n for n in exact if "[0]=" in n
                                                                       and n.startswith("brown")]
    folded = ner.NerFeatures([brown], brown_lowercase=True)(["EU", "German", "rejects"])[1]
    assert {"brown4[0]=0111", "brown6[0]=011101", "brown20[0]=0111010"} <= set(folded)


def test_perceptron_params_run_every_epoch():
    assert ner.NerConfig("a", "b", "c", "m", "p", epochs=7).params() == {"max_iterations": 7, "epsilon": 0.0}
    assert ner.NerConfig("a", "b", "c", "m", "p", algorithm="lbfgs", epochs=0, c2=0.5).params() == {"c2": 0.5}


@pytest.mark.parametrize("kwargs, message", [
    ({"algorithm": "l2sgd"}, "algorithm must be one of ap, lbfgs, but got 'l2sgd'"),
    ({"epochs": 0}, "epochs must be >= 1 for ap (>= 0 for lbfgs), but got 0"),
    ({"c2": float("nan")}, "c2 must be a number >= 0, but got nan"),
    ({"embedding_scale": 0.0}, "embedding_scale must be > 0, but got 0.0"),
])
def test_config_errors(kwargs, message):
    with pytest.raises(SeqlabError, match=re.escape(message)):
        ner.NerConfig("a", "b", "c", "m", "p", **kwargs)


@pytest.fixture
def data(tmp_path, monkeypatch):
    (tmp_path / "conll2003").mkdir()
    (tmp_path / "conll2003" / "train.txt").write_text(TRAIN)
    (tmp_path / "conll2003" / "dev.txt").write_text(DEV)
    (tmp_path / "paths.txt").write_text(PATHS)
    monkeypatch.setenv("SEQLAB_DATA", str(tmp_path))
    return tmp_path


def test_training_tags_are_bilou_and_predictions_iob1(data):
    train = ner.read_sentences(data / "conll2003" / "train.txt")
    assert [s[2] for s in ner.to_scheme(train, "bilou")] == [
        ("U-ORG", "O", "U-MISC", "O", "O"), ("B-PER", "L-PER"), ("U-LOC", "O")]


@NEEDS_CRFSUITE
def test_missing_data_file_is_an_error_naming_it(data, capsys):
    rc = ner.main(["--train", "conll2003/nope.txt", "--dev", "conll2003/dev.txt", "--test", "conll2003/dev.txt",
                   "--model", str(data / "m.crfsuite"), "--predictions", str(data / "p.txt")])
    assert rc == 2
    assert "conll2003/nope.txt" in capsys.readouterr().err


@NEEDS_CRFSUITE
def test_the_perceptron_learns_its_training_sentences(data, capsys):
    out = data / "out"
    rc = ner.main(["--train", "conll2003/train.txt", "--dev", "conll2003/train.txt", "--test", "conll2003/dev.txt",
                   "--brown", "paths.txt", "--epochs", "10",
                   "--model", str(out / "m.crfsuite"), "--predictions", str(out / "p.txt")])
    assert rc == 0
    results = json.loads(capsys.readouterr().out)
    assert results["dev_f1"] == 100.0  # dev is the training file here: a perceptron separates 3 sentences
    assert results["sentences"] == {"train": 3, "dev": 3, "test": 1}
    assert results["crfsuite"] == {"algorithm": "ap", "max_iterations": 10, "epsilon": 0.0,
                                   "iterations": results["crfsuite"]["iterations"]}
    lines = (out / "p.txt").read_text().splitlines()
    assert lines[0].split()[:3] == ["Germany", "NNP", "I-LOC"]
    assert all(tag.split("-")[0] in {"O", "I", "B"} for tag in (line.split()[3] for line in lines if line))
    assert json.loads((out / "m.crfsuite.json").read_text())["test_f1"] == results["test_f1"]
