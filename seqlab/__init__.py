"""seqlab: sequence labelling with BiLSTM-CRF and windowed taggers."""

__version__ = "0.1.0"
