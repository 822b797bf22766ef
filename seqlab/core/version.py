"""seqlab's version, on the ground floor so that every layer can name it (model files and exports record it)."""

__version__ = "0.1.0"
