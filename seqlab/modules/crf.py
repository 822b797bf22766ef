"""Linear-chain conditional random field: the structured decoder of a BiLSTM-CRF tagger.

Where the speed comes from:

* alpha and beta run in rescaled probability space in float64 (Rabiner 1989, section V.A):
  a step is a broadcast multiply, a sum and a rescaling, not a ``(B, K, K)`` logsumexp.
  Beta runs as a forward recursion over each sentence reversed, stacked with alpha, so
  both share one time loop, and masks being left-aligned prefixes, the loop runs unmasked.
* log Z is a custom autograd Function whose gradients are the node and summed edge
  marginals in closed form, so no autograd graph is built over the time loop.
* The cost is per-op overhead, so loop views are made once and ops write with ``out=``.
  No op may enter the OpenMP pool: MKL-backed ``torch.mm``/``bmm`` and ``torch.exp``/``log``
  (above ~100 elements), and ``torch.max`` with indices, do so even for a (32, 17) input
  and stall for a scheduler tick whenever another process holds the other core. Hence
  ``exp2``, ``xlogy``, K gemv calls for the edge sums, and back-pointers recomputed along
  the Viterbi path. With one thread there is no pool to enter, and a step of alpha and beta is
  a ``bmm`` (half the time of the broadcast multiply and sum it replaces).

Rescaling is exact unless a prefix falls ~700 nats behind the best one at some step and
its continuation later dominates: impossible without constraints (the leader can switch to
any continuation for one transition score), and needing emissions hundreds of nats apart
with IOB-style ones. When a rescaled row or ``alpha . beta`` leaves float64's normal range,
log Z, its gradients and the marginals are recomputed by log-space autograd.
"""
from __future__ import annotations

import math
import numbers
from typing import NamedTuple

import torch
from torch import Tensor
from torch.autograd.function import FunctionCtx, once_differentiable

from seqlab.modules.viterbi import DISALLOWED
from seqlab.modules.viterbi import describe as _describe
from seqlab.modules.viterbi import penalty as _penalty
from seqlab.modules.viterbi import viterbi as _viterbi


_LOG2E = 1.0 / math.log(2.0)
_TINY = torch.finfo(torch.float64).tiny
_INTEGER_DTYPES = (torch.uint8, torch.int8, torch.int16, torch.int32, torch.int64)


class _Potentials(NamedTuple):
    """Scores as float64 base-2 potentials, with emissions time-major."""

    ee: Tensor  # shape: (T, B, K), 2 ** (emit - emax), in [0, 1]; emissions beyond each sentence are 0
    emax: Tensor  # shape: (T, B, 1), log2 units
    expt: Tensor  # shape: (K, K), 2 ** (trans - tmax), in [0, 1]
    tmax: Tensor  # shape: (), log2 units
    first: Tensor  # shape: (B, K), log2 units: start + emissions at t = 0
    last: Tensor  # shape: (B, K), log2 units: end + emissions at each sentence's last token
    end: Tensor  # shape: (K,), log2 units


def _potentials(
    emissions: Tensor, trans: Tensor, start: Tensor, end: Tensor, mask: Tensor, lengths: Tensor
) -> _Potentials:
    """Convert natural-log scores to :class:`_Potentials`."""
    batch, length, num_tags = emissions.shape
    emit = emissions.new_empty((length, batch, num_tags), dtype=torch.float64)  # shape: (T, B, K)
    torch.mul(emissions.detach().transpose(0, 1), _LOG2E, out=emit)
    emit.masked_fill_(~mask.t().unsqueeze(-1), 0.0)
    emax = emit.amax(-1, keepdim=True)  # shape: (T, B, 1)
    trans2, start2, end2 = (x.detach().to(torch.float64) * _LOG2E for x in (trans, start, end))
    tmax = trans2.amax()
    at_end = (lengths - 1).view(1, -1, 1).expand(1, -1, num_tags)  # shape: (1, B, K)
    last = emit.gather(0, at_end).squeeze(0) + end2  # shape: (B, K)
    first = emit[0] + start2  # shape: (B, K)
    return _Potentials(emit.sub_(emax).exp2_(), emax, trans2.sub_(tmax).exp2_(), tmax, first, last, end2)


def _log2(x: Tensor) -> Tensor:
    """log2 by a kernel that stays on the calling thread (``torch.log2`` does not, above ~100 elements)."""
    return torch.special.xlogy(_LOG2E, x)


def _reverse(x: Tensor, lengths: Tensor) -> Tensor:
    """Reverse each sentence b of time-major ``x`` (T, B, ...) within its first ``lengths[b]`` steps.

    Position t goes to ``(lengths[b] - 1 - t) mod T``, which also reverses the padding among
    itself, so the map is its own inverse.
    """
    length = x.size(0)
    steps = torch.arange(length, device=x.device).unsqueeze(1)  # shape: (T, 1)
    index = (lengths - 1 - steps).remainder_(length)  # shape: (T, B)
    return x.gather(0, index.view(*index.shape, *[1] * (x.dim() - 2)).expand_as(x))


def _recursions(pot: _Potentials, lengths: Tensor, backward: bool) -> tuple[Tensor, Tensor, Tensor] | None:
    """The rescaled forward recursion, and optionally the backward one, in a single time loop.

    The backward recursion runs forwards over each sentence reversed, with transposed
    transitions, on the state ``beta[t] + emissions[t]``; the two are stacked on a leading
    axis H (1 or 2) so each step costs the same few ops. Returns, time-major and rescaled so
    each row's max is 1 after each step:

    * ``after`` (T, H, B, K): ``after[:, 0]`` is alpha, ``after[:, 1]`` beta + emissions (reversed);
    * ``before`` (T, H, B, K): the same before each step's emissions, so ``before[:, 1]`` is beta
      (reversed); it is ``after`` itself when only the forward half runs;
    * ``norm`` (T, H, B, 1): what each step's row was divided by.

    Rows beyond each sentence hold garbage. Returns ``None`` if a row underflowed.
    """
    length, batch, num_tags = pot.ee.shape
    halves = 2 if backward else 1
    ee = pot.ee.unsqueeze(1)  # shape: (T, 1, B, K)
    starts = pot.first.unsqueeze(0)  # shape: (1, B, K)
    expt = pot.expt.t().unsqueeze(0)  # shape: (1, K, K), [j, i] = 2 ** (trans[i, j] - tmax)
    if backward:
        ee = torch.stack([pot.ee, _reverse(pot.ee, lengths)], dim=1)  # shape: (T, 2, B, K)
        starts = torch.stack([pot.first, pot.last])  # shape: (2, B, K)
        expt = torch.stack([pot.expt.t(), pot.expt])  # shape: (2, K, K)
    after = torch.empty((length, halves, batch, num_tags), dtype=torch.float64, device=ee.device)
    before = torch.empty_like(after) if backward else after  # shape: (T, H, B, K)
    norm = torch.ones_like(after[..., :1])  # shape: (T, H, B, 1)
    torch.sub(starts, starts.amax(-1, keepdim=True), out=after[0]).exp2_()
    if backward:
        before[0, 1] = (pot.end - pot.end.amax()).exp2_()  # beta at each last token
    after_rows, after_t, norm_t, ee_t = after.unsqueeze(-2).unbind(0), after.unbind(0), norm.unbind(0), ee.unbind(0)
    before_t = before.unbind(0) if backward else after_t
    terms = after.new_empty((halves, batch, num_tags, num_tags))  # shape: (H, B, K, K)
    expt_rows = expt.transpose(1, 2).contiguous()  # shape: (H, K, K), [h, i, j]
    expt = expt.unsqueeze(1).contiguous()  # shape: (H, 1, K, K)
    gemm = torch.get_num_threads() == 1  # no OpenMP pool to stall in (see the module notes)
    for t in range(1, length):
        if gemm:
            torch.bmm(after_t[t - 1], expt_rows, out=before_t[t])
        else:
            torch.sum(torch.mul(after_rows[t - 1], expt, out=terms), -1, out=before_t[t])
        torch.mul(before_t[t], ee_t[t], out=after_t[t])
        torch.amax(after_t[t], -1, keepdim=True, out=norm_t[t])
        after_t[t].div_(norm_t[t])
    return None if bool((norm < _TINY).any()) else (after, before, norm)


def _log_partition(pot: _Potentials, q: Tensor, norm: Tensor, mask: Tensor) -> Tensor:
    """log Z (B,) in natural-log units from the rescaled alpha ``q`` (T, B, K) and its ``norm`` (T, B, 1)."""
    scale = _log2(norm).add_(pot.emax).add_(pot.tmax).squeeze(-1)  # shape: (T, B)
    scale[0] = pot.first.amax(-1)
    last = (mask.sum(1) - 1).view(1, -1, 1).expand(1, -1, q.size(2))  # shape: (1, B, K)
    end_max = pot.end.amax()
    to_end = (q.gather(0, last).squeeze(0) * (pot.end - end_max).exp2()).sum(-1)  # shape: (B,)
    log2_z = scale.masked_fill_(~mask.t(), 0.0).sum(0) + _log2(to_end) + end_max  # shape: (B,)
    return log2_z / _LOG2E


def _node_weights(q: Tensor, r: Tensor, mask: Tensor) -> tuple[Tensor, Tensor] | None:
    """``q * r`` (T, B, K) and the weight (T, B, 1) that turns it into posterior marginals.

    The weight is ``1 / (q . r)`` within each sentence and 0 beyond it. Returns ``None`` if
    ``q . r`` fell below float64's normal range, where its precision is lost.
    """
    qr = q * r  # shape: (T, B, K)
    total = qr.sum(-1, keepdim=True)  # shape: (T, B, 1)
    valid = mask.t().unsqueeze(-1)  # shape: (T, B, 1)
    if bool((total < _TINY).logical_and_(valid).any()):
        return None
    return qr, torch.where(valid, total.reciprocal_(), 0.0)


def _scaled_gradients(
    grad_out: Tensor, pot: _Potentials, after: Tensor, before: Tensor, norm: Tensor, mask: Tensor
) -> tuple[Tensor, Tensor, Tensor, Tensor] | None:
    """Gradients of ``sum(grad_out * log Z)`` w.r.t. emissions, transitions, start and end.

    With alpha ``q`` and beta ``r`` rescaled and ``s[t] = q[t] . r[t]``, the node marginals
    are ``q[t] * r[t] / s[t]`` and the edge marginals ``q[t-1, i] * expt[i, j] * ee[t, j] *
    r[t, j] / (norm[t] * s[t])``: the unknown scales cancel. Returns ``None`` if a rescaled
    value under- or overflowed.
    """
    lengths = mask.sum(1)  # shape: (B,)
    q, r = after[:, 0], _reverse(before[:, 1], lengths)  # each shape: (T, B, K)
    weights = _node_weights(q, r, mask)
    if weights is None:
        return None
    qr, weight = weights
    weight.mul_(grad_out.detach().to(torch.float64).view(1, -1, 1))
    node = qr.mul_(weight)  # shape: (T, B, K), grad_out * marginals, 0 beyond each sentence
    last = (lengths - 1).view(1, -1, 1).expand(1, -1, node.size(2))  # shape: (1, B, K)
    grad_end = node.gather(0, last).squeeze(0).sum(0)  # shape: (K,)
    right = r.mul_(pot.ee).mul_(weight.div_(norm[:, 0]))[1:].reshape(-1, q.size(2)).t().contiguous()
    grad_trans = _outer_sum(q[:-1].reshape(-1, q.size(2)).t(), right).mul_(pot.expt)  # shape: (K, K)
    if not bool(grad_trans.isfinite().all()):  # NaN from rows beyond a sentence that lost all mass
        return None
    return node.transpose(0, 1), grad_trans, node[0].sum(0), grad_end


def _outer_sum(left: Tensor, right: Tensor) -> Tensor:
    """``left @ right.t()`` for (K, N) inputs, as K matrix-vector products.

    A K x N x K ``torch.mm``/``bmm`` goes to MKL gemm, which enters the OpenMP pool even at
    this size and stalls for a scheduler tick when another process holds the other core;
    MKL gemv stays on the calling thread.
    """
    out = left.new_empty((right.size(0), left.size(0)))  # shape: (K, K), [j, i]
    for out_j, right_j in zip(out.unbind(0), right.unbind(0)):
        torch.mv(left, right_j, out=out_j)
    return out.t()  # shape: (K, K)


def _log_alphas(emissions: Tensor, trans: Tensor, start: Tensor) -> Tensor:
    """Log-space forward recursion (B, T, K), ignoring sentence ends; differentiable by autograd."""
    alphas = [start + emissions[:, 0]]  # each shape: (B, K)
    for t in range(1, emissions.size(1)):
        alphas.append(torch.logsumexp(alphas[-1].unsqueeze(2) + trans, dim=1) + emissions[:, t])
    return torch.stack(alphas, dim=1)  # shape: (B, T, K)


def _log_partition_reference(
    emissions: Tensor, trans: Tensor, start: Tensor, end: Tensor, mask: Tensor
) -> Tensor:
    """log Z (B,) by plain log-space autograd: the robust fallback, and a reference for tests."""
    emissions = emissions.masked_fill(~mask.unsqueeze(-1), 0.0)  # shape: (B, T, K)
    alphas = _log_alphas(emissions, trans, start)  # shape: (B, T, K)
    last = (mask.sum(1) - 1).view(-1, 1, 1).expand(-1, 1, alphas.size(2))  # shape: (B, 1, K)
    return torch.logsumexp(alphas.gather(1, last).squeeze(1) + end, dim=-1)  # shape: (B,)


def _marginals_reference(emissions: Tensor, trans: Tensor, start: Tensor, end: Tensor, mask: Tensor) -> Tensor:
    """Posterior marginals (B, T, K) in log space (:func:`_log_marginals`), 0 beyond each sentence."""
    return _log_marginals(emissions, trans, start, end, mask).exp().masked_fill(~mask.unsqueeze(-1), 0.0)


def _log_marginals(emissions: Tensor, trans: Tensor, start: Tensor, end: Tensor, mask: Tensor) -> Tensor:
    """log p(y_t = k | x), shape (B, T, K), by log-space forward-backward, differentiable by autograd (the soft
    loss's student side); beta comes from the alpha recursion on reversed sentences. Rows beyond each sentence
    hold garbage."""
    lengths = mask.sum(1)  # shape: (B,)
    emissions = emissions.masked_fill(~mask.unsqueeze(-1), 0.0)  # shape: (B, T, K)
    alphas = _log_alphas(emissions, trans, start)  # shape: (B, T, K)
    flipped = _reverse(emissions.transpose(0, 1), lengths).transpose(0, 1)  # shape: (B, T, K)
    rev = _log_alphas(flipped, trans.t(), end)  # shape: (B, T, K), beta + emissions, reversed
    rev = _reverse(rev.transpose(0, 1), lengths).transpose(0, 1)  # shape: (B, T, K)
    last = (lengths - 1).view(-1, 1, 1).expand(-1, 1, alphas.size(2))  # shape: (B, 1, K)
    log_z = torch.logsumexp(alphas.gather(1, last) + end, dim=-1, keepdim=True)  # shape: (B, 1, 1)
    return alphas + rev - emissions - log_z  # shape: (B, T, K)


class _LogPartition(torch.autograd.Function):
    """log Z(x) with gradients from one forward-backward pass (Sutton & McCallum 2012, section 4.1).

    ``with_backward`` says whether to run the beta recursion alongside alpha, in the forward
    pass, for the gradients; it is nearly free there, and pointless when no gradient is needed.
    """

    @staticmethod
    def forward(  # type: ignore[override]
        ctx: FunctionCtx, emissions: Tensor, trans: Tensor, start: Tensor, end: Tensor, mask: Tensor,
        with_backward: bool,
    ) -> Tensor:
        ctx.save_for_backward(emissions, trans, start, end, mask)
        lengths = mask.sum(1)  # shape: (B,)
        pot = _potentials(emissions, trans, start, end, mask, lengths)
        scaled = _recursions(pot, lengths, backward=with_backward)
        log_z = None if scaled is None else _log_partition(pot, scaled[0][:, 0], scaled[2][:, 0], mask)
        ctx.scaled = None
        if log_z is None or not bool(log_z.isfinite().all()):
            exact = [x.detach().to(torch.float64) for x in (emissions, trans, start, end)]
            return _log_partition_reference(*exact, mask).to(emissions.dtype)
        if with_backward:
            ctx.scaled = (pot, *scaled)
        return log_z.to(emissions.dtype)

    @staticmethod
    @once_differentiable
    def backward(ctx: FunctionCtx, grad_out: Tensor) -> tuple[Tensor | None, ...]:  # type: ignore[override]
        emissions, trans, start, end, mask = ctx.saved_tensors
        grads = None if ctx.scaled is None else _scaled_gradients(grad_out, *ctx.scaled, mask)
        if grads is None:
            inputs = [x.detach().to(torch.float64).requires_grad_() for x in (emissions, trans, start, end)]
            with torch.enable_grad():
                log_z = _log_partition_reference(*inputs, mask)
                grads = torch.autograd.grad(log_z, inputs, grad_out.to(torch.float64))
        dtypes = (emissions.dtype, trans.dtype, start.dtype, end.dtype)
        return (*(g.to(d) for g, d in zip(grads, dtypes)), None, None)


def _marginals(emissions: Tensor, trans: Tensor, start: Tensor, end: Tensor, mask: Tensor) -> Tensor:
    """Posterior marginals (B, T, K), 0 beyond each sentence, from the rescaled forward-backward pass."""
    lengths = mask.sum(1)  # shape: (B,)
    scaled = _recursions(_potentials(emissions, trans, start, end, mask, lengths), lengths, backward=True)
    weights = None if scaled is None else _node_weights(scaled[0][:, 0], _reverse(scaled[1][:, 1], lengths), mask)
    if weights is not None:
        node = weights[0].mul_(weights[1])  # shape: (T, B, K)
        if bool(node.isfinite().all()):
            return node.transpose(0, 1).to(emissions.dtype, memory_format=torch.contiguous_format)
    exact = [x.detach().to(torch.float64) for x in (emissions, trans, start, end)]
    return _marginals_reference(*exact, mask).to(emissions.dtype)  # shape: (B, T, K)


class CRF(torch.nn.Module):
    """Linear-chain CRF over per-token tag scores (Lafferty et al. 2001; Lample et al. 2016).

    ``allowed[i, j]`` says whether tag ``j`` may follow tag ``i``; ``allowed_start`` and
    ``allowed_end`` say which tags may begin and end a sentence (``None``: all). Disallowed
    scores get a fixed additive penalty of ``DISALLOWED`` from non-learned buffers, so they
    have zero posterior mass, no gradient through log Z, and are never decoded.
    """

    def __init__(
        self,
        num_tags: int,
        allowed: Tensor | None = None,
        allowed_start: Tensor | None = None,
        allowed_end: Tensor | None = None,
    ) -> None:
        super().__init__()
        if isinstance(num_tags, bool) or not isinstance(num_tags, numbers.Integral) or num_tags < 1:
            raise ValueError(f"num_tags must be a positive int, got {num_tags!r}")
        num_tags = int(num_tags)
        self.num_tags = num_tags
        self.transitions = torch.nn.Parameter(torch.empty(num_tags, num_tags).uniform_(-0.1, 0.1))
        self.start = torch.nn.Parameter(torch.empty(num_tags).uniform_(-0.1, 0.1))
        self.end = torch.nn.Parameter(torch.empty(num_tags).uniform_(-0.1, 0.1))
        self.register_buffer("transition_mask", _penalty("allowed", allowed, (num_tags, num_tags)))
        self.register_buffer("start_mask", _penalty("allowed_start", allowed_start, (num_tags,)))
        self.register_buffer("end_mask", _penalty("allowed_end", allowed_end, (num_tags,)))

    def extra_repr(self) -> str:
        return f"num_tags={self.num_tags}"

    def _scores(self) -> tuple[Tensor, Tensor, Tensor]:
        """Transition (K, K), start (K,) and end (K,) scores with the constraint penalties added."""
        return (
            self.transitions + self.transition_mask,
            self.start + self.start_mask,
            self.end + self.end_mask,
        )

    def loss(self, emissions: Tensor, tags: Tensor, mask: Tensor) -> Tensor:
        """Mean over the batch of the negative log-likelihood (scalar)."""
        return -self.log_likelihood(emissions, tags, mask).mean()

    def soft_loss(self, emissions: Tensor, targets: Tensor, mask: Tensor) -> Tensor:
        """Mean over the batch of each sentence's summed token cross-entropy between ``targets`` (B, T, K), a
        distribution over the tags per token (a teacher's marginals), and this CRF's own marginals p(y_t | x):
        -sum_t sum_k q_t(k) log p(y_t = k | x), the token-level distillation loss of a structured student (Wang et
        al. 2020). The student's marginals come from log-space forward-backward under autograd: slower than
        :meth:`loss`'s closed-form gradients, and differentiable."""
        self._validate(emissions, mask)
        if targets.shape != emissions.shape:
            raise ValueError(f"targets must have the emissions' shape {tuple(emissions.shape)}, got "
                             f"{tuple(targets.shape)}")
        log_marginals = _log_marginals(emissions, *self._scores(), mask)  # shape: (B, T, K)
        # a target of 0 contributes 0, even where the student's marginal is 0 (a disallowed tag: -inf no less)
        cross = torch.where(targets > 0, targets * log_marginals, 0.0).sum(-1)  # shape: (B, T)
        return -torch.where(mask, cross, 0.0).sum() / emissions.shape[0]

    def log_likelihood(self, emissions: Tensor, tags: Tensor, mask: Tensor, temperature: float = 1.0) -> Tensor:
        """log p(tags | emissions) for each sentence, shape (B,). ``temperature`` divides every score first, as in
        :meth:`marginals` (a path's confidence at the tagger's calibration)."""
        self._validate(emissions, mask, tags)
        trans, start, end = self._scores()
        if temperature != 1.0:
            emissions, trans, start, end = (x / temperature for x in (emissions, trans, start, end))
        log_z = _LogPartition.apply(emissions, trans, start, end, mask, _wants_grad(emissions, trans))  # shape: (B,)
        return _gold_score(emissions, tags, mask, trans, start, end) - log_z

    def log_partition(self, emissions: Tensor, mask: Tensor) -> Tensor:
        """log Z, the log-sum of the scores of all tag sequences, shape (B,)."""
        self._validate(emissions, mask)
        trans, start, end = self._scores()
        return _LogPartition.apply(emissions, trans, start, end, mask, _wants_grad(emissions, trans))

    def decode(self, emissions: Tensor, mask: Tensor) -> Tensor:
        """Viterbi best tag sequences (B, T), 0 beyond each sentence."""
        self._validate(emissions, mask)
        with torch.no_grad():
            return _viterbi(emissions.detach(), *self._scores(), mask)

    def marginals(self, emissions: Tensor, mask: Tensor, temperature: float = 1.0) -> Tensor:
        """Posterior marginals p(y_t = k | x), shape (B, T, K), 0 beyond each sentence; not differentiable.

        ``temperature`` divides every score (emissions, transitions, start and end) first: above 1 the
        marginals are softer, the Viterbi path is the same (temperature scaling, Guo et al. 2017)."""
        self._validate(emissions, mask)
        with torch.no_grad():
            scores = self._scores()
            if temperature != 1.0:
                emissions, scores = emissions / temperature, tuple(x / temperature for x in scores)
            return _marginals(emissions, *scores, mask)

    def _validate(self, emissions: Tensor, mask: Tensor, tags: Tensor | None = None) -> None:
        """Raise ValueError, saying what was expected and what arrived, if the inputs are malformed."""
        if not isinstance(emissions, Tensor) or emissions.dim() != 3 or not emissions.is_floating_point():
            raise ValueError(f"emissions must be a float tensor (batch, length, num_tags), got {_describe(emissions)}")
        batch, length, num_tags = emissions.shape
        if num_tags != self.num_tags or batch == 0 or length == 0:
            raise ValueError(
                f"emissions must have shape (batch>0, length>0, num_tags={self.num_tags}), got {tuple(emissions.shape)}"
            )
        if not isinstance(mask, Tensor) or mask.dtype != torch.bool or mask.shape != (batch, length):
            raise ValueError(f"mask must be a bool tensor of shape {(batch, length)}, got {_describe(mask)}")
        if not bool(mask[:, 0].all()):
            bad = (~mask[:, 0]).nonzero().flatten().tolist()
            raise ValueError(f"mask[:, 0] must be all True (no empty sentences), but sentences {bad} start masked")
        if bool((mask[:, 1:] > mask[:, :-1]).any()):
            bad = (mask[:, 1:] > mask[:, :-1]).any(1).nonzero().flatten().tolist()
            raise ValueError(f"mask rows must be left-aligned prefixes (True then False), but rows {bad} are not")
        if tags is None:
            return
        if not isinstance(tags, Tensor) or tags.dtype not in _INTEGER_DTYPES or tags.shape != (batch, length):
            raise ValueError(f"tags must be an integer tensor of shape {(batch, length)}, got {_describe(tags)}")
        low, high = torch.aminmax(tags.masked_fill(~mask, 0))
        if low < 0 or high >= num_tags:
            raise ValueError(
                f"tags at unmasked positions must be in [0, {num_tags}), got values from {int(low)} to {int(high)}"
            )


def _wants_grad(*inputs: Tensor) -> bool:
    """Whether autograd will record a graph through any of ``inputs``."""
    return torch.is_grad_enabled() and any(x.requires_grad for x in inputs)


def _gold_score(
    emissions: Tensor, tags: Tensor, mask: Tensor, trans: Tensor, start: Tensor, end: Tensor
) -> Tensor:
    """Score (B,) of the given tag sequences, fully vectorised with gathers."""
    tags = tags.long().masked_fill(~mask, 0)  # shape: (B, T)
    emit = emissions.gather(2, tags.unsqueeze(2)).squeeze(2)  # shape: (B, T)
    pairs = trans.reshape(-1)[tags[:, :-1] * trans.size(1) + tags[:, 1:]]  # shape: (B, T - 1)
    last = tags.gather(1, mask.sum(1, keepdim=True) - 1).squeeze(1)  # shape: (B,)
    score = torch.where(mask, emit, 0.0).sum(1) + torch.where(mask[:, 1:], pairs, 0.0).sum(1)  # shape: (B,)
    return score + start[tags[:, 0]] + end[last]
