"""Tests for seqlab.modules.viterbi: brute force over every tag path, padding, penalty validation."""
from __future__ import annotations

import itertools

import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st

from seqlab.modules.viterbi import DISALLOWED, describe, penalty, viterbi


def _mask(lengths: list[int], length: int) -> torch.Tensor:
    return torch.arange(length).unsqueeze(0) < torch.tensor(lengths).unsqueeze(1)  # shape: (B, T)


def _path_score(path: tuple[int, ...], emissions: torch.Tensor, trans: torch.Tensor, start: torch.Tensor,
                end: torch.Tensor) -> float:
    """Score of one sentence's path: start + emissions + transitions (``trans[i, j]``: i then j) + end."""
    score = float(start[path[0]]) + float(end[path[-1]])
    score += sum(float(emissions[t, k]) for t, k in enumerate(path))
    score += sum(float(trans[i, j]) for i, j in zip(path, path[1:]))
    return score


def _brute_force(emissions: torch.Tensor, trans: torch.Tensor, start: torch.Tensor, end: torch.Tensor,
                 n: int) -> tuple[tuple[int, ...], float]:
    """The best path of the first ``n`` positions of one sentence, and its score, by enumerating every path."""
    num_tags = emissions.shape[-1]
    paths = torch.tensor(list(itertools.product(range(num_tags), repeat=n)))  # shape: (K ** n, n)
    emit, trans, start, end = emissions.double(), trans.double(), start.double(), end.double()
    scores = start[paths[:, 0]] + end[paths[:, -1]] + emit[torch.arange(n), paths].sum(1)
    scores += trans[paths[:, :-1], paths[:, 1:]].sum(1)
    best = int(scores.argmax())
    return tuple(paths[best].tolist()), float(scores[best])


def _random_case(gen: torch.Generator, num_tags: int, lengths: list[int], constrained: bool):
    """Random scores; with ``constrained``, random disallowed transitions/starts/ends added through ``penalty``."""
    batch, length = len(lengths), max(lengths)
    emissions = torch.randn(batch, length, num_tags, generator=gen) * 2
    trans = torch.randn(num_tags, num_tags, generator=gen)
    start = torch.randn(num_tags, generator=gen)
    end = torch.randn(num_tags, generator=gen)
    if constrained:  # tag 0 may always start, repeat and end, so an allowed path exists
        allowed = torch.rand(num_tags, num_tags, generator=gen) < 0.5
        allowed_start = torch.rand(num_tags, generator=gen) < 0.5
        allowed_end = torch.rand(num_tags, generator=gen) < 0.5
        allowed[0, 0] = allowed_start[0] = allowed_end[0] = True
        trans = trans + penalty("allowed", allowed, (num_tags, num_tags))
        start = start + penalty("allowed_start", allowed_start, (num_tags,))
        end = end + penalty("allowed_end", allowed_end, (num_tags,))
    return emissions, trans, start, end, _mask(lengths, length)


def _check_against_brute_force(emissions, trans, start, end, mask) -> None:
    got = viterbi(emissions, trans, start, end, mask)
    assert got.shape == mask.shape and got.dtype == torch.long
    for b in range(mask.shape[0]):
        n = int(mask[b].sum())
        best, best_score = _brute_force(emissions[b], trans, start, end, n)
        found = tuple(got[b, :n].tolist())
        assert _path_score(found, emissions[b], trans, start, end) == pytest.approx(best_score, abs=1e-6)
        assert found == best  # random float scores: no ties
        assert got[b, n:].eq(0).all(), f"padding of sentence {b} is not 0: {got[b].tolist()}"


@pytest.mark.parametrize("constrained", [False, True])
@pytest.mark.parametrize("num_tags", [3, 4])
def test_viterbi_matches_brute_force_on_a_padded_batch(num_tags: int, constrained: bool):
    gen = torch.Generator().manual_seed(1234 + num_tags + 10 * constrained)
    for _ in range(5):
        case = _random_case(gen, num_tags, [5, 3, 1, 4, 2], constrained)
        _check_against_brute_force(*case)


@pytest.mark.parametrize("constrained", [False, True])
def test_viterbi_matches_brute_force_when_no_sentence_is_padded(constrained: bool):
    gen = torch.Generator().manual_seed(7)
    for _ in range(5):
        _check_against_brute_force(*_random_case(gen, 4, [4, 4, 4], constrained))


def test_viterbi_of_a_single_position_is_the_best_start_plus_emission_plus_end():
    gen = torch.Generator().manual_seed(3)
    emissions, trans, start, end, mask = _random_case(gen, 4, [1, 1], constrained=False)
    got = viterbi(emissions, trans, start, end, mask)
    assert got[:, 0].tolist() == (emissions[:, 0] + start + end).argmax(-1).tolist()


def test_viterbi_reads_transitions_as_from_row_to_column():
    """An asymmetric table: 1 -> 0 is cheap, 0 -> 1 forbidden; a reversed reading would pick 0 1."""
    emissions = torch.tensor([[[0.0, 5.0], [5.0, 0.0]]])  # (1, 2, 2): best alone is 1 then 0
    allowed = torch.tensor([[True, False], [True, True]])  # allowed[i, j]: tag i followed by tag j
    trans = penalty("allowed", allowed, (2, 2))
    zeros = torch.zeros(2)
    assert viterbi(emissions, trans, zeros, zeros, torch.ones(1, 2, dtype=torch.bool)).tolist() == [[1, 0]]
    emissions = torch.tensor([[[5.0, 0.0], [0.0, 4.0]]])  # best alone is 0 then 1 (9), which is forbidden
    assert viterbi(emissions, trans, zeros, zeros, torch.ones(1, 2, dtype=torch.bool)).tolist() == [[0, 0]]


def test_viterbi_avoids_disallowed_start_and_end_tags():
    emissions = torch.tensor([[[9.0, 0.0, 0.0], [0.0, 0.0, 0.0], [0.0, 0.0, 9.0]]])  # prefers 0 ... 2
    start = penalty("allowed_start", torch.tensor([False, True, True]), (3,))
    end = penalty("allowed_end", torch.tensor([True, True, False]), (3,))
    got = viterbi(emissions, torch.zeros(3, 3), start, end, torch.ones(1, 3, dtype=torch.bool))
    assert got[0, 0].item() != 0 and got[0, -1].item() != 2


def test_viterbi_decodes_an_empty_sentence_to_zeros_and_leaves_the_others_alone():
    gen = torch.Generator().manual_seed(11)
    emissions, trans, start, end, mask = _random_case(gen, 4, [3, 2, 3], constrained=True)
    mask[1] = False  # sentence 1 is empty
    got = viterbi(emissions, trans, start, end, mask)
    assert got[1].tolist() == [0, 0, 0]
    keep = torch.tensor([0, 2])
    alone = viterbi(emissions[keep], trans, start, end, mask[keep])
    assert torch.equal(got[keep], alone)


def test_viterbi_does_not_modify_its_inputs():
    gen = torch.Generator().manual_seed(5)
    case = _random_case(gen, 3, [3, 2], constrained=True)
    before = [x.clone() for x in case]
    viterbi(*case)
    for x, y in zip(case, before):
        assert torch.equal(x, y)


@settings(max_examples=40, deadline=None)
@given(
    seed=st.integers(0, 2**31 - 1),
    num_tags=st.integers(3, 4),
    lengths=st.lists(st.integers(1, 5), min_size=1, max_size=4),
    constrained=st.booleans(),
)
def test_viterbi_is_the_best_path_for_random_inputs(seed: int, num_tags: int, lengths: list[int], constrained: bool):
    gen = torch.Generator().manual_seed(seed)
    _check_against_brute_force(*_random_case(gen, num_tags, lengths, constrained))


# ------------------------------------------------------------------ penalty


def test_penalty_is_zero_where_allowed_and_disallowed_elsewhere():
    allowed = torch.tensor([[True, False], [False, True]])
    got = penalty("allowed", allowed, (2, 2))
    assert got.dtype == torch.float32
    assert got.tolist() == [[0.0, DISALLOWED], [DISALLOWED, 0.0]]
    assert allowed.tolist() == [[True, False], [False, True]]  # the input is not touched


def test_penalty_of_none_allows_everything():
    got = penalty("allowed_start", None, (3,))
    assert got.shape == (3,) and got.eq(0).all()


@pytest.mark.parametrize(
    "allowed, got",
    [
        (torch.ones(3, 2, dtype=torch.bool), r"\(3, 2\) torch.bool"),
        (torch.ones(3, dtype=torch.bool), r"\(3,\) torch.bool"),
        (torch.ones(3, 3), r"\(3, 3\) torch.float32"),
        (torch.ones(3, 3, dtype=torch.long), r"\(3, 3\) torch.int64"),
        ([[True] * 3] * 3, "list"),
    ],
)
def test_penalty_refuses_a_wrong_shape_or_dtype_naming_the_argument(allowed: object, got: str):
    with pytest.raises(ValueError, match=rf"^allowed must be a bool tensor of shape \(3, 3\), got {got}$"):
        penalty("allowed", allowed, (3, 3))  # type: ignore[arg-type]


def test_penalty_names_the_argument_it_checks():
    with pytest.raises(ValueError, match=r"^allowed_end must be a bool tensor of shape \(4,\)"):
        penalty("allowed_end", torch.ones(5, dtype=torch.bool), (4,))


def test_describe():
    assert describe(torch.zeros(2, 3, dtype=torch.float64)) == "(2, 3) torch.float64"
    assert describe(None) == "NoneType"
