"""Read a config's labelled splits into tokens and labels."""
from __future__ import annotations

import dataclasses
import logging
import random
from dataclasses import dataclass, field
from pathlib import Path
from typing import Iterator, Sequence

from seqlab.core.errors import DataFormatError, SeqlabError
from seqlab.core.paths import resolve_data_path
from seqlab.data.config import DataConfig, file_format
from seqlab.data.conll import DOCSTART, SKIP, ColumnSentence, named_columns, numbered_lines, split_fields
from seqlab.data.formats.registry import LAYOUT, WORD_NER_FORMATS, read_format
from seqlab.data.label_map import mapper
from seqlab.data.schemes import split_tag


@dataclass
class Split:
    """A labelled split: tokens, labels as in the file, and labels in the training scheme."""

    name: str
    path: Path
    tokens: list[list[str]]
    file_tags: list[list[str]]
    tags: list[list[str]]
    columns: dict[str, list[list[str]]] = field(default_factory=dict)  # the other data columns (pos, chunk, ...)
    written: dict[int, list[str]] = field(default_factory=dict)  # sentence -> tokens as written, where spaces cut

    @property
    def num_tokens(self) -> int:
        return sum(len(s) for s in self.tokens)

    def subset(self, rows: Sequence[int], name: str | None = None) -> "Split":
        """The sentences at ``rows`` (in that order), every column and as-written token kept with them."""
        pick = lambda seqs: [seqs[i] for i in rows]  # noqa: E731
        written = {new: self.written[old] for new, old in enumerate(rows) if old in self.written}
        return Split(name or self.name, self.path, pick(self.tokens), pick(self.file_tags), pick(self.tags),
                     {c: pick(v) for c, v in self.columns.items()}, written)


def read_split(config: DataConfig, name: str, path: str | Path | None = None) -> Split:
    """Read split ``name`` (train, dev or test) of ``config``, or an explicit ``path`` in the same layout;
    ``data.limit`` keeps the first sentences of train, dev and test only."""
    if path is None:
        value = getattr(config, name)
        path = resolve_data_path(value, key=f"data.{name}")
    path = Path(path)
    tokens, file_tags, tags = [], [], []
    written: dict[int, list[str]] = {}
    others = [c for c in config.columns if c not in (config.word_column, config.tag_column, SKIP)]
    columns: dict[str, list[list[str]]] = {c: [] for c in others}
    limit = config.limit if name in ("train", "dev", "test") else 0
    labelling = config.labelling
    relabel = mapper(config.label_map, labelling)  # data.label_map: types renamed or dropped
    for sentence in read_sentences(path, config):
        if limit and len(tokens) == limit:
            break
        labels = sentence[config.tag_column]
        for offset, label in enumerate(labels):
            try:
                labelling.check_tag(label)
            except SeqlabError as err:  # an error without a position; add one
                raise DataFormatError(str(path), _token_line(sentence, offset), str(err)) from None
        labels = relabel(labels) if relabel else labels
        as_written = sentence.extra.get("written")  # tokens with spaces at their edges (a TAB file): as written
        if isinstance(as_written, dict) and config.word_column in as_written:
            written[len(tokens)] = list(as_written[config.word_column])
        tokens.append(list(sentence[config.word_column]))
        file_tags.append(list(labels))
        tags.append(labelling.training_labels(labels))
        for c in others:
            columns[c].append(list(sentence[c]))
    if not tokens:
        where = f"data.{name}: {path}" if name in ("train", "dev", "test") else str(path)
        raise SeqlabError(f"{where}: no sentences (the file is empty, or holds only blank and -DOCSTART- lines)")
    if relabel and name in ("train", "eval") and not limit:
        relabel.warn_unmet(f"data.{name}: {path}", refuse=name == "train")
    return Split(name, path, tokens, file_tags, tags, columns, written)


def read_sentences(path: Path, config: DataConfig) -> Iterator[ColumnSentence]:
    """The sentences of ``path`` through the reader of its format (``data.format``, or by extension and content:
    :func:`seqlab.data.formats.registry.read_format`), in ``data.encoding``, a column file's columns named as
    ``data.columns``, an offset format's offsets in the unit ``data.offsets``."""
    return read_format(path, file_format(path, config.format), encoding=config.encoding, columns=config.columns,
                       offsets=config.offsets)


def _token_line(sentence: ColumnSentence, offset: int) -> int:
    """The line of the sentence's ``offset``-th token (CoNLL-U sentences record each word's line)."""
    lines = sentence.extra.get("lines")
    return lines[offset] if isinstance(lines, tuple) else sentence.line + offset


def _is_tag(value: str) -> bool:
    try:
        split_tag(value)
        return True
    except SeqlabError:
        return False


def file_layout(config: DataConfig, path: str | Path, columns: Sequence[str] | None = None,
                fmt: str = "auto") -> DataConfig:
    """``config`` with its format and columns fitted to a labelled file laid out otherwise than the training files.

    ``fmt`` is the file's format (``auto``: detected, :func:`seqlab.data.config.file_format`), whatever the format
    of the training files: a model trained on a brat folder reads a CoNLL file as CoNLL.

    ``columns`` names the file's columns in the model's terms (``config.word_column``, ``config.tag_column``,
    a column the model reads, ``_`` for one to skip). Without it, a file of another width is read as
    ``token ... tag`` (the token first, the tag last), the common layout of public NER files (``token TAG``).
    The width is that of the file's first token line (the reader checks the rest); a file whose last column
    does not hold tags while its first does (``TAG token``) is refused with a message naming the fix.
    """
    path = Path(path)
    model_format, given = file_format(config.train, config.format), file_format(path, fmt)
    if given == "conllu" == model_format:
        return dataclasses.replace(config, format=given)
    if model_format == "conllu" and given != "conll":
        raise SeqlabError(f"{path}: a {given} file, but the model was trained on conllu files (FORM and UPOS); "
                          f"give it a conllu or CoNLL file (seqlab convert {path} OUT --to conllu makes one)")
    if given in WORD_NER_FORMATS or given == "conllu":  # read by the columns word and ner (conllu: FORM, NER=)
        if columns is not None:
            raise SeqlabError(f"{path}: a {given} file has the columns {list(LAYOUT[0])}; columns are named for "
                              "CoNLL files only")
        return dataclasses.replace(config, columns=LAYOUT[0], format=given)
    config = dataclasses.replace(config, format=given)  # conll, whatever the training files were
    if columns is not None:
        return _named_layout(config, path, columns)
    width, number, first = 0, 0, []
    for number, text in numbered_lines(path, config.encoding):
        fields = split_fields(text)
        if fields and fields[0] != DOCSTART:
            width, first = len(fields), fields
            break
    if width in (0, len(config.columns)):
        return config
    if width < 2:
        raise DataFormatError(str(path), number, "expected a token and its tag (at least 2 columns), found 1")
    if not _is_tag(first[-1]) and _is_tag(first[0]):
        example = ",".join((config.tag_column, config.word_column, *("_" for _ in range(width - 2))))
        raise DataFormatError(str(path), number, f"the last column holds {first[-1]!r}, not a tag, and the first "
                                                 f"holds tags; name the columns (e.g. --columns {example})")
    names = (config.word_column, *(f"column{i}" for i in range(2, width)), config.tag_column)
    logging.getLogger("seqlab").info("%s: %d columns, read as token ... tag (the model's files have %d: %s)",
                                     path, width, len(config.columns), " ".join(config.columns))
    return dataclasses.replace(config, columns=names)


def _named_layout(config: DataConfig, path: Path, columns: Sequence[str]) -> DataConfig:
    """``config`` reading ``path``'s columns as ``columns`` (``_``: a column to skip)."""
    names = named_columns(columns, source=f"--columns {','.join(columns)}")
    missing = [c for c in (config.word_column, config.tag_column) if c not in names]
    unknown = sorted({c for c in names if c != SKIP} - set(config.columns))
    if missing or unknown:
        model_names = [c for c in config.columns if c != SKIP]
        raise SeqlabError(f"--columns {','.join(names)}: name each column of {path} with one of the model's "
                          f"column names {model_names} or _ (to skip it); {config.word_column!r} and "
                          f"{config.tag_column!r} are needed" + (f"; unknown: {unknown}" if unknown else ""))
    return dataclasses.replace(config, columns=names)


def hold_out(split: Split, count: int, seed: int) -> tuple[Split, Split]:
    """Split off ``count`` randomly sampled sentences (seeded) as a validation set: (rest, held out).

    Turian, Bergstra & Bengio (2009, section 5) validate on 1,000 random training sentences.
    Both parts keep the file order; the held-out part is named ``dev``.
    """
    n = len(split.tokens)
    if not 0 < count < n:
        raise SeqlabError(f"data.dev_sample: cannot hold out {count} of the {n} sentences of {split.path}")
    chosen = set(random.Random(seed).sample(range(n), count))
    rest = split.subset([i for i in range(n) if i not in chosen])
    return rest, split.subset(sorted(chosen), name="dev")


def read_splits(config: DataConfig) -> dict[str, Split]:
    """The train, dev and (if set) test splits of a config; dev is held out of train when ``dev_sample`` is set."""
    splits = {name: read_split(config, name) for name in ("train", "dev", "test") if getattr(config, name)}
    if config.dev_sample:
        count = config.dev_sample
        if config.limit and count > len(splits["train"].tokens) // 5:  # a smoke run: hold out at most a fifth
            count = max(1, len(splits["train"].tokens) // 5)
            logging.getLogger("seqlab").warning("data.limit %d: holding out %d of the %d training sentences as "
                                                "dev (data.dev_sample is %d)", config.limit, count,
                                                len(splits["train"].tokens), config.dev_sample)
        splits["train"], splits["dev"] = hold_out(splits["train"], count, config.dev_seed)
    return splits
