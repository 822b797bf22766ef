"""Post-Viterbi decoding (Turian et al. 2009 §5) against brute force over every allowed sequence."""
from __future__ import annotations

import itertools

import pytest
import torch

from seqlab.data.schemes import allowed_transitions, labels_for
from seqlab.modules.decoders import PostViterbiDecoder, SoftmaxDecoder


def test_post_viterbi_is_the_best_allowed_sequence_of_log_probabilities():
    labels = labels_for(["NP", "VP"], "iob2")
    allowed, start, end = allowed_transitions(labels, "iob2")
    decoder = PostViterbiDecoder(len(labels), torch.tensor(allowed), torch.tensor(start), torch.tensor(end))
    torch.manual_seed(0)
    emissions = torch.randn(6, 4, len(labels)) * 3
    mask = torch.tensor([[True] * 4, [True] * 3 + [False], [True] * 2 + [False] * 2] * 2)
    got = decoder.decode(emissions, mask)
    log_probs = emissions.log_softmax(-1)
    for b in range(6):
        n = int(mask[b].sum())
        best = max(
            (seq for seq in itertools.product(range(len(labels)), repeat=n)
             if start[seq[0]] and all(allowed[i][j] for i, j in zip(seq, seq[1:]))),
            key=lambda seq: sum(log_probs[b, t, k].item() for t, k in enumerate(seq)),
        )
        assert got[b, :n].tolist() == list(best) and got[b, n:].eq(0).all()


def test_post_viterbi_trains_like_the_softmax_and_has_no_weights():
    labels = labels_for(["NP"], "iob2")
    allowed, start, end = allowed_transitions(labels, "iob2")
    decoder = PostViterbiDecoder(len(labels), torch.tensor(allowed), torch.tensor(start), torch.tensor(end))
    emissions, tags = torch.randn(2, 3, 3), torch.tensor([[1, 2, 0], [0, 1, 0]])
    mask = torch.ones(2, 3, dtype=torch.bool)
    assert torch.equal(decoder.loss(emissions, tags, mask), SoftmaxDecoder(3).loss(emissions, tags, mask))
    assert decoder.state_dict() == {}


def test_softmax_log_likelihood_is_the_sum_of_the_tokens_log_probabilities_at_a_temperature():
    decoder = SoftmaxDecoder(5)
    torch.manual_seed(1)
    emissions, tags = torch.randn(3, 4, 5), torch.randint(0, 5, (3, 4))
    mask = torch.tensor([[True] * 4, [True] * 2 + [False] * 2, [True] + [False] * 3])
    got = decoder.log_likelihood(emissions, tags, mask, temperature=1.5)
    probs = decoder.marginals(emissions, mask, 1.5)
    for b in range(3):
        n = int(mask[b].sum())
        expected = sum(probs[b, t, tags[b, t]].log().item() for t in range(n))
        assert got[b].item() == pytest.approx(expected, abs=1e-5)


def test_a_softmax_decoders_soft_loss_on_one_hot_targets_is_its_loss():
    gen = torch.Generator().manual_seed(0)
    emissions = torch.randn(3, 5, 4, generator=gen)
    tags = torch.randint(0, 4, (3, 5), generator=gen)
    mask = torch.arange(5).unsqueeze(0) < torch.tensor([[5], [3], [1]])
    decoder = SoftmaxDecoder(4)
    one_hot = torch.nn.functional.one_hot(tags, 4).float()
    torch.testing.assert_close(decoder.soft_loss(emissions, one_hot, mask), decoder.loss(emissions, tags, mask))
