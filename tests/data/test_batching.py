"""Tests for seqlab.data.batching: encoding, padding, masks, char tables and batch iteration."""
from __future__ import annotations

from unittest import mock

from collections import Counter

import numpy as np
import pytest
import torch

from seqlab.data import batching
from hypothesis import given, settings
from hypothesis import strategies as st

from seqlab.data.batching import encode, iterate, make_batch
from seqlab.data.vocab import UNK, WordVocab, capitalization, char_vocab, label_vocab

SENTENCES = [
    ["EU", "rejects", "German", "call", "."],
    ["Peter", "Blackburn"],
    ["BRUSSELS", "1996-08-22"],
    ["The", "European", "Commission", "said", "on", "Thursday", "it", "disagreed", "."],
    ["German", "."],
    ["Zorglub"],
]
TAGS = [
    ["U-ORG", "O", "U-MISC", "O", "O"],
    ["B-PER", "L-PER"],
    ["U-LOC", "O"],
    ["O", "B-ORG", "L-ORG", "O", "O", "O", "O", "O", "O"],
    ["U-MISC", "O"],
    ["O"],
]
LABELS = ["O", "U-ORG", "U-MISC", "B-PER", "L-PER", "U-LOC", "B-ORG", "L-ORG"]


def vocabs_for(sentences, known=None):
    words = sorted({w for s in sentences for w in s}) if known is None else known
    return {
        "words": WordVocab(words),
        "chars": char_vocab(w for s in sentences for w in s),
        "tags": label_vocab(LABELS),
    }


def decode_chars(batch, vocabs, row: int) -> str:
    length = int(batch.char_lengths[row])
    return "".join(vocabs["chars"].itos[i] for i in batch.chars[row, :length].tolist())


def features(types):
    """A fixed 2-dimensional feature per word type: its length and its first code point."""
    return np.array([[len(w), ord(w[0])] for w in types], dtype=np.float32).reshape(len(types), 2)


def check_batch(batch, sentences, vocabs, tags=None):
    """Every property a batch must have, checked against the raw sentences it came from."""
    rows = [sentences[i] for i in batch.indices.tolist()]
    width = max(len(s) for s in rows)
    assert batch.words.shape == batch.caps.shape == batch.mask.shape == batch.type_index.shape == (len(rows), width)
    assert batch.mask.dtype == torch.bool
    assert batch.chars.shape[0] == batch.char_lengths.shape[0]
    for b, sentence in enumerate(rows):
        n = len(sentence)
        assert batch.mask[b].tolist() == [True] * n + [False] * (width - n)
        assert batch.words[b, :n].tolist() == [vocabs["words"].index(w) for w in sentence]
        assert batch.caps[b, :n].tolist() == [capitalization(w) for w in sentence]
        assert batch.words[b, n:].eq(0).all() and batch.caps[b, n:].eq(0).all()
        decoded = [decode_chars(batch, vocabs, int(batch.type_index[b, t])) for t in range(n)]
        assert decoded == list(sentence)
        if tags is not None:
            assert batch.tags[b, :n].tolist() == [vocabs["tags"].index(t) for t in tags[batch.indices[b]]]
        if batch.features is not None:
            assert batch.features[b, :n].tolist() == features(sentence).tolist()
            assert batch.features[b, n:].eq(0).all()
    # The char table holds each distinct word type of the batch once.
    strings = [decode_chars(batch, vocabs, u) for u in range(batch.chars.shape[0])]
    real = {w for s in rows for w in s}
    assert real <= set(strings)
    assert len([s for s in strings if s in real]) == len(real)


def test_encode_shapes_and_padding():
    vocabs = vocabs_for(SENTENCES)
    data = encode(SENTENCES, vocabs, tags=TAGS)
    t_max = max(len(s) for s in SENTENCES)
    assert len(data) == len(SENTENCES)
    assert data.words.shape == data.caps.shape == data.types.shape == data.tags.shape == (len(SENTENCES), t_max)
    assert data.lengths.tolist() == [len(s) for s in SENTENCES]
    assert data.type_strings[0] == ""
    assert sorted(data.type_strings[1:]) == sorted({w for s in SENTENCES for w in s})
    for i, sentence in enumerate(SENTENCES):
        assert [data.type_strings[t] for t in data.types[i, : len(sentence)].tolist()] == sentence
        assert data.types[i, len(sentence):].eq(0).all()
        assert data.words[i, len(sentence):].eq(0).all()


def test_unknown_words_and_chars_get_unk_ids():
    vocabs = vocabs_for([["abc"]], known=["abc"])
    data = encode([["abc", "xyz", "ABC"]], vocabs)
    unk = vocabs["words"].stoi[UNK]
    assert data.words[0].tolist() == [vocabs["words"].stoi["abc"], unk, vocabs["words"].stoi["abc"]]
    batch = make_batch(data, torch.tensor([0]))
    assert decode_chars(batch, vocabs, int(batch.type_index[0, 1])) == UNK * 3


def test_make_batch_padding_masks_and_type_index():
    vocabs = vocabs_for(SENTENCES)
    data = encode(SENTENCES, vocabs, tags=TAGS, features=features)
    for picked in ([0, 1, 2], [3, 1], [5], [4, 0, 3, 2, 1, 5]):
        batch = make_batch(data, torch.tensor(picked))
        assert batch.indices.tolist() == picked
        check_batch(batch, SENTENCES, vocabs, TAGS)


def test_features_table_rows_line_up_with_types():
    vocabs = vocabs_for(SENTENCES)
    data = encode(SENTENCES, vocabs, features=features)
    assert data.type_features.shape == (len(data.type_strings), 2)
    assert data.type_features[0].eq(0).all()  # the padding type
    for row, word in enumerate(data.type_strings[1:], start=1):
        assert data.type_features[row].tolist() == features([word])[0].tolist(), word


@pytest.mark.parametrize(
    ("max_chars", "word", "kept"),
    [
        (6, "abcdefghij", "abchij"),
        (6, "abcdef", "abcdef"),
        (6, "abcdefg", "abcefg"),
        (5, "abcdefghij", "abcij"),
        (1, "abcdefghij", "a"),
        (40, "x" * 20 + "y" * 30, "x" * 20 + "y" * 20),
    ],
)
def test_long_words_are_clipped_keeping_both_ends(max_chars, word, kept):
    sentences = [[word, "z"]]
    vocabs = vocabs_for(sentences)
    with mock.patch.object(batching, "MAX_WORD_CHARS", max_chars):
        data = encode(sentences, vocabs)
    batch = make_batch(data, torch.tensor([0]))
    assert decode_chars(batch, vocabs, int(batch.type_index[0, 0])) == kept
    assert int(batch.char_lengths[int(batch.type_index[0, 0])]) == len(kept) <= max_chars
    assert decode_chars(batch, vocabs, int(batch.type_index[0, 1])) == "z"
    assert data.type_chars.shape[1] == len(kept)


def many_sentences(n: int = 57) -> list[list[str]]:
    rng = np.random.default_rng(0)
    pool = [w for s in SENTENCES for w in s]
    return [[pool[k] for k in rng.integers(0, len(pool), size=int(rng.integers(1, 12)))] for _ in range(n)]


@pytest.mark.parametrize("batch_size", [1, 4, 10, 100])
def test_shuffled_iteration_covers_every_sentence_once(batch_size):
    sentences = many_sentences()
    vocabs = vocabs_for(sentences)
    data = encode(sentences, vocabs)
    batches = list(iterate(data, batch_size, shuffle=True, generator=torch.Generator().manual_seed(3), bucket_factor=2))
    seen = Counter(i for b in batches for i in b.indices.tolist())
    assert seen == Counter(range(len(sentences)))
    assert all(0 < len(b.indices) <= batch_size for b in batches)
    for batch in batches:
        check_batch(batch, sentences, vocabs)


def test_shuffled_iteration_is_reproducible_with_a_seed():
    sentences = many_sentences()
    data = encode(sentences, vocabs_for(sentences))

    def order(seed):
        gen = torch.Generator().manual_seed(seed)
        return [b.indices.tolist() for b in iterate(data, 5, shuffle=True, generator=gen, bucket_factor=2)]

    assert order(7) == order(7)
    assert order(7) != order(8)
    # Two epochs drawn from one generator differ: the generator's state advances.
    gen = torch.Generator().manual_seed(7)
    first = [b.indices.tolist() for b in iterate(data, 5, shuffle=True, generator=gen)]
    second = [b.indices.tolist() for b in iterate(data, 5, shuffle=True, generator=gen)]
    assert first != second


def test_shuffled_batches_are_bucketed_by_length():
    sentences = many_sentences(200)
    data = encode(sentences, vocabs_for(sentences))
    gen = torch.Generator().manual_seed(0)
    batches = list(iterate(data, 10, shuffle=True, generator=gen, bucket_factor=20))  # one pool: all sentences
    lengths = [sorted(data.lengths[b.indices].tolist()) for b in batches]
    # Within one pool, batches are consecutive runs of the length-sorted sentences: they do not interleave.
    spans = sorted((ls[0], ls[-1]) for ls in lengths)
    assert all(a[1] <= b[0] for a, b in zip(spans, spans[1:]))


def test_bucket_factor_one_gives_random_batches():
    # A pool of one batch: the batches are consecutive runs of the random permutation, whatever their lengths.
    sentences = many_sentences(200)
    data = encode(sentences, vocabs_for(sentences))
    gen = torch.Generator().manual_seed(5)
    batches = list(iterate(data, 10, shuffle=True, generator=gen, bucket_factor=1))
    order = torch.randperm(len(sentences), generator=torch.Generator().manual_seed(5))
    expected = {frozenset(part.tolist()) for part in order.split(10)}
    assert {frozenset(b.indices.tolist()) for b in batches} == expected
    spans = sorted((min(ls), max(ls)) for ls in (data.lengths[b.indices].tolist() for b in batches))
    assert any(a[1] > b[0] for a, b in zip(spans, spans[1:]))  # unlike bucketed batches, their lengths overlap


@pytest.mark.parametrize("ranks", [2, 3])
def test_data_parallel_ranks_split_each_global_batch_into_equal_parts_of_nearly_equal_lengths(ranks):
    lengths = torch.randint(1, 60, (203,), generator=torch.Generator().manual_seed(1))
    draw = lambda batch_size, shard: batching.bucketed_batches(  # noqa: E731
        lengths, batch_size, generator=torch.Generator().manual_seed(4), bucket_factor=5, shard=shard)
    whole = draw(4 * ranks, (0, 1))  # what one process draws with the global batch size
    parts = [draw(4, (rank, ranks)) for rank in range(ranks)]
    assert all(len(p) == len(whole) for p in parts)  # 203 rows: no global batch smaller than the ranks
    for step, rows in enumerate(whole):
        shares = [p[step] for p in parts]
        assert len({len(share) for share in shares}) == 1  # the same number of sentences on every rank
        assert set(torch.cat(shares).tolist()) <= set(rows.tolist())
        assert len(rows) - len(torch.cat(shares)) < ranks  # only a last batch loses its remainder
        # in length order the ranks take turns, so their longest sentences are neighbours in that order
        longest = sorted(int(lengths[share].max()) for share in shares)
        ordered = sorted(lengths[rows].tolist())[: len(shares[0]) * ranks]
        assert longest == ordered[-ranks:]


def test_unshuffled_iteration_is_sorted_by_length_and_indices_map_back():
    sentences = many_sentences()
    vocabs = vocabs_for(sentences)
    data = encode(sentences, vocabs, tags=None, features=features)
    batches = list(iterate(data, 8, shuffle=False))
    order = [i for b in batches for i in b.indices.tolist()]
    assert sorted(order) == list(range(len(sentences)))
    lengths = [len(sentences[i]) for i in order]
    assert lengths == sorted(lengths)
    assert order == sorted(range(len(sentences)), key=lambda i: len(sentences[i]))  # stable: ties keep file order
    for batch in batches:
        check_batch(batch, sentences, vocabs)


@given(lengths=st.lists(st.integers(1, 60), min_size=1, max_size=40), batch_size=st.integers(1, 12),
       max_cells=st.integers(1, 200))
@settings(max_examples=60, deadline=None)
def test_decoding_batches_hold_at_most_max_cells_padded_cells(lengths, batch_size, max_cells):
    data = mock.Mock(lengths=torch.tensor(lengths))
    batches = batching.sorted_batches(data, batch_size, max_cells)
    order = [i for b in batches for i in b.tolist()]
    assert order == sorted(range(len(lengths)), key=lambda i: lengths[i])  # every sentence once, stable length order
    for batch in batches:
        widest = max(lengths[i] for i in batch.tolist())
        assert 1 <= len(batch) <= batch_size
        assert len(batch) == 1 or len(batch) * widest <= max_cells  # a sentence over the cap is a batch alone
    # greedy: a batch stops short of batch_size only where one more sentence would pass the cap
    for batch, after in zip(batches, batches[1:]):
        if len(batch) < batch_size:
            assert (len(batch) + 1) * lengths[after[0].item()] > max_cells
    assert [b.tolist() for b in batching.sorted_batches(data, batch_size, None)] == \
        [order[i:i + batch_size] for i in range(0, len(order), batch_size)]


def test_batch_to_cpu_is_a_no_op():
    data = encode(SENTENCES, vocabs_for(SENTENCES))
    batch = make_batch(data, torch.tensor([0, 1]))
    assert batch.to(torch.device("cpu")) is batch


words = st.text(alphabet="abcXYZ19-.", min_size=1, max_size=8)


@given(
    sentences=st.lists(st.lists(words, min_size=1, max_size=7), min_size=1, max_size=8),
    batch_size=st.integers(1, 5),
    max_chars=st.integers(1, 9),
)
@settings(max_examples=40, deadline=None)
def test_batches_of_random_sentences(sentences, batch_size, max_chars):
    vocabs = vocabs_for(sentences)
    with mock.patch.object(batching, "MAX_WORD_CHARS", max_chars):
        data = encode(sentences, vocabs, features=features)
    seen = []
    for batch in iterate(data, batch_size, shuffle=False):
        seen.extend(batch.indices.tolist())
        rows = [sentences[i] for i in batch.indices.tolist()]
        width = max(len(s) for s in rows)
        assert batch.mask.tolist() == [[t < len(s) for t in range(width)] for s in rows]
        assert (batch.char_lengths >= 1).all() and (batch.char_lengths <= max_chars).all()
        for b, sentence in enumerate(rows):
            for t, word in enumerate(sentence):
                got = decode_chars(batch, vocabs, int(batch.type_index[b, t]))
                if len(word) <= max_chars:
                    assert got == word
                else:
                    head = max_chars - max_chars // 2
                    assert got == word[:head] + word[len(word) - max_chars // 2:]
            assert batch.features[b, : len(sentence)].tolist() == features(sentence).tolist()
    assert sorted(seen) == list(range(len(sentences)))
