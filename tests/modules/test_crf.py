"""Tests for seqlab.modules.crf: brute-force enumeration, batching, gradients, validation."""
from __future__ import annotations

import itertools
import math

import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st

from seqlab.modules.crf import (
    CRF,
    DISALLOWED,
    _log_partition_reference,
    _LogPartition,
    _marginals,
    _marginals_reference,
)


def _lengths_to_mask(lengths: list[int], length: int) -> torch.Tensor:
    return torch.arange(length).unsqueeze(0) < torch.tensor(lengths).unsqueeze(1)  # shape: (B, T)


def _constraints(num_tags: int, gen: torch.Generator) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    """Random constraints that always leave a path: tag 0 may start, repeat and end."""
    allowed = torch.rand(num_tags, num_tags, generator=gen) < 0.5
    allowed[0, 0] = True
    allowed_start = torch.rand(num_tags, generator=gen) < 0.5
    allowed_end = torch.rand(num_tags, generator=gen) < 0.5
    allowed_start[0] = allowed_end[0] = True
    return allowed, allowed_start, allowed_end


def _case(seed: int, constrained: bool, num_tags: int = 4, batch: int = 6, length: int = 4):
    """A float64 CRF with random parameters, emissions, variable-length mask and tags."""
    gen = torch.Generator().manual_seed(seed)
    masks = _constraints(num_tags, gen) if constrained else (None, None, None)
    crf = CRF(num_tags, *masks).double()
    with torch.no_grad():
        for param in crf.parameters():
            param.copy_(torch.randn(param.shape, generator=gen, dtype=torch.float64))
    emissions = torch.randn(batch, length, num_tags, generator=gen, dtype=torch.float64)
    lengths = torch.randint(1, length + 1, (batch,), generator=gen).tolist()
    lengths[0] = length
    tags = torch.randint(0, num_tags, (batch, length), generator=gen)
    return crf, emissions, _lengths_to_mask(lengths, length), tags, masks


def _effective(crf: CRF, masks) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    """Transition, start and end scores with the penalties applied here, independently of the module."""
    scores = [crf.transitions.detach(), crf.start.detach(), crf.end.detach()]
    return tuple(s if m is None else s + (~m).double() * DISALLOWED for s, m in zip(scores, masks))


def _enumerate(scores, emissions: torch.Tensor, length: int) -> tuple[torch.Tensor, torch.Tensor]:
    """Every tag sequence of one sentence (N, length) and its score (N,)."""
    trans, start, end = scores
    seqs = torch.tensor(list(itertools.product(range(emissions.size(-1)), repeat=length)))  # shape: (N, L)
    total = start[seqs[:, 0]] + end[seqs[:, -1]] + emissions[torch.arange(length), seqs].sum(1)
    return seqs, total + trans[seqs[:, :-1], seqs[:, 1:]].sum(1)


CASES = [(seed, constrained) for seed in range(4) for constrained in (False, True)]


@pytest.mark.parametrize(("seed", "constrained"), CASES)
def test_log_partition_and_likelihood_match_brute_force(seed: int, constrained: bool, threads: int) -> None:
    crf, emissions, mask, tags, masks = _case(seed, constrained, num_tags=3 + seed % 2)
    log_z = crf.log_partition(emissions, mask)
    log_lik = crf.log_likelihood(emissions, tags, mask)
    for b, length in enumerate(mask.sum(1).tolist()):
        seqs, scores = _enumerate(_effective(crf, masks), emissions[b], length)
        expected_z = torch.logsumexp(scores, 0)
        gold = (seqs == tags[b, :length]).all(1)
        torch.testing.assert_close(log_z[b], expected_z, rtol=1e-10, atol=1e-9)
        torch.testing.assert_close(log_lik[b], scores[gold][0] - expected_z, rtol=1e-10, atol=1e-9)


@pytest.mark.parametrize(("seed", "constrained"), CASES[:4])
def test_likelihood_at_a_temperature_is_the_path_probability_of_the_scaled_scores(seed: int, constrained: bool) -> None:
    """log_likelihood(..., temperature): every score divided first, as marginals() does; over all the sequences of a
    sentence the probabilities sum to 1, and the best path's is at most each of its tokens' marginals."""
    crf, emissions, mask, _, masks = _case(seed, constrained, num_tags=3)
    best = crf.decode(emissions, mask)
    path = crf.log_likelihood(emissions, best, mask, temperature=2.0).exp()
    marginals = crf.marginals(emissions, mask, temperature=2.0).gather(-1, best.unsqueeze(-1)).squeeze(-1)
    for b, length in enumerate(mask.sum(1).tolist()):
        seqs, scores = _enumerate(_effective(crf, masks), emissions[b], length)
        probs = torch.softmax(scores / 2.0, 0)
        torch.testing.assert_close(path[b], probs[(seqs == best[b, :length]).all(1)][0], rtol=1e-9, atol=1e-10)
        assert path[b] <= marginals[b, :length].min() + 1e-12
    one = crf.log_likelihood(emissions[:, :1], best[:, :1], mask[:, :1], temperature=2.0).exp()
    torch.testing.assert_close(one, crf.marginals(emissions[:, :1], mask[:, :1], 2.0).gather(
        -1, best[:, :1].unsqueeze(-1)).view(-1))


@pytest.mark.parametrize(("seed", "constrained"), CASES)
def test_decode_matches_brute_force_argmax(seed: int, constrained: bool) -> None:
    crf, emissions, mask, _, masks = _case(seed, constrained)
    paths = crf.decode(emissions, mask)
    for b, length in enumerate(mask.sum(1).tolist()):
        seqs, scores = _enumerate(_effective(crf, masks), emissions[b], length)
        assert paths[b, :length].tolist() == seqs[scores.argmax()].tolist()
        assert paths[b, length:].eq(0).all()


@pytest.mark.parametrize("seed", range(6))
def test_decode_never_uses_disallowed_scores(seed: int) -> None:
    crf, emissions, mask, _, (allowed, allowed_start, allowed_end) = _case(seed, True, num_tags=5, length=9)
    with torch.no_grad():  # make the disallowed choices look very attractive
        crf.transitions.masked_fill_(~allowed, 50.0)
        crf.start.masked_fill_(~allowed_start, 50.0)
        crf.end.masked_fill_(~allowed_end, 50.0)
    paths = crf.decode(emissions, mask)
    for b, length in enumerate(mask.sum(1).tolist()):
        path = paths[b, :length]
        assert allowed_start[path[0]] and allowed_end[path[-1]]
        assert allowed[path[:-1], path[1:]].all()


@pytest.fixture(params=[1, 2], ids=["one_thread", "two_threads"])
def threads(request):
    """Run a test with one torch thread (alpha and beta steps as bmm) and with two (broadcast multiply and sum)."""
    before = torch.get_num_threads()
    torch.set_num_threads(request.param)
    yield request.param
    torch.set_num_threads(before)


@pytest.mark.parametrize(("seed", "constrained"), CASES)
def test_marginals_match_brute_force(seed: int, constrained: bool, threads: int) -> None:
    crf, emissions, mask, _, masks = _case(seed, constrained)
    marginals = crf.marginals(emissions, mask)
    for b, length in enumerate(mask.sum(1).tolist()):
        seqs, scores = _enumerate(_effective(crf, masks), emissions[b], length)
        probs = torch.softmax(scores, 0)  # shape: (N,)
        expected = torch.zeros(length, crf.num_tags, dtype=torch.float64)
        for t in range(length):
            expected[t].index_add_(0, seqs[:, t], probs)
        torch.testing.assert_close(marginals[b, :length], expected, rtol=1e-9, atol=1e-10)
        assert marginals[b, length:].eq(0).all()
    torch.testing.assert_close(marginals.sum(-1)[mask], torch.ones(int(mask.sum()), dtype=torch.float64))


def _per_sentence(crf: CRF, emissions: torch.Tensor, tags: torch.Tensor, mask: torch.Tensor, b: int) -> dict:
    length = int(mask[b].sum())
    one = (emissions[b : b + 1, :length], tags[b : b + 1, :length], mask[b : b + 1, :length])
    return {
        "log_z": crf.log_partition(one[0], one[2]),
        "log_lik": crf.log_likelihood(*one),
        "path": crf.decode(one[0], one[2]),
        "marginals": crf.marginals(one[0], one[2]),
    }


@pytest.mark.parametrize("constrained", [False, True])
def test_batched_equals_one_by_one(constrained: bool) -> None:
    crf, emissions, mask, tags, _ = _case(7, constrained, num_tags=5, batch=7, length=11)
    batched = {
        "log_z": crf.log_partition(emissions, mask),
        "log_lik": crf.log_likelihood(emissions, tags, mask),
        "path": crf.decode(emissions, mask),
        "marginals": crf.marginals(emissions, mask),
    }
    for b in range(emissions.size(0)):
        length = int(mask[b].sum())
        single = _per_sentence(crf, emissions, tags, mask, b)
        torch.testing.assert_close(batched["log_z"][b : b + 1], single["log_z"])
        torch.testing.assert_close(batched["log_lik"][b : b + 1], single["log_lik"])
        assert batched["path"][b, :length].tolist() == single["path"][0].tolist()
        torch.testing.assert_close(batched["marginals"][b, :length], single["marginals"][0])


def test_batched_gradients_equal_one_by_one() -> None:
    crf, emissions, mask, tags, _ = _case(8, True, num_tags=5, batch=5, length=9)
    emissions.requires_grad_()
    crf.log_likelihood(emissions, tags, mask).sum().backward()
    batched = [emissions.grad.clone(), *(p.grad.clone() for p in crf.parameters())]
    summed = [torch.zeros_like(g) for g in batched]
    for b in range(emissions.size(0)):
        length = int(mask[b].sum())
        emissions.grad = None
        crf.zero_grad()
        one = (emissions[b : b + 1, :length], tags[b : b + 1, :length], mask[b : b + 1, :length])
        crf.log_likelihood(*one).sum().backward()
        for acc, grad in zip(summed, [emissions.grad, *(p.grad for p in crf.parameters())]):
            acc += grad
    for got, expected in zip(batched, summed):
        torch.testing.assert_close(got, expected)


@pytest.mark.parametrize("constrained", [False, True])
def test_log_partition_gradcheck(constrained: bool) -> None:
    crf, emissions, mask, _, _ = _case(9, constrained, num_tags=3, batch=3, length=5)
    trans, start, end = (s.detach().clone().requires_grad_() for s in crf._scores())
    emissions.requires_grad_()
    assert torch.autograd.gradcheck(_LogPartition.apply, (emissions, trans, start, end, mask, True))


def _bio_allowed(num_tags: int) -> tuple[torch.Tensor, torch.Tensor, None]:
    """IOB2 constraints over tags O, B-1, I-1, B-2, I-2, ...: I-x only after B-x or I-x."""
    allowed = torch.ones(num_tags, num_tags, dtype=torch.bool)
    inside = torch.arange(2, num_tags, 2)
    allowed[:, inside] = False
    allowed[inside - 1, inside] = allowed[inside, inside] = True
    allowed_start = torch.ones(num_tags, dtype=torch.bool)
    allowed_start[inside] = False
    return allowed, allowed_start, None


@pytest.mark.parametrize(("constraints", "scale"), [("random", 1.0), ("random", 30.0), ("bio", 100.0), ("none", 300.0)])
def test_long_sequences_and_large_emissions_match_log_space(constraints: str, scale: float) -> None:
    crf, emissions, mask, _, _ = _case(10, constraints == "random", num_tags=7, batch=4, length=300)
    if constraints == "bio":
        bio = CRF(7, *_bio_allowed(7)).double()
        bio.load_state_dict({k: v for k, v in crf.state_dict().items() if not k.endswith("_mask")}, strict=False)
        crf = bio
    emissions = (emissions * scale).requires_grad_()
    trans, start, end = (s.detach().clone().requires_grad_() for s in crf._scores())
    inputs = (emissions, trans, start, end)
    fast = _LogPartition.apply(*inputs, mask, True)
    slow = _log_partition_reference(*inputs, mask)
    torch.testing.assert_close(fast, slow, rtol=1e-12, atol=1e-9)
    weights = torch.rand(fast.shape, dtype=torch.float64)
    for got, expected in zip(torch.autograd.grad(fast, inputs, weights), torch.autograd.grad(slow, inputs, weights)):
        torch.testing.assert_close(got, expected, rtol=1e-7, atol=1e-9)
    torch.testing.assert_close(crf.marginals(emissions, mask), _marginals_reference(*inputs, mask).detach())


@pytest.mark.parametrize(
    ("emissions", "trans"),
    [
        ([[-389, 1208], [-403, 263], [690, 884], [603, 232]], [[358, -211], [-15, -98]]),
        ([[201, -287], [366, -360], [74, 293], [-720, 2]], [[-334, -452], [-385, 188]]),
        ([[286, -438], [-750, 479], [22, -160], [89, -14]], [[340, -163], [44, -11]]),
    ],
)
def test_underflow_in_backward_pass_falls_back_to_log_space(emissions: list, trans: list) -> None:
    # Scores hundreds of nats apart: the rescaled forward pass stays exact, but the rescaled
    # beta rows or the node weights q . r underflow, so gradients and marginals must come
    # from log space.
    inputs = [torch.tensor(emissions, dtype=torch.float64).unsqueeze(0), torch.tensor(trans, dtype=torch.float64)]
    inputs = [x.requires_grad_() for x in (*inputs, torch.zeros(2, dtype=torch.float64), torch.zeros(2).double())]
    mask = torch.ones(1, 4, dtype=torch.bool)
    fast = _LogPartition.apply(*inputs, mask, True)
    slow = _log_partition_reference(*inputs, mask)
    torch.testing.assert_close(fast, slow)
    for got, expected in zip(torch.autograd.grad(fast, inputs), torch.autograd.grad(slow, inputs)):
        torch.testing.assert_close(got, expected, rtol=1e-12, atol=1e-14)
    torch.testing.assert_close(_marginals(*inputs, mask), _marginals_reference(*inputs, mask).detach())


def test_float32_matches_float64() -> None:
    crf, emissions, mask, tags, _ = _case(11, True, num_tags=8, batch=8, length=40)
    crf32 = CRF(8).float()
    crf32.load_state_dict({k: v.float() for k, v in crf.state_dict().items()})
    torch.testing.assert_close(
        crf32.log_likelihood(emissions.float(), tags, mask), crf.log_likelihood(emissions, tags, mask).float()
    )
    assert torch.equal(crf32.decode(emissions.float(), mask), crf.decode(emissions, mask))


def test_extreme_scores_fall_back_to_log_space() -> None:
    crf, emissions, mask, tags, _ = _case(12, True, num_tags=5, batch=4, length=12)
    emissions = (emissions * 5000.0).requires_grad_()
    trans, start, end = (s.detach().clone().requires_grad_() for s in crf._scores())
    fast = _LogPartition.apply(emissions, trans, start, end, mask, True)
    slow = _log_partition_reference(emissions, trans, start, end, mask)
    torch.testing.assert_close(fast, slow)
    grads = torch.autograd.grad(fast.sum(), (emissions, trans, start, end))
    assert all(bool(g.isfinite().all()) for g in grads)
    marginals = crf.marginals(emissions, mask)
    torch.testing.assert_close(marginals.sum(-1)[mask], torch.ones(int(mask.sum()), dtype=torch.float64))


@pytest.mark.parametrize("gap", [700.0, 741.5, 800.0])
def test_score_gaps_near_float64_underflow_stay_exact(gap: float) -> None:
    # Two equally good paths, 0-0 and 1-1, reachable only through states that are `gap`
    # nats below the best one at the previous step; the 0 -> 1 transition is disallowed.
    crf = CRF(2, allowed=torch.tensor([[True, False], [True, True]])).double()
    with torch.no_grad():
        for param in crf.parameters():
            param.zero_()
    emissions = torch.tensor([[[gap, 0.0], [0.0, gap]]], dtype=torch.float64, requires_grad=True)
    mask = torch.ones(1, 2, dtype=torch.bool)
    log_z = crf.log_partition(emissions, mask)
    torch.testing.assert_close(log_z, torch.tensor([gap + math.log(2.0)], dtype=torch.float64))
    (grad,) = torch.autograd.grad(log_z.sum(), emissions)
    half = torch.full((1, 2, 2), 0.5, dtype=torch.float64)
    torch.testing.assert_close(grad, half)
    torch.testing.assert_close(crf.marginals(emissions, mask), half)


def test_loss_is_mean_negative_log_likelihood_and_every_parameter_gets_a_finite_gradient() -> None:
    crf, emissions, mask, tags, _ = _case(13, True, num_tags=5, batch=6, length=8)
    emissions.requires_grad_()
    loss = crf.loss(emissions, tags, mask)
    assert loss.dim() == 0
    torch.testing.assert_close(loss, -crf.log_likelihood(emissions, tags, mask).mean())
    loss.backward()
    for name, param in [("emissions", emissions), *crf.named_parameters()]:
        assert param.grad is not None and bool(param.grad.isfinite().all()), name
        assert bool(param.grad.ne(0).any()), name
    assert emissions.grad[~mask].eq(0).all()


def test_disallowed_scores_get_no_gradient() -> None:
    crf, emissions, mask, _, (allowed, allowed_start, allowed_end) = _case(14, True, num_tags=5, length=7)
    crf.log_partition(emissions.requires_grad_(), mask).sum().backward()
    assert crf.transitions.grad[~allowed].eq(0).all() and crf.transitions.grad[allowed].ne(0).any()
    assert crf.start.grad[~allowed_start].eq(0).all() and crf.end.grad[~allowed_end].eq(0).all()
    crf.zero_grad()
    crf.loss(emissions, crf.decode(emissions, mask), mask).backward()  # decoded tags obey the constraints
    assert crf.transitions.grad[~allowed].eq(0).all()


def test_padding_content_is_ignored() -> None:
    crf, emissions, mask, tags, _ = _case(15, True, num_tags=4, batch=6, length=6)
    dirty = emissions.masked_fill(~mask.unsqueeze(-1), float("nan"))
    dirty_tags = tags.masked_fill(~mask, -100)
    torch.testing.assert_close(crf.log_likelihood(dirty, dirty_tags, mask), crf.log_likelihood(emissions, tags, mask))
    assert torch.equal(crf.decode(dirty, mask), crf.decode(emissions, mask))
    torch.testing.assert_close(crf.marginals(dirty, mask), crf.marginals(emissions, mask))


def test_inference_mode_and_no_grad() -> None:
    crf, emissions, mask, _, _ = _case(16, False)
    expected = crf.decode(emissions, mask)
    with torch.inference_mode():
        assert torch.equal(crf.decode(emissions, mask), expected)
        assert crf.marginals(emissions, mask).shape == emissions.shape
        assert crf.log_partition(emissions, mask).shape == (emissions.size(0),)
    assert not crf.decode(emissions.requires_grad_(), mask).requires_grad


def test_matches_pytorch_crf_when_installed() -> None:
    torchcrf = pytest.importorskip("torchcrf")
    crf, emissions, mask, tags, _ = _case(17, False, num_tags=6, batch=8, length=15)
    theirs = torchcrf.CRF(6, batch_first=True).double()
    with torch.no_grad():
        theirs.transitions.copy_(crf.transitions)
        theirs.start_transitions.copy_(crf.start)
        theirs.end_transitions.copy_(crf.end)
    expected = theirs(emissions, tags, mask, reduction="none")
    torch.testing.assert_close(crf.log_likelihood(emissions, tags, mask), expected)
    paths = crf.decode(emissions, mask)
    expected_paths = theirs.decode(emissions, mask)
    assert [paths[b, : len(p)].tolist() for b, p in enumerate(expected_paths)] == expected_paths


def _valid_inputs() -> dict:
    return {
        "emissions": torch.zeros(2, 3, 4),
        "tags": torch.zeros(2, 3, dtype=torch.long),
        "mask": torch.ones(2, 3, dtype=torch.bool),
    }


@pytest.mark.parametrize(
    ("change", "message"),
    [
        ({"emissions": torch.zeros(2, 3)}, r"must be a float tensor \(batch, length, num_tags\), got \(2, 3\) "),
        ({"emissions": torch.zeros(2, 3, 4, dtype=torch.long)}, r"emissions must be a float tensor .* torch\.int64"),
        ({"emissions": torch.zeros(2, 3, 5)}, r"num_tags=4\), got \(2, 3, 5\)"),
        ({"emissions": torch.zeros(0, 3, 4), "mask": torch.ones(0, 3, dtype=torch.bool)}, r"batch>0.*got \(0, 3, 4\)"),
        ({"mask": torch.ones(2, 3, dtype=torch.uint8)}, r"mask must be a bool tensor of shape \(2, 3\), got .*uint8"),
        ({"mask": torch.ones(2, 4, dtype=torch.bool)}, r"mask must be a bool tensor of shape \(2, 3\), got \(2, 4\)"),
        ({"mask": torch.tensor([[True, True, True], [False, True, True]])}, r"mask\[:, 0\] must be all True.*\[1\]"),
        ({"mask": torch.tensor([[True, False, True], [True, True, True]])}, r"left-aligned prefixes.*rows \[0\]"),
        ({"tags": torch.zeros(2, 3)}, r"tags must be an integer tensor of shape \(2, 3\), got .*float32"),
        ({"tags": torch.zeros(3, 3, dtype=torch.long)}, r"tags must be an integer tensor .*, got \(3, 3\)"),
        ({"tags": torch.tensor([[0, 1, 4], [0, 0, 0]])}, r"must be in \[0, 4\), got values from 0 to 4"),
        ({"tags": torch.tensor([[0, 1, 2], [-1, 0, 0]])}, r"must be in \[0, 4\), got values from -1 to 2"),
    ],
)
def test_validate_rejects_bad_inputs(change: dict, message: str) -> None:
    inputs = _valid_inputs() | change
    with pytest.raises(ValueError, match=message):
        CRF(4).loss(inputs["emissions"], inputs["tags"], inputs["mask"])


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"num_tags": 0}, r"num_tags must be a positive int, got 0"),
        ({"num_tags": 3, "allowed": torch.ones(3, 2).bool()}, r"^allowed must be a bool tensor .*, got \(3, 2\)"),
        ({"num_tags": 3, "allowed_start": torch.ones(3)}, r"allowed_start must be a bool tensor .*float"),
        ({"num_tags": 3, "allowed_end": torch.ones(4).bool()}, r"allowed_end must be a bool tensor .*, got \(4,\)"),
    ],
)
def test_constructor_rejects_bad_arguments(kwargs: dict, message: str) -> None:
    with pytest.raises(ValueError, match=message):
        CRF(**kwargs)


def test_tags_beyond_the_mask_are_not_validated() -> None:
    inputs = _valid_inputs()
    mask = torch.tensor([[True, True, False], [True, False, False]])
    tags = torch.tensor([[1, 2, -100], [3, 99, -100]])
    assert CRF(4).loss(inputs["emissions"], tags, mask).isfinite()


@settings(max_examples=25, deadline=None)
@given(
    batch=st.integers(1, 4),
    length=st.integers(1, 6),
    num_tags=st.integers(1, 5),
    seed=st.integers(0, 2**16),
    data=st.data(),
)
def test_shapes_and_masks_property(batch: int, length: int, num_tags: int, seed: int, data: st.DataObject) -> None:
    lengths = data.draw(st.lists(st.integers(1, length), min_size=batch, max_size=batch))
    gen = torch.Generator().manual_seed(seed)
    crf = CRF(num_tags)
    emissions = torch.randn(batch, length, num_tags, generator=gen) * 3
    tags = torch.randint(0, num_tags, (batch, length), generator=gen)
    mask = _lengths_to_mask(lengths, length)
    log_lik = crf.log_likelihood(emissions, tags, mask)
    assert log_lik.shape == (batch,) and bool((log_lik <= 1e-5).all())
    paths = crf.decode(emissions, mask)
    assert paths.shape == (batch, length) and paths.dtype == torch.long and paths.is_contiguous()
    assert paths[~mask].eq(0).all() and bool(((paths >= 0) & (paths < num_tags)).all())
    marginals = crf.marginals(emissions, mask)
    assert marginals.shape == emissions.shape and marginals.is_contiguous() and marginals[~mask].eq(0).all()
    torch.testing.assert_close(marginals.sum(-1)[mask], torch.ones(sum(lengths)))
    best = crf.log_likelihood(emissions, paths, mask)
    assert bool((best >= log_lik - 1e-5).all())  # the Viterbi path is at least as likely as any other


@pytest.mark.parametrize(("seed", "constrained"), CASES)
def test_soft_loss_is_the_cross_entropy_of_the_targets_against_the_marginals(seed: int, constrained: bool) -> None:
    """Against brute-force marginals, and zero gradient where the targets are the CRF's own marginals (the
    minimum of a cross-entropy is where the two distributions agree)."""
    crf, emissions, mask, _, masks = _case(seed, constrained)
    gen = torch.Generator().manual_seed(seed)
    targets = torch.softmax(torch.randn(emissions.shape, generator=gen, dtype=torch.float64) * 3, -1)
    if constrained:  # a target may not ask for a tag no path has: its student log-marginal is -inf-like
        targets = targets * (crf.marginals(emissions, mask) > 0)
    expected = torch.zeros((), dtype=torch.float64)
    for b, length in enumerate(mask.sum(1).tolist()):
        seqs, scores = _enumerate(_effective(crf, masks), emissions[b], length)
        probs = torch.softmax(scores, 0)
        for t in range(length):
            marginal = torch.zeros(crf.num_tags, dtype=torch.float64).index_add_(0, seqs[:, t], probs)
            keep = targets[b, t] > 0
            expected -= (targets[b, t][keep] * marginal[keep].log()).sum()
    torch.testing.assert_close(crf.soft_loss(emissions, targets, mask), expected / emissions.shape[0])
    own = crf.marginals(emissions, mask)
    emissions = emissions.clone().requires_grad_()
    crf.soft_loss(emissions, own, mask).backward()
    torch.testing.assert_close(emissions.grad, torch.zeros_like(emissions), atol=1e-8, rtol=0)
    assert all(p.grad is None or bool(p.grad.isfinite().all()) for p in crf.parameters())


def test_soft_loss_refuses_targets_of_another_shape() -> None:
    crf, emissions, mask, _, _ = _case(0, False)
    with pytest.raises(ValueError, match="targets must have the emissions' shape"):
        crf.soft_loss(emissions, emissions[:, :, :2], mask)
