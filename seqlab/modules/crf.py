"""Linear-chain conditional random field: the structured decoder of a BiLSTM-CRF tagger.

Speed comes from three choices, all exact:

* The forward (alpha) and backward (beta) recursions run in rescaled probability space
  in float64, so a time step is one ``(B, K) @ (K, K)`` matrix product and three
  elementwise ops instead of a ``(B, K, K)`` logsumexp (Rabiner 1989, section V.A).
* log Z is a custom :class:`torch.autograd.Function` whose backward runs the beta
  recursion once and writes the gradients in closed form (node marginals for the
  emissions, summed edge marginals for the transitions), so no autograd graph is built
  over the time loop.
* Masks are left-aligned prefixes, so the recursions run unmasked and each sentence's
  result is read at its last token; the beta recursion runs on right-aligned copies.

If scores are so extreme (spreads of hundreds of nats within one time step) that the
rescaled recursion underflows, log Z and its gradients fall back to log-space autograd.
"""
from __future__ import annotations

import torch
from torch import Tensor
from torch.autograd.function import FunctionCtx, once_differentiable

DISALLOWED = -10000.0
"""Additive score of a disallowed transition, start tag or end tag."""

_TINY = torch.finfo(torch.float64).tiny


def _time_major(emissions: Tensor, mask: Tensor) -> Tensor:
    """Float64 copy of ``emissions`` as (T, B, K), zero beyond each sentence."""
    batch, length, num_tags = emissions.shape
    emit = emissions.new_empty((length, batch, num_tags), dtype=torch.float64)  # shape: (T, B, K)
    emit.copy_(emissions.detach().transpose(0, 1))
    return emit.masked_fill_(~mask.t().unsqueeze(-1), 0.0)  # shape: (T, B, K)


def _shift(x: Tensor, offsets: Tensor) -> Tensor:
    """Roll each sentence b of time-major ``x`` (T, B, K) forward in time by ``offsets[b]``."""
    length = x.size(0)
    steps = torch.arange(length, device=x.device).unsqueeze(1)  # shape: (T, 1)
    index = (steps - offsets).remainder_(length)  # shape: (T, B)
    return x.gather(0, index.unsqueeze(-1).expand_as(x))  # shape: (T, B, K)


def _scaled_forward(emit: Tensor, trans: Tensor, start: Tensor) -> tuple[Tensor, Tensor, Tensor] | None:
    """Rescaled forward recursion over all T steps, ignoring sentence ends.

    Returns ``q`` (T, B, K), alpha rescaled so each row's max is 1; ``norm`` (T, B, 1),
    what each step was divided by; and ``log_scale`` (T, B), with
    ``alpha[t] = log q[t] + sum(log_scale[: t + 1])``. Returns ``None`` on underflow.
    """
    emax = emit.amax(-1, keepdim=True)  # shape: (T, B, 1)
    ee = (emit - emax).exp_()  # shape: (T, B, K), in [0, 1]
    tmax = trans.amax()
    expt = (trans - tmax).exp_()  # shape: (K, K), in [0, 1]
    q = torch.empty_like(emit)  # shape: (T, B, K)
    norm = torch.ones_like(emax)  # shape: (T, B, 1)
    first = start + emit[0]  # shape: (B, K)
    first_max = first.amax(-1, keepdim=True)  # shape: (B, 1)
    torch.exp(first.sub_(first_max), out=q[0])
    for t in range(1, emit.size(0)):
        p = torch.mm(q[t - 1], expt).mul_(ee[t])  # shape: (B, K)
        torch.amax(p, -1, keepdim=True, out=norm[t])
        torch.div(p, norm[t], out=q[t])
    if bool((norm < _TINY).any()):
        return None
    log_scale = norm.log().add_(emax).add_(tmax)  # shape: (T, B, 1)
    log_scale[0] = first_max
    return q, norm, log_scale.squeeze(-1)


def _scaled_backward(emit: Tensor, trans: Tensor, end: Tensor, lengths: Tensor) -> Tensor:
    """Rescaled beta (T, B, K): ``beta[t, b] = log r[t, b] + c[t, b]`` for some ``c``; garbage beyond each sentence."""
    length = emit.size(0)
    offsets = length - lengths  # shape: (B,)
    aligned = bool((offsets == 0).all())
    ee = (emit - emit.amax(-1, keepdim=True)).exp_()  # shape: (T, B, K)
    ee = ee if aligned else _shift(ee, offsets)  # shape: (T, B, K), every sentence ends at T - 1
    expt_t = (trans - trans.amax()).exp_().t()  # shape: (K, K), [j, i] = exp(trans[i, j] - max)
    r = torch.empty_like(ee)  # shape: (T, B, K)
    r[-1] = (end - end.amax()).exp_()
    norm = ee.new_empty((ee.size(1), 1))  # shape: (B, 1)
    for t in range(length - 2, -1, -1):
        p = torch.mm(r[t + 1] * ee[t + 1], expt_t)  # shape: (B, K)
        torch.amax(p, -1, keepdim=True, out=norm)
        torch.div(p, norm, out=r[t])
    return r if aligned else _shift(r, -offsets)  # shape: (T, B, K)


def _scaled_gradients(
    grad_out: Tensor, emit: Tensor, trans: Tensor, end: Tensor, q: Tensor, norm: Tensor, mask: Tensor
) -> tuple[Tensor, Tensor, Tensor, Tensor]:
    """Gradients of ``sum(grad_out * log Z)`` w.r.t. emissions, transitions, start and end.

    With ``s[t] = q[t] . r[t]``, the node marginals are ``q[t] * r[t] / s[t]`` and the edge
    marginals are ``q[t-1, i] * expt[i, j] * ee[t, j] * r[t, j] / (norm[t] * s[t])``: the
    unknown scales of alpha and beta cancel, so no log-space quantity is needed.
    """
    lengths = mask.sum(1)  # shape: (B,)
    r = _scaled_backward(emit, trans, end, lengths)  # shape: (T, B, K)
    g = grad_out.detach().to(torch.float64).view(1, -1, 1)  # shape: (1, B, 1)
    qr = q * r  # shape: (T, B, K)
    weight = torch.where(mask.t().unsqueeze(-1), g / qr.sum(-1, keepdim=True), 0.0)  # shape: (T, B, 1)
    node = qr.mul_(weight)  # shape: (T, B, K), grad_out * marginals, 0 beyond each sentence
    last = (lengths - 1).view(1, -1, 1).expand(1, -1, node.size(2))  # shape: (1, B, K)
    grad_end = node.gather(0, last).squeeze(0).sum(0)  # shape: (K,)
    expt = (trans - trans.amax()).exp_()  # shape: (K, K)
    right = (emit - emit.amax(-1, keepdim=True)).exp_().mul_(r).mul_(weight / norm)  # shape: (T, B, K)
    num_tags = q.size(2)
    pairs = q[:-1].reshape(-1, num_tags).t() @ right[1:].reshape(-1, num_tags)  # shape: (K, K)
    return node.transpose(0, 1), pairs.mul_(expt), node[0].sum(0), grad_end


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
    rev = _log_alphas(flipped, trans.t(), end).transpose(0, 1).flip(0)  # shape: (T, B, K), beta + emit
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
        emit = _time_major(emissions, mask)  # shape: (T, B, K)
        trans64, start64, end64 = (x.detach().to(torch.float64) for x in (trans, start, end))
        scaled = _scaled_forward(emit, trans64, start64)
        ctx.scaled = None
        if scaled is None:
            exact = _log_partition_reference(emit.transpose(0, 1), trans64, start64, end64, mask)  # shape: (B,)
            return exact.to(emissions.dtype)
        q, norm, log_scale = scaled
        last = (mask.sum(1) - 1).view(1, -1, 1).expand(1, -1, q.size(2))  # shape: (1, B, K)
        q_last = q.gather(0, last).squeeze(0)  # shape: (B, K)
        log_z = torch.logsumexp(q_last.log_().add_(end64), dim=-1)  # shape: (B,)
        log_z += log_scale.masked_fill_(~mask.t(), 0.0).sum(0)
        ctx.scaled = (emit, trans64, end64, q, norm)
        return log_z.to(emissions.dtype)

    @staticmethod
    @once_differentiable
    def backward(ctx: FunctionCtx, grad_out: Tensor) -> tuple[Tensor | None, ...]:  # type: ignore[override]
        emissions, trans, start, end, mask = ctx.saved_tensors
        grads = None if ctx.scaled is None else _scaled_gradients(grad_out, *ctx.scaled, mask)
        ctx.scaled = None
        if grads is None or not all(bool(g.isfinite().all()) for g in grads[1:]):
            inputs = [x.detach().to(torch.float64).requires_grad_() for x in (emissions, trans, start, end)]
            with torch.enable_grad():
                log_z = _log_partition_reference(*inputs, mask)
                grads = torch.autograd.grad(log_z, inputs, grad_out.to(torch.float64))
        dtypes = (emissions.dtype, trans.dtype, start.dtype, end.dtype)
        return (*(g.to(d) for g, d in zip(grads, dtypes)), None)


def _viterbi(emissions: Tensor, trans: Tensor, start: Tensor, end: Tensor, mask: Tensor) -> Tensor:
    """Best tag path (B, T) by max-product dynamic programming, 0 beyond each sentence."""
    batch, length, num_tags = emissions.shape
    dtype = torch.promote_types(emissions.dtype, trans.dtype)
    scores = emissions.new_empty((length, batch, num_tags), dtype=dtype)  # shape: (T, B, K)
    backptr = torch.empty((length, batch, num_tags), dtype=torch.long, device=emissions.device)  # shape: (T, B, K)
    torch.add(start, emissions[:, 0], out=scores[0])
    for t in range(1, length):
        torch.max(scores[t - 1].unsqueeze(2) + trans, dim=1, out=(scores[t], backptr[t]))
        scores[t] += emissions[:, t]
    lengths = mask.sum(1)  # shape: (B,)
    last = (lengths - 1).view(1, -1, 1).expand(1, -1, num_tags)  # shape: (1, B, K)
    path = backptr.new_empty((length, batch, 1))  # shape: (T, B, 1)
    torch.argmax(scores.gather(0, last).squeeze(0) + end, dim=-1, keepdim=True, out=path[-1])
    if not bool((lengths == length).all()):
        stay = torch.arange(num_tags, device=emissions.device)  # shape: (K,)
        backptr = torch.where(mask.t().unsqueeze(-1), backptr, stay)  # shape: (T, B, K)
    for t in range(length - 1, 0, -1):
        torch.gather(backptr[t], 1, path[t], out=path[t - 1])
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
            trans, start, end = (x.to(torch.float64) for x in self._scores())
            emit = _time_major(emissions, mask)  # shape: (T, B, K)
            scaled = _scaled_forward(emit, trans, start)
            if scaled is not None:
                r = _scaled_backward(emit, trans, end, mask.sum(1))  # shape: (T, B, K)
                qr = scaled[0].mul_(r)  # shape: (T, B, K)
                node = torch.where(mask.t().unsqueeze(-1), qr / qr.sum(-1, keepdim=True), 0.0)  # shape: (T, B, K)
                if bool(node.isfinite().all()):
                    return node.transpose(0, 1).to(emissions.dtype)
            node = _marginals_reference(emissions.detach().to(torch.float64), trans, start, end, mask)
            return node.to(emissions.dtype)  # shape: (B, T, K)

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
