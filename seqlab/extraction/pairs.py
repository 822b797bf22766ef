"""The span pairs an extraction model classifies: every ordered pair of distinct spans of a tagged sentence, as a
relation example with the spans' predicted types."""
from __future__ import annotations

from seqlab.data.semeval import RelationExample
from seqlab.tagging.document import Sentence


def pair_examples(sentence: Sentence, ident: str = "") -> list[tuple[int, int, RelationExample]]:
    """(head, tail, example) for every ordered pair of distinct spans of ``sentence`` (indices into its spans)."""
    spans, tokens = sentence.spans, tuple(sentence.tokens)
    return [(h, t, RelationExample(f"{ident}/{h}/{t}", tokens, (a.token_start, a.token_end - 1),
                                   (b.token_start, b.token_end - 1), types=(a.label, b.label)))
            for h, a in enumerate(spans) for t, b in enumerate(spans) if h != t]
