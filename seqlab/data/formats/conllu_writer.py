"""CoNLL-U (Universal Dependencies) as a format: read by :func:`seqlab.data.conllu.read_conllu`, written by
``seqlab tag --format conllu`` and ``seqlab convert --to conllu``.

Read, a sentence has the ten CoNLL-U fields and the columns ``word`` (FORM) and ``ner``: ``NER=`` in MISC where
the file's first sentence has it on every word (as seqlab writes span labels), else UPOS, so that a model trained
on CoNLL columns or on spans reads a CoNLL-U file by its ``word`` and ``ner`` columns.

Each sentence gets ``# sent_id`` and ``# text`` comments and one line per token with the ten TAB-separated fields
(:data:`seqlab.data.conllu.CONLLU_FIELDS`); the fields a tagger does not predict are ``_``. Where the label goes:

* token labels (a POS tagger): the ``UPOS`` field, where :func:`seqlab.data.conllu.read_conllu` reads a tagger's
  labels, so the output is a CoNLL-U file that ``seqlab eval`` scores as it stands;
* span labels (NER, chunks): ``NER=<label>`` in the ``MISC`` field (``NER=B-PER``), as UD-style NER corpora
  carry them, ``UPOS`` left ``_``.

``SpaceAfter=No`` in ``MISC`` marks a token followed directly by the next one, so ``# text`` can be rebuilt; the
words of a multiword token (which share its character offsets) follow a range line with its surface form.
"""
from __future__ import annotations

from pathlib import Path
from typing import Any, Iterable, Iterator, Sequence

from seqlab.core.atomic import atomic_open
from seqlab.core.errors import SeqlabError
from seqlab.data.conll import ColumnSentence, as_field
from seqlab.data.conllu import read_conllu
from seqlab.data.encoding import DEFAULT_ENCODING
from seqlab.data.formats.align import TAG, WORD
from seqlab.data.formats.format import Format
from seqlab.data.formats.seqlab_jsonl import sentence_offsets
from seqlab.data.schemes import split_tag

#: The MISC attribute that holds a span label.
NER_KEY = "NER"


def multiword_groups(offsets: Sequence[Sequence[int]]) -> list[tuple[int, int]]:
    """``[first, last]`` word indices of each surface token: the words of a multiword token share its offsets."""
    groups: list[tuple[int, int]] = []
    for k, span in enumerate(offsets):
        if groups and tuple(offsets[groups[-1][0]]) == tuple(span):
            groups[-1] = (groups[-1][0], k)
        else:
            groups.append((k, k))
    return groups


def conllu_sentence(tokens: Sequence[str], labels: Sequence[str], offsets: Sequence[Sequence[int]], text: str,
                    sent_id: str, *, token_labels: bool = False) -> str:
    """One sentence as CoNLL-U lines and the blank line after it; ``offsets`` are the tokens' ``[start, end)``
    in ``text`` (for ``# text`` and ``SpaceAfter=No``); ``token_labels``: the labels go in UPOS, else in MISC.
    Words that share their offsets are one multiword token: a range line (``2-3 du``) with its surface form and
    ``SpaceAfter``, then its words."""
    lines = [f"# sent_id = {sent_id}"]
    if tokens:
        lines.append(f"# text = {as_field(text[offsets[0][0]:offsets[-1][1]])}")
    groups = multiword_groups(offsets)
    for g, (first, last) in enumerate(groups):
        glued = g + 1 < len(groups) and offsets[last][1] == offsets[groups[g + 1][0]][0]
        if last > first:
            surface = as_field(text[offsets[first][0]:offsets[first][1]]) or "_"
            lines.append("\t".join((f"{first + 1}-{last + 1}", surface, *"_" * 7, "SpaceAfter=No" if glued else "_")))
        for k in range(first, last + 1):
            misc = [] if token_labels else [f"{NER_KEY}={labels[k]}"]
            if glued and last == first:
                misc.append("SpaceAfter=No")
            upos = labels[k] if token_labels else "_"
            lines.append("\t".join((str(k + 1), as_field(tokens[k]) or "_", "_", upos, "_", "_", "_", "_", "_",
                                    "|".join(misc) or "_")))
    return "\n".join(lines) + "\n\n"


def ner_label(misc: str) -> str | None:
    """The value of ``NER=`` in a CoNLL-U MISC field, or None."""
    for item in misc.split("|"):
        key, sep, value = item.partition("=")
        if sep and key == NER_KEY:
            return value
    return None


def read_tagged_conllu(path: Path, *, encoding: str = DEFAULT_ENCODING, columns: Sequence[str] | None = None,
                       report: object = None, offsets: str = "auto") -> Iterator[ColumnSentence]:
    """The sentences of a CoNLL-U file with the columns ``word`` and ``ner`` beside its ten (module docstring)."""
    in_misc: bool | None = None
    for sentence in read_conllu(path, encoding):
        if in_misc is None:
            in_misc = all(ner_label(m) is not None for m in sentence["misc"])
        tags = tuple(ner_label(m) or "O" for m in sentence["misc"]) if in_misc else sentence["upos"]
        yield ColumnSentence({**sentence.columns, WORD: sentence["form"], TAG: tags}, path=sentence.path,
                             line=sentence.line, doc_start=sentence.doc_start, extra=sentence.extra)


def _span_tags(tags: Sequence[str]) -> bool:
    try:
        for tag in tags:
            split_tag(tag)
    except SeqlabError:
        return False
    return True


def write_conllu(path: Path, sentences: Iterable[ColumnSentence]) -> int:
    """Write sentences as CoNLL-U, atomically (span tags in MISC ``NER=``, other labels in UPOS); returns how many
    sentences."""
    count = 0
    with atomic_open(path) as out:
        for count, s in enumerate(sentences, start=1):
            offsets = sentence_offsets(s, WORD)
            text = s.extra.get("text") if s.extra.get("offsets") is not None else None
            text = text if isinstance(text, str) else " ".join(s[WORD])
            ident = s.extra.get("sent_id") or f"{s.extra.get('doc_id') or Path(s.path).stem or 'sent'}-{count}"
            out.write(conllu_sentence(s[WORD], s[TAG], offsets, text, str(ident),
                                      token_labels=not _span_tags(s[TAG])))
    return count


def render_conllu(number: int, document: Any, token_labels: bool = False) -> str:
    """``seqlab tag --format conllu``: ``# sent_id = LINE-K`` (the K-th sentence of input line LINE) and
    ``# text``, the labels in UPOS when they are ``token_labels`` (a POS tagger's), else ``NER=label`` in MISC."""
    return "".join(conllu_sentence(s.tokens, s.labels, s.offsets, document.text, f"{number}-{k}",
                                   token_labels=token_labels) for k, s in enumerate(document.sentences, start=1))


FORMAT = Format("conllu", lambda path: path.suffix.lower() == ".conllu", read_tagged_conllu, write_conllu,
                render_conllu, output="conllu")
