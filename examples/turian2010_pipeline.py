"""Turian, Ratinov & Bengio (2010) end to end: induce every word representation from the Wikipedia corpus, then
train every Table 2 (chunking) and Table 3 (NER) row and draw Figure 2, one step at a time, resumable.

A step is done when its outputs exist, so the driver can be stopped at any point and started again (on the
same machine, or on a fresh one where ``runs/`` is empty, which rebuilds what is missing); the inductions that
keep a checkpoint (``--checkpoint``) resume inside a step too. Steps run one after another, cheapest and most
used first, each with its log in ``RUNS/turian2010/NAME.log`` and a record of its command, wall and CPU
seconds and peak memory in ``RUNS/turian2010/NAME.json``::

    pip install -e '.[examples,plots]'
    python -m examples.turian2010_pipeline --list                 # every step, done or not, and why not
    nohup python -m examples.turian2010_pipeline > runs/turian2010.out 2>&1 &
    python -m examples.turian2010_pipeline --only 'ner_.*brown'   # the steps whose name matches, and what they need

Run it from the repository root: its steps start the examples as modules (``python -m examples.crfsuite_ner``)
and name the configs by their paths there. The commands are those of RESULTS.md (sections *CoNLL-2000 chunking with a linear CRF* and *CoNLL-2003 NER with a
linear model*). The 300-d skip-gram vectors go into the neural models: ``configs/semeval10_skipgram300.yaml`` and
``configs/conll03_glove_skipgram300.yaml``, three seeds each beside their GloVe configs (a killed training resumes
from its checkpoint), compared by ``seqlab summarize --versus``. Brown c = 10,000 (``--long``), beyond the paper's
Figure 2, is left out unless asked for, as it takes CPU-hours; its chunking and NER rows wait for it.
"""
from __future__ import annotations

import argparse
import json
import os
import re
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path

from seqlab.core.paths import data_root

CORPUS = "unlabeled/wikipedia_en_2014"  # relative to SEQLAB_DATA, as every data path of the project
CHUNK_DATA = ("--train", "conll2000/train.txt", "--test", "conll2000/test.txt")
NER_DATA = ("--train", "conll2003/train.txt", "--dev", "conll2003/dev.txt", "--test", "conll2003/test.txt", "--tune")
EMBEDDING_FLAGS = ("--embeddings-lowercase", "--embeddings-normalize-numbers")
CLUSTERS = (1000, 3200, 100, 320)
DIMS = (50, 100, 25, 200)
RECORDED = "docs/turian2010/recorded.json"  # Figure 2's kept figures, so rows outlive their run directories
EMBEDDING_EPOCHS = {"cw": 2, "hlbl": 1}  # the runs RESULTS.md reports (the paper's C&W trained for weeks)
GREEDY_FLAGS = ("--thickness", "1")  # chosen on dev among the update rules (RESULTS.md, Table 3)
SEEDS = (1, 2, 3)  # of each neural config reading the skip-gram vectors, and of the GloVe config it is compared with
# CRFsuite's SGD slows on C&W features as they grow (245 iterations at 50-d, 486 at 100-d); at 200-d its own stopping
# rule would need ~1,000 (each loss level takes it twice 100-d's iterations) at ~16 s: over 4 hours, which CRFsuite
# cannot resume, so that row stops at 400 (RESULTS.md, Figure 2: at the same loss, 100-d scores as converged)
CHUNK_ITERATIONS = {("cw", 200): 400}


@dataclass(frozen=True)
class Step:
    """One command, done when every output exists (a step without outputs runs every time); it needs its
    inputs to exist first."""

    name: str
    command: tuple[str, ...]
    outputs: tuple[str, ...]
    inputs: tuple[str, ...] = ()
    long: bool = False
    resume: tuple[str, ...] = ()  # run instead of ``command`` once ``resume_from`` exists (a killed training)
    resume_from: str = ""

    def command_now(self, runs: Path) -> tuple[str, ...]:
        """``resume`` when a killed run left its checkpoint, else ``command``."""
        return self.resume if self.resume and (runs / self.resume_from).exists() else self.command


def representation(kind: str, size: int) -> str:
    """The file a representation is induced into, relative to the runs folder."""
    return f"features/brown{size}_wiki.paths" if kind == "brown" else f"features/{kind}{size}_wiki.txt"


def _induce(runs: Path, data: Path, kind: str, size: int) -> Step:
    out = representation(kind, size)
    corpus = str(data / CORPUS)
    base = ("seqlab", "features", kind, "--corpus", corpus, "--quiet", "--out", str(runs / out),
            "--checkpoint", str(runs / f"features/{kind}{size}_wiki.ckpt"))
    if kind == "brown":
        command = base + ("--min-count", "2", "--clusters", str(size))
    else:
        command = base + ("--lowercase", "--normalize-numbers", "--dim", str(size), "--epochs",
                          str(EMBEDDING_EPOCHS[kind]), "--seed", "1", "--device", "cpu")
    return Step(f"induce_{kind}{size}", command, (out,), long=(kind == "brown" and size > 3200))


def local(path: Path) -> str:
    """``path`` as the example scripts read it: they resolve a bare relative path under SEQLAB_DATA, so one in
    the working directory must start with ``./``."""
    text = str(path)
    return text if path.is_absolute() or text.startswith("../") else f"./{text}"


def _features(runs: Path, reprs: tuple[tuple[str, int], ...]) -> tuple[str, ...]:
    flags: list[str] = []
    for kind, size in reprs:
        path = local(runs / representation(kind, size))
        flags += ["--brown", path] if kind == "brown" else ["--embeddings", path, *EMBEDDING_FLAGS]
    return tuple(flags)


def _label(reprs: tuple[tuple[str, int], ...]) -> str:
    return "_".join(f"{kind}{size}" for kind, size in reprs) + "_wiki" if reprs else "baseline"


def _chunker(runs: Path, reprs: tuple[tuple[str, int], ...]) -> Step:
    folder = f"crfsuite_chunker_{_label(reprs)}"
    caps = [CHUNK_ITERATIONS[r] for r in reprs if r in CHUNK_ITERATIONS]
    limit = ("--max-iterations", str(min(caps))) if caps else ()
    command = ("python", "-m", "examples.crfsuite_chunker", *CHUNK_DATA, *_features(runs, reprs), *limit,
               "--model", str(runs / folder / "model.crfsuite"), "--predictions", str(runs / folder / "predictions.txt"))
    return Step(f"chunk_{_label(reprs)}", command, (f"{folder}/model.crfsuite.json",),
                tuple(representation(k, s) for k, s in reprs))


def _ner(runs: Path, reprs: tuple[tuple[str, int], ...]) -> Step:
    name = "base" if not reprs else _label(reprs)
    command = ("python", "-m", "examples.crfsuite_ner", *NER_DATA, *_features(runs, reprs),
               "--model", str(runs / f"ner_linear/{name}.crfsuite"), "--predictions", str(runs / f"ner_linear/{name}.txt"))
    return Step(f"ner_{_label(reprs)}", command, (f"ner_linear/{name}.crfsuite.json",),
                tuple(representation(k, s) for k, s in reprs))


def _greedy(runs: Path, reprs: tuple[tuple[str, int], ...], seed: int) -> Step:
    """Table 3 with Ratinov & Roth's greedy perceptron itself (examples/greedy_ner.py), one seed of its sentence
    order."""
    name = f"{'base' if not reprs else _label(reprs)}_s{seed}"
    command = ("python", "-m", "examples.greedy_ner", *NER_DATA, *GREEDY_FLAGS, "--seed", str(seed),
               *_features(runs, reprs), "--model", str(runs / f"ner_greedy/{name}.npz"),
               "--predictions", str(runs / f"ner_greedy/{name}.txt"))
    return Step(f"greedy_{_label(reprs)}_s{seed}", command, (f"ner_greedy/{name}.npz.json",),
                tuple(representation(k, s) for k, s in reprs))


def _train(runs: Path, name: str, config: str, seed: int, overrides: tuple[str, ...] = (),
           inputs: tuple[str, ...] = ()) -> Step:
    """``seqlab train`` of one seed into ``RUNS/NAME_sSEED`` (done when its metrics.json exists, resumed from its
    checkpoint when killed)."""
    folder = f"{name}_s{seed}"
    sets = [item for override in (f"train.seed={seed}", *overrides) for item in ("--set", override)]
    command = ("seqlab", "train", config, *sets, "--output", str(runs / folder), "--quiet")
    return Step(f"train_{folder}", command, (f"{folder}/metrics.json",), inputs,
                resume=("seqlab", "train", "--resume", str(runs / folder), "--quiet"),
                resume_from=f"{folder}/checkpoint.pt")


def _skipgram_runs(runs: Path) -> list[Step]:
    """Part 6: the 300-d skip-gram vectors in the neural models, three seeds each beside their GloVe configs, and
    ``seqlab summarize --versus`` of each pair."""
    vectors = "features/skipgram300_wiki.txt"
    path = local(runs / vectors)
    feature = f"[{{type: embeddings, path: {path}, format: word2vec, lowercase: true, scale: 0.1}}]"
    groups = {  # name: (config, --set overrides, reads the skip-gram vectors)
        "semeval10_ea_markers": ("configs/semeval10_entity_attention.yaml", (), False),
        "semeval10_skipgram300": ("configs/semeval10_skipgram300.yaml", (f"model.embeddings.path={path}",), True),
        "conll03_glove_d975": ("configs/conll03_glove.yaml", ("train.threads=1",), False),
        "conll03_glove_skipgram300": ("configs/conll03_glove_skipgram300.yaml",
                                      ("train.threads=1", f"model.features={feature}"), True),
    }
    plan: list[Step] = []
    for name, (config, overrides, reads) in groups.items():
        plan += [_train(runs, name, config, seed, overrides, (vectors,) if reads else ()) for seed in SEEDS]
    for new, old in (("semeval10_skipgram300", "semeval10_ea_markers"), ("conll03_glove_skipgram300", "conll03_glove_d975")):
        folders = {name: [f"{name}_s{seed}" for seed in SEEDS] for name in (new, old)}
        command = ("seqlab", "summarize", *(str(runs / f) for f in folders[new]), "--versus",
                   *(str(runs / f) for f in folders[old]))
        plan.append(Step(f"versus_{new}", command, (), tuple(f"{f}/metrics.json" for name in (new, old)
                                                                for f in folders[name])))
    return plan


def steps(runs: Path, data: Path) -> list[Step]:
    """Every step in the order it runs: each representation, then the rows that read it."""
    brown = {c: ("brown", c) for c in CLUSTERS}
    cw = {d: ("cw", d) for d in DIMS}
    hlbl = {d: ("hlbl", d) for d in DIMS}
    plan: list[Step] = [_chunker(runs, ()), _ner(runs, ()), *(_greedy(runs, (), seed) for seed in SEEDS)]
    for c in CLUSTERS:
        plan += [_induce(runs, data, "brown", c), _chunker(runs, (brown[c],)), _ner(runs, (brown[c],))]
        if c == 1000:
            plan += [_greedy(runs, (brown[c],), seed) for seed in SEEDS]
    for d in DIMS:  # Table 2 reads the 50-d embeddings, Table 3 C&W 50 / 200 and HLBL 100, Figure 2 all four
        for kind, table in (("hlbl", hlbl), ("cw", cw)):
            plan += [_induce(runs, data, kind, d), _chunker(runs, (table[d],)), _ner(runs, (table[d],))]
        if d == 100:  # the paper's combinations, once their parts exist
            table3 = ((cw[50],), (hlbl[100],), (brown[1000], cw[50]), (brown[1000], hlbl[100]), (cw[50], hlbl[100]),
                      (brown[1000], cw[50], hlbl[100]))
            plan += [_chunker(runs, (brown[3200], cw[50])), _chunker(runs, (brown[1000], cw[50]))]
            plan += [_ner(runs, reprs) for reprs in table3[2:]]
            plan += [_greedy(runs, reprs, seed) for reprs in table3 for seed in SEEDS]  # Table 3's rows themselves
    skipgram = ("seqlab", "features", "skipgram", "--corpus", str(data / CORPUS), "--lowercase", "--quiet", "--dim",
                "300", "--out", str(runs / "features/skipgram300_wiki.txt"), "--model",
                str(runs / "features/skipgram300_wiki.bin"))  # for the neural taggers beside GloVe, not Tables 2-3
    plan.append(Step("induce_skipgram300", skipgram, ("features/skipgram300_wiki.txt", "features/skipgram300_wiki.bin")))
    plan += _skipgram_runs(runs)
    beyond = ("brown", 10_000)  # the paper's "would take several months": its rows too, to see if more clusters help
    plan += [_induce(runs, data, *beyond), _chunker(runs, (beyond,)), _ner(runs, (beyond,))]
    figure = ("python", "-m", "examples.turian2010_figure2", "--runs", str(runs), "--recorded", RECORDED, "--record",
              "--png", str(runs / "turian2010/figure2.png"))
    plan.append(Step("figure2", figure, ()))  # drawn again from whatever rows exist, and the new ones kept
    return plan


def status(step: Step, runs: Path) -> str:
    if step.outputs and all((runs / out).exists() for out in step.outputs):
        return "done"
    missing = [path for path in step.inputs if not (runs / path).exists()]
    if not missing:
        return "to run"
    return f"waits for {', '.join(missing[:2])}" + (f" and {len(missing) - 2} more" if len(missing) > 2 else "")


def run_step(step: Step, runs: Path) -> int:
    """Run one step with its output logged; record its command, exit status, wall and CPU seconds and peak RSS."""
    folder = runs / "turian2010"
    folder.mkdir(parents=True, exist_ok=True)
    for out in step.outputs:
        if not step.resume:  # seqlab train makes its own run directory (and removes it if it fails at once)
            (runs / out).parent.mkdir(parents=True, exist_ok=True)
    command = step.command_now(runs)
    start = time.perf_counter()
    with open(folder / f"{step.name}.log", "a", encoding="utf-8") as log:
        log.write(f"$ {' '.join(command)}\n")
        log.flush()
        try:
            child = subprocess.Popen(command, stdout=log, stderr=subprocess.STDOUT)
        except OSError as err:  # e.g. seqlab not installed in this environment
            log.write(f"cannot start {command[0]!r}: {err}\n")
            return 127
        try:
            _, wait_status, usage = os.wait4(child.pid, 0)  # this child's own CPU time and peak memory
        except KeyboardInterrupt:
            child.terminate()
            child.wait()
            raise
        child.returncode = code = os.waitstatus_to_exitcode(wait_status)
    record = {"step": step.name, "command": list(command), "returncode": code,
              "wall_s": round(time.perf_counter() - start, 1), "user_cpu_s": round(usage.ru_utime, 1),
              "system_cpu_s": round(usage.ru_stime, 1), "peak_rss_mb": round(usage.ru_maxrss / 1024, 1)}
    tmp = folder / f".{step.name}.json.tmp"
    tmp.write_text(json.dumps(record, indent=2) + "\n", encoding="utf-8")
    os.replace(tmp, folder / f"{step.name}.json")
    return code


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--runs", type=Path, default=Path("runs"), help="where outputs go (default runs/)")
    parser.add_argument("--only", metavar="REGEX", help="only the steps whose name matches (re.search)")
    parser.add_argument("--long", action="store_true", help="include Brown c = 10,000 (many CPU-hours)")
    parser.add_argument("--list", action="store_true", help="print every step and its status, run nothing")
    parser.add_argument("--dry-run", action="store_true", help="print the commands that would run, run nothing")
    args = parser.parse_args(argv)
    if args.runs.exists() and not args.runs.is_dir():
        parser.error(f"--runs: {args.runs} is a file, not a folder")
    try:
        pattern = re.compile(args.only) if args.only else None
    except re.error as err:
        parser.error(f"--only: not a regular expression ({err})")
    data = data_root() or Path("$SEQLAB_DATA")
    if not (data / CORPUS).exists() and not (args.list or args.dry_run):
        parser.error(f"{data / CORPUS} does not exist: set SEQLAB_DATA to the folder that holds {CORPUS}")
    chosen = [s for s in steps(args.runs, data)
              if (pattern is None or pattern.search(s.name)) and (args.long or not s.long)]
    if not chosen:
        parser.error(f"--only {args.only!r} matches no step (--list shows them)")
    if args.list:
        for step in chosen:
            print(f"{step.name:40s} {status(step, args.runs)}")
        return 0
    failed = []
    for step in chosen:
        state = status(step, args.runs)
        if state == "done":
            continue
        if state.startswith("waits"):
            print(f"{step.name}: skipped, {state}", flush=True)
            continue
        print(f"{step.name}: {' '.join(step.command_now(args.runs))}", flush=True)
        if args.dry_run:
            continue
        code = run_step(step, args.runs)
        if code != 0:
            failed.append(step.name)
            print(f"{step.name}: failed with exit status {code}; see {args.runs / 'turian2010' / step.name}.log",
                  flush=True)
    if failed:
        print(f"failed: {', '.join(failed)}", file=sys.stderr)
    return 1 if failed else 0


if __name__ == "__main__":
    try:
        sys.exit(main())
    except BrokenPipeError:  # --list piped into head: the reader has what it wanted
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        sys.exit(0)
