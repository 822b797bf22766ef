"""What a labelled-data format is to seqlab: one :class:`Format` record, defined in the format's own module and
listed once in :data:`seqlab.data.formats.registry.TABLE`.

A record says how a file of the format is recognised (``detect``), read into sentences (``read``), written from
sentences (``write``, for ``seqlab convert --to``) and how ``seqlab tag`` streams tagged documents in it
(``render``). A format lacks what it cannot do: Label Studio exports are only read, ``inline`` text is only
rendered. This module imports no format, so every format module can define its record here without a cycle.
"""
from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Callable, Iterable, Iterator, Protocol, Sequence

from seqlab.data.encoding import DEFAULT_ENCODING

if TYPE_CHECKING:
    from seqlab.data.conll import ColumnSentence
    from seqlab.data.formats.align import AlignmentReport


class Reader(Protocol):
    """Read the sentences of ``path``: text in ``encoding``, ``columns`` the names of a column file's columns
    (None: the format's own), an offset format's alignment counts into ``report`` (None: logged) and its offsets
    read in the unit ``offsets`` (:mod:`seqlab.data.formats.offsets`; formats without offsets ignore it)."""

    def __call__(self, path: Path, *, encoding: str = DEFAULT_ENCODING, columns: Sequence[str] | None = None,
                 report: "AlignmentReport | None" = None, offsets: str = "auto") -> "Iterator[ColumnSentence]": ...


#: Write sentences (columns ``word`` and ``ner``) to a file or folder atomically; returns how many documents or
#: sentences were written.
Writer = Callable[[Path, "Iterable[ColumnSentence]"], int]
#: One tagged document (:class:`seqlab.tagging.document.Document`) with its input line number as ``seqlab tag``
#: streams it; the flag says the labels are token labels (a POS tagger's) rather than span tags.
Renderer = Callable[[int, Any, bool], str]
#: The opening and closing text a page format writes around its rendered documents, given the page's title, the
#: model's entity types and its language (None: not stated) (HTML: the page head with a colour per type, its
#: ``lang`` and ``dir``, and its end).
Page = Callable[[str, Sequence[str], "str | None"], tuple[str, str]]


@dataclass(frozen=True)
class Format:
    """One format: its ``data.format`` name and what seqlab can do with it (module docstring).

    ``detect`` tells a file (or folder) of the format by its name and first bytes; None leaves the format to
    be named, or, for CoNLL, to read whatever no other format claims. ``spans``: the reader aligns character
    spans to tokens and writes them as IOB2 tags. ``output``: the name ``seqlab tag --format`` gives it (None:
    not one of tag's outputs); tag streams a format that has ``render`` to standard output, and writes one that
    has only ``write`` to ``--output``. ``unit``: what ``write`` counts. ``page``: a format whose rendered
    documents stand inside one page (HTML) gives its opening and closing text."""

    name: str
    detect: Callable[[Path], bool] | None
    read: Reader | None
    write: Writer | None = None
    render: Renderer | None = None
    spans: bool = False
    output: str | None = None
    unit: str = "sentences"
    page: Page | None = None


def offset_reader(read: Callable[..., "Iterator[ColumnSentence]"], *, units: bool = False) -> Reader:
    """The :class:`Reader` of a format read as the columns ``word`` and ``ner`` by ``read(path, encoding=...,
    report=...)`` (the offset formats, whose tokens come from aligning their text); ``units``: ``read`` also takes
    the unit its offsets count (``offsets=``)."""

    def reader(path: Path, *, encoding: str = DEFAULT_ENCODING, columns: Sequence[str] | None = None,
               report: "AlignmentReport | None" = None, offsets: str = "auto") -> "Iterator[ColumnSentence]":
        return read(path, encoding=encoding, report=report, **({"offsets": offsets} if units else {}))

    return reader
