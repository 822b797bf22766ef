"""Tagged sentences as CoNLL-U (Universal Dependencies): what ``seqlab tag --format conllu`` writes.

Each sentence gets ``# sent_id`` and ``# text`` comments and one line per token with the ten TAB-separated fields
(:data:`seqlab.data.conllu.CONLLU_FIELDS`); the fields a tagger does not predict are ``_``. Where the label goes:

* token labels (a POS tagger): the ``UPOS`` field, where :func:`seqlab.data.conllu.read_conllu` reads a tagger's
  labels, so the output is a CoNLL-U file that ``seqlab eval`` scores as it stands;
* span labels (NER, chunks): ``NER=<label>`` in the ``MISC`` field (``NER=B-PER``), as UD-style NER corpora
  carry them, ``UPOS`` left ``_``.

``SpaceAfter=No`` in ``MISC`` marks a token followed directly by the next one, so ``# text`` can be rebuilt.
"""
from __future__ import annotations

from typing import Sequence

from seqlab.data.conll import as_field

#: The MISC attribute that holds a span label.
NER_KEY = "NER"


def conllu_sentence(tokens: Sequence[str], labels: Sequence[str], offsets: Sequence[Sequence[int]], text: str,
                    sent_id: str, *, token_labels: bool = False) -> str:
    """One sentence as CoNLL-U lines and the blank line after it; ``offsets`` are the tokens' ``[start, end)``
    in ``text`` (for ``# text`` and ``SpaceAfter=No``); ``token_labels``: the labels go in UPOS, else in MISC."""
    lines = [f"# sent_id = {sent_id}"]
    if tokens:
        lines.append(f"# text = {as_field(text[offsets[0][0]:offsets[-1][1]])}")
    for k, (token, label) in enumerate(zip(tokens, labels)):
        misc = [] if token_labels else [f"{NER_KEY}={label}"]
        if k + 1 < len(tokens) and offsets[k][1] == offsets[k + 1][0]:
            misc.append("SpaceAfter=No")
        upos = label if token_labels else "_"
        lines.append("\t".join((str(k + 1), as_field(token) or "_", "_", upos, "_", "_", "_", "_", "_",
                                "|".join(misc) or "_")))
    return "\n".join(lines) + "\n\n"
