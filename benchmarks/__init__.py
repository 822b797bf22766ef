"""Speed, memory and side-by-side benchmarks of seqlab, each a module that prints JSON.

Run one from the repository root as ``python -m benchmarks.NAME --help``; see ``benchmarks/README.md`` for what
each measures and where its recorded results are. Not installed with seqlab.
"""
