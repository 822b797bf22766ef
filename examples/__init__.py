"""Reproductions of published experiments (Turian, Ratinov & Bengio 2010) on top of seqlab and ``features/``.

Each script is a module, run from the repository root, e.g. ``python -m examples.crfsuite_chunker --help``;
:mod:`examples.baselines` holds what the linear baselines share. Not installed with seqlab.
"""
