"""HLBL embeddings (features.hlbl): the tree gives a normalised distribution (checked exactly
against every word of a tiny vocabulary, for random balanced trees and for trees from
bit-strings), training lowers held-out perplexity, resume = uninterrupted run, determinism.
"""
from __future__ import annotations

import numpy as np
import pytest

torch = pytest.importorskip("torch")

from features.hlbl import HLBLModel, random_tree, train_hlbl, tree_from_bitstrings  # noqa: E402
from features.vocab import PADDING, UNKNOWN  # noqa: E402

from .test_cw import synthetic_corpus  # noqa: E402

TINY = dict(dim=8, batch_size=16, min_count=1, device="cpu", progress=False)
WORDS = [PADDING, UNKNOWN, "a", "b", "c", "d", "e", "f"]
BITSTRINGS = [
    {"a": "0", "b": "10", "c": "10", "d": "110", "e": "111", "f": "111"},  # a full Brown hierarchy
    {"a": "0", "b": "0", "c": "011", "d": "0111"},  # one string a prefix of others; e, f, specials missing
    {"a": "000", "b": "000", "c": "000", "d": "000", "e": "000", "f": "000"},  # one cluster, unary chain
]


@pytest.fixture(autouse=True)
def one_thread():
    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(threads)


def random_model(tree, vocab_size, seed=0):
    model = HLBLModel(vocab_size, tree, dim=4, context=2, lr=0.1, seed=seed, device=torch.device("cpu"))
    g = torch.Generator().manual_seed(seed)
    for p in (model.R, model.C, model.b, model.Q, model.bq):  # far from the near-uniform initial state
        p.data = torch.randn(p.shape, generator=g, dtype=torch.float64)
    return model


def trees():
    for size in (1, 2, 3, 8, 13):
        yield f"random-{size}", random_tree(size, seed=size), size
    for k, bits in enumerate(BITSTRINGS):
        yield f"bitstrings-{k}", tree_from_bitstrings(WORDS, bits), len(WORDS)


@pytest.mark.parametrize("name, tree, size", list(trees()), ids=[t[0] for t in trees()])
def test_probabilities_over_the_whole_vocabulary_sum_to_one(name, tree, size):
    assert tree.n_nodes == size - 1 and tree.nodes.shape == (size, tree.depth)
    paths = {tuple(zip(n[s != 0], s[s != 0])) for n, s in zip(tree.nodes, tree.signs)}
    assert len(paths) == size  # every word has its own leaf
    model = random_model(tree, size)
    contexts = torch.randint(0, size, (6, 2), generator=torch.Generator().manual_seed(1))
    log_p = model.log_prob_all(contexts)  # shape: (6, V), float64
    assert torch.allclose(log_p.exp().sum(-1), torch.ones(6, dtype=torch.float64), atol=1e-12)
    # the batched per-window path matches the full table
    for w in range(size):
        win = torch.cat([contexts, torch.full((6, 1), w)], 1)
        assert torch.allclose(model.log_prob(win), log_p[:, w], atol=1e-12)


def test_a_random_tree_is_balanced():
    assert random_tree(1000, seed=0).depth == 10
    assert not np.array_equal(random_tree(50, seed=0).nodes, random_tree(50, seed=1).nodes)


def test_bitstring_tree_follows_the_hierarchy():
    tree = tree_from_bitstrings(WORDS, BITSTRINGS[0])

    def shared(u: str, v: str) -> int:  # number of common ancestors
        a, b = (WORDS.index(x) for x in (u, v))
        common = 0
        while common < tree.depth and tree.signs[a, common] and tree.signs[b, common] \
                and tree.nodes[a, common] == tree.nodes[b, common]:
            common += 1
        return common

    assert shared("b", "c") > shared("b", "d") > shared("b", "a")
    assert shared("e", "f") > shared("d", "e") > shared("a", "e")


@pytest.mark.parametrize("bits", ["", "012", 7])
def test_bad_bitstrings_say_what_was_expected(bits):
    with pytest.raises(ValueError, match=r"the bit-string of 'a' must be a non-empty string of 0s and 1s"):
        tree_from_bitstrings(WORDS, {"a": bits})


def test_loss_and_heldout_perplexity_decrease():
    corpus = synthetic_corpus()
    start = train_hlbl(corpus, **TINY, max_updates=1, heldout=corpus[:100])
    trained = train_hlbl(corpus, **TINY, epochs=4, lr=0.5, heldout=corpus[:100])
    assert trained.stats.final_loss < 0.5 * start.stats.final_loss
    assert trained.stats.heldout["perplexity"] < 0.5 * start.stats.heldout["perplexity"]


def test_bitstring_tree_trains_too():
    corpus = synthetic_corpus(200)
    bits = {"cat": "00", "dog": "00", "apple": "01", "pear": "01", "the": "1"}
    emb = train_hlbl(corpus, **TINY, epochs=2, tree=bits, heldout=corpus[:50])
    assert np.isfinite(emb.matrix).all() and emb.stats.heldout["perplexity"] < len(emb.words)


def test_same_seed_same_vectors_and_resume_matches(tmp_path):
    corpus, ckpt = synthetic_corpus(100), tmp_path / "hlbl.pt"
    whole = train_hlbl(corpus, **TINY, epochs=3)
    again = train_hlbl(corpus, **TINY, epochs=3)
    assert np.array_equal(whole.matrix, again.matrix)
    assert not np.allclose(whole.matrix, train_hlbl(corpus, **TINY, epochs=3, seed=1).matrix)
    train_hlbl(corpus, **TINY, epochs=3, checkpoint=ckpt, checkpoint_every=5, max_updates=13)
    assert set(torch.load(ckpt, weights_only=True)["params"]) == {"R", "C", "b", "Q", "bq"}
    resumed = train_hlbl(corpus, **TINY, epochs=3, checkpoint=ckpt, checkpoint_every=5)
    assert np.array_equal(resumed.matrix, whole.matrix)
    assert resumed.stats.updates == whole.stats.updates and resumed.stats.final_loss == whole.stats.final_loss


def test_more_epochs_continue_a_finished_run(tmp_path):
    corpus, ckpt = synthetic_corpus(60), tmp_path / "hlbl.pt"
    train_hlbl(corpus, **TINY, epochs=1, checkpoint=ckpt)
    longer = train_hlbl(corpus, **TINY, epochs=3, checkpoint=ckpt)
    assert np.array_equal(longer.matrix, train_hlbl(corpus, **TINY, epochs=3).matrix)


def test_saved_hlbl_embeddings_load_back(tmp_path):
    emb = train_hlbl(synthetic_corpus(50), **TINY, epochs=1)
    emb.save(tmp_path / "hlbl.txt", format="turian")
    assert np.array_equal(type(emb).load(tmp_path / "hlbl.txt").matrix, emb.matrix)
