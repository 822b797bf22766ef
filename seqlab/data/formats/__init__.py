"""Readers and writers of annotation formats beyond CoNLL columns, one module per format.

Character-offset formats (:mod:`.brat` standoff, :mod:`.jsonl` spans as doccano, spaCy and Prodigy write
them, :mod:`.labelstudio` JSON exports) go through one alignment to tokens (:mod:`.align`); Hugging Face-style
token JSONL (:mod:`.hf`) is read as it stands. :mod:`.registry` names them for ``data.format`` and tells them
apart by extension and content.
"""
