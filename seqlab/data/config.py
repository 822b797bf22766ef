"""The ``data`` section of a tagger's config: which files to read, their layout and their labels.

Here, on the data floor, because the readers (:mod:`seqlab.data.dataset`) need it; the tagger's whole config
(:mod:`seqlab.tagging.config`) holds one. ``data.tag_scheme: token`` makes a token-label task (POS tagging);
``data.format`` picks the reader: ``conll`` columns, ``conllu`` (Universal Dependencies), one of
:mod:`seqlab.data.formats` (``brat``, ``jsonl``, ``labelstudio``, ``hf``, ``seqlab``), or ``auto`` by the file's
extension and content (:func:`seqlab.data.formats.registry.detect_format`).
"""
from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from seqlab.core.errors import ConfigError, SeqlabError
from seqlab.core.strict import choice, count, seed
from seqlab.data.conll import SKIP, named_columns
from seqlab.data.conllu import CONLLU_FIELDS
from seqlab.data.encoding import check_encoding, check_language
from seqlab.data.formats.offsets import UNITS as OFFSET_UNITS
from seqlab.data.formats.registry import LAYOUT, READ_FORMATS, SPAN_FORMATS, WORD_NER_FORMATS, detect_format
from seqlab.data.label_map import check_data_label_map
from seqlab.data.labelling import SCHEME_NAMES, Labelling, labelling

FORMATS = ("auto", *READ_FORMATS)
#: The columns, word column and tag column of each format when the config does not name them.
DEFAULT_LAYOUT = {
    "conll": (("word", "pos", "chunk", "ner"), "word", "ner"),
    "conllu": (CONLLU_FIELDS, "form", "upos"),
    **{name: LAYOUT for name in WORD_NER_FORMATS},  # brat, jsonl, labelstudio, hf, seqlab: word and ner
}


def file_format(path: str | Path, configured: str = "auto") -> str:
    """The reader for ``path``: ``configured``, or with ``auto`` the format detected by extension and content
    (``conllu`` for a ``.conllu`` file, ``brat`` for a folder of ``.ann`` files, a JSON format for ``.jsonl`` and
    ``.json``, else ``conll``: :func:`seqlab.data.formats.registry.detect_format`)."""
    if configured != "auto":
        return configured
    return detect_format(path)


@dataclass(frozen=True)
class DataConfig:
    """Which files to read and how their columns and labels are laid out."""

    train: str
    dev: str | None = None
    test: str | None = None
    dev_sample: int = 0  # no dev file: hold out this many random training sentences (Turian et al. 2009 §5)
    dev_seed: int = 0  # seed of that sample, apart from train.seed so every model sees the same split
    format: str = "auto"  # conll, conllu, brat, jsonl, labelstudio, hf, or auto: by extension and content
    columns: tuple[str, ...] | None = None  # the files' columns, in order; _ skips one (null: the format's)
    word_column: str | None = None  # null: word (conll) or form (conllu)
    tag_column: str | None = None  # null: ner (conll) or upos (conllu)
    file_scheme: str | None = None  # scheme of the files' tags (null: iob1; iob2 for span formats; token labels)
    tag_scheme: str = "bilou"  # scheme trained with (Ghaddar & Langlais 2018: BILOU); token: POS-style labels
    limit: int = 0  # > 0: read only the first `limit` sentences of each of train, dev and test (a smoke run)
    label_map: dict[str, str | None] | None = None  # old type -> new type, or null (O) to drop it, as files are read
    language: str = "en"  # ISO 639 code of the text: picks the tokenizer and sentence splitter for raw text
    encoding: str = "utf-8"  # the files' text encoding (latin-1 for the original CoNLL-2002 files)
    offsets: str = "auto"  # what span JSONL / Label Studio offsets count: chars, utf8 bytes, utf16 units, or auto

    def __post_init__(self) -> None:
        choice("data.format", self.format, FORMATS)
        choice("data.offsets", self.offsets, OFFSET_UNITS)
        try:
            check_language(self.language, "data.language")
            object.__setattr__(self, "encoding", check_encoding(self.encoding, "data.encoding"))
        except SeqlabError as err:
            raise ConfigError(str(err)) from None
        choice("data.tag_scheme", self.tag_scheme, SCHEME_NAMES)
        object.__setattr__(self, "label_map", check_data_label_map(self.label_map, labelling(self.tag_scheme)))
        if self.file_scheme is not None:
            choice("data.file_scheme", self.file_scheme, SCHEME_NAMES)
        elif file_format(self.train, self.format) in SPAN_FORMATS:  # the scheme the span readers write
            object.__setattr__(self, "file_scheme", labelling(self.tag_scheme).converted_file_scheme)
        try:
            resolved = labelling(self.tag_scheme, self.file_scheme)
        except SeqlabError as err:
            raise ConfigError(str(err)) from None
        object.__setattr__(self, "file_scheme", resolved.file_scheme)
        columns, word, tag = DEFAULT_LAYOUT[file_format(self.train, self.format)]
        for key, default in (("columns", columns), ("word_column", word), ("tag_column", tag)):
            if getattr(self, key) is None:
                object.__setattr__(self, key, default)
        conllu_columns = (CONLLU_FIELDS, LAYOUT[0])  # its fields, or the word and ner an eval file is read by
        if file_format(self.train, self.format) == "conllu" and tuple(self.columns) not in conllu_columns:
            raise ConfigError(f"data.columns: a CoNLL-U file has the columns {list(CONLLU_FIELDS)}; leave "
                              f"data.columns unset, got {list(self.columns)}")
        if file_format(self.train, self.format) in WORD_NER_FORMATS and tuple(self.columns) != LAYOUT[0]:
            raise ConfigError(f"data.columns: a {file_format(self.train, self.format)} file is read as the columns "
                              f"{list(LAYOUT[0])}; leave data.columns unset, got {list(self.columns)}")
        try:
            named = [c for c in named_columns(self.columns, source="data.columns") if c != SKIP]
        except SeqlabError as err:
            raise ConfigError(str(err)) from None
        for key in ("word_column", "tag_column"):
            if getattr(self, key) not in named:
                raise ConfigError(f"data.{key}: {getattr(self, key)!r} is not one of data.columns {list(self.columns)}")
        if (self.dev is None) == (self.dev_sample == 0):
            raise ConfigError("data: give a dev file (data.dev) or a number of training sentences to hold out "
                              f"(data.dev_sample), exactly one; got dev={self.dev!r}, dev_sample={self.dev_sample}")
        if self.limit < 0:
            raise ConfigError(f"data.limit: expected a number of sentences >= 0 (0: all), got {self.limit}")
        if self.dev_sample < 0:
            raise ConfigError(f"data.dev_sample: expected a number of sentences >= 0, got {self.dev_sample}")
        count("data.limit", self.limit, low=0)
        count("data.dev_sample", self.dev_sample, low=0)
        seed("data.dev_seed", self.dev_seed)

    @property
    def labelling(self) -> Labelling:
        """What the labels mean (:mod:`seqlab.data.labelling`)."""
        return labelling(self.tag_scheme, self.file_scheme)
