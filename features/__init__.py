"""features: word representations usable from any NLP system.

Imports neither seqlab nor torch at import time.
"""
