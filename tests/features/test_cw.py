"""C&W embeddings (features.cw) and what both trainers share (features.vocab): the word index,
windows, the corruption, learning on a tiny synthetic corpus, resume = uninterrupted run,
determinism, and the Embeddings file formats with errors that name the file and line.
"""
from __future__ import annotations

import gzip
import random
from pathlib import Path

import numpy as np
import pytest

torch = pytest.importorskip("torch")

from features.base import Extractor, FeatureFileError  # noqa: E402
from features.cw import corrupt, train_cw  # noqa: E402
from features.vocab import PADDING, UNKNOWN, Embeddings, encode, windows  # noqa: E402

TINY = dict(dim=8, hidden=16, batch_size=16, min_count=1, device="cpu", progress=False)


def synthetic_corpus(n: int = 400, seed: int = 0) -> list[list[str]]:
    """cat/dog share every context, as do apple/pear; the two pairs never share one."""
    rng = random.Random(seed)
    templates = [["the", "{}", "sat", "on", "the", "mat"], ["a", "{}", "chased", "the", "ball"],
                 ["she", "ate", "an", "{}", "today"], ["one", "ripe", "{}", "fell", "down"]]
    pairs = [("cat", "dog"), ("cat", "dog"), ("apple", "pear"), ("apple", "pear")]
    out = []
    for _ in range(n):
        k = rng.randrange(len(templates))
        out.append([t.format(rng.choice(pairs[k])) for t in templates[k]])
    return out


@pytest.fixture(autouse=True)
def one_thread():
    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(threads)


def cosine(emb: Embeddings, a: str, b: str) -> float:
    u, v = emb([a])[0], emb([b])[0]
    return float(u @ v / (np.linalg.norm(u) * np.linalg.norm(v)))


# ------------------------------------------------------------ vocabulary and windows

def test_vocabulary_keeps_frequent_words_and_maps_the_rest_to_unknown():
    vocab, ids, lengths = encode(iter([["b", "a", "b"], ["c", "b", "a"], [PADDING]]), min_count=2)
    assert vocab.words == (PADDING, UNKNOWN, "b", "a")
    assert ids.tolist() == [2, 3, 2, 1, 2, 3, 0] and lengths.tolist() == [3, 3, 1]
    assert vocab.counts == (1, 1, 3, 2)


def test_windows_end_at_each_token_and_never_cross_a_sentence():
    ids, lengths = np.array([5, 6, 7, 8, 9], dtype=np.int32), np.array([3, 0, 2])
    assert windows(ids, lengths, 3).tolist() == [[0, 0, 5], [0, 5, 6], [5, 6, 7], [0, 0, 8], [0, 8, 9]]


# ------------------------------------------------------------ corruption

def test_corruption_replaces_only_the_last_word_uniformly():
    g = torch.Generator().manual_seed(0)
    vocab_size = 7
    batch = torch.randint(1, vocab_size, (20000, 5), generator=g)
    noisy = corrupt(batch, vocab_size, g)
    assert torch.equal(noisy[:, :-1], batch[:, :-1])
    assert (noisy[:, -1] != batch[:, -1]).all()
    assert noisy[:, -1].min() >= 1 and noisy[:, -1].max() <= vocab_size - 1  # never PADDING
    # given the true word, the noise is uniform over the other V - 2 real words
    for true in range(1, vocab_size):
        counts = torch.bincount(noisy[batch[:, -1] == true, -1], minlength=vocab_size)[1:]
        others = counts[torch.arange(1, vocab_size) != true].float()
        assert counts[true - 1] == 0 and others.min() > 0.8 * others.mean()


def test_the_update_scores_the_window_against_its_corruption():
    from features.cw import CWModel

    model = CWModel(9, dim=4, window=3, hidden=5, activation="tanh", lr_embeddings=0.1, lr_network=0.1,
                    seed=0, device=torch.device("cpu"))
    with torch.no_grad():
        model.E.normal_()  # scores far from zero, so the hinge is active for some windows only
    batch = torch.randint(1, 9, (32, 3), generator=torch.Generator().manual_seed(1))
    noisy = corrupt(batch, 9, torch.Generator().manual_seed(2))
    expected = (1 - model.score(batch) + model.score(noisy)).clamp(min=0).sum()
    assert torch.allclose(model.step(batch, torch.Generator().manual_seed(2)), expected, atol=1e-5)


# ------------------------------------------------------------ learning

def test_loss_decreases_and_shared_contexts_bring_words_together():
    corpus = synthetic_corpus()
    start = train_cw(corpus, **TINY, max_updates=1, heldout=corpus[:100])
    emb = train_cw(corpus, **TINY, epochs=8, lr_embeddings=1.0, lr_network=0.1, heldout=corpus[:100])
    assert emb.stats.final_loss < 0.5 * start.stats.final_loss
    assert emb.stats.heldout["ranking_loss"] < 0.5 * start.stats.heldout["ranking_loss"]
    assert cosine(emb, "cat", "dog") > cosine(emb, "cat", "apple") + 0.2
    assert cosine(emb, "apple", "pear") > cosine(emb, "apple", "dog") + 0.2


def test_same_seed_same_vectors_other_seed_other_vectors():
    corpus = synthetic_corpus(100)
    a, b = train_cw(corpus, **TINY, epochs=2), train_cw(corpus, **TINY, epochs=2)
    c = train_cw(corpus, **TINY, epochs=2, seed=1)
    assert np.array_equal(a.matrix, b.matrix) and a.stats.final_loss == b.stats.final_loss
    assert not np.allclose(a.matrix, c.matrix)


def test_resuming_a_checkpoint_gives_the_uninterrupted_result(tmp_path):
    corpus, ckpt = synthetic_corpus(100), tmp_path / "cw.pt"
    whole = train_cw(corpus, **TINY, epochs=3)
    stopped = train_cw(corpus, **TINY, epochs=3, checkpoint=ckpt, checkpoint_every=4, max_updates=11)
    assert stopped.stats.updates == 11 and ckpt.exists()
    assert set(torch.load(ckpt, weights_only=True)["params"]) == {"E", "W1", "b1", "w2"}
    resumed = train_cw(corpus, **TINY, epochs=3, checkpoint=ckpt, checkpoint_every=4)
    assert resumed.stats.updates == whole.stats.updates
    assert resumed.stats.windows_seen == whole.stats.windows_seen == 3 * sum(map(len, corpus))
    assert np.array_equal(resumed.matrix, whole.matrix)
    assert resumed.stats.final_loss == whole.stats.final_loss
    assert not list(tmp_path.glob(".*.tmp"))  # no temporary file left behind


def test_without_a_progress_bar_each_interval_logs_its_update_and_loss(caplog):
    corpus = synthetic_corpus(100)
    with caplog.at_level("INFO", logger="features.cw"):
        run = train_cw(corpus, **TINY, epochs=1, checkpoint_every=10, max_updates=25)
    lines = [r.getMessage() for r in caplog.records if r.getMessage().startswith("C&W: update")]
    assert [line.split(",")[0] for line in lines] == ["C&W: update 10 of 25 (epoch 1 of 1)",
                                                       "C&W: update 20 of 25 (epoch 1 of 1)",
                                                       "C&W: update 25 of 25 (epoch 1 of 1)"]
    assert f"loss {run.stats.final_loss:.4f}" in lines[-1]


def test_a_checkpoint_from_other_settings_is_refused(tmp_path):
    corpus, ckpt = synthetic_corpus(50), tmp_path / "cw.pt"
    train_cw(corpus, **TINY, epochs=1, checkpoint=ckpt)
    with pytest.raises(ValueError, match=r"cw\.pt: this checkpoint was written for another corpus or other settings"):
        train_cw(corpus, **TINY, epochs=1, checkpoint=ckpt, lr_network=0.5)


@pytest.mark.parametrize("options, message", [
    (dict(activation="relu"), r"activation must be one of \('hardtanh', 'tanh'\), but got 'relu'"),
    (dict(lr_embeddings=0), r"lr_embeddings must be positive, but got 0"),
    (dict(min_count=0), r"min_count must be at least 1, but got 0"),
    (dict(device="tpu"), r"device must be 'auto', 'cpu', 'cuda' or 'cuda:N', but got 'tpu'"),
])
def test_bad_options_say_what_was_expected(options, message):
    with pytest.raises(ValueError, match=message):
        train_cw(synthetic_corpus(10), **(TINY | options))


# ------------------------------------------------------------ the Embeddings table and its files

WORDS = [PADDING, UNKNOWN, "the", "Paris", "é-ville", "2024"]
MATRIX = np.random.default_rng(0).normal(size=(len(WORDS), 3)).astype(np.float32)


@pytest.mark.parametrize("fmt", ["word2vec", "turian"])
@pytest.mark.parametrize("name", ["vectors.txt", "vectors.txt.gz"])
def test_save_then_load_gives_the_same_table(tmp_path, fmt, name):
    Embeddings(WORDS, MATRIX).save(tmp_path / name, format=fmt)
    loaded = Embeddings.load(tmp_path / name)
    assert loaded.words == WORDS and np.array_equal(loaded.matrix, MATRIX)
    assert [p.name for p in tmp_path.iterdir()] == [name]


def test_gensim_reads_the_word2vec_file_exactly(tmp_path):
    gensim = pytest.importorskip("gensim")
    Embeddings(WORDS, MATRIX).save(tmp_path / "w.txt.gz", format="word2vec")
    kv = gensim.models.KeyedVectors.load_word2vec_format(str(tmp_path / "w.txt.gz"), binary=False)
    assert kv.index_to_key == list(WORDS) and np.array_equal(kv.vectors, MATRIX)


def test_a_header_without_vectors_is_an_empty_table(tmp_path):
    (tmp_path / "empty.txt").write_text("0 3\n", encoding="utf-8")
    emb = Embeddings.load(tmp_path / "empty.txt")
    assert len(emb) == 0 and emb.dim == 3 and emb(["x"]).shape == (1, 3)


def test_turian_layout_has_no_header_and_word2vec_has_one(tmp_path):
    emb = Embeddings(WORDS, MATRIX)
    emb.save(tmp_path / "t.txt", format="turian")
    emb.save(tmp_path / "w.txt", format="word2vec")
    assert (tmp_path / "t.txt").read_text(encoding="utf-8").split("\n")[0].split()[0] == PADDING
    assert (tmp_path / "w.txt").read_text(encoding="utf-8").split("\n")[0] == f"{len(WORDS)} 3"


def test_embeddings_are_an_extractor_with_unknown_fallback():
    emb = Embeddings(WORDS, MATRIX)
    assert isinstance(emb, Extractor) and emb.dim == 3
    out = emb(["the", "never-seen"])
    assert out.dtype == np.float32 and np.array_equal(out, MATRIX[[2, 1]])
    without_unknown = Embeddings(WORDS[2:], MATRIX[2:])
    assert np.array_equal(without_unknown(["nope"]), np.zeros((1, 3), np.float32))


def test_nearest_ranks_by_cosine():
    emb = Embeddings(["a", "b", "c", "d"], np.array([[1, 0], [2, 0.1], [0, 1], [-1, 0]], np.float32))
    assert [w for w, _ in emb.nearest("a", 3)] == ["b", "c", "d"]
    assert emb.nearest("a", 1)[0][1] == pytest.approx(2 / np.hypot(2, 0.1))
    with pytest.raises(KeyError, match="'e' is not in the embeddings"):
        emb.nearest("e")


@pytest.mark.parametrize("text, where, message", [  # the wording of features.vectors.read_vectors
    ("2 3\nthe 1 2 3\ncat 1 2\n", 3, r"expected a word and 3 values \(as declared in the header\), but got 2 values"),
    ("the 1 2 3\ncat 1 x 3\n", 2, r"expected a number, but got 'x'"),
    ("the 1 2 3\ncat 1 2 3 4\n", 2, r"expected a word and 3 values \(as on line 1\), but got 4 values"),
    ("3 2\nthe 1 2\ncat 3 4\n", 1, r"the header declares 3 vectors, but the file has 2"),
    ("the 1 nan\n", 1, r"expected a finite number, but got 'nan'"),
    ("lonely\n", 1, r"expected a word and its values, but got 'lonely'"),
])
def test_malformed_files_name_the_file_and_line(tmp_path, text, where, message):
    path = tmp_path / "bad.txt"
    path.write_text(text, encoding="utf-8")
    with pytest.raises(FeatureFileError, match=rf"bad\.txt:{where}: {message}"):
        Embeddings.load(path)


def test_a_duplicate_word_keeps_its_first_vector(tmp_path):
    path = tmp_path / "dup.txt"
    path.write_text("the 1 2\ncat 3 4\nthe 5 6\n", encoding="utf-8")
    emb = Embeddings.load(path)
    assert emb.words == ["the", "cat"] and emb.matrix[0].tolist() == [1, 2]


def test_an_empty_file_is_an_error(tmp_path):
    (tmp_path / "empty.txt").write_text("", encoding="utf-8")
    with pytest.raises(ValueError, match=r"empty\.txt: the file is empty"):
        Embeddings.load(tmp_path / "empty.txt")


def test_invalid_utf8_names_the_line(tmp_path):
    path = tmp_path / "bad.txt.gz"
    path.write_bytes(gzip.compress("the 1 2\n".encode() + b"caf\xe9 3 4\n"))
    with pytest.raises(FeatureFileError, match=r"bad\.txt\.gz:2: not UTF-8 text"):
        Embeddings.load(path)


def test_unknown_save_format_suggests_the_nearest(tmp_path):
    with pytest.raises(ValueError, match=r"but got 'word2vek'; did you mean 'word2vec'\?"):
        Embeddings(WORDS, MATRIX).save(tmp_path / "x.txt", format="word2vek")


def test_features_do_not_import_torch_or_seqlab():
    import subprocess
    import sys

    code = ("import sys, features.cw, features.hlbl, features.vocab; "
            "bad = [m for m in sys.modules if m.split('.')[0] in ('torch', 'seqlab')]; print(bad); sys.exit(bool(bad))")
    done = subprocess.run([sys.executable, "-c", code], cwd=Path(__file__).parents[2], capture_output=True, text=True)
    assert done.returncode == 0, done.stdout + done.stderr
