"""Fast tagging with the windowed taggers: the first layer that reads the window, as table look-ups.

Turian, Bergstra & Bengio (2009, sections 2-3): a token's label is predicted from the window
``x = [t_-3; ...; t_+3]`` of its neighbours' vectors, and the first layer that reads the window
(the first ``W``, or ``O`` in I-O and I-T-O) computes ``q(x) = b + W x + sqrt(sum_j (V_j x)^2)``.
Everything under the square root and the nonlinearity is linear in ``x``:
``W x = sum_p W_p t_p`` and ``V_j x = sum_p V_jp t_p``. Each token vector ``t_p`` is a function
of its *type* (a word with its POS tag: the scaled embedding, the label frequencies, the
orthographic one-hots and the POS one-hot; then the token layers ``T``), or the padding vector.
So at tagging time ``[W_p; V_p] t`` is computed once per type and window position, and each
token sums ``size`` rows of that table (an embedding bag) before the filters' projections are
squared. The table covers every type of the data set at once when it fits in ``max_table_bytes``
(CoNLL-2000 test: 8,723 types for 47,377 tokens), else the types of each batch. The result is
what :meth:`seqlab.models.tagger.Tagger.emissions` computes in eval mode, up to float rounding,
with about types / tokens of the first layer's work; the later layers run per token as before.

The tables are built from the weights at the time of the call (nothing is cached across
calls, so there is nothing to invalidate when the weights change); training is untouched.
"""
from __future__ import annotations

import torch
from torch import nn
from torch.nn import functional as F

from features.quadratic import QuadraticLayer
from seqlab.data.batching import Batch, Encoded
from seqlab.modules.window import WindowEncoder


def type_inputs(embedder: nn.Module, data: Encoded, char_table: torch.Tensor | None = None,
                device: torch.device | None = None) -> torch.Tensor:
    """The embedder's vector of every type of ``data``, shape (n_types, D); row 0 is the padding type.

    Every input of :class:`seqlab.modules.embedder.TokenEmbedder` (word id, capitalization id,
    spelling vector, fixed and discrete features) is a function of the token's type, so the
    embedder runs once over the types as one "sentence" of ``n_types`` positions.
    """
    n_types = int(data.type_char_lengths.shape[0])  # one entry per type, the padding type included
    flat = data.types.reshape(-1)  # shape: (N * T_max,)
    per_type = lambda ids: torch.zeros(n_types, dtype=ids.dtype).scatter_(0, flat, ids.reshape(-1))  # noqa: E731
    batch = Batch(
        words=per_type(data.words).unsqueeze(0),  # shape: (1, n_types)
        caps=per_type(data.caps).unsqueeze(0),  # shape: (1, n_types)
        mask=torch.ones(1, n_types, dtype=torch.bool),
        chars=data.type_chars, char_lengths=data.type_char_lengths,
        type_index=torch.arange(n_types).unsqueeze(0),  # shape: (1, n_types)
        features=None if data.type_features is None else data.type_features.unsqueeze(0),  # shape: (1, n_types, F)
        tags=None, indices=torch.zeros(1, dtype=torch.long),
        char_vectors=None if char_table is None else char_table.unsqueeze(0),  # shape: (1, n_types, C_dim)
        feature_ids=None if data.type_feature_ids is None else data.type_feature_ids.unsqueeze(0),
    ).to(device or torch.device("cpu"))
    return embedder(batch)[0]  # shape: (n_types, D)


class WindowTables:
    """Emission scores of a windowed :class:`~seqlab.models.tagger.Tagger` for batches of one data set.

    Built once per data set (``data``, as :func:`seqlab.data.batching.encode` made it): the
    token vectors of its types go through the token layers once, and the first window-reading
    layer's table is built for all types (or, past ``max_table_bytes``, per batch in
    :meth:`emissions`). The model must be in eval mode (dropout off), as in :func:`seqlab.tagging.predict.predict`.
    """

    def __init__(self, model: nn.Module, data: Encoded, char_table: torch.Tensor | None = None, *,
                 max_table_bytes: int = 1 << 30, workspace: Workspace | None = None) -> None:
        encoder = model.encoder
        if not isinstance(encoder, WindowEncoder):
            raise TypeError(f"WindowTables needs a tagger with a WindowEncoder, but got {type(encoder).__name__}")
        if model.training:
            raise ValueError("WindowTables computes eval-mode emissions (no dropout); call model.eval() first")
        self.data, self.size, self.workspace = data, encoder.size, workspace
        inputs = type_inputs(model.embedder, data, char_table, encoder.pad.device)  # shape: (n_types, D)
        both = torch.cat([inputs, encoder.pad.unsqueeze(0)])  # shape: (n_types + 1, D), the padding vector last
        self.tokens = encoder.token_layers(both)  # shape: (n_types + 1, H), the padding goes through T like a token
        self.pad_index = int(inputs.shape[0])
        if not all(isinstance(layer[-1], nn.Softsign) for layer in encoder.window_layers):
            raise TypeError("WindowTables expects window layers softsign(q(x)) (features.quadratic.softsign_layer)")
        later = [layer[0] for layer in encoder.window_layers] + [model.projection]  # the layers reading the window
        self.first = FusedLayer(later[0], per_position=(self.size, int(self.tokens.shape[1])))
        self.rest = [FusedLayer(layer) for layer in later[1:]]  # each after a softsign
        fits = self.tokens.shape[0] * self.first.weight.shape[1] * self.tokens.element_size() <= max_table_bytes
        self.table = self._table(self.tokens) if fits else None  # shape: (n_types + 1, size * units')

    def _table(self, tokens: torch.Tensor) -> torch.Tensor:
        """Row r, block p: ``[W_p; V_p] t_r``, plus the bias in block 0 (each token sums one block-0 row)."""
        shape = (int(tokens.shape[0]), int(self.first.weight.shape[1]))  # (R, size * units')
        out = self.workspace.take(shape, tokens) if self.workspace is not None else None
        table = torch.mm(tokens, self.first.weight, out=out)  # shape: (R, size * units')
        table[:, : self.first.bias.shape[0]] += self.first.bias
        return table

    def window_ids(self, indices: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
        """Row of :attr:`tokens` for each position of each token's window, shape (B, T, size)."""
        width = int(mask.shape[1])
        types = self.data.types[indices, :width].to(mask.device)  # shape: (B, T)
        ids = torch.where(mask, types, self.pad_index)  # shape: (B, T), beyond the sentence: padding
        half = self.size // 2
        padded = F.pad(ids, (half, half), value=self.pad_index)  # shape: (B, T + 2 * half)
        return padded.unfold(1, self.size, 1)  # shape: (B, T, size)

    def emissions(self, indices: torch.Tensor, mask: torch.Tensor, chunk: int = 2048) -> torch.Tensor:
        """Label scores, shape (B, T, K), of the sentences ``indices`` of the data set padded as ``mask``
        (B, T): what ``model.emissions(batch)`` computes in eval mode for the batch of those sentences.

        Only the real tokens are scored (0 beyond each sentence), ``chunk`` tokens at a time so that
        the intermediate activations stay in the CPU's cache.
        """
        windows = self.window_ids(indices, mask)[mask]  # shape: (N, size), the N real tokens
        if self.table is not None:
            table, rows = self.table, windows  # shape: (n_types + 1, size * units')
        else:
            unique, rows = torch.unique(windows, return_inverse=True)  # U rows of the table this batch needs
            table = self._table(self.tokens[unique])  # shape: (U, size * units')
        rows = rows * self.size + torch.arange(self.size, device=rows.device)  # shape: (N, size)
        blocks = table.view(-1, table.shape[1] // self.size)  # shape: (R * size, units'), row r * size + p
        scores = torch.cat([self._score(blocks, part) for part in rows.split(chunk)])  # shape: (N, K)
        out = scores.new_zeros(*mask.shape, scores.shape[1])  # shape: (B, T, K)
        out[mask] = scores
        return out

    def _score(self, blocks: torch.Tensor, rows: torch.Tensor) -> torch.Tensor:
        """Label scores of tokens whose windows are the table ``rows`` (n, size); shape (n, K)."""
        out = self.first.finish(F.embedding_bag(rows, blocks, mode="sum"))  # shape: (n, units)
        for layer in self.rest:
            out = layer(out.div_(out.abs().add_(1.0)))  # softsign in place; shape: (n, units of the layer)
        return out


class Workspace:
    """Memory for the tables that a caller keeps between :class:`WindowTables`, so that a tagging
    service (``seqlab tag``, or :func:`seqlab.tagging.predict.predict` called repeatedly) writes each new
    table into pages it already holds: a CoNLL-2000 test table is ~300 MB, and touching that much
    fresh memory costs about a tenth of a second. One table at a time: a table built in a workspace
    is overwritten by the next one built in it. Holds the largest table asked for until dropped.
    """

    def __init__(self) -> None:
        self.buffer: torch.Tensor | None = None

    def take(self, shape: tuple[int, int], like: torch.Tensor) -> torch.Tensor:
        """A (rows, cols) tensor of ``like``'s dtype and device, backed by the workspace (contents undefined)."""
        size = shape[0] * shape[1]
        buffer = self.buffer
        if buffer is None or buffer.numel() < size or buffer.dtype != like.dtype or buffer.device != like.device:
            self.buffer = buffer = None  # let the old buffer go before the new one is allocated
            self.buffer = buffer = torch.empty(size, dtype=like.dtype, device=like.device)
        return buffer[:size].view(shape)


class FusedLayer:
    """A :class:`QuadraticLayer` (or ``nn.Linear``) as one matrix product for inference.

    The product gives ``[W x + b; V x]`` with the J filter projections laid out filter-major
    (``J`` blocks of ``units``), so the energy ``sum_j (V_j x)^2`` adds whole contiguous
    blocks; the row count units' is ``units * (1 + J)`` rounded up to a multiple of 8 with zero
    rows (whole AVX2 vectors: faster products). With ``per_position=(size, dim)``, for a layer
    over a window of ``size`` vectors of ``dim``, :attr:`weight` is ``(dim, size * units')``:
    block ``p`` of the columns maps the window's vector ``p``.
    """

    def __init__(self, layer: nn.Module, per_position: tuple[int, int] | None = None) -> None:
        if isinstance(layer, QuadraticLayer):
            linear, quadratic = layer.linear, layer.filter_weights()  # shapes: (units, in), (units, J, in)
            self.filters, self.sqrt, self.eps = layer.filters, layer.sqrt, layer.eps
        elif isinstance(layer, nn.Linear):
            linear, quadratic, self.filters, self.sqrt, self.eps = layer, None, 0, False, 0.0
        else:
            raise TypeError(f"a window tagger's layer must be a QuadraticLayer or nn.Linear, not {type(layer).__name__}")
        self.units = int(linear.out_features)
        weight = linear.weight  # shape: (units, in)
        if quadratic is not None:
            weight = torch.cat([weight, quadratic.transpose(0, 1).reshape(-1, weight.shape[1])])  # (units * (1 + J), in)
        weight = F.pad(weight, (0, 0, 0, -weight.shape[0] % 8))  # shape: (units', in)
        bias = linear.bias if linear.bias is not None else torch.zeros(self.units, device=weight.device)
        self.bias = F.pad(bias, (0, weight.shape[0] - self.units))  # shape: (units',)
        if per_position is None:
            self.weight = weight.t()  # shape: (in, units')
            return
        size, dim = per_position
        if weight.shape[1] != size * dim:
            raise ValueError(f"the window-reading layer expects {weight.shape[1]} inputs, not {size} x {dim}")
        self.weight = weight.view(-1, size, dim).permute(2, 1, 0).reshape(dim, -1)  # shape: (dim, size * units')

    def __call__(self, x: torch.Tensor) -> torch.Tensor:
        return self.finish(torch.addmm(self.bias, x, self.weight))  # shape: (N, units)

    def finish(self, summed: torch.Tensor) -> torch.Tensor:
        """``q`` from ``[W x + b; V x]`` (N, units'), as ``QuadraticLayer.forward`` computes it."""
        out = summed[:, : self.units]  # shape: (N, units)
        if not self.filters:
            return out
        energy = summed[:, self.units : 2 * self.units].square()  # shape: (N, units), filter 1's (V_1 x)^2
        for j in range(2, self.filters + 1):  # whole blocks: no (N, units, J) temporary
            projection = summed[:, j * self.units : (j + 1) * self.units]  # shape: (N, units), V_j x
            energy.addcmul_(projection, projection)
        if self.sqrt:
            energy.add_(self.eps).sqrt_()
        return energy.add_(out)  # shape: (N, units)
