import itertools
import random

import pytest

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from seqlab.data.schemes import SCHEMES, SpanReader, allowed_transitions, convert, from_spans, labels_for, spans, split_tag
from seqlab.core.errors import SeqlabError

# One sentence, written by hand in every scheme: [PER Peter Blackburn] [PER John] met [LOC Paris] [LOC Texas] .
SENTENCE = {
    "iob1": ["I-PER", "I-PER", "B-PER", "O", "I-LOC", "B-LOC", "O"],
    "iob2": ["B-PER", "I-PER", "B-PER", "O", "B-LOC", "B-LOC", "O"],
    "bioes": ["B-PER", "E-PER", "S-PER", "O", "S-LOC", "S-LOC", "O"],
    "bilou": ["B-PER", "L-PER", "U-PER", "O", "U-LOC", "U-LOC", "O"],
}
SPANS = [("PER", 0, 2), ("PER", 2, 3), ("LOC", 4, 5), ("LOC", 5, 6)]


@pytest.mark.parametrize("scheme", sorted(SENTENCE))
def test_spans_of_hand_written_sentence(scheme):
    assert spans(SENTENCE[scheme]) == SPANS


@pytest.mark.parametrize("source,target", list(itertools.product(sorted(SENTENCE), repeat=2)))
def test_conversion_between_every_pair(source, target):
    assert convert(SENTENCE[source], target) == SENTENCE[target]


def _random_spans(rng, length, types=("PER", "LOC", "ORG")):
    out, i = [], 0
    while i < length:
        if rng.random() < 0.4:
            end = min(length, i + rng.randint(1, 4))
            out.append((rng.choice(types), i, end))
            i = end
        else:
            i += 1
    return out


@pytest.mark.parametrize("scheme", sorted(SCHEMES))
def test_round_trip_on_random_span_sets(scheme):
    rng = random.Random(7)
    for _ in range(500):
        length = rng.randint(1, 12)
        chunks = _random_spans(rng, length)
        tags = from_spans(chunks, length, scheme)
        assert spans(tags) == chunks
        for other in SCHEMES:
            assert convert(convert(tags, other), scheme) == tags


@pytest.mark.parametrize(
    "tags,expected",
    [
        (["O", "I-PER"], [("PER", 1, 2)]),  # improper IOB2 start, read as conlleval does
        (["B-PER", "I-LOC"], [("PER", 0, 1), ("LOC", 1, 2)]),
        (["I-ORG", "I-ORG", "B-ORG"], [("ORG", 0, 2), ("ORG", 2, 3)]),
        (["B-PER", "O", "I-PER"], [("PER", 0, 1), ("PER", 2, 3)]),
        (["E-PER", "I-PER"], [("PER", 0, 1), ("PER", 1, 2)]),
    ],
)
def test_improper_sequences(tags, expected):
    assert spans(tags) == expected


@pytest.mark.parametrize("scheme", sorted(SCHEMES))
def test_allowed_transitions_accept_every_well_formed_sequence(scheme):
    labels = labels_for(["PER", "LOC"], scheme)
    index = {label: i for i, label in enumerate(labels)}
    allowed, start, end = allowed_transitions(labels, scheme)
    rng = random.Random(3)
    for _ in range(300):
        length = rng.randint(1, 10)
        tags = from_spans(_random_spans(rng, length, ("PER", "LOC")), length, scheme)
        ids = [index[t] for t in tags]
        assert start[ids[0]] and end[ids[-1]]
        assert all(allowed[a][b] for a, b in zip(ids, ids[1:]))


@pytest.mark.parametrize(
    "scheme,bad",
    [
        ("bilou", ["O", "I-PER"]),
        ("bilou", ["B-PER", "O"]),
        ("bilou", ["B-PER", "L-LOC"]),
        ("bilou", ["U-PER", "I-PER"]),
        ("bioes", ["B-PER", "S-PER"]),
        ("iob2", ["O", "I-PER"]),
        ("iob2", ["B-LOC", "I-PER"]),
        ("iob1", ["O", "B-PER"]),
    ],
)
def test_allowed_transitions_reject_ill_formed(scheme, bad):
    labels = labels_for(["PER", "LOC"], scheme)
    index = {label: i for i, label in enumerate(labels)}
    allowed, start, end = allowed_transitions(labels, scheme)
    ids = [index[t] for t in bad]
    ok = start[ids[0]] and end[ids[-1]] and all(allowed[a][b] for a, b in zip(ids, ids[1:]))
    assert not ok


def test_labels_for_bilou():
    assert labels_for(["PER"], "bilou") == ["O", "B-PER", "I-PER", "L-PER", "U-PER"]


@pytest.mark.parametrize("tag,message", [("X-PER", "malformed tag"), ("PER", "malformed tag"), ("B-", "malformed tag")])
def test_malformed_tags(tag, message):
    with pytest.raises(SeqlabError, match=message):
        spans(["O", tag])


def test_unknown_scheme():
    with pytest.raises(SeqlabError, match="unknown tag scheme 'iobes'"):
        convert(["O"], "iobes")


MIXED = ["O", "B-PER", "I-PER", "E-PER", "S-PER", "L-PER", "U-PER", "B-LOC", "I-LOC", "E-LOC", "S-LOC", "U-LOC",
         "I-MISC"]


@settings(max_examples=300, deadline=None)
@given(st.lists(st.lists(st.integers(0, len(MIXED) - 1), max_size=9), min_size=1, max_size=5))
def test_span_reader_reads_batches_as_spans_reads_each_sentence(rows):
    """The batched reader (predict's) agrees with spans() on any label ids, improper sequences and
    every scheme's prefixes mixed included, with sentences of different lengths padded by junk ids."""
    width = max(1, max(map(len, rows)))
    ids = np.array([row + [len(MIXED) - 1] * (width - len(row)) for row in rows])  # padding: an inner tag
    lengths = np.array([len(row) for row in rows])
    assert SpanReader(MIXED)(ids, lengths) == [spans([MIXED[i] for i in row]) for row in rows]


def test_span_reader_on_hand_made_rows():
    reader = SpanReader(["O", "B-NP", "I-NP", "B-VP", "I-VP"])
    ids = np.array([[1, 2, 3, 0, 2, 2], [4, 4, 1, 1, 0, 0], [0, 0, 0, 0, 0, 0]])
    assert reader(ids, np.array([6, 4, 2])) == [[("NP", 0, 2), ("VP", 2, 3), ("NP", 4, 6)],
                                                [("VP", 0, 2), ("NP", 2, 3), ("NP", 3, 4)], []]


@pytest.mark.parametrize(
    "tag, expected",
    [("O", ("O", "")), ("B-PER", ("B", "PER")), ("I-a-b", ("I", "a-b")), ("U-0", ("U", "0"))],
)
def test_split_tag(tag, expected):
    assert split_tag(tag) == expected
    assert split_tag(tag, untyped=True) == expected


@pytest.mark.parametrize("tag", ["B", "B-", "E"])
def test_untyped_chunk_tags_only_when_asked(tag):
    """conlleval reads B and B- as untyped chunks; training data may not use them."""
    assert split_tag(tag, untyped=True) == (tag[0], "")
    with pytest.raises(SeqlabError, match=f"malformed tag '{tag}'"):
        split_tag(tag)


@pytest.mark.parametrize("tag", ["PER", "b-PER", "X-PER", "", "-PER"])
def test_malformed_tags_raise_either_way(tag):
    for untyped in (False, True):
        with pytest.raises(SeqlabError, match="expected 'O' or PREFIX-TYPE"):
            split_tag(tag, untyped=untyped)


@pytest.mark.parametrize("sentences, scheme", [
    ([["B-PER", "I-PER", "O", "B-LOC"]], "iob2"),
    ([["I-PER", "I-PER", "O", "I-LOC", "B-LOC"]], "iob1"),
    ([["I-PER", "B-PER"], ["O"]], "iob1"),  # B- only between two entities of one type
    ([["B-PER", "L-PER", "U-LOC"]], "bilou"),
    ([["B-PER", "E-PER", "S-LOC"]], "bioes"),
    ([["O", "O"], []], None),
    ([["I-PER", "I-PER", "B-PER"]], "iob1"),
])
def test_detect_scheme(sentences, scheme):
    from seqlab.data.schemes import detect_scheme

    assert detect_scheme(sentences) == scheme


def test_detect_scheme_refuses_a_mix_of_iob1_and_iob2():
    from seqlab.core.errors import SeqlabError
    from seqlab.data.schemes import detect_scheme

    with pytest.raises(SeqlabError, match=r"mix IOB1 \(entities opened by I-\) and IOB2"):
        detect_scheme([["I-PER", "O"], ["B-LOC"]])
