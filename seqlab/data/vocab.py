"""Vocabularies: words, characters, labels and capitalization classes as integer ids."""
from __future__ import annotations

import functools
import json
import re
from pathlib import Path
from typing import Iterable, Sequence

from features.orthographic import capitalization as capitalization_pattern
from seqlab.core.atomic import atomic_open
from seqlab.core.errors import SeqlabError
from seqlab.core.json_limits import read_json

PAD = "<pad>"
UNK = "<unk>"

# Capitalization classes (Collobert et al. 2011; Ghaddar & Langlais 2018 §4), classified by
# features.orthographic.capitalization. Id 0 is padding; trained models depend on these ids.
CAPS = ("<pad>", "allUpper", "allLower", "upperFirst", "upperNotFirst", "numeric", "noAlphaNum")
_CAPS_ID = {name: i for i, name in enumerate(CAPS)}
_DIGIT = re.compile(r"\d")


@functools.lru_cache(maxsize=1 << 16)  # called once per word type of every batch a stream is tagged in
def capitalization(word: str) -> int:
    """The capitalization class id of a word (1..6; 0 is padding), for the caps embedding."""
    return _CAPS_ID[capitalization_pattern(word)]


def _or(found: int | None, default: int) -> int:
    return default if found is None else found


def normalize_digits(word: str) -> str:
    """Replace every digit with 0 (Lample et al. 2016)."""
    return _DIGIT.sub("0", word)


class Vocab:
    """A string ↔ id table. Id 0 is padding; id 1 is the unknown item when ``unk`` is set."""

    def __init__(self, items: Iterable[str], *, pad: bool = True, unk: bool = True) -> None:
        specials = ([PAD] if pad else []) + ([UNK] if unk else [])
        self.itos: list[str] = list(specials)
        self.stoi: dict[str, int] = {s: i for i, s in enumerate(specials)}
        for item in items:
            if item not in self.stoi:
                self.stoi[item] = len(self.itos)
                self.itos.append(item)
        self.pad = pad
        self.unk = unk

    def __len__(self) -> int:
        return len(self.itos)

    def __contains__(self, item: str) -> bool:
        return item in self.stoi

    def index(self, item: str) -> int:
        """The id of ``item``; the unknown id if absent (an error if the vocabulary has none)."""
        found = self.stoi.get(item)
        if found is not None:
            return found
        if self.unk:
            return self.stoi[UNK]
        raise SeqlabError(f"{item!r} is not in the vocabulary ({len(self)} items, e.g. {self.itos[:5]})")

    def to_dict(self) -> dict[str, object]:
        return {"itos": self.itos, "pad": self.pad, "unk": self.unk}

    @classmethod
    def from_dict(cls, data: dict[str, object]) -> "Vocab":
        specials = int(bool(data["pad"])) + int(bool(data["unk"]))
        items = list(data["itos"])[specials:]  # type: ignore[arg-type]
        return cls(items, pad=bool(data["pad"]), unk=bool(data["unk"]))


class WordVocab(Vocab):
    """Word ids looked up as written, then lower-cased (for lower-cased pretrained vectors)."""

    def __init__(self, items: Iterable[str], *, lowercase_fallback: bool = True, digits_to_zero: bool = False) -> None:
        super().__init__(items)
        self.lowercase_fallback = lowercase_fallback
        self.digits_to_zero = digits_to_zero

    def normalize(self, word: str) -> str:
        return normalize_digits(word) if self.digits_to_zero else word

    def index(self, item: str) -> int:
        return self.indices([item])[0]

    def indices(self, items: Sequence[str]) -> list[int]:
        """The ids of ``items`` (as :meth:`index` gives them), many at once: one dict look-up per word, and a
        second, lower-cased, only for words not found as written."""
        words = [normalize_digits(w) for w in items] if self.digits_to_zero else items
        found = list(map(self.stoi.get, words))
        fallback = self.stoi.get if self.lowercase_fallback else lambda _: None
        unk = self.stoi[UNK]
        return [f if f is not None else _or(fallback(w.lower()), unk) for f, w in zip(found, words)]

    def to_dict(self) -> dict[str, object]:
        return {**super().to_dict(), "lowercase_fallback": self.lowercase_fallback, "digits_to_zero": self.digits_to_zero}

    @classmethod
    def from_dict(cls, data: dict[str, object]) -> "WordVocab":
        return cls(
            list(data["itos"])[2:],  # type: ignore[arg-type]
            lowercase_fallback=bool(data["lowercase_fallback"]),
            digits_to_zero=bool(data["digits_to_zero"]),
        )


def save_vocabs(path: Path, vocabs: dict[str, Vocab]) -> None:
    """Write vocabularies as one JSON file, atomically."""
    with atomic_open(path) as out:
        json.dump({name: {"class": type(v).__name__, **v.to_dict()} for name, v in vocabs.items()}, out)


def load_vocabs(path: Path) -> dict[str, Vocab]:
    """Read vocabularies written by :func:`save_vocabs`."""
    data = read_json(path)  # a missing, unreadable, deeply nested or invalid file: one line naming it
    classes = {"Vocab": Vocab, "WordVocab": WordVocab}
    try:
        return {name: classes[entry.pop("class")].from_dict(entry) for name, entry in data.items()}
    except (AttributeError, KeyError, TypeError, ValueError) as err:  # JSON, but not what save_vocabs writes
        raise SeqlabError(f"{path}: not a seqlab vocabulary file (expected {{name: {{class, itos, pad, unk}}}}; "
                          f"{type(err).__name__}: {err})") from None


def char_vocab(words: Iterable[str], min_count: int = 1) -> Vocab:
    """Characters seen in ``words`` at least ``min_count`` times."""
    counts: dict[str, int] = {}
    for word in words:
        for ch in word:
            counts[ch] = counts.get(ch, 0) + 1
    return Vocab(sorted(c for c, n in counts.items() if n >= min_count))


def label_vocab(labels: Sequence[str]) -> Vocab:
    """Output labels: no padding or unknown entries, ids 0..K-1 in the given order."""
    return Vocab(labels, pad=False, unk=False)
