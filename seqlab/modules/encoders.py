"""Sentence encoders: contextual token vectors from token representations."""
from __future__ import annotations

import torch
from torch import nn
from torch.nn.utils.rnn import pack_padded_sequence, pad_packed_sequence


class BiLSTMEncoder(nn.Module):
    """A (stacked) bidirectional LSTM over each sentence, skipping padding (Lample et al. 2016 §2.1)."""

    def __init__(self, input_dim: int, hidden: int, layers: int = 1) -> None:
        super().__init__()
        self.lstm = nn.LSTM(input_dim, hidden, num_layers=layers, batch_first=True, bidirectional=True)
        self.input_dim = input_dim
        self.output_dim = 2 * hidden

    def forward(self, inputs: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
        if inputs.shape[-1] != self.input_dim:
            raise ValueError(f"encoder input dim must match {self.input_dim}, but got {inputs.shape[-1]}")
        lengths = mask.sum(dim=1).cpu()  # shape: (B,)
        packed = pack_padded_sequence(inputs, lengths, batch_first=True, enforce_sorted=False)
        output, _ = self.lstm(packed)
        padded, _ = pad_packed_sequence(output, batch_first=True, total_length=inputs.shape[1])
        return padded  # shape: (B, T, 2 * hidden)
