"""Probes of seqlab's defences for :mod:`probes.sweep`, beyond its configs (:mod:`probes.configs`):

* tokenizer time: pathological lines (60 KB of ``_+`` then `` @``, 50 KB of ``a,``, 3,000 spaces, runs of
  punctuation, of e-mail and URL starts, of digits) through ``seqlab tag - --format conll``: each answered with one
  labelled line per token the tokenizer makes, in at most 10 CPU seconds and 1.5 GB more memory;
* the Python API (each call in a forked process, so a crash or traceback is seen): ``tag`` of a lone surrogate,
  bytes or None, ``tag_tokens`` of an empty sentence (an empty answer), of non-string tokens, of empty and space
  tokens (tokens, as in a file eval reads: each tagged), of a plain string, ``tag_many`` with ``batch_size`` 0,
  -1, 2.5 or True, or of a plain string: a ``SeqlabError`` naming the argument, or the right answer;
* the command line: ``seqlab tag`` with standard input, output or error closed (``<&-``, ``>&-``, ``2>&-``, started
  by a shell), ``seqlab serve --port 70000`` and other bad ports, ``--help`` of every verb (each positional
  argument has its help);
* training faults (real ``python -m seqlab`` processes): two trainings whose ``--output`` folders share a new
  parent, the first failing on a malformed file while the second trains (the second run must end intact, else
  ``data-lost``); SIGTERM during a tiny training says how to go on, and ``--resume`` (or the same command) finishes.
"""
from __future__ import annotations

import argparse
import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any, Callable

from probes.inputs import NER
from probes.runner import ENV, Result, Sweep, check_conll_tokens, check_run, classify, finish, real_run

#: A pathological line is tagged within this many CPU seconds (the model's loading included) and this much memory.
TOKENIZER_CPU_S = 10.0
MAX_MB = 1500.0


# ---------------------------------------------------------------- tokenizer time

def tokenizer_lines() -> dict[str, str]:
    """Lines that a tokenizer with backtracking or quadratic joining would take minutes over, by name."""
    return {
        "60 KB of _+ then @": "_+" * 30_000 + " @", "50 KB of a,": "a," * 25_000, "3,000 spaces": " " * 3_000,
        "3,000 spaces then a word": " " * 3_000 + "Paris", "a word, 3,000 spaces, a word": "Paris" + " " * 3_000 + "Bonn",
        "30,000 full stops": "." * 30_000, "30,000 hyphens then a word": "-" * 30_000 + " x",
        "15,000 ?!": "?!" * 15_000, "30,000 apostrophes": "'" * 30_000, "20,000 opening brackets": "(" * 20_000,
        "3,000 runs of mixed punctuation": ",.;:!?'\"()[]{}" * 3_000, "20,000 a@ (e-mail starts)": "a@" * 20_000,
        "10,000 a.b@": "a.b@" * 10_000, "5,000 http://": "http://" * 5_000, "25,000 1, (a number run)": "1," * 25_000,
        "25,000 1.": "1." * 25_000, "10,000 U.S.": "U.S." * 10_000, "10,000 tabs and spaces then a word": "\t " * 10_000 + "x",
    }


def check_tokens(line: str) -> Callable[[Result], str | None]:
    """``tag --format conll`` wrote one labelled line per token the tokenizer makes of ``line``, in order."""
    from features.tokenize import sentence_tokens

    words = [w for sentence in (sentence_tokens(line) if line.strip() else []) for w in sentence.words]

    def check(r: Result) -> str | None:
        rows = [row.split(" ") for row in r.out.splitlines() if row.strip()]
        if any(len(row) < 2 for row in rows):
            return "a token line without a label"
        got = [row[0] for row in rows]
        return None if got == words else f"{len(got)} token lines for the tokenizer's {len(words)} tokens"
    return check


def tokenizer_probes(sw: Sweep, model: str) -> None:
    folder = sw.scratch / "tokenizer"
    folder.mkdir()
    verb = ["tag", "-"] if model == "en-ner-conll03" else ["tag", model, "-"]  # the installed model by default
    for name, line in tokenizer_lines().items():
        path = folder / f"{len(os.listdir(folder))}.txt"
        path.write_text(line + "\n", encoding="utf-8")
        sw.probe(f"tokenizer time: {name}", [*verb, "--format", "conll"], "ok", check_tokens(line), stdin=path,
                 cpu=TOKENIZER_CPU_S, timeout=120, max_mb=MAX_MB)


# ---------------------------------------------------------------- the Python API

def _tokens(sentences: Any) -> list[list[str]]:
    """Each tagged sentence's tokens: what ``tag_tokens`` answered, as JSON."""
    return [s.tokens for s in sentences]


def _labelled(sentences: Any) -> list[list[Any]]:
    """Each tagged sentence's tokens and how many labels it has: what ``tag_tokens`` answered, as JSON."""
    return [[s.tokens, len(s.labels)] for s in sentences]


def _load_missing(tagger: Any) -> Any:
    """``seqlab.load`` of a run directory that is not there."""
    import seqlab

    return seqlab.load("/nonexistent/run")


#: name -> (call on a loaded tagger, expected outcome, what the error says or the answer (as JSON) must be)
API_CASES: dict[str, tuple[Callable[[Any], Any], str, Any]] = {
    "tag a lone surrogate": (lambda t: t.tag("Paris \ud800 Bonn"), "clear-error", "character 7 is a lone surrogate"),
    "tag bytes": (lambda t: t.tag(b"Paris"), "clear-error", "expected a string, got bytes"),
    "tag None": (lambda t: t.tag(None), "clear-error", "expected a string, got NoneType"),
    "tag an unknown scheme": (lambda t: t.tag("Paris", scheme="bio"), "clear-error", "'bio'"),
    "tag an empty string": (lambda t: len(t.tag("").sentences), "ok", 0),
    "tag_tokens an empty sentence": (lambda t: _tokens(t.tag_tokens([[]])), "ok", [[]]),
    "tag_tokens an empty sentence between two": (lambda t: _tokens(t.tag_tokens([["Paris"], [], ["Bonn"]])), "ok",
                                                 [["Paris"], [], ["Bonn"]]),
    "tag_tokens no sentences": (lambda t: _tokens(t.tag_tokens([])), "ok", []),
    "tag_tokens agrees with tag": (lambda t: t.tag_tokens([["Angela", "Merkel", "visited", "Paris", "."]])[0].labels
                                   == t.tag("Angela Merkel visited Paris .").sentences[0].labels, "ok", True),
    "tag_tokens a number token": (lambda t: t.tag_tokens([["Paris", 3]]), "clear-error", "sentence 1, token 2"),
    "tag_tokens a None token": (lambda t: t.tag_tokens([["Paris", None]]), "clear-error", "sentence 1, token 2"),
    # an empty or space token is a token, as in a CoNLL file eval reads (a line opening with TAB): tagged, kept
    "tag_tokens an empty token": (lambda t: _labelled(t.tag_tokens([["Paris", ""]])), "ok", [[["Paris", ""], 2]]),
    "tag_tokens a whitespace token": (lambda t: _labelled(t.tag_tokens([[" "]])), "ok", [[[" "], 1]]),
    "tag_tokens a lone surrogate token": (lambda t: t.tag_tokens([["Paris", "\udc80"]]), "clear-error",
                                          "lone surrogate"),
    "tag_tokens a plain string": (lambda t: t.tag_tokens("Paris is nice"), "clear-error",
                                  "expected a list of sentences"),
    "tag_tokens a list of strings": (lambda t: t.tag_tokens(["Paris", "is"]), "clear-error", "sentence 1"),
    "tag_tokens bytes": (lambda t: t.tag_tokens(b"Paris"), "clear-error", "expected a list of sentences"),
    "tag_tokens a generator": (lambda t: t.tag_tokens(s for s in [["Paris"]]), "clear-error", "got generator"),
    "tag_tokens batch_size=0": (lambda t: t.tag_tokens([["Paris"]], batch_size=0), "clear-error", "batch_size"),
    "tag_many batch_size=0": (lambda t: list(t.tag_many(["Paris"], batch_size=0)), "clear-error", "batch_size"),
    "tag_many batch_size=-1": (lambda t: list(t.tag_many(["Paris"], batch_size=-1)), "clear-error", "batch_size"),
    "tag_many batch_size=2.5": (lambda t: list(t.tag_many(["Paris"], batch_size=2.5)), "clear-error", "batch_size"),
    "tag_many batch_size=True": (lambda t: list(t.tag_many(["Paris"], batch_size=True)), "clear-error", "batch_size"),
    "tag_many pool=0": (lambda t: list(t.tag_many(["Paris"], pool=0)), "clear-error", "pool"),
    "tag_many a non-string text": (lambda t: list(t.tag_many(["Paris", 3])), "clear-error", "text 2"),
    "tag_many a lone surrogate in text 2": (lambda t: list(t.tag_many(["Paris", "x\ud800"])), "clear-error",
                                            "text 2: character 2"),
    "tag_many a plain string": (lambda t: len(list(t.tag_many("Paris is nice"))), "clear-error", "tag_many"),
    "load a missing run directory": (_load_missing, "clear-error", "/nonexistent/run"),
}


def api_entry(argv: list[str]) -> int:
    """What a probe's forked process runs: load ``argv[0]``, make the call ``argv[1]`` names, print its answer as
    JSON; a ``SeqlabError`` is printed as one ``error:`` line (exit 2), anything else escapes as a traceback."""
    import seqlab
    from seqlab.core.errors import SeqlabError

    call = API_CASES[argv[1]][0]
    try:
        answer = call(seqlab.load(argv[0]))
    except SeqlabError as err:
        print(f"seqlab api: error: {err}", file=sys.stderr)
        return 2
    print(json.dumps(answer))
    return 0


def api_probes(sw: Sweep, tagger: Path) -> None:
    for name, (_, expect, want) in API_CASES.items():
        check = (lambda r, want=want: None if json.loads(r.out) == want else f"answered {r.out.strip()[:200]}, "
                 f"not {json.dumps(want)}")
        sw.probe(f"api: {name}", [str(tagger), name], expect, check, says=want if expect == "clear-error" else None,
                 entry=api_entry, timeout=120, max_mb=MAX_MB)


# ---------------------------------------------------------------- the command line

def whole(path: Path, lines: int) -> Callable[[], str | None]:
    """``path`` is absent or holds all its ``lines`` non-blank lines: never half-written."""
    def check() -> str | None:
        if not path.exists() or len([x for x in path.read_text().splitlines() if x.strip()]) == lines:
            return None
        return f"{path.name} was left half-written"
    return check


def shell_run(argv: list[str], redirect: str, cwd: Path, timeout: float = 180) -> Result:
    """``python -m seqlab ARGV`` started by a shell with ``redirect`` (``<&-``: without standard input)."""
    command = f'exec "$0" -m seqlab "$@" {redirect}'
    try:
        done = subprocess.run(["bash", "-c", command, sys.executable, *argv], cwd=cwd, env={**os.environ, **ENV},
                              capture_output=True, text=True, timeout=timeout)
    except subprocess.TimeoutExpired as err:
        return Result(-9, "", str(err.stderr or ""), killed="time")
    return Result(done.returncode, done.stdout, done.stderr)


def verb_parsers(parser: argparse.ArgumentParser, path: tuple[str, ...] = ()) -> dict[tuple[str, ...], Any]:
    """Every verb (``train``, ``score conll``, ...) of ``parser`` with its own parser."""
    found: dict[tuple[str, ...], Any] = {}
    for action in parser._actions:  # noqa: SLF001  argparse keeps its sub-commands nowhere else
        if isinstance(action, argparse._SubParsersAction):  # noqa: SLF001
            for name, sub in action.choices.items():
                if sub not in found.values():  # an alias names a parser already found
                    found[(*path, name)] = sub
                    found.update(verb_parsers(sub, (*path, name)))
    return found


def positional_help(parser: argparse.ArgumentParser) -> Callable[[Result], str | None]:
    """``--help`` printed a usage line and, for each positional argument of ``parser``, its help."""
    def check(r: Result) -> str | None:
        if not r.out.startswith("usage:"):
            return "no usage line"
        lines = r.out.splitlines()
        for action in parser._actions:  # noqa: SLF001
            if action.option_strings or action.help == argparse.SUPPRESS or \
                    isinstance(action, argparse._SubParsersAction):  # noqa: SLF001
                continue
            name = action.metavar if isinstance(action.metavar, str) else action.dest
            rows = [i for i, line in enumerate(lines) if line.startswith(f"  {name}") and
                    (line[2 + len(name):][:1] in ("", " "))]
            if not rows:
                return f"positional {name!r} is not listed"
            i = rows[0]
            following = lines[i + 1] if i + 1 < len(lines) else ""
            if not lines[i][2 + len(name):].strip() and not (following.startswith("    ") and following.strip()):
                return f"positional {name!r} has no help"
        return None
    return check


def cli_probes(sw: Sweep, tagger: Path, packaged: Path) -> None:
    folder = sw.scratch / "cli"
    folder.mkdir()
    text = folder / "text.txt"
    text.write_text("Angela Merkel visited Paris .\n")
    pred = folder / "dev.pred"
    streams = {
        "tag, standard input closed": (["tag", str(tagger)], "<&-", "clear-error", "standard input", None),
        "tag -, standard input closed": (["tag", str(tagger), "-"], "<&-", "clear-error", "standard input", None),
        "tag, standard output closed": (["tag", str(tagger), str(text)], ">&-", "clear-error", "standard output", None),
        "tag, standard error closed": (["tag", str(tagger), str(text), "--format", "conll"], "2>&-", "ok", None, None),
        "eval --output, standard output closed": (["eval", str(tagger), str(NER / "dev.txt"), "--output", str(pred)],
                                                  ">&-", "clear-error", "standard output", whole(pred, 39)),
    }
    for name, (argv, redirect, expect, says, after) in streams.items():
        if sw.wants(f"cli: {name}"):
            check = check_conll_tokens(text.read_bytes()) if expect == "ok" else None
            sw.judge(f"cli: {name}", shell_run(argv, redirect, sw.scratch), expect, check, after, says=says)
    for port in ("70000", "65536", "-1", "http"):
        sw.probe(f"cli: serve --port {port}", ["serve", str(packaged), "--port", port], "clear-error", says="--port",
                 timeout=120)
    from seqlab.cli import parser

    for path, sub in verb_parsers(parser()).items():
        sw.probe(f"cli: {' '.join(path)} --help", [*path, "--help"], "ok", positional_help(sub), timeout=120)


# ---------------------------------------------------------------- training faults

def _poll(predicate: Callable[[], bool], proc: subprocess.Popen, every: float, limit: float = 120) -> bool:
    """Whether ``predicate`` held, checked each ``every`` seconds while ``proc`` runs, within ``limit`` seconds."""
    deadline = time.monotonic() + limit
    while time.monotonic() < deadline and proc.poll() is None:
        if predicate():
            return True
        time.sleep(every)
    return False


def malformed(sentences: int) -> str:
    """The tiny NER training file's sentences repeated ``sentences`` times over, then a line of 2 columns of 4."""
    blocks = [b.strip("\n") for b in (NER / "train.txt").read_text().split("\n\n") if b.strip()]
    return "\n\n".join(blocks[i % len(blocks)] for i in range(sentences)) + "\n\nParis NNP\n"


def shared_parent_probes(sw: Sweep) -> None:
    """Two trainings in one new parent folder: the first (made the parent; stopped with SIGSTOP while it reads its
    malformed data) fails once the second has started; the second must finish with its run intact."""
    name = "training faults: two runs in one new parent"
    if not sw.wants(name):
        return
    bad = sw.scratch / "malformed_train.txt"
    bad.write_text(malformed(20_000))
    parent = sw.scratch / "new_parent" / "runs"
    first, second = parent / "bad_data", parent / "good_data"
    tiny = ["train", str(NER / "tiny.yaml"), "--set", "train.epochs=1", "--quiet"]
    p1 = real_run([*tiny, "--set", f"data.train={bad}", "--output", str(first)], sw.scratch)
    overlapped = _poll(first.is_dir, p1, 0.001)
    if overlapped:
        p1.send_signal(signal.SIGSTOP)
    p2 = real_run([*tiny, "--output", str(second)], sw.scratch)
    if overlapped:
        _poll(lambda: (second / "config.yaml").is_file(), p2, 0.02)
        p1.send_signal(signal.SIGCONT)
    else:
        sw.skip(f"{name}: overlap", "the first training ended before its run directory was seen")
    sw.judge(f"{name}: the first, on a malformed file, fails", finish(p1), "clear-error", says=bad.name)
    done = check_run(second)
    sw.judge(f"{name}: the second finishes intact", finish(p2), "ok", done,
             after=lambda: None if done(Result(0, "", "")) is None else f"{second} lost its run")


def sigterm_probes(sw: Sweep) -> None:
    """SIGTERM a tiny training after its first checkpoint, and before it: one line says how to go on (exit 143),
    and ``--resume`` (or, with nothing saved, the same command) then finishes the run."""
    points = {"after the first checkpoint": lambda d: (d / "checkpoint.pt").is_file(),
              "before the first checkpoint": lambda d: (d / "config.yaml").is_file()}
    for point, when in points.items():
        name = f"training faults: SIGTERM {point}"
        if not sw.wants(name):
            continue
        run = sw.scratch / f"sigterm_{point.split()[0]}"
        argv = ["train", str(NER / "tiny.yaml"), "--set", "train.epochs=8", "--quiet", "--output", str(run)]
        proc = real_run(argv, sw.scratch)
        if not _poll(lambda: when(run), proc, 0.02):
            sw.skip(name, f"training ended (rc {finish(proc).rc}) before that point")
            continue
        proc.send_signal(signal.SIGTERM)
        r = finish(proc)
        saved = (run / "checkpoint.pt").is_file()
        says = f"seqlab train --resume {run}" if saved else "run the same command again"
        if r.rc != 128 + signal.SIGTERM and classify(r) == "clear-error":
            sw.record(name, "clear-error", "unclear-error", f"exit status {r.rc}, not 143", r.err)
        else:
            sw.judge(name, r, "clear-error", says=says)
        again = ["train", "--resume", str(run), "--quiet"] if saved else [*argv[:3], "train.epochs=1", *argv[4:]]
        sw.probe(f"{name}: {'--resume' if saved else 'the same command again'}", again, "ok", check_run(run))
