"""The fault sweep: hundreds of bad inputs and faults sent through seqlab's command line, each outcome judged.

Run it from the repository root as ``python -m probes.sweep``; ``probes/README.md`` says what it prints and
where its summary is recorded. Not installed with seqlab.
"""
