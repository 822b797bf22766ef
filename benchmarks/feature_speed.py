"""Feature extraction throughput of every extractor in ``features/`` on a CoNLL file, printed as JSON.

Usage::

    nice -n 10 python -m benchmarks.feature_speed                        # CoNLL-2003 train, all extractors
    nice -n 10 python -m benchmarks.feature_speed --extractors brown orthographic \\
        --file ../shared/data/conll2000/train.txt

Each extractor is used as another system would use it (``from features... import ...``): loaded
from its artefact file (or fitted on ``--file``, for the orthographic and label-frequency
features), then called once per sentence, ``extractor(tokens)`` → ``(len, dim)`` array, over
every sentence of the file. Loading is timed apart from extraction. The first pass over the file
is reported as ``cold`` (it includes lazy work such as the LS extractor loading ``fasttext.bin``
for its first unknown word); ``warm`` is the fastest of ``--repeats`` further passes. No extractor
caches per word type, so a warm pass does the same work per token as a cold one. ``types`` calls
the extractor on the file's distinct words, in lists of ``--type-batch``; ``feature_dicts`` (and
Brown's ``prefix_ids``) time the crfsuite-style (and id) outputs over the whole file.
``tokens_per_second`` is from wall-clock time, ``tokens_per_cpu_second`` from ``time.process_time``
(fairer on a shared machine). An extractor whose artefact is missing is reported as skipped with
the reason. ``rss_mb`` is the process's resident memory just after loading an extractor (the one
before it has been released; the corpus is included) and ``peak_rss_mb`` the peak of the whole
process (``resource.getrusage``).
"""
from __future__ import annotations

import argparse
import gc
import json
import logging
import os
import platform
import resource
import sys
import time
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Sequence

import numpy as np

from features.brown import BrownClusters
from features.embeddings import EmbeddingFeatures, read_vectors
from features.labels import LabelFrequencies
from features.ls import LSVectors
from features.orthographic import OrthographicFeatures
from features.scaling import DEFAULT_SIGMA, scale_embeddings
from seqlab.data.conll import DOCSTART, read_conll
from seqlab.core.errors import DataFormatError, SeqlabError
from seqlab.core.paths import data_root

ROOT = Path(__file__).resolve().parents[1]

logger = logging.getLogger("feature_speed")

EXTRACTORS = ("brown", "cw", "hlbl", "glove", "orthographic", "labels", "ls", "quadratic")
QUADRATIC_SKIP = ("features.quadratic is a torch layer of the windowed taggers, q(x) = b + Wx + sqrt(sum_j (V_j x)^2) "
                  "over a window's concatenated feature vectors with trained weights, not a word -> features "
                  "extractor; its cost is part of the tagger's forward pass (benchmarks/window_speed.py)")


@dataclass
class Corpus:
    """The sentences of a CoNLL file, with one label column (None if the file has a single column)."""

    path: Path
    sentences: list[list[str]]
    labels: list[list[str]] | None
    counts: Counter = field(default_factory=Counter)  # word -> occurrences

    @property
    def tokens(self) -> int:
        return sum(len(s) for s in self.sentences)


def default_paths() -> dict[str, Path]:
    """Default artefacts: induced ones under ``runs/``, staged ones under ``$SEQLAB_DATA``."""
    data = data_root() or ROOT.parent / "shared" / "data"
    return {
        "file": data / "conll2003" / "train.txt",
        "brown": ROOT / "runs" / "features" / "brown1000_reuters.paths",
        "cw": ROOT / "runs" / "features" / "cw50_reuters.txt",
        "hlbl": ROOT / "runs" / "features" / "hlbl50_reuters.txt",
        "glove": data / "wordreprs" / "glove6b50d" / "glove.6B.50d.txt.gz",
        "ls": ROOT / "runs" / "ls" / "fewnerd_ls100",
    }


def _column_count(path: Path) -> int:
    with open(path, "rb") as handle:
        for raw in handle:
            fields = raw.decode("utf-8", errors="replace").split()
            if fields and fields[0] != DOCSTART:
                return len(fields)
    raise SeqlabError(f"{path}: no token lines (expected a CoNLL file, one token a line)")


def read_file(path: Path, label_column: int) -> Corpus:
    """Words (first column) and labels (``label_column``, default the last) of a CoNLL file."""
    n = _column_count(path)
    names = tuple(f"c{i}" for i in range(n))
    if n > 1 and not -n <= label_column < n:
        raise SeqlabError(f"--label-column {label_column} is outside the {n} columns of {path}")
    sentences, labels = [], []
    for sentence in read_conll(path, names):
        sentences.append(list(sentence[names[0]]))
        labels.append(list(sentence[names[label_column]]))
    if not sentences:
        raise SeqlabError(f"{path}: no sentences")
    counts = Counter(w for s in sentences for w in s)
    return Corpus(path, sentences, labels if n > 1 else None, counts)


def _clock() -> tuple[float, float]:
    return time.perf_counter(), time.process_time()


def _since(start: tuple[float, float]) -> tuple[float, float]:
    return time.perf_counter() - start[0], time.process_time() - start[1]


def time_pass(call: Callable[[list[str]], Any], batches: Sequence[list[str]], rows: Callable[[Any], int]) -> dict:
    """Call ``call`` on every batch; wall and CPU seconds, and a check that one row came back per token."""
    tokens = sum(len(b) for b in batches)
    start = _clock()
    produced = 0
    for batch in batches:
        produced += rows(call(batch))
    wall, cpu = _since(start)
    if produced != tokens:
        raise RuntimeError(f"the extractor returned {produced} rows for {tokens} tokens")
    return {"tokens": tokens, "seconds": round(wall, 6), "cpu_seconds": round(cpu, 6),
            "tokens_per_second": round(tokens / wall, 1), "tokens_per_cpu_second": round(tokens / max(cpu, 1e-9), 1)}


def measure(extractor: Any, corpus: Corpus, repeats: int, type_batch: int) -> dict[str, Any]:
    """Cold pass, best warm pass, per-type rate and the other outputs of one extractor."""
    array_rows = lambda a: int(a.shape[0])  # noqa: E731
    out: dict[str, Any] = {"dim": int(extractor.dim)}
    out["cold"] = time_pass(extractor, corpus.sentences, array_rows)
    warm = [time_pass(extractor, corpus.sentences, array_rows) for _ in range(repeats)]
    out["warm"] = min(warm, key=lambda r: r["seconds"])
    words = list(corpus.counts)
    batches = [words[i:i + type_batch] for i in range(0, len(words), type_batch)]
    per_type = time_pass(extractor, batches, array_rows)
    out["types"] = {"types": len(words), "batch": type_batch, "seconds": per_type["seconds"],
                    "types_per_second": per_type["tokens_per_second"]}
    if hasattr(extractor, "feature_dicts"):
        out["feature_dicts"] = time_pass(extractor.feature_dicts, corpus.sentences, len)
    if hasattr(extractor, "prefix_ids"):
        out["prefix_ids"] = time_pass(extractor.prefix_ids, corpus.sentences, array_rows)
    if hasattr(extractor, "__contains__"):
        known = sum(n for w, n in corpus.counts.items() if w in extractor)
        out["token_coverage"] = round(known / corpus.tokens, 4)
    return out


def load_brown(path: Path) -> tuple[Any, dict[str, Any]]:
    start = _clock()
    clusters = BrownClusters.load(path)
    wall, cpu = _since(start)
    return clusters, {"load_seconds": round(wall, 4), "load_cpu_seconds": round(cpu, 4),
                      "words": len(clusters), "clusters": clusters.num_clusters, "prefixes": list(clusters.prefixes),
                      "notes": "one-hot of the bit-string prefixes; exact (cased) look-up"}


def load_embeddings(path: Path, *, lowercase: bool, normalize_numbers: bool) -> tuple[Any, dict[str, Any]]:
    """What ``EmbeddingFeatures.load`` does, timed in its two steps: parsing the file, then indexing and scaling."""
    start = _clock()
    words, vectors = read_vectors(path)  # shape: (n_words, dim)
    parse = _since(start)
    start = _clock()
    extractor = EmbeddingFeatures(words, vectors, lowercase=lowercase, normalize_numbers=normalize_numbers)
    build = _since(start)
    start = _clock()
    scale_embeddings(vectors, DEFAULT_SIGMA)  # shape: (n_words, dim); the scaling step alone, timed again
    scale = _since(start)
    return extractor, {"load_seconds": round(parse[0] + build[0], 3), "load_cpu_seconds": round(parse[1] + build[1], 3),
                       "parse_seconds": round(parse[0], 3), "index_and_scale_seconds": round(build[0], 3),
                       "scale_seconds": round(scale[0], 4), "words": len(words), "scale": DEFAULT_SIGMA,
                       "lowercase": lowercase, "normalize_numbers": normalize_numbers}


def load_orthographic(corpus: Corpus) -> tuple[Any, dict[str, Any]]:
    start = _clock()
    extractor = OrthographicFeatures().fit(corpus.sentences)
    wall, cpu = _since(start)
    return extractor, {"load_seconds": round(wall, 4), "load_cpu_seconds": round(cpu, 4),
                       "notes": "load = fit on --file (first-character and word-type vocabularies)"}


def load_labels(corpus: Corpus) -> tuple[Any, dict[str, Any]]:
    start = _clock()
    extractor = LabelFrequencies().fit(corpus.sentences, corpus.labels, source=str(corpus.path))
    wall, cpu = _since(start)
    return extractor, {"load_seconds": round(wall, 4), "load_cpu_seconds": round(cpu, 4), "labels": list(extractor.labels),
                       "notes": "load = fit on --file's label column"}


def load_ls(path: Path) -> tuple[Any, dict[str, Any]]:
    start = _clock()
    extractor = LSVectors.load(path)
    wall, cpu = _since(start)
    return extractor, {"load_seconds": round(wall, 4), "load_cpu_seconds": round(cpu, 4), "words": len(extractor),
                       "notes": "uncased table look-up; unknown words from fastText sub-words (fasttext.bin loaded "
                                "lazily, in the cold pass), recomputed at every call"}


def _load(name: str, paths: dict[str, Path], corpus: Corpus) -> tuple[Any, dict[str, Any]]:
    """The extractor ``name`` and its load record; (None, skip record) when it cannot be measured here."""
    if name == "quadratic":
        return None, {"status": "skipped", "reason": QUADRATIC_SKIP}
    if name == "orthographic":
        return load_orthographic(corpus)
    if name == "labels":
        if corpus.labels is None:
            return None, {"status": "skipped", "reason": f"{corpus.path} has no label column"}
        return load_labels(corpus)
    path = paths[name]
    if not path.exists():
        return None, {"status": "skipped", "artefact": str(path), "reason": f"artefact not found: {path}"}
    if name == "brown":
        return load_brown(path)
    if name == "ls":
        return load_ls(path)
    return load_embeddings(path, lowercase=True, normalize_numbers=name != "glove")


def _rss_mb() -> float | None:
    try:
        pages = int(Path("/proc/self/statm").read_text().split()[1])
    except (OSError, ValueError, IndexError):
        return None
    return round(pages * os.sysconf("SC_PAGE_SIZE") / 2**20, 1)


def _peak_rss_mb() -> float:
    return round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024.0, 1)  # Linux reports KiB


def benchmark(file: Path, paths: dict[str, Path], extractors: Sequence[str], *, repeats: int = 3,
              type_batch: int = 1000, label_column: int = -1) -> dict[str, Any]:
    """Load and time each extractor in ``extractors`` on ``file``; the JSON-ready result."""
    start = _clock()
    corpus = read_file(file, label_column)
    result: dict[str, Any] = {
        "file": str(file), "sentences": len(corpus.sentences), "tokens": corpus.tokens, "types": len(corpus.counts),
        "read_seconds": round(_since(start)[0], 3), "repeats": repeats,
        "python": platform.python_version(), "numpy": np.__version__,
        "machine": f"{platform.machine()} {platform.processor() or ''}".strip(), "cpu_count": os.cpu_count(),
        "omp_num_threads": os.environ.get("OMP_NUM_THREADS"), "extractors": {},
    }
    for name in extractors:
        logger.info("%s: loading", name)
        extractor, record = _load(name, paths, corpus)
        if extractor is not None:
            record = {"status": "ok", **({"artefact": str(paths[name])} if name in paths else {}), **record,
                      "rss_mb": _rss_mb()}
            logger.info("%s: extracting", name)
            record.update(measure(extractor, corpus, repeats, type_batch))
        result["extractors"][name] = record
        del extractor
        gc.collect()
    result["peak_rss_mb"] = _peak_rss_mb()
    return result


def main(argv: list[str] | None = None) -> None:
    defaults = default_paths()
    p = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    p.add_argument("--file", type=Path, default=defaults["file"], help="CoNLL file (default: CoNLL-2003 train)")
    p.add_argument("--label-column", type=int, default=-1, help="column of the labels for 'labels' (default: last)")
    p.add_argument("--extractors", nargs="+", choices=EXTRACTORS, default=list(EXTRACTORS))
    for name in ("brown", "cw", "hlbl", "glove", "ls"):
        p.add_argument(f"--{name}", type=Path, default=defaults[name], help=f"default: {defaults[name]}")
    p.add_argument("--repeats", type=int, default=3, help="warm passes; the fastest is reported")
    p.add_argument("--type-batch", type=int, default=1000, help="distinct words per call when timing per type")
    args = p.parse_args(argv)
    if args.repeats < 1:
        p.error(f"--repeats must be at least 1, got {args.repeats}")
    if args.type_batch < 1:
        p.error(f"--type-batch must be at least 1, got {args.type_batch}")
    if not args.file.is_file():
        p.error(f"--file {args.file} does not exist")
    logging.basicConfig(level=logging.INFO, format="%(name)s: %(message)s")
    paths = {name: getattr(args, name) for name in ("brown", "cw", "hlbl", "glove", "ls")}
    try:
        result = benchmark(args.file, paths, args.extractors, repeats=args.repeats, type_batch=args.type_batch,
                           label_column=args.label_column)
    except (SeqlabError, DataFormatError, ValueError) as err:
        p.exit(2, f"feature_speed: error: {err}\n")
    sys.stdout.write(json.dumps(result) + "\n")


if __name__ == "__main__":
    main()
