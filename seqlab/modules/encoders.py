"""Sentence encoders: contextual token vectors from token representations."""
from __future__ import annotations

import torch
from torch import nn

from seqlab.modules.rnn import BiLSTM


class BiLSTMEncoder(nn.Module):
    """A (stacked) bidirectional LSTM over each sentence, blind to padding (Lample et al. 2016 §2.1)."""

    def __init__(self, input_dim: int, hidden: int, layers: int = 1, dropout: float = 0.0) -> None:
        super().__init__()
        self.lstm = BiLSTM(input_dim, hidden, layers, dropout)  # dropout: between stacked layers
        self.input_dim = input_dim
        self.output_dim = 2 * hidden

    def forward(self, inputs: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
        if inputs.shape[-1] != self.input_dim:
            raise ValueError(f"encoder input dim must match {self.input_dim}, but got {inputs.shape[-1]}")
        outputs, _ = self.lstm(inputs, mask.sum(dim=1))  # shape: (B, T, 2 * hidden)
        return outputs
