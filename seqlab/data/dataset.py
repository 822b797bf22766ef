"""Read a config's labelled splits into tokens and labels."""
from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from seqlab.config import DataConfig
from seqlab.data.conll import read_conll
from seqlab.data.schemes import convert, split_tag
from seqlab.errors import DataFormatError
from seqlab.paths import resolve_data_path


@dataclass
class Split:
    """A labelled split: tokens, labels as in the file, and labels in the training scheme."""

    name: str
    path: Path
    tokens: list[list[str]]
    file_tags: list[list[str]]
    tags: list[list[str]]

    @property
    def num_tokens(self) -> int:
        return sum(len(s) for s in self.tokens)


def read_split(config: DataConfig, name: str, path: str | Path | None = None) -> Split:
    """Read split ``name`` (train, dev or test) of ``config``, or an explicit ``path`` in the same layout."""
    if path is None:
        value = getattr(config, name)
        path = resolve_data_path(value, key=f"data.{name}")
    path = Path(path)
    tokens, file_tags, tags = [], [], []
    for sentence in read_conll(path, config.columns):
        labels = sentence[config.tag_column]
        for offset, label in enumerate(labels):
            try:
                split_tag(label)
            except Exception as err:  # a SeqlabError without a position; add one
                raise DataFormatError(str(path), sentence.line + offset, str(err)) from None
        tokens.append(list(sentence[config.word_column]))
        file_tags.append(list(labels))
        tags.append(convert(labels, config.tag_scheme))
    return Split(name, path, tokens, file_tags, tags)
