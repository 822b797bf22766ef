"""examples/crfsuite_chunker.py: Turian et al. (2010) Table 1 features, and a tiny end-to-end run."""
from __future__ import annotations

import importlib.util
import json
import re
import sys

import pytest

from examples import baselines
from examples import crfsuite_chunker as chunker
from seqlab.core.errors import SeqlabError

HAS_CRFSUITE = importlib.util.find_spec("pycrfsuite") is not None
NEEDS_CRFSUITE = pytest.mark.skipif(not HAS_CRFSUITE, reason="python-crfsuite is not installed: "
                                    "pip install python-crfsuite")

# CoNLL-2000 format (word POS chunk); sentences from the real train and test files.
TRAIN = """He PRP B-NP
talked VBD B-VP
about IN B-NP
20 CD I-NP
minutes NNS I-NP
. . O

It PRP B-NP
helps VBZ B-VP
to TO I-VP
keep VB I-VP
out IN B-PRT
unions NNS B-NP
. . O

Friday NNP B-NP
's POS B-NP
Market NNP I-NP
Activity NN I-NP

"""
TEST = """Mr. NNP B-NP
Percival NNP I-NP
declined VBD B-VP
to TO I-VP
comment VB I-VP
. . O

SHEARSON NNP B-NP
LEHMAN NNP I-NP
HUTTON NNP I-NP
Inc NNP I-NP
. . O

"""
# Liang's paths format: bit-string, word, count. "20" has no cluster; "minutes" is longer than 20 bits.
PATHS = "0110\tHe\t5\n0111010\ttalked\t3\n10\tabout\t9\n110011001100110011001100\tminutes\t2\n"
# Turian's text format; "20" has no vector and gets *UNKNOWN*'s, as do the padding positions.
VECTORS = "*UNKNOWN* 0.5 -0.5\nHe 1 2\ntalked 3 4\nabout 5 6\nminutes 7 8\n"

SENTENCE = (["He", "talked", "about", "20", "minutes", "."], ["PRP", "VBD", "IN", "CD", "NNS", "."])


@pytest.fixture
def representations(tmp_path):
    from features.brown import BrownClusters
    from features.embeddings import EmbeddingFeatures

    (tmp_path / "paths.txt").write_text(PATHS)
    (tmp_path / "vectors.txt").write_text(VECTORS)
    return (BrownClusters.load(tmp_path / "paths.txt"),
            EmbeddingFeatures.load(tmp_path / "vectors.txt", scale=None))


def test_table1_features_of_the_first_token_pad_outside_the_sentence():
    feats = chunker.ChunkFeatures()(*SENTENCE)[0]
    assert feats == dict.fromkeys([
        "w[-2]=", "w[-1]=", "w[0]=He", "w[+1]=talked", "w[+2]=about", "w[-1]|w[0]= He", "w[0]|w[+1]=He talked",
        "p[-2]=", "p[-1]=", "p[0]=PRP", "p[+1]=VBD", "p[+2]=IN",
        "p[-2]|p[-1]= ", "p[-1]|p[0]= PRP", "p[0]|p[+1]=PRP VBD", "p[+1]|p[+2]=VBD IN",
        "p[-2]|p[-1]|p[0]=  PRP", "p[-1]|p[0]|p[+1]= PRP VBD", "p[0]|p[+1]|p[+2]=PRP VBD IN",
    ], 1.0)


def test_table1_features_with_brown_and_embeddings_of_a_middle_token(representations):
    feats = chunker.ChunkFeatures(*[[r] for r in representations])(*SENTENCE)[2]  # "about"
    binary = [
        "w[-2]=He", "w[-1]=talked", "w[0]=about", "w[+1]=20", "w[+2]=minutes",
        "w[-1]|w[0]=talked about", "w[0]|w[+1]=about 20",
        "p[-2]=PRP", "p[-1]=VBD", "p[0]=IN", "p[+1]=CD", "p[+2]=NNS",
        "p[-2]|p[-1]=PRP VBD", "p[-1]|p[0]=VBD IN", "p[0]|p[+1]=IN CD", "p[+1]|p[+2]=CD NNS",
        "p[-2]|p[-1]|p[0]=PRP VBD IN", "p[-1]|p[0]|p[+1]=VBD IN CD", "p[0]|p[+1]|p[+2]=IN CD NNS",
        # Prefixes 4, 6, 10, 20; a shorter bit-string is used whole; "20" (w[+1]) has no cluster.
        "brown4[-2]=0110", "brown6[-2]=0110", "brown10[-2]=0110", "brown20[-2]=0110",
        "brown4[-1]=0111", "brown6[-1]=011101", "brown10[-1]=0111010", "brown20[-1]=0111010",
        "brown4[0]=10", "brown6[0]=10", "brown10[0]=10", "brown20[0]=10",
        "brown4[+2]=1100", "brown6[+2]=110011", "brown10[+2]=1100110011", "brown20[+2]=11001100110011001100",
    ]
    real = {"emb[0][-2]": 1.0, "emb[1][-2]": 2.0, "emb[0][-1]": 3.0, "emb[1][-1]": 4.0,
            "emb[0][0]": 5.0, "emb[1][0]": 6.0, "emb[0][+1]": 0.5, "emb[1][+1]": -0.5,
            "emb[0][+2]": 7.0, "emb[1][+2]": 8.0}
    assert feats == {**dict.fromkeys(binary, 1.0), **real}


def test_padding_gets_the_unknown_embedding_and_no_brown_feature(representations):
    feats = chunker.ChunkFeatures(*[[r] for r in representations])(*SENTENCE)[0]
    assert not [name for name in feats if name.startswith("brown") and ("[-2]" in name or "[-1]" in name)]
    assert (feats["emb[0][-2]"], feats["emb[1][-1]"]) == (0.5, -0.5)


def test_a_second_file_of_a_kind_gets_numbered_names(representations):
    brown, vectors = representations
    feats = chunker.ChunkFeatures([brown, brown], [vectors, vectors])(*SENTENCE)[2]
    assert feats["brown4[0]=10"] == feats["brown4#2[0]=10"] == 1.0
    assert feats["emb[1][-2]"] == feats["emb[1]#2[-2]"] == 2.0


def test_default_c2_is_turians_sigma():
    assert chunker.TURIAN_C2 == pytest.approx(1 / (2 * chunker.TURIAN_SIGMA**2), rel=1e-15)
    assert chunker.ChunkerConfig("a", "b", "m", "p").crfsuite_params() == {
        "feature.possible_states": True, "feature.possible_transitions": True, "c2": 0.048828125}


def test_seen_features_only_turns_the_possible_features_off():
    cfg = chunker.ChunkerConfig("a", "b", "m", "p", algorithm="lbfgs", c2=0.125, possible_features=False)
    assert cfg.crfsuite_params() == {"feature.possible_states": False, "feature.possible_transitions": False,
                                     "c2": 0.125}
    args = chunker.parser().parse_args(["--train", "a", "--test", "b", "--model", "m", "--predictions", "p",
                                        "--seen-features-only"])
    assert args.seen_features_only


def test_hold_out_is_seeded_and_disjoint():
    sentences = [((str(i),), ("NN",), ("B-NP",)) for i in range(50)]
    rest, dev = chunker.hold_out(sentences, 10)
    assert (len(rest), len(dev)) == (40, 10)
    assert sorted(rest + dev) == sorted(sentences)
    assert chunker.hold_out(sentences, 10) == (rest, dev)


@pytest.mark.parametrize("kwargs, message", [
    ({"algorithm": "ap"}, "algorithm must be one of l2sgd, lbfgs, but got 'ap'"),
    ({"c1": 0.1}, "c1 (L1) needs algorithm 'lbfgs', but got 'l2sgd'"),
    ({"c2": -1.0}, "c2 must be a number >= 0, but got -1.0"),
    ({"tune_c2": (0.1, float("nan"))}, "tune_c2 must be a number >= 0, but got nan"),
    ({"max_iterations": 0}, "max_iterations must be >= 1, but got 0"),
])
def test_config_errors(kwargs, message):
    with pytest.raises(SeqlabError, match=re.escape(message)):
        chunker.ChunkerConfig("a", "b", "m", "p", **kwargs)


def test_missing_crfsuite_gives_an_install_hint(monkeypatch):
    monkeypatch.setitem(sys.modules, "pycrfsuite", None)
    with pytest.raises(SeqlabError, match="pip install python-crfsuite"):
        baselines.import_pycrfsuite()


@pytest.fixture
def data(tmp_path, monkeypatch):
    """SEQLAB_DATA with the fixture as conll2000/{train,test}.txt, clusters and vectors."""
    (tmp_path / "conll2000").mkdir()
    (tmp_path / "conll2000" / "train.txt").write_text(TRAIN)
    (tmp_path / "conll2000" / "test.txt").write_text(TEST)
    (tmp_path / "paths.txt").write_text(PATHS)
    (tmp_path / "vectors.txt").write_text(VECTORS)
    monkeypatch.setenv("SEQLAB_DATA", str(tmp_path))
    return tmp_path


def test_missing_data_file_is_an_error_naming_it(data, capsys):
    rc = chunker.main(["--train", "conll2000/nope.txt", "--test", "conll2000/test.txt",
                       "--model", str(data / "m.crfsuite"), "--predictions", str(data / "p.txt")])
    assert rc == 2
    assert "conll2000/nope.txt" in capsys.readouterr().err


@NEEDS_CRFSUITE
def test_train_and_tag_the_fixture(data, capsys):
    out = data / "out"
    rc = chunker.main(["--train", "conll2000/train.txt", "--test", "conll2000/test.txt", "--brown", "paths.txt",
                       "--embeddings", "vectors.txt", "--max-iterations", "30",
                       "--model", str(out / "m.crfsuite"), "--predictions", str(out / "p.txt")])
    assert rc == 0
    results = json.loads(capsys.readouterr().out)
    assert 0 <= results["test_f1"] <= 100
    assert results["sentences"] == {"train": 3, "test": 2}
    assert results["features"]["train_tokens"] == 17 and results["features"]["attributes"] > 0
    assert results["crfsuite"]["c2"] == 0.048828125 and results["crfsuite"]["iterations"] <= 30
    assert json.loads((out / "m.crfsuite.json").read_text())["test_f1"] == results["test_f1"]
    assert "Number of features" in (out / "m.crfsuite.log").read_text()
    # One "word POS gold predicted" line per test token, sentences as in the test file.
    predicted = [block.splitlines() for block in (out / "p.txt").read_text().split("\n\n") if block]
    gold = [block.splitlines() for block in TEST.split("\n\n") if block]
    assert [len(s) for s in predicted] == [len(s) for s in gold] == [6, 5]
    for p_sentence, g_sentence in zip(predicted, gold):
        for p_line, g_line in zip(p_sentence, g_sentence):
            fields = p_line.split(" ")
            assert len(fields) == 4 and " ".join(fields[:3]) == g_line
            assert fields[3] in {"O"} | {f"{b}-{t}" for b in "BI" for t in ("NP", "VP", "PRT")}


@NEEDS_CRFSUITE
def test_tune_c2_on_sentences_held_out_from_train(data, capsys, monkeypatch):
    monkeypatch.setattr(chunker, "DEV_SENTENCES", 1)
    out = data / "out"
    rc = chunker.main(["--train", "conll2000/train.txt", "--test", "conll2000/test.txt", "--tune-c2", "0.01", "1.0",
                       "--max-iterations", "10", "--model", str(out / "m.crfsuite"), "--predictions", str(out / "p.txt")])
    assert rc == 0
    results = json.loads(capsys.readouterr().out)
    tuning = results["tuning"]
    assert (tuning["dev_sentences"], tuning["train_sentences"], sorted(tuning["dev_f1"])) == (1, 2, ["0.01", "1.0"])
    assert results["crfsuite"]["c2"] == tuning["chosen_c2"] == max((0.01, 1.0), key=lambda c: tuning["dev_f1"][repr(c)])
