"""NER accuracy of English CoNLL-2003 models on text unlike CoNLL-2003's news, side by side, printed as JSON.

    OMP_NUM_THREADS=1 python -m benchmarks.ner_domains --model en-ner-conll03 --model en-ner-conll03-minilm
        [--model RUN_DIR ...] [--wnut17 DIR] [--limit N] [--batch-size 100] [--out FILE]

Every model (an installed name, a ``.seqlab`` file or a run directory) tags the same tokens of each set, as
``seqlab eval MODEL FILE --label-map ...`` does (the gold read by ``seqlab.tagging.gold.read_gold`` with the map,
scored by ``SequenceTagger.evaluate``: conlleval's entity-level exact match). Nothing is tuned on these sets.

* ``conll2003_test``: ``$SEQLAB_DATA/conll2003/test.txt`` (Reuters news, 1996), the in-domain reference: the
  usual micro P/R/F1 over all four types (LOC, MISC, ORG, PER).
* ``fewnerd``: ``$SEQLAB_DATA/typed_corpus/fewnerd_inter_bio_subset/test.txt``, Wikipedia sentences of Few-NERD
  INTER in a third-party BIO re-split (its ``PROVENANCE.md``: antonioloison/structshot; a random sample of
  INTER train, not an official split; CC BY-SA 4.0). Types ``coarse_fine``: person -> PER, location -> LOC,
  organization -> ORG; building, art, product, event and other are dropped from the gold. Caveat: Few-NERD
  INTER tags the fine types of its other partitions O, so this file has no person_actor, athlete, scholar or
  other, no location_bodiesofwater, park or other, no organization_government, politicalparty, religion or
  showorganization: a model finding those people, places and organizations is counted wrong. Precision (and
  F1) here is a lower bound; recall is not affected.
* ``wnut17``: the WNUT-17 emerging-entities test set (Reddit, YouTube, StackExchange, Twitter),
  ``emerging.test.annotated`` from github.com/leondz/emerging_entities_17 (the file as added in commit
  8c28a33c4ec37e61ce1b3d55bc546a11fdbfbcc9, unchanged at e52a2d2a71ac1a051ca2d532eef28653c5c02603; CC BY 4.0
  per that repository's README). Not shipped here: ``--wnut17 DIR`` names a folder holding the file; without
  it the set is skipped, with the reason in the JSON. person -> PER, location -> LOC, corporation and group ->
  ORG; product and creative-work are dropped from the gold.

For the two mapped sets, P/R/F1 are micro-averaged over PER, LOC and ORG only: predicted MISC spans are ignored
(neither right nor wrong), since those sets' leftover types do not correspond to CoNLL's MISC, and gold spans of
dropped types are not there to find. Per-type F1 is given for every kept type; ``ignored_found`` counts the
predicted spans of other types. Timings are the in-process ``evaluate`` call (encode, decode, score; one thread
unless ``--threads``), model loading apart.
"""
from __future__ import annotations

import argparse
import hashlib
import json
import sys
import time
from collections import Counter
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Iterable, Mapping, Sequence

from benchmarks.sidebyside import command_line, load_average, machine, package_version, portable_path

KEPT = ("LOC", "ORG", "PER")  # the types scored on the mapped sets
DEFAULT_MODELS = ("en-ner-conll03", "en-ner-conll03-minilm")
WNUT17_FILE = "emerging.test.annotated"


@dataclass(frozen=True)
class Domain:
    """One evaluation set: its file, how its types map onto CoNLL's (None: as they are) and where it is from."""

    name: str
    text: str
    file: str  # under the data folder; for wnut17, the file's name in --wnut17 DIR
    coarse: Mapping[str, str] | None
    source: Mapping[str, str]


DOMAINS = (
    Domain("conll2003_test", "Reuters news, 1996 (in domain)", "conll2003/test.txt", None,
           {"dataset": "CoNLL-2003 English test (Tjong Kim Sang and De Meulder 2003)"}),
    Domain("fewnerd", "Wikipedia", "typed_corpus/fewnerd_inter_bio_subset/test.txt",
           {"person": "PER", "location": "LOC", "organization": "ORG"},
           {"dataset": "Few-NERD INTER (Ding et al. 2021), a third-party BIO re-split (random sample of INTER "
                       "train; not an official split)", "repository": "github.com/antonioloison/structshot",
            "commit": "e5549d081eee8bc7d452074228e038135aa86f5f", "path": "data/fewnerd/test.txt",
            "licence": "CC BY-SA 4.0 (Few-NERD)", "provenance": "$SEQLAB_DATA/typed_corpus/PROVENANCE.md",
            "caveat": "INTER tags other partitions' fine types O: persons of types actor, athlete, scholar, other; "
                      "locations bodiesofwater, park, other; organizations government/governmentagency, "
                      "politicalparty, religion, showorganization are not gold here, so a model's spans on "
                      "them count as false positives: precision and F1 are lower bounds, recall is not affected"}),
    Domain("wnut17", "web and social media: Reddit, YouTube, StackExchange, Twitter", WNUT17_FILE,
           {"person": "PER", "location": "LOC", "corporation": "ORG", "group": "ORG"},
           {"dataset": "WNUT-17 emerging and rare entities, test (Derczynski et al. 2017)",
            "repository": "github.com/leondz/emerging_entities_17",
            "commit": "e52a2d2a71ac1a051ca2d532eef28653c5c02603 (the file added in "
                      "8c28a33c4ec37e61ce1b3d55bc546a11fdbfbcc9, not changed since)",
            "path": WNUT17_FILE, "licence": "CC BY 4.0 (the repository's README)",
            "sha256": "2aa79b764e56ec9264a1b30fdd9b70195bd00ff400b62edd8f399d5f13c178f0"}),
)


def type_map(types: Iterable[str], coarse: Mapping[str, str]) -> dict[str, str | None]:
    """A label map for ``types``: each sent to CoNLL's type for its coarse part (before the first ``_``, as in
    Few-NERD's ``person_artist/author``; the whole name otherwise), or dropped (None) when ``coarse`` has none."""
    return {kind: coarse.get(kind.split("_", 1)[0]) for kind in sorted(types)}


def read_domain(config: Any, path: Path, coarse: Mapping[str, str] | None, limit: int = 0) -> tuple[Any, dict]:
    """The gold split of ``path`` for a model whose data config is ``config``, its types mapped by ``coarse``
    (the first ``limit`` sentences; 0: all), and what was read: the label map and the gold spans by file type."""
    from seqlab.data.schemes import spans
    from seqlab.tagging.gold import read_gold

    def first(split: Any) -> Any:
        return split.subset(range(min(limit, len(split.tokens)))) if limit else split

    whole = read_gold(config, path)
    raw = first(whole)
    found = Counter(kind for tags in raw.file_tags for kind, _, _ in spans(tags))
    info: dict[str, Any] = {"gold_entities_by_file_type": dict(sorted(found.items()))}
    if coarse is None:
        return raw, info
    mapping = type_map(config.labelling.gold_types(whole.file_tags), coarse)  # the whole file's types
    info["label_map"] = mapping
    return first(read_gold(config, path, label_map=mapping)), info


def scores(report: Any, kept: Sequence[str] | None = None) -> dict[str, Any]:
    """Micro P/R/F1 (percent) of a conlleval report over the types ``kept`` (None: all of them, the usual
    figure), their counts and per-type scores, and the predicted spans of the other types, which are ignored."""
    from seqlab.data.metrics import TypeCounts

    types = list(kept) if kept is not None else sorted(report.per_type)
    per = {kind: report.per_type.get(kind, TypeCounts(0, 0, 0)) for kind in types}
    total = TypeCounts(*(sum(getattr(c, part) for c in per.values()) for part in TypeCounts._fields))
    return {"precision": round(total.precision, 2), "recall": round(total.recall, 2), "f1": round(total.f1, 2),
            "gold_entities": total.gold, "found": total.found, "correct": total.correct,
            "per_type": {kind: {"f1": round(c.f1, 2), "precision": round(c.precision, 2),
                                "recall": round(c.recall, 2), "gold": c.gold, "found": c.found,
                                "correct": c.correct} for kind, c in per.items()},
            "ignored_found": {kind: c.found for kind, c in report.per_type.items() if kind not in per and c.found}}


def run_domain(model: Any, split: Any, kept: Sequence[str] | None, batch_size: int = 100) -> dict[str, Any]:
    """``model`` scored on ``split`` as ``seqlab eval`` scores it, timed. Labels are written in the model's file
    scheme (a mapped set's tags may mix IOB1 and IOB2, which detection refuses); spans, so scores, are the same
    in any scheme."""
    from seqlab.tagging.gold import check_shared_types

    check_shared_types(split, model.types, model.labelling)
    wall, cpu = time.perf_counter(), time.process_time()
    evaluation = model.evaluate(split, batch_size=batch_size)
    wall, cpu = time.perf_counter() - wall, time.process_time() - cpu
    return {"sentences": len(split.tokens), "tokens": split.num_tokens, **scores(evaluation.report, kept),
            "all_types_f1": round(evaluation.report.f1, 2),
            "tagging_wall_seconds": round(wall, 2), "tagging_cpu_seconds": round(cpu, 2)}


def domain_path(domain: Domain, wnut17: str | None) -> tuple[Path | None, str]:
    """Where ``domain``'s file is, or None and why it is skipped; a missing required file is a one-line exit."""
    from seqlab.core.paths import data_root

    if domain.name == "wnut17":
        if not wnut17:
            return None, "not given: pass --wnut17 DIR, a folder holding emerging.test.annotated (not shipped)"
        path = Path(wnut17) / WNUT17_FILE
        return (path, "") if path.is_file() else (None, f"{path}: no such file")
    root = data_root()
    if root is None:
        raise SystemExit("ner_domains: no data folder: set SEQLAB_DATA (or put the data in ../shared/data)")
    path = root / domain.file
    if not path.is_file():
        raise SystemExit(f"ner_domains: {path}: no such file")
    return path, ""


def sha256(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def main(argv: list[str] | None = None) -> None:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--model", action="append", help="an installed name, .seqlab file or run directory (repeat; "
                                                    f"default: {' '.join(DEFAULT_MODELS)})")
    p.add_argument("--wnut17", metavar="DIR", help=f"a folder holding WNUT-17's {WNUT17_FILE}")
    p.add_argument("--limit", type=int, default=0, help="the first N sentences of each set (0: all)")
    p.add_argument("--batch-size", type=int, default=100)
    p.add_argument("--threads", type=int, default=1)
    p.add_argument("--out", help="also write the JSON here")
    args = p.parse_args(argv)
    if args.limit < 0 or args.batch_size < 1 or args.threads < 1:
        p.error("--limit must be 0 or more, --batch-size and --threads at least 1")
    models = args.model or list(DEFAULT_MODELS)
    if len(set(models)) < len(models):
        p.error("a --model is given twice")
    paths = {d.name: domain_path(d, args.wnut17) for d in DOMAINS}
    for name, (path, why) in paths.items():
        if path is None:
            print(f"ner_domains: skipping {name}: {why}", file=sys.stderr)

    import torch

    torch.set_num_threads(args.threads)
    import seqlab
    from seqlab.core.errors import SeqlabError

    sets: dict[str, Any] = {}
    for d in DOMAINS:
        path, why = paths[d.name]
        sets[d.name] = {"text": d.text, "source": dict(d.source), "kept_types": "all" if d.coarse is None else
                        list(KEPT), **({"file": portable_path(path), "sha256": sha256(path)} if path else
                                       {"skipped": why})}
        if path and d.source.get("sha256", sets[d.name]["sha256"]) != sets[d.name]["sha256"]:
            print(f"ner_domains: {path}: not the file recorded as the source (sha256 differs)", file=sys.stderr)
            sets[d.name]["source_sha256_differs"] = True
    load = load_average()
    results: dict[str, Any] = {}
    for name in models:
        try:
            start = time.perf_counter()
            model = seqlab.load(name, "cpu")
            entry: dict[str, Any] = {"load_seconds": round(time.perf_counter() - start, 2), "sets": {}}
            for d in DOMAINS:
                path = paths[d.name][0]
                if path is None:
                    continue
                split, info = read_domain(model.config.data, path, d.coarse, args.limit)
                sets[d.name].update(info)  # the same for every model: read the same way
                kept = None if d.coarse is None else KEPT
                entry["sets"][d.name] = run_domain(model, split, kept, args.batch_size)
                print(f"ner_domains: {name} {d.name}: F1 {entry['sets'][d.name]['f1']:.2f}", file=sys.stderr)
        except SeqlabError as err:
            raise SystemExit(f"ner_domains: {name}: {err}") from None
        results[portable_path(name)] = entry
    result = {
        "command": command_line(),
        "scoring": "conlleval entity-level exact match. conll2003_test: micro P/R/F1 over all four types. fewnerd, "
                   "wnut17: gold types mapped to PER/LOC/ORG (label_map; null: dropped from the gold), micro "
                   "P/R/F1 over PER, LOC and ORG only; predicted MISC spans are ignored (ignored_found), since "
                   "those sets' leftover types do not correspond to CoNLL's MISC. Not tuned on any set.",
        "limit": args.limit, "batch_size": args.batch_size, "threads": args.threads, "sets": sets,
        "f1": {m: {s: r["f1"] for s, r in e["sets"].items()} for m, e in results.items()},
        "models": results,
        "versions": {"torch": torch.__version__, "transformers": package_version("transformers"),
                     "seqlab": package_version("seqlab")},
        "machine": machine(), "load_average_before": load, "load_average_after": load_average(),
    }
    text = json.dumps(result, indent=2) + "\n"
    sys.stdout.write(text)
    if args.out:
        Path(args.out).parent.mkdir(parents=True, exist_ok=True)
        Path(args.out).write_text(text, encoding="utf-8")


if __name__ == "__main__":
    main()
