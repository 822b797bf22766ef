"""Linear-chain conditional random field: the structured decoder of a BiLSTM-CRF tagger.

Speed comes from four choices, all exact:

* The forward (alpha) and backward (beta) recursions run in rescaled probability space
  in float64 (Rabiner 1989, section V.A): a time step is a broadcast multiply, a sum and a
  rescaling, instead of a ``(B, K, K)`` logsumexp.
* log Z is a custom :class:`torch.autograd.Function` whose backward runs the beta
  recursion once and writes the gradients in closed form (node marginals for the
  emissions, summed edge marginals for the transitions), so no autograd graph is built
  over the time loop.
* Masks are left-aligned prefixes, so the recursions run unmasked and each sentence's
  result is read at its last token; the beta recursion runs on right-aligned copies.
* Per-step ops are ones ATen runs on the calling thread at these sizes. ``torch.mm``,
  ``torch.exp``/``log`` (MKL) and ``torch.max`` with indices enter the OpenMP pool even
  for a (32, 17) input and stall for a scheduler tick when another process holds the
  other core, so scores are exponentiated in base 2 (``exp2``/``log2``) and Viterbi
  recomputes back-pointers along the best path instead of storing them.

If scores are so extreme (spreads of hundreds of nats within one time step) that the
rescaled recursion underflows, log Z and its gradients fall back to log-space autograd.
"""
from __future__ import annotations

import math
from typing import NamedTuple

import torch
from torch import Tensor
from torch.autograd.function import FunctionCtx, once_differentiable

DISALLOWED = -10000.0
"""Additive score of a disallowed transition, start tag or end tag."""

_LOG2E = 1.0 / math.log(2.0)
_TINY = torch.finfo(torch.float64).tiny


class _Potentials(NamedTuple):
    """Scores as float64 base-2 potentials, each rescaled into [0, 1]."""

    ee: Tensor  # shape: (T, B, K), 2 ** (emit - emax); emissions beyond each sentence are 0
    emax: Tensor  # shape: (T, B, 1), log2 units
    expt: Tensor  # shape: (K, K), 2 ** (trans - tmax)
    tmax: Tensor  # shape: (), log2 units
    start: Tensor  # shape: (B, K), log2 units, start + emissions at t = 0
    end: Tensor  # shape: (K,), log2 units


def _potentials(emissions: Tensor, trans: Tensor, start: Tensor, end: Tensor, mask: Tensor) -> _Potentials:
    """Convert natural-log scores to :class:`_Potentials`, with time-major emissions."""
    batch, length, num_tags = emissions.shape
    emit = emissions.new_empty((length, batch, num_tags), dtype=torch.float64)  # shape: (T, B, K)
    torch.mul(emissions.detach().transpose(0, 1), _LOG2E, out=emit)
    emit.masked_fill_(~mask.t().unsqueeze(-1), 0.0)
    emax = emit.amax(-1, keepdim=True)  # shape: (T, B, 1)
    trans2, start2, end2 = (x.detach().to(torch.float64) * _LOG2E for x in (trans, start, end))
    tmax = trans2.amax()
    first = emit[0] + start2  # shape: (B, K)
    return _Potentials(emit.sub_(emax).exp2_(), emax, trans2.sub_(tmax).exp2_(), tmax, first, end2)


def _log2(x: Tensor) -> Tensor:
    """log2 by a kernel that stays on the calling thread (``torch.log2`` does not, above ~100 elements)."""
    return torch.special.xlogy(_LOG2E, x)


def _shift(x: Tensor, offsets: Tensor) -> Tensor:
    """Roll each sentence b of time-major ``x`` (T, B, K) forward in time by ``offsets[b]``."""
    length = x.size(0)
    steps = torch.arange(length, device=x.device).unsqueeze(1)  # shape: (T, 1)
    index = (steps - offsets).remainder_(length)  # shape: (T, B)
    return x.gather(0, index.unsqueeze(-1).expand_as(x))  # shape: (T, B, K)


def _scaled_forward(pot: _Potentials) -> tuple[Tensor, Tensor] | None:
    """Rescaled forward recursion over all T steps, ignoring sentence ends.

    Returns ``q`` (T, B, K), alpha rescaled so each row's max is 1, and ``norm`` (T, B, 1),
    what each step's row was divided by; ``None`` if a row underflowed.
    """
    q = torch.empty_like(pot.ee)  # shape: (T, B, K)
    norm = torch.ones_like(pot.emax)  # shape: (T, B, 1)
    torch.sub(pot.start, pot.start.amax(-1, keepdim=True), out=q[0]).exp2_()
    expt_t = pot.expt.t().contiguous()  # shape: (K, K), [j, i] = 2 ** (trans[i, j] - tmax)
    for t in range(1, q.size(0)):
        p = (q[t - 1].unsqueeze(1) * expt_t).sum(-1).mul_(pot.ee[t])  # shape: (B, K)
        torch.amax(p, -1, keepdim=True, out=norm[t])
        torch.div(p, norm[t], out=q[t])
    return None if bool((norm < _TINY).any()) else (q, norm)


def _log_partition(pot: _Potentials, q: Tensor, norm: Tensor, mask: Tensor) -> Tensor:
    """log Z (B,) in natural-log units from the rescaled forward pass."""
    scale = _log2(norm).add_(pot.emax).add_(pot.tmax).squeeze(-1)  # shape: (T, B)
    scale[0] = pot.start.amax(-1)
    last = (mask.sum(1) - 1).view(1, -1, 1).expand(1, -1, q.size(2))  # shape: (1, B, K)
    end_max = pot.end.amax()
    to_end = (q.gather(0, last).squeeze(0) * (pot.end - end_max).exp2()).sum(-1)  # shape: (B,)
    log2_z = scale.masked_fill_(~mask.t(), 0.0).sum(0) + _log2(to_end) + end_max  # shape: (B,)
    return log2_z / _LOG2E


def _scaled_backward(pot: _Potentials, lengths: Tensor) -> Tensor:
    """Rescaled beta (T, B, K): ``beta[t, b] = log r[t, b] + c[t, b]`` for some ``c``; garbage beyond each sentence."""
    length = pot.ee.size(0)
    offsets = length - lengths  # shape: (B,)
    aligned = bool((offsets == 0).all())
    ee = pot.ee if aligned else _shift(pot.ee, offsets)  # shape: (T, B, K), every sentence ends at T - 1
    r = torch.empty_like(ee)  # shape: (T, B, K)
    r[-1] = (pot.end - pot.end.amax()).exp2_()
    norm = ee.new_empty((ee.size(1), 1))  # shape: (B, 1)
    for t in range(length - 2, -1, -1):
        p = (r[t + 1].mul(ee[t + 1]).unsqueeze(1) * pot.expt).sum(-1)  # shape: (B, K)
        torch.amax(p, -1, keepdim=True, out=norm)
        torch.div(p, norm, out=r[t])
    return r if aligned else _shift(r, -offsets)  # shape: (T, B, K)


def _scaled_gradients(
    grad_out: Tensor, pot: _Potentials, q: Tensor, norm: Tensor, mask: Tensor
) -> tuple[Tensor, Tensor, Tensor, Tensor] | None:
    """Gradients of ``sum(grad_out * log Z)`` w.r.t. emissions, transitions, start and end.

    With ``s[t] = q[t] . r[t]``, the node marginals are ``q[t] * r[t] / s[t]`` and the edge
    marginals are ``q[t-1, i] * expt[i, j] * ee[t, j] * r[t, j] / (norm[t] * s[t])``: the
    unknown scales of alpha and beta cancel. Returns ``None`` if a rescaled value overflowed.
    """
    lengths = mask.sum(1)  # shape: (B,)
    r = _scaled_backward(pot, lengths)  # shape: (T, B, K)
    g = grad_out.detach().to(torch.float64).view(1, -1, 1)  # shape: (1, B, 1)
    qr = q * r  # shape: (T, B, K)
    weight = torch.where(mask.t().unsqueeze(-1), g / qr.sum(-1, keepdim=True), 0.0)  # shape: (T, B, 1)
    node = qr.mul_(weight)  # shape: (T, B, K), grad_out * marginals, 0 beyond each sentence
    last = (lengths - 1).view(1, -1, 1).expand(1, -1, node.size(2))  # shape: (1, B, K)
    grad_end = node.gather(0, last).squeeze(0).sum(0)  # shape: (K,)
    right = r.mul_(pot.ee).mul_(weight.div_(norm))[1:].reshape(-1, q.size(2)).t().contiguous()  # shape: (K, (T-1) B)
    grad_trans = _outer_sum(q[:-1].reshape(-1, q.size(2)).t(), right).mul_(pot.expt)  # shape: (K, K)
    if not (bool(weight.isfinite().all()) and bool(grad_trans.isfinite().all())):
        return None
    return node.transpose(0, 1), grad_trans, node[0].sum(0), grad_end


def _outer_sum(left: Tensor, right: Tensor) -> Tensor:
    """``left @ right.t()`` for (K, N) inputs, as K matrix-vector products.

    A K x N x K ``torch.mm``/``bmm`` goes to MKL gemm, which enters the OpenMP pool even at
    this size and stalls for a scheduler tick when another process holds the other core;
    MKL gemv stays on the calling thread.
    """
    out = left.new_empty((right.size(0), left.size(0)))  # shape: (K, K), [j, i]
    for j in range(right.size(0)):
        torch.mv(left, right[j], out=out[j])
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
    """Posterior marginals (B, T, K) in log space; beta comes from the alpha recursion run backwards in time."""
    lengths = mask.sum(1)  # shape: (B,)
    emissions = emissions.masked_fill(~mask.unsqueeze(-1), 0.0)  # shape: (B, T, K)
    alphas = _log_alphas(emissions, trans, start)  # shape: (B, T, K)
    offsets = emissions.size(1) - lengths  # shape: (B,)
    flipped = _shift(emissions.transpose(0, 1), offsets).flip(0).transpose(0, 1)  # shape: (B, T, K)
    rev = _log_alphas(flipped, trans.t(), end).transpose(0, 1).flip(0)  # shape: (T, B, K), beta + emissions
    rev = _shift(rev, -offsets).transpose(0, 1)  # shape: (B, T, K), left-aligned
    last = (lengths - 1).view(-1, 1, 1).expand(-1, 1, alphas.size(2))  # shape: (B, 1, K)
    log_z = torch.logsumexp(alphas.gather(1, last) + end, dim=-1, keepdim=True)  # shape: (B, 1, 1)
    marginals = (alphas + rev - emissions - log_z).exp()  # shape: (B, T, K)
    return marginals.masked_fill(~mask.unsqueeze(-1), 0.0)


class _LogPartition(torch.autograd.Function):
    """log Z(x) with gradients from one forward-backward pass (Sutton & McCallum 2012, section 4.1)."""

    @staticmethod
    def forward(  # type: ignore[override]
        ctx: FunctionCtx, emissions: Tensor, trans: Tensor, start: Tensor, end: Tensor, mask: Tensor
    ) -> Tensor:
        ctx.save_for_backward(emissions, trans, start, end, mask)
        pot = _potentials(emissions, trans, start, end, mask)
        scaled = _scaled_forward(pot)
        log_z = None if scaled is None else _log_partition(pot, *scaled, mask)  # shape: (B,)
        if log_z is None or not bool(log_z.isfinite().all()):
            ctx.scaled = None
            exact = [x.detach().to(torch.float64) for x in (emissions, trans, start, end)]
            return _log_partition_reference(*exact, mask).to(emissions.dtype)
        ctx.scaled = (pot, *scaled)
        return log_z.to(emissions.dtype)

    @staticmethod
    @once_differentiable
    def backward(ctx: FunctionCtx, grad_out: Tensor) -> tuple[Tensor | None, ...]:  # type: ignore[override]
        emissions, trans, start, end, mask = ctx.saved_tensors
        grads = None if ctx.scaled is None else _scaled_gradients(grad_out, *ctx.scaled, mask)
        ctx.scaled = None
        if grads is None:
            inputs = [x.detach().to(torch.float64).requires_grad_() for x in (emissions, trans, start, end)]
            with torch.enable_grad():
                log_z = _log_partition_reference(*inputs, mask)
                grads = torch.autograd.grad(log_z, inputs, grad_out.to(torch.float64))
        dtypes = (emissions.dtype, trans.dtype, start.dtype, end.dtype)
        return (*(g.to(d) for g, d in zip(grads, dtypes)), None)


def _marginals(emissions: Tensor, trans: Tensor, start: Tensor, end: Tensor, mask: Tensor) -> Tensor:
    """Posterior marginals (B, T, K), 0 beyond each sentence, from the rescaled forward-backward pass."""
    pot = _potentials(emissions, trans, start, end, mask)
    scaled = _scaled_forward(pot)
    if scaled is not None:
        qr = scaled[0].mul_(_scaled_backward(pot, mask.sum(1)))  # shape: (T, B, K)
        node = torch.where(mask.t().unsqueeze(-1), qr / qr.sum(-1, keepdim=True), 0.0)  # shape: (T, B, K)
        if bool(node.isfinite().all()):
            return node.transpose(0, 1).to(emissions.dtype, memory_format=torch.contiguous_format)
    exact = [x.detach().to(torch.float64) for x in (emissions, trans, start, end)]
    return _marginals_reference(*exact, mask).to(emissions.dtype)  # shape: (B, T, K)


def _viterbi(emissions: Tensor, trans: Tensor, start: Tensor, end: Tensor, mask: Tensor) -> Tensor:
    """Best tag path (B, T) by max-sum dynamic programming (Viterbi 1967), 0 beyond each sentence.

    The time loop keeps only the max scores; each back-pointer is recomputed along the best
    path during the backtrace. (``torch.max`` with indices and ``torch.mm`` multithread even on
    tiny inputs and stall for milliseconds when another process holds the other core.)
    """
    batch, length, num_tags = emissions.shape
    dtype = torch.promote_types(emissions.dtype, trans.dtype)
    emit = emissions.new_empty((length, batch, num_tags), dtype=dtype)  # shape: (T, B, K)
    emit.copy_(emissions.transpose(0, 1))
    trans_t = trans.t().to(dtype, memory_format=torch.contiguous_format)  # shape: (K, K), [j, i] = trans[i, j]
    scores = torch.empty_like(emit)  # shape: (T, B, K)
    paths = emit.new_empty((batch, num_tags, num_tags))  # shape: (B, K, K), [b, j, i]: best via i to j
    torch.add(start, emit[0], out=scores[0])
    for t in range(1, length):
        torch.amax(torch.add(scores[t - 1].unsqueeze(1), trans_t, out=paths), dim=-1, out=scores[t])
        scores[t] += emit[t]
    lengths = mask.sum(1)  # shape: (B,)
    last = (lengths - 1).view(1, -1, 1).expand(1, -1, num_tags)  # shape: (1, B, K)
    path = torch.empty((length, batch, 1), dtype=torch.long, device=emissions.device)  # shape: (T, B, 1)
    torch.argmax(scores.gather(0, last).squeeze(0) + end, dim=-1, keepdim=True, out=path[-1])
    beyond = None if bool((lengths == length).all()) else ~mask.t().unsqueeze(-1)  # shape: (T, B, 1)
    for t in range(length - 1, 0, -1):
        into = trans_t.index_select(0, path[t].view(-1)).add_(scores[t - 1])  # shape: (B, K)
        if beyond is None:
            torch.argmax(into, dim=-1, keepdim=True, out=path[t - 1])
        else:  # a sentence that ends before t keeps its last tag until its end
            torch.where(beyond[t], path[t], into.argmax(-1, keepdim=True), out=path[t - 1])
    return path.squeeze(-1).t().mul(mask)  # shape: (B, T)


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
        if isinstance(num_tags, bool) or not isinstance(num_tags, int) or num_tags < 1:
            raise ValueError(f"num_tags must be a positive int, got {num_tags!r}")
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

    def log_likelihood(self, emissions: Tensor, tags: Tensor, mask: Tensor) -> Tensor:
        """log p(tags | emissions) for each sentence, shape (B,)."""
        self._validate(emissions, mask, tags)
        trans, start, end = self._scores()
        log_z = _LogPartition.apply(emissions, trans, start, end, mask)  # shape: (B,)
        return _gold_score(emissions, tags, mask, trans, start, end) - log_z

    def log_partition(self, emissions: Tensor, mask: Tensor) -> Tensor:
        """log Z, the log-sum of the scores of all tag sequences, shape (B,)."""
        self._validate(emissions, mask)
        return _LogPartition.apply(emissions, *self._scores(), mask)

    def decode(self, emissions: Tensor, mask: Tensor) -> Tensor:
        """Viterbi best tag sequences (B, T), 0 beyond each sentence."""
        self._validate(emissions, mask)
        with torch.no_grad():
            return _viterbi(emissions.detach(), *self._scores(), mask)

    def marginals(self, emissions: Tensor, mask: Tensor) -> Tensor:
        """Posterior marginals p(y_t = k | x), shape (B, T, K), 0 beyond each sentence; not differentiable."""
        self._validate(emissions, mask)
        with torch.no_grad():
            return _marginals(emissions, *self._scores(), mask)

    def _validate(self, emissions: Tensor, mask: Tensor, tags: Tensor | None = None) -> None:
        """Raise ValueError, saying what was expected and what arrived, if the inputs are malformed."""
        if not isinstance(emissions, Tensor) or emissions.dim() != 3 or not emissions.is_floating_point():
            got = f"{tuple(emissions.shape)} {emissions.dtype}" if isinstance(emissions, Tensor) else type(emissions)
            raise ValueError(f"emissions must be a float tensor (batch, length, num_tags), got {got}")
        batch, length, num_tags = emissions.shape
        if num_tags != self.num_tags or batch == 0 or length == 0:
            raise ValueError(
                f"emissions must have shape (batch>0, length>0, num_tags={self.num_tags}), got {tuple(emissions.shape)}"
            )
        if not isinstance(mask, Tensor) or mask.dtype != torch.bool or mask.shape != (batch, length):
            got = f"{tuple(mask.shape)} {mask.dtype}" if isinstance(mask, Tensor) else type(mask)
            raise ValueError(f"mask must be a bool tensor of shape {(batch, length)}, got {got}")
        if not bool(mask[:, 0].all()):
            bad = (~mask[:, 0]).nonzero().flatten().tolist()
            raise ValueError(f"mask[:, 0] must be all True (no empty sentences), but sentences {bad} start masked")
        if bool((mask[:, 1:] > mask[:, :-1]).any()):
            bad = (mask[:, 1:] > mask[:, :-1]).any(1).nonzero().flatten().tolist()
            raise ValueError(f"mask rows must be left-aligned prefixes (True then False), but rows {bad} are not")
        if tags is None:
            return
        if not isinstance(tags, Tensor) or tags.shape != (batch, length) or tags.is_floating_point() or (
            tags.dtype == torch.bool or tags.is_complex()
        ):
            got = f"{tuple(tags.shape)} {tags.dtype}" if isinstance(tags, Tensor) else type(tags)
            raise ValueError(f"tags must be an integer tensor of shape {(batch, length)}, got {got}")
        low, high = torch.aminmax(tags.masked_fill(~mask, 0))
        if low < 0 or high >= num_tags:
            raise ValueError(
                f"tags at unmasked positions must be in [0, {num_tags}), got values from {int(low)} to {int(high)}"
            )


def _penalty(name: str, allowed: Tensor | None, shape: tuple[int, ...]) -> Tensor:
    """Additive penalty buffer: 0 where ``allowed`` is True, ``DISALLOWED`` where it is False."""
    if allowed is None:
        return torch.zeros(shape)
    if not isinstance(allowed, Tensor) or allowed.dtype != torch.bool or tuple(allowed.shape) != shape:
        got = f"{tuple(allowed.shape)} {allowed.dtype}" if isinstance(allowed, Tensor) else type(allowed)
        raise ValueError(f"{name} must be a bool tensor of shape {shape}, got {got}")
    return torch.zeros(shape).masked_fill_(~allowed.cpu(), DISALLOWED)


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
