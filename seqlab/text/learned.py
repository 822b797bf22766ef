"""What a model's training data teaches about its tokenization, learned from CoNLL-U with ``# text`` lines.

The base tokenizer (:mod:`seqlab.text.tokenizers`) is run on each training sentence's text and its tokens are
aligned with the treebank's surface tokens by character offsets. Where the treebank has one token over several base
tokens (French ``20 000``) the token's *shape* (digits read as ``0``) is a merge; where it splits one base token the
cut is learned for that token, and a first (last) piece that the treebank splits off more often than not becomes a
prefix (suffix) rule. Merges and splits are kept when the treebank makes them at least as often as it leaves the
base tokens as they are. Multiword tokens come from the range lines (:mod:`seqlab.text.mwt`). Everything learned is
plain data, stored in a run's :data:`FILE` and read back by :func:`load`.
"""
from __future__ import annotations

import json
import re
from collections import Counter, defaultdict
from dataclasses import asdict, dataclass, field
import logging
from pathlib import Path
from typing import Iterable, Iterator

from seqlab.core import runfiles
from seqlab.core.atomic import atomic_open
from seqlab.core.errors import SeqlabError
from seqlab.data.conllu import read_conllu
from seqlab.text.mwt import MultiwordTable, StaleTable, learn_multiwords
from seqlab.text.tokenizers import ENGLISH, Span, word_spans

log = logging.getLogger("seqlab")

#: The file in a run directory (and a model file) that holds what was learned.
FILE = runfiles.TEXT
#: The longest run of base tokens a merge joins.
MAX_MERGE = 6
#: The fewest times a prefix or suffix must be split off in training to become a rule.
MIN_AFFIX = 2
_DIGIT = re.compile(r"[0-9]")
_LETTER = re.compile(r"[^\W\d_]")
_RUNS = re.compile(r"a+|0+")


def shape(text: str) -> str:
    """``text`` with its digits read as ``0``: the key of a merge (``20 000`` and ``13 819`` are one rule)."""
    return _DIGIT.sub("0", text)


def pattern(text: str) -> str:
    """``text`` with each run of letters read as ``a`` and of digits as ``0``: the key of a merge that holds for a
    kind of token (``là-bas`` and ``Croix-Rouge`` are ``a-a``)."""
    return collapse(char_classes(text))


def char_classes(text: str) -> str:
    """``text`` with each letter read as ``a`` and each digit as ``0``, character by character (same length)."""
    return _LETTER.sub("a", _DIGIT.sub("0", text))


def collapse(classes: str) -> str:
    """:func:`char_classes`' output with each run of ``a`` (``0``) made one: :func:`pattern`."""
    return _RUNS.sub(lambda m: m.group()[0], classes)


@dataclass
class Adaptations:
    """A language's base tokenization adapted to a treebank: merges (shapes and patterns), splits (token -> piece
    lengths),
    prefix and suffix rules (lower case), and the multiword token table."""

    language: str
    merges: dict[str, int] = field(default_factory=dict)  # shape -> how many base tokens it joins
    patterns: dict[str, int] = field(default_factory=dict)  # pattern -> how many base tokens it joins
    splits: dict[str, list[int]] = field(default_factory=dict)
    prefixes: list[str] = field(default_factory=list)
    suffixes: list[str] = field(default_factory=list)
    multiwords: MultiwordTable = field(default_factory=MultiwordTable)

    def to_json(self) -> dict:
        return {**asdict(self), "multiwords": self.multiwords.to_json()}

    @classmethod
    def from_json(cls, data: dict, where: str) -> "Adaptations":
        try:
            return cls(data["language"], dict(data["merges"]), dict(data["patterns"]),
                       {k: list(v) for k, v in data["splits"].items()},
                       list(data["prefixes"]), list(data["suffixes"]),
                       MultiwordTable.from_json(data["multiwords"]))
        except StaleTable:
            raise
        except (KeyError, TypeError, AttributeError, ValueError) as err:
            raise SeqlabError(f"{where}: not a seqlab text adaptations file ({type(err).__name__}: {err})") from None


@dataclass
class _Aligned:
    """One training sentence: its text, base token spans and the treebank's surface token spans."""

    text: str
    base: list[Span]
    gold: list[Span]


def surface_spans(offsets: Iterable[tuple[int, int]]) -> list[Span]:
    """The surface tokens of a CoNLL-U sentence from its words' offsets (a multiword token's words share them)."""
    out: list[Span] = []
    for span in offsets:
        if not out or tuple(span) != out[-1]:
            out.append(tuple(span))  # type: ignore[arg-type]
    return out


def _aligned(sentences: Iterable, language: str) -> Iterator[_Aligned]:
    for sentence in sentences:
        text, offsets = sentence.extra.get("text"), sentence.extra.get("offsets")
        if text and offsets:
            yield _Aligned(text, word_spans(text, language), surface_spans(offsets))


def _differences(item: _Aligned) -> tuple[list[list[Span]], list[tuple[Span, list[Span]]]]:
    """The runs of base tokens one treebank token covers, and the base tokens the treebank cuts (with the pieces)."""
    base_starts = {s: k for k, (s, _) in enumerate(item.base)}
    base_ends = {e: k for k, (_, e) in enumerate(item.base)}
    gold_starts = {s: k for k, (s, _) in enumerate(item.gold)}
    gold_ends = {e: k for k, (_, e) in enumerate(item.gold)}
    merges = [item.base[base_starts[s]:base_ends[e] + 1] for s, e in item.gold
              if s in base_starts and e in base_ends and base_ends[e] > base_starts[s]]
    splits = [((s, e), item.gold[gold_starts[s]:gold_ends[e] + 1]) for s, e in item.base
              if s in gold_starts and e in gold_ends and gold_ends[e] > gold_starts[s]]
    return merges, splits


def _windows(item: _Aligned, sizes: set[int], key=shape) -> Iterator[tuple[str, int]]:
    """The keys (shapes, or patterns) of every run of ``sizes`` base tokens in a sentence, with the run's length."""
    for n in sizes:
        for k in range(len(item.base) - n + 1):
            yield key(item.text[item.base[k][0]:item.base[k + n - 1][1]]), n


def _kept(runs: list[str], items: list[_Aligned], key) -> dict[str, int]:
    """The keys of the joined runs of base tokens (their text: ``runs``) that the treebank joins at least as often
    as it leaves such runs apart, with how many base tokens each joins."""
    joined = Counter((key(text), n) for text, n in runs if n <= MAX_MERGE)
    seen = Counter(w for item in items for w in _windows(item, {n for _, n in joined}, key))
    return {k: n for (k, n), count in joined.items() if count * 2 >= seen[k, n]}


def _affixes(split_pieces: list[tuple[str, list[str]]], tokens: Counter, first: bool) -> list[str]:
    """The pieces split off the start (``first``) or end of tokens at least :data:`MIN_AFFIX` times and more often
    than tokens that begin (end) with them are left whole; a piece must end (begin) at a mark, not a letter or
    digit (French ``l'``, ``-t-il``), so that no word is cut inside."""
    cut = Counter((p[0] if first else p[-1]).lower() for _, p in split_pieces)
    cut = Counter({a: n for a, n in cut.items() if not (a[-1] if first else a[0]).isalnum()})
    having = Counter()  # base tokens that begin (end) with the affix, cut or not
    for token, n in tokens.items():
        low = token.lower()
        for affix in cut:
            if len(low) > len(affix) and (low.startswith(affix) if first else low.endswith(affix)):
                having[affix] += n
    return sorted(a for a, n in cut.items() if n >= MIN_AFFIX and n >= having[a] - n and a.strip())


def learn(path: str | Path, language: str) -> Adaptations:
    """What the CoNLL-U file ``path`` teaches about tokenizing ``language`` text its way (sentences without
    ``# text`` are skipped)."""
    items = list(_aligned(read_conllu(path), language))
    runs, split_pieces, tokens = [], [], Counter()
    for item in items:
        merges, splits = _differences(item)
        runs.extend((item.text[run[0][0]:run[-1][1]], len(run)) for run in merges)
        split_pieces.extend((item.text[s:e], [item.text[a:b] for a, b in pieces]) for (s, e), pieces in splits)
        tokens.update(item.text[s:e] for s, e in item.base)
    merges, patterns = _kept(runs, items, shape), _kept(runs, items, pattern)
    cuts: dict[str, Counter] = defaultdict(Counter)
    for token, pieces in split_pieces:
        cuts[token][tuple(len(p) for p in pieces)] += 1
    splits = {t: list(c.most_common(1)[0][0]) for t, c in cuts.items() if sum(c.values()) * 2 >= tokens[t]}
    return Adaptations(language, merges, patterns, splits, _affixes(split_pieces, tokens, True),
                       _affixes(split_pieces, tokens, False), learn_multiwords(read_conllu(path)))


def save(adaptations: Adaptations, run_dir: str | Path) -> Path:
    """Write ``adaptations`` to ``run_dir``/:data:`FILE` (atomically)."""
    target = Path(run_dir) / FILE
    with atomic_open(target, "w", encoding="utf-8") as out:
        json.dump(adaptations.to_json(), out, ensure_ascii=False, indent=1)
    return target


def load(run_dir: str | Path) -> Adaptations | None:
    """The adaptations stored in ``run_dir``, or None where it has none or has them in an older form (to be learned
    again: :func:`for_run`)."""
    path = Path(run_dir) / FILE
    if not path.is_file():
        return None
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (ValueError, UnicodeDecodeError) as err:
        raise SeqlabError(f"{path}: not valid JSON ({err})") from None
    try:
        return Adaptations.from_json(data, str(path))
    except StaleTable as err:
        log.info("%s: %s", path, err)
        return None


def learns(data) -> bool:
    """Whether ``data`` (a :class:`seqlab.data.config.DataConfig`) has a tokenization to learn: a language other
    than English (whose tokenizer is fixed) with a CoNLL-U training file (the only format that keeps the text)."""
    from seqlab.data.config import file_format

    return data.language != ENGLISH and file_format(data.train, data.format) == "conllu"


def from_data(data) -> Adaptations | None:
    """What ``data``'s training file teaches: None where it has nothing to teach (:func:`learns`) or is not here."""
    from seqlab.core.paths import resolve_data_path

    if not learns(data):
        return None
    path = resolve_data_path(str(data.train), key="data.train", must_exist=False)
    return learn(path, data.language) if path.is_file() else None


def save_adaptations(data, run_dir: str | Path) -> None:
    """Learn from ``data``'s training file and store it in ``run_dir`` (nothing where there is nothing to learn)."""
    adaptations = from_data(data)
    if adaptations is not None:
        save(adaptations, run_dir)


def for_run(run_dir: str | Path, data) -> Adaptations | None:
    """A run's stored adaptations; for a run trained before they were stored, learned again from its training file
    (when it is there)."""
    stored = load(run_dir)
    if stored is not None or not learns(data):
        return stored
    log.info("%s: no current %s; learning the raw-text tokenization from %s", run_dir, FILE, data.train)
    learned = from_data(data)
    if learned is None:
        log.warning("%s: the training file %s is not here to learn the raw-text tokenization from; raw text is "
                    "tokenized by the %r base tokenizer alone, without multiword tokens", run_dir, data.train,
                    data.language)
    return learned
