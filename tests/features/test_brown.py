"""Brown clusters: merge losses against brute force, recovery of planted classes, the paths format."""
from __future__ import annotations

import random
import subprocess
import sys

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from features.base import DiscreteExtractor, FeatureFileError, SentenceTransformer
from features.brown import BrownClusters, ami, count_bigrams, induce_brown
from features.brown_merge import Clusterer

# A file as Liang's wcluster writes it: bit-string, word, count; grouped by path.
WCLUSTER_PATHS = "00\tthe\t120\n00\ta\t80\n010\tcat\t9\n011\tdog\t7\n011\tcow\t2\n1\truns\t5\n"


def _xlogx(x: np.ndarray) -> np.ndarray:
    return np.where(x > 0, x * np.log(np.where(x > 0, x, 1.0)), 0.0)


def _ami_nats(n: np.ndarray) -> float:
    """AMI straight from its definition: Σ p(i, j) log p(i, j) / (p(i, ·) p(·, j))."""
    p = n / n.sum()
    outer = p.sum(axis=1)[:, None] * p.sum(axis=0)[None, :]
    mask = p > 0
    return float((p[mask] * np.log(p[mask] / outer[mask])).sum())


def _window_objective(n: np.ndarray, y: np.ndarray) -> float:
    """N × the window's objective: Σ f(n[i, j]) - Σ r_i ln y_i - Σ c_j ln y'_j, from scratch.

    ``y`` holds each class's row and column totals in the whole corpus's table; once every word
    is in the window they equal ``r`` and ``c`` and this is N × AMI up to the constant f(N).
    """
    r, c = n.sum(axis=1), n.sum(axis=0)
    return float(_xlogx(n).sum() - (r * np.log(np.where(r > 0, y[0], 1.0))).sum()
                 - (c * np.log(np.where(c > 0, y[1], 1.0))).sum())


def _brute_losses(state: Clusterer) -> tuple[np.ndarray, np.ndarray]:
    """N × (objective before - after merging i and j) for every pair of active slots, by recomputation."""
    slots = np.flatnonzero(state.active)
    n = state.T[0][np.ix_(slots, slots)]
    y = state.y[:, slots]
    base = _window_objective(n, y)
    losses = np.full((slots.size, slots.size), np.inf)
    for i in range(slots.size):
        for j in range(slots.size):
            if i != j:
                merged, ym = n.copy(), y.copy()
                merged[i] += merged[j]
                merged[:, i] += merged[:, j]
                ym[:, i] += ym[:, j]
                keep = [k for k in range(slots.size) if k != j]
                losses[i, j] = base - _window_objective(merged[np.ix_(keep, keep)], ym[:, keep])
    return slots, losses


def _zipf_corpus(seed: int, vocab: int = 60, sentences: int = 120) -> list[list[str]]:
    rng = np.random.default_rng(seed)
    p = 1.0 / np.arange(1, vocab + 1) ** 1.1
    p /= p.sum()
    return [[f"w{t}" for t in rng.choice(vocab, size=rng.integers(1, 10), p=p)] for _ in range(sentences)]


def _assert_losses_exact(state: Clusterer) -> None:
    slots, brute = _brute_losses(state)
    kept = state.L[np.ix_(slots, slots)]
    finite = np.isfinite(brute)
    np.testing.assert_allclose(kept[finite], brute[finite], rtol=1e-9, atol=1e-8)
    assert np.isinf(kept[~finite]).all()
    n = state.T[0][np.ix_(slots, slots)]
    assert state.ami_bits() == pytest.approx(_ami_nats(n) / np.log(2), abs=1e-12)
    # the kept row minima give the least pair the whole table's argmin gives, ties included
    np.testing.assert_array_equal(state.row_min, state.L.min(axis=1))
    np.testing.assert_array_equal(state.row_arg, state.L.argmin(axis=1))
    assert state.best_pair() == divmod(int(np.argmin(state.L)), state.size)


@pytest.mark.parametrize("seed", [0, 1, 2])
@pytest.mark.parametrize("fold", [True, False], ids=["fold-new-word", "add-then-merge"])
def test_merge_losses_equal_brute_force_ami_drop(monkeypatch, seed: int, fold: bool) -> None:
    import features.brown_merge as brown_merge

    monkeypatch.setattr(brown_merge, "_LOOKUP_FROM", 0)  # the paths taken on large tables
    monkeypatch.setattr(brown_merge, "_SCAN_BELOW", 0)
    data = count_bigrams(_zipf_corpus(seed))
    c = 5 + seed
    state = Clusterer(data, c)
    _assert_losses_exact(state)
    free = c
    for w in range(c, len(data.words)):
        if not (fold and state.fold_new_word(w, free)):
            state.add_word(w, free)
            _assert_losses_exact(state)
            _, free = state.merge(*state.best_pair())
        _assert_losses_exact(state)
    assert sorted(w for s in np.flatnonzero(state.active) for w in state.members[s]) == list(range(len(data.words)))
    for _ in range(c - 1):  # the final hierarchy: dense merges
        state.merge(*state.best_pair())
        _assert_losses_exact(state)


def test_a_merge_between_a_fold_attempt_and_add_word_is_seen(monkeypatch) -> None:
    """What a failed fold keeps for add_word (the word's cells, pair margins and loss row) is dropped when the
    tables change first: add_word after an unrelated merge gives the exact losses."""
    import features.brown_merge as brown_merge

    monkeypatch.setattr(brown_merge, "_SCAN_BELOW", 0)
    data = count_bigrams(_zipf_corpus(5, vocab=90, sentences=250))
    c = 8
    state = Clusterer(data, c)
    free, checked = c, 0
    for w in range(c, len(data.words)):
        if state.fold_new_word(w, free):
            continue
        a, b = state.best_pair()
        _, freed = state.merge(a, b)  # the tables change before w comes in
        state.add_word(w, free)
        _assert_losses_exact(state)
        free, checked = freed, checked + 1
    assert checked > 3


def _run_window(data, c: int) -> Clusterer:
    state = Clusterer(data, c)
    free = c
    for w in range(c, len(data.words)):
        if not state.fold_new_word(w, free):
            state.add_word(w, free)
            _, free = state.merge(*state.best_pair())
    return state


@pytest.mark.parametrize("table", [1, 16])
def test_looked_up_logs_give_the_same_bits_as_xlogy(monkeypatch, table: int) -> None:
    """ln by table lookup (whole counts) is the same double as xlogy's, inside the table and past its end."""
    import features.brown_merge as brown_merge

    data = count_bigrams(_zipf_corpus(4, vocab=70, sentences=200))
    assert data.fwd_cnt.sum() > 16  # the small table has counts past its end
    monkeypatch.setattr(brown_merge, "_LOOKUP_FROM", 0)
    monkeypatch.setattr(brown_merge, "_SCAN_BELOW", 0)
    looked_up = _run_window(data, 6)
    monkeypatch.setattr(brown_merge, "_LOG_TABLE", table)
    other = _run_window(data, 6)
    np.testing.assert_array_equal(other.L, looked_up.L)
    np.testing.assert_array_equal(other.T, looked_up.T)
    assert [other.members[s] for s in range(7)] == [looked_up.members[s] for s in range(7)]


def test_an_interrupted_run_goes_on_from_its_checkpoint_to_the_same_clusters(tmp_path, monkeypatch) -> None:
    from features.base import FeatureError
    from features.brown_induce import induce

    data = count_bigrams(_zipf_corpus(6, vocab=120, sentences=300))
    c = 6
    expected = induce(data, c)
    steps = {"n": 0}

    def counted(method):
        def step(self, *args):
            steps["n"] += 1
            if steps["n"] == steps.get("stop"):
                raise KeyboardInterrupt
            return method(self, *args)
        return step

    monkeypatch.setattr(Clusterer, "fold_new_word", counted(Clusterer.fold_new_word))
    monkeypatch.setattr(Clusterer, "merge", counted(Clusterer.merge))
    induce(data, c)
    total = steps["n"]
    for stop in (7, total - 2):  # stopped in the window; while merging the clusters into the tree
        path = tmp_path / f"stop{stop}.ckpt"
        steps.update(n=0, stop=stop)
        with pytest.raises(KeyboardInterrupt):
            induce(data, c, checkpoint=path, every=0.0)
        steps.update(n=0, stop=None)
        assert induce(data, c, checkpoint=path, every=0.0) == expected
        assert steps["n"] == total - stop + 1  # went on from the last step saved, not from the start
        with pytest.raises(FeatureError, match="another number of clusters"):
            induce(data, c + 1, checkpoint=path)
    (tmp_path / "bad.ckpt").write_bytes(b"not a checkpoint")
    with pytest.raises(FeatureError, match="not a Brown clustering checkpoint"):
        induce(data, c, checkpoint=tmp_path / "bad.ckpt")


def test_each_checkpoint_is_logged_with_the_stage_and_progress(tmp_path, caplog) -> None:
    import logging

    from features.brown_induce import induce

    data = count_bigrams(_zipf_corpus(6, vocab=40, sentences=60))
    with caplog.at_level(logging.INFO, logger="features.brown_induce"):
        induce(data, 4, checkpoint=tmp_path / "run.ckpt", every=0.0)
    lines = [r.getMessage() for r in caplog.records if "checkpoint" in r.getMessage()]
    v = len(data.words)
    assert f"window, word 5 of {v:,}" in lines[0]
    assert "hierarchy, merge 3 of 3" in lines[-1] and "s CPU in this process" in lines[-1]


def _greedy_reference(sentences: list[list[str]], c: int) -> tuple[set[frozenset[str]], set[frozenset[str]]]:
    """Liang's windowed greedy Brown clustering by brute force: every candidate merge is scored by
    recomputing the window's objective (:func:`_window_objective`). Returns the ``c`` clusters and
    every node of the hierarchy built on them (the clusters and their merges)."""
    data = count_bigrams(sentences)
    full = data.matrix().toarray()
    word_y = np.stack([full.sum(axis=1), full.sum(axis=0)])
    groups: list[list[int]] = [[w] for w in range(c)]

    def table(gs: list[list[int]]) -> tuple[np.ndarray, np.ndarray]:
        seen = [w for g in gs for w in g]
        lab = np.full(len(data.words), -1)
        for k, g in enumerate(gs):
            lab[g] = k
        n = np.zeros((len(gs), len(gs)))
        sub = full[np.ix_(seen, seen)]
        np.add.at(n, (lab[seen][:, None].repeat(len(seen), 1), lab[seen][None, :].repeat(len(seen), 0)), sub)
        return n, np.stack([word_y[:, g].sum(axis=1) for g in gs], axis=1)

    def merge_best(gs: list[list[int]]) -> list[list[int]]:
        best, pair = np.inf, (0, 0)
        n, y = table(gs)
        base = _window_objective(n, y)
        for i in range(len(gs)):
            for j in range(i + 1, len(gs)):
                merged = [g for k, g in enumerate(gs) if k not in (i, j)] + [gs[i] + gs[j]]
                loss = base - _window_objective(*table(merged))
                if loss < best - 1e-9:
                    best, pair = loss, (i, j)
        i, j = pair
        return [g for k, g in enumerate(gs) if k not in (i, j)] + [gs[i] + gs[j]]

    for w in range(c, len(data.words)):
        groups = merge_best(groups + [[w]])
    leaves = {frozenset(data.words[w] for w in g) for g in groups}
    nodes = set(leaves)
    while len(groups) > 1:
        groups = merge_best(groups)
        nodes.add(frozenset(data.words[w] for w in groups[-1]))
    return leaves, nodes


@pytest.mark.parametrize("seed", [0, 1, 2, 3])
def test_clusters_and_hierarchy_equal_a_brute_force_greedy_reference(seed: int) -> None:
    """The whole algorithm, window and hierarchy, against a from-scratch implementation of the
    objective: a mismatch of the window's marginals (those of the partial table instead of the
    corpus's, which cost 0.05 bits of AMI on Reuters-21578 at c = 100) changes the clusters here."""
    sentences = _zipf_corpus(seed, vocab=45, sentences=150)
    c = 4 + seed % 3
    leaves, nodes = _greedy_reference(sentences, c)
    clusters = induce_brown(sentences, c)
    by_path: dict[str, set[str]] = {}
    for word, path in clusters.paths.items():
        by_path.setdefault(path, set()).add(word)
    assert {frozenset(g) for g in by_path.values()} == leaves
    prefixes = {p[:k] for p in by_path for k in range(len(p) + 1)}
    assert {frozenset(w for w, p in clusters.paths.items() if p.startswith(q)) for q in prefixes} == nodes


def test_ami_matches_its_definition_for_dense_and_sparse_tables() -> None:
    from scipy.sparse import csr_matrix

    rng = np.random.default_rng(0)
    counts = rng.poisson(0.7, size=(30, 30)).astype(float)
    labels = rng.integers(0, 5, size=30)
    table = np.zeros((5, 5))
    np.add.at(table, (labels[:, None].repeat(30, 1), labels[None, :].repeat(30, 0)), counts)
    expected = _ami_nats(table) / np.log(2)
    assert ami(counts, labels) == pytest.approx(expected, abs=1e-12)
    assert ami(csr_matrix(counts), labels * 7 + 3) == pytest.approx(expected, abs=1e-12)  # any labels
    assert ami(counts, np.zeros(30)) == pytest.approx(0.0, abs=1e-12)
    with pytest.raises(ValueError, match=r"but got \(30, 30\) and \(29,\)"):
        ami(counts, labels[:29])


def test_induced_ami_is_the_ami_of_the_final_clusters() -> None:
    sentences = _zipf_corpus(3, vocab=80, sentences=200)
    clusters = induce_brown(sentences, 6)
    data = count_bigrams(sentences)
    labels = [clusters.paths[w] for w in data.words]
    assert clusters.num_clusters == 6
    assert clusters.ami == pytest.approx(ami(data.matrix(), np.unique(labels, return_inverse=True)[1]), abs=1e-9)
    assert clusters.seconds is not None and clusters.seconds > 0
    assert clusters.tokens == sum(map(len, sentences)) and clusters.types == len(data.words)


def _two_class_corpus(seed: int) -> list[list[str]]:
    """Determiners and nouns strictly alternate, so the best 2-class split is {D} vs {N}."""
    rng = random.Random(seed)
    dets = ["the", "a", "this", "that", "every", "some", "no", "each"]
    nouns = ["cat", "dog", "cow", "bird", "fish", "horse", "sheep", "goat", "mouse", "duck"]
    return [[rng.choice(nouns if i % 2 else dets) for i in range(rng.randint(2, 12))] for _ in range(400)]


@pytest.mark.parametrize("num_clusters", [2, 3, 5])
def test_planted_classes_are_the_top_split(num_clusters: int) -> None:
    clusters = induce_brown(_two_class_corpus(num_clusters), num_clusters)
    dets = {clusters.paths[w][0] for w in ["the", "a", "this", "that", "every", "some", "no", "each"]}
    nouns = {clusters.paths[w][0] for w in ["cat", "dog", "cow", "bird", "fish", "horse", "sheep", "goat"]}
    assert len(dets) == 1 and len(nouns) == 1 and dets != nouns
    assert 0.95 < clusters.ami < 1.1  # about one bit: the class of the next word is known


def test_same_counts_give_the_same_clusters() -> None:
    sentences = _zipf_corpus(5, vocab=90, sentences=250)
    first = induce_brown(sentences, 7)
    shuffled = sentences[:]
    random.Random(1).shuffle(shuffled)
    assert induce_brown(iter(sentences), 7).paths == first.paths
    assert induce_brown(shuffled, 7).paths == first.paths


@pytest.mark.parametrize("sentences", [[["a", "b", "c", "a"]], [["a"], ["b"], ["c"]], [["a", "a"], ["b", "c"]]])
def test_as_many_clusters_as_words_gives_each_word_a_leaf(sentences) -> None:
    clusters = induce_brown(sentences, 3)
    assert sorted(clusters.paths) == ["a", "b", "c"] and len(set(clusters.paths.values())) == 3
    assert clusters.ami >= 0.0


def test_bigrams_stay_within_sentences_and_skip_rare_words() -> None:
    data = count_bigrams([["a", "b", "a"], ["c", "a"], ["b", "x", "b"]], min_count=2)
    assert data.words == ["a", "b"] and data.tokens == 8 and data.types == 4
    coo = data.matrix().tocoo()
    pairs = {(data.words[i], data.words[j]): c for i, j, c in zip(coo.row, coo.col, coo.data)}
    assert pairs == {("a", "b"): 1, ("b", "a"): 1}  # nothing across sentences, nothing around "x"


@pytest.mark.parametrize(
    ("sentences", "kwargs", "error", "match"),
    [
        ([], {}, ValueError, "empty corpus"),
        ([[], []], {}, ValueError, "empty corpus"),
        ([["a", "b", "c", "a"]], {"num_clusters": 5}, ValueError, r"3 distinct words .*num_clusters=5"),
        ([["a", "b", "a"]], {"num_clusters": 2, "min_count": 2}, ValueError, r"1 distinct words .*min_count=2"),
        ([["a", "b"]], {"num_clusters": 1}, ValueError, "num_clusters must be an integer >= 2"),
        ([["a", "b"]], {"num_clusters": 2, "min_count": 0}, ValueError, "min_count must be an integer >= 1"),
        (["a b c"], {}, TypeError, "sentence 1 is a str"),
    ],
)
def test_bad_input_is_refused(sentences, kwargs, error, match) -> None:
    kwargs = {"num_clusters": 2, **kwargs}
    with pytest.raises(error, match=match):
        induce_brown(sentences, **kwargs)


def test_save_then_load_gives_the_same_clusters(tmp_path) -> None:
    clusters = induce_brown(_zipf_corpus(7), 6)
    path = tmp_path / "out" / "paths"
    clusters.save(path)
    loaded = BrownClusters.load(path)
    assert loaded.paths == clusters.paths and loaded.counts == clusters.counts
    tokens = list(clusters.paths)[:20] + ["<never seen>"]
    assert loaded.feature_dicts(tokens) == clusters.feature_dicts(tokens)
    np.testing.assert_array_equal(loaded(tokens), clusters(tokens))
    assert [p.name for p in path.parent.iterdir()] == ["paths"]  # no temporary file left behind
    clusters.save(tmp_path / "paths.gz")
    assert BrownClusters.load(tmp_path / "paths.gz").paths == clusters.paths


def test_wcluster_file_loads_with_prefix_features(tmp_path) -> None:
    path = tmp_path / "paths"
    path.write_text(WCLUSTER_PATHS, encoding="utf-8")
    clusters = BrownClusters.load(path, prefixes=(1, 2, 3))
    assert clusters.counts["dog"] == 7 and len(clusters) == 6 and clusters.num_clusters == 4
    assert clusters.feature_dicts(["dog", "runs", "Dog"]) == [
        {"brown1": "0", "brown2": "01", "brown3": "011"},
        {"brown1": "1", "brown2": "1", "brown3": "1"},  # shorter than the prefix: the whole path
        {},  # unknown (lookup is case-sensitive)
    ]
    # id 0 is unknown; depth 1 has {0, 1}, depth 2 {00, 01, 1}, depth 3 {00, 010, 011, 1}
    assert clusters.vocab_sizes == (3, 4, 5) and clusters.dim == 12
    np.testing.assert_array_equal(clusters.prefix_ids(["the", "cat", "dog", "runs", "?"]),
                                  [[1, 1, 1], [1, 2, 2], [1, 2, 3], [2, 3, 4], [0, 0, 0]])
    assert clusters.nearest("dog", k=3) == [("cow", 3), ("cat", 2), ("the", 1)]
    with pytest.raises(KeyError, match="'Dog' is not in the clusters"):
        clusters.nearest("Dog")


@settings(max_examples=40, deadline=None)
@given(st.lists(st.sampled_from(["the", "a", "cat", "dog", "cow", "runs", "zebra", ""]), max_size=12))
def test_one_hot_rows_mark_the_prefix_ids(tokens) -> None:
    clusters = _from_text()
    ids = clusters.prefix_ids(tokens)
    vectors = clusters(tokens)
    assert vectors.shape == (len(tokens), clusters.dim) and vectors.dtype == np.float32
    assert ids.shape == (len(tokens), 4)
    offsets = np.cumsum((0,) + clusters.vocab_sizes[:-1])
    for row, vector in zip(ids, vectors):
        assert set(np.flatnonzero(vector)) == set(row + offsets)
    assert isinstance(clusters, DiscreteExtractor)
    assert SentenceTransformer(clusters).transform([tokens, ["cat"]]).shape == (len(tokens) + 1, clusters.dim)


def _from_text() -> BrownClusters:
    paths = {}
    counts = {}
    for line in WCLUSTER_PATHS.splitlines():
        bits, word, count = line.split("\t")
        paths[word], counts[word] = bits, int(count)
    return BrownClusters(paths, counts)


@pytest.mark.parametrize(
    ("content", "line", "match"),
    [
        (b"0\tthe\t12\n1\tcat\n", 2, "expected 3 tab-separated fields"),
        (b"0\tthe\t12\n1 cat 4\n", 2, "expected 3 tab-separated fields"),
        (b"0\tthe\t12\n\n", 2, "expected 3 tab-separated fields"),
        (b"012\tthe\t12\n", 1, "bit-string must be 0s and 1s, but got '012'"),
        (b"\tthe\t12\n", 1, "bit-string must be 0s and 1s"),
        (b"01\tthe\tmany\n", 1, "count must be a non-negative integer, but got 'many'"),
        (b"01\tthe\t-3\n", 1, "count must be a non-negative integer"),
        (b"01\tthe\t3\n1\t\t4\n", 2, "the word is empty"),
        (b"01\tthe\t3\n1\tthe\t4\n", 2, r"'the' appears twice \(first on line 1\)"),
        (b"01\tth\xe9\t3\n", 1, "not UTF-8"),
        (b"", 1, "the file is empty"),
    ],
)
def test_malformed_paths_file_names_file_and_line(tmp_path, content: bytes, line: int, match: str) -> None:
    path = tmp_path / "bad_paths.txt"
    path.write_bytes(content)
    with pytest.raises(FeatureFileError, match=rf"bad_paths\.txt:{line}: .*{match}"):
        BrownClusters.load(path)


@pytest.mark.parametrize(
    ("paths", "prefixes", "match"),
    [
        ({}, (4,), "paths is empty"),
        ({"a": "012"}, (4,), "non-empty strings of 0s and 1s, but word 'a' has '012'"),
        ({"a": "01"}, (), "prefixes must be positive integers"),
        ({"a": "01"}, (0, 4), "prefixes must be positive integers"),
    ],
)
def test_bad_clusters_are_refused(paths, prefixes, match) -> None:
    with pytest.raises(ValueError, match=match):
        BrownClusters(paths, prefixes=prefixes)


def test_features_import_neither_torch_nor_seqlab() -> None:
    code = "import sys, features.brown; print(sorted(m for m in ('torch', 'seqlab') if m in sys.modules))"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"
