"""How :mod:`probes.sweep` runs a probe and judges it: ``python -m seqlab ARGS`` forked from a process that has
seqlab imported (or started as a process of its own, for signals), the outcome classes read from the exit
status and standard error, and the checks that an ``ok`` outcome's output is right."""
from __future__ import annotations

import collections
import json
import os
import signal
import subprocess
import sys
import time
import traceback
from dataclasses import dataclass
from pathlib import Path
from typing import Callable

from probes.inputs import NER, ROOT

#: What the verbs import, loaded before the first fork so that no probe pays for it.
PRELOADED = ("seqlab.cli", "seqlab.apps.tasks", "seqlab.tagging.api", "seqlab.tagging.task", "seqlab.relation.api",
             "seqlab.relation.task", "seqlab.core.trainer", "seqlab.apps.package", "seqlab.data.metrics",
             "seqlab.apps.onnx_export", "features.brown", "features.cw", "features.corpus")
ENV = {"PYTHONPATH": str(ROOT), "OMP_NUM_THREADS": "1", "SEQLAB_DATA": str(NER)}


@dataclass
class Result:
    """How a probe's process ended: exit status, standard output and error, CPU seconds (user and system), its
    peak resident memory above the forking process's (MB), and ``killed``: "time" or "memory" when it was
    stopped at the probe's bound."""

    rc: int
    out: str
    err: str
    cpu_s: float = 0.0
    peak_mb: float = 0.0
    killed: str = ""


def _rss_mb(pid: int) -> float:
    """The resident memory of process ``pid`` now, in MB (0 once it is gone)."""
    try:
        with open(f"/proc/{pid}/statm") as handle:
            return int(handle.read().split()[1]) * os.sysconf("SC_PAGE_SIZE") / 2**20
    except (OSError, IndexError, ValueError):
        return 0.0


def fork_run(argv: list[str], cwd: Path, *, env: dict[str, str] | None = None, stdout: Path | None = None,
             stdin: Path | None = None, timeout: float = 300, max_mb: float | None = None,
             entry: Callable[[list[str]], int | None] | None = None) -> Result:
    """``python -m seqlab ARGV`` in a child forked from this process (seqlab already imported), reading ``stdin``
    (default /dev/null); killed after ``timeout`` seconds, or once its memory grows past ``max_mb`` MB.
    ``entry``: what the child runs instead of seqlab's ``main`` (a probe of the Python API)."""
    if entry is None:
        from seqlab.cli import main as entry

    out_file = stdout or cwd / f".out{os.getpid()}"
    err_file = cwd / f".err{os.getpid()}"
    sys.stdout.flush(), sys.stderr.flush()
    base = _rss_mb(os.getpid())
    pid = os.fork()
    if pid == 0:  # the child: exits through os._exit, never returns
        code = 1
        try:
            os.chdir(cwd)
            os.environ.update(ENV | (env or {}))
            os.dup2(os.open(stdin or os.devnull, os.O_RDONLY), 0)
            os.dup2(os.open(out_file, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644), 1)
            os.dup2(os.open(err_file, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644), 2)
            sys.argv = ["seqlab", *argv]
            try:
                code = entry(argv)
            except SystemExit as exit_:
                code = exit_.code if isinstance(exit_.code, int) else (print(exit_.code, file=sys.stderr) or 1)
            except BaseException:  # what the interpreter would print
                traceback.print_exc()
                code = 1
            try:
                sys.stdout.flush()
            except Exception as err:  # noqa: BLE001  the interpreter's "Exception ignored" at exit
                print(f"Exception ignored on flushing sys.stdout:\n{err!r}", file=sys.stderr)
                code = 120
            sys.stderr.flush()
        finally:
            os._exit(code or 0)
    deadline, killed = time.monotonic() + timeout, ""
    while True:
        done, status, usage = os.wait4(pid, os.WNOHANG)
        if done:
            break
        if time.monotonic() > deadline:
            killed = "time"
        elif max_mb is not None and _rss_mb(pid) - base > max_mb:
            killed = "memory"
        if killed:
            os.kill(pid, signal.SIGKILL)
            _, status, usage = os.wait4(pid, 0)
            break
        time.sleep(0.02)
    rc = -9 if killed else os.waitstatus_to_exitcode(status)
    out = "" if stdout else out_file.read_text(errors="replace")
    return Result(rc, out, err_file.read_text(errors="replace"), usage.ru_utime + usage.ru_stime,
                  max(0.0, usage.ru_maxrss / 1024 - base), killed)


def real_run(argv: list[str], cwd: Path, env: dict[str, str] | None = None) -> subprocess.Popen:
    """``python -m seqlab ARGV`` as a process of its own, with Ctrl-C's default meaning (a sweep started in
    the background of a shell has SIGINT ignored, and its children would inherit that)."""
    return subprocess.Popen([sys.executable, "-m", "seqlab", *argv], cwd=cwd, env={**os.environ, **ENV, **(env or {})},
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL))


def finish(proc: subprocess.Popen) -> Result:
    out, err = proc.communicate()
    return Result(proc.returncode, out, err)


def classify(r: Result) -> str:
    """ok, clear-error, traceback or unclear-error, from the exit status and standard error alone; hang or
    memory when the process was killed at its probe's bound on time or memory."""
    if r.killed:
        return "hang" if r.killed == "time" else "memory"
    if "Traceback (most recent call last)" in r.err:
        return "traceback"
    if r.rc == 0:
        return "ok"
    lines = [line for line in r.err.splitlines() if line.strip()]
    messages = [line for line in lines if "error:" in line or "interrupted" in line]
    return "clear-error" if len(messages) == 1 and messages[0] == lines[-1] else "unclear-error"


class Sweep:
    """Runs probes and records their outcomes."""

    def __init__(self, scratch: Path, only: str | None) -> None:
        self.scratch, self.only = scratch, only
        self.outcomes: collections.Counter[str] = collections.Counter()
        self.failures: list[dict] = []
        self.skipped: list[dict] = []

    def record(self, name: str, expect: str, outcome: str, detail: str = "", err: str = "") -> None:
        self.outcomes[outcome] += 1
        if outcome != expect:
            self.failures.append({"probe": name, "expected": expect, "outcome": outcome, "detail": detail,
                                  "stderr": err[-400:]})

    def skip(self, name: str, reason: str) -> None:
        self.skipped.append({"probe": name, "reason": reason})

    def wants(self, name: str) -> bool:
        """Whether ``--only`` lets the probe ``name`` run."""
        return not self.only or self.only in name

    def probe(self, name: str, argv: list[str], expect: str, check: Callable[[Result], str | None] | None = None,
              env: dict[str, str] | None = None, stdout: Path | None = None,
              after: Callable[[], str | None] | None = None, *, says: str | None = None, stdin: Path | None = None,
              timeout: float = 300, max_mb: float | None = None, cpu: float | None = None,
              entry: Callable[[list[str]], int | None] | None = None,
              security: Callable[[], str | None] | None = None) -> Result | None:
        """Run one probe (:func:`fork_run`) and :meth:`judge` it."""
        if not self.wants(name):
            return None
        r = fork_run(argv, self.scratch, env=env, stdout=stdout, stdin=stdin, timeout=timeout, max_mb=max_mb,
                     entry=entry)
        self.judge(name, r, expect, check, after, says=says, cpu=cpu, security=security)
        return r

    def judge(self, name: str, r: Result, expect: str, check: Callable[[Result], str | None] | None = None,
              after: Callable[[], str | None] | None = None, *, says: str | None = None,
              cpu: float | None = None, security: Callable[[], str | None] | None = None) -> None:
        """Record how ``r`` ended: ``check`` (on ok) returns what is wrong, ``after`` (always) what data was lost,
        ``security`` (always) what an attacker got; a one-line error must hold ``says`` (the key, argument or file
        it is about), and the process may use at most ``cpu`` seconds (beyond: ``hang``)."""
        outcome, detail = classify(r), ""
        if outcome == "hang":
            detail = "killed at the time limit"
        elif outcome == "memory":
            detail = f"killed: its memory grew past the limit ({r.peak_mb:.0f} MB at most)"
        elif outcome == "ok" and expect == "clear-error":
            outcome, detail = "silent-wrong", "bad input accepted"
        elif outcome == "ok" and check is not None:
            try:
                detail = check(r) or ""
            except Exception as err:  # noqa: BLE001  output the check cannot read is a wrong result, not a stop
                detail = f"the check could not read the output: {type(err).__name__}: {err}"
            outcome = "silent-wrong" if detail else "ok"
        elif outcome == "clear-error" and says is not None and says not in r.err:
            outcome, detail = "unclear-error", f"the error does not say {says!r}"
        if cpu is not None and r.cpu_s > cpu and outcome not in ("hang", "memory"):
            outcome, detail = "hang", f"{r.cpu_s:.1f} CPU seconds (at most {cpu})"
        if after is not None and outcome != "traceback":
            lost = after()
            if lost:
                outcome, detail = "data-lost", lost
        breach = security() if security is not None else None
        if breach:
            outcome, detail = "security", breach
        self.record(name, expect, outcome, detail, r.err)

    def report(self) -> dict:
        return {"probes": sum(self.outcomes.values()), "outcomes": dict(sorted(self.outcomes.items())),
                "failures": len(self.failures), "skipped": self.skipped, "failing": self.failures}


# ---------------------------------------------------------------- checks of results

def gold_tokens(path: Path) -> list[str]:
    words = []
    for line in path.read_bytes().decode("utf-8-sig").replace("\r", "").split("\n"):
        fields = line.split("\t") if "\t" in line else line.split()
        if fields and fields[0] != "-DOCSTART-":
            words.append(fields[0].strip(" ") or fields[0])
    return words


def check_eval(gold: Path, pred: Path, n: int, scheme_prefixes: str | None = None) -> Callable[[Result], str | None]:
    """eval's report counts ``n`` tokens, and its prediction file has the gold file's tokens, in order."""
    def check(r: Result) -> str | None:
        if f"processed {n} tokens" not in r.out:
            return f"report does not count {n} tokens: {r.out.splitlines()[:1]}"
        if not pred.is_file():
            return f"no prediction file {pred.name}"
        rows = [line.split(" ") for line in pred.read_text().splitlines() if line.strip()]
        rows = [row for row in rows if row[0] != "-DOCSTART-"]
        if [row[0] for row in rows] != gold_tokens(gold) and len(rows) != n:
            return f"prediction file has {len(rows)} token lines, gold {n}"
        if any("\ufeff" in row[0] for row in rows):
            return "a byte-order mark was read as part of a token"
        if scheme_prefixes and any(t[0] not in scheme_prefixes for row in rows for t in row[-2:]):
            return f"labels outside the gold scheme's prefixes {scheme_prefixes}"
        return None
    return check


def check_score_perfect(path: Path) -> Callable[[Result], str | None]:
    """gold copied as the prediction scores 100 on every non-blank line (conlleval counts -DOCSTART- lines)."""
    def check(r: Result) -> str | None:
        n = sum(1 for line in path.read_bytes().decode("utf-8").split("\n") if line.split())
        if f"processed {n} tokens" not in r.out:
            return f"report does not count {n} tokens: {r.out.splitlines()[:1]}"
        if "with 0 phrases" not in r.out and "FB1: 100.00" not in r.out.splitlines()[1]:
            return f"gold scored against itself is not 100: {r.out.splitlines()[1]}"
        return None
    return check


def check_run(run: Path) -> Callable[[Result], str | None]:
    return lambda r: None if (run / "model.pt").is_file() and (run / "metrics.json").is_file() else \
        f"{run.name}: no model.pt or metrics.json after exit 0"


def text_lines(data: bytes) -> list[str]:
    text = data.decode("utf-8")
    return (text[1:] if text.startswith("\ufeff") else text).split("\n")  # lines end at \n only, as Python reads


def check_jsonl(data: bytes) -> Callable[[Result], str | None]:
    """Every span's character offsets point at its text in its input line; lines with words are tagged."""
    lines = text_lines(data)
    def check(r: Result) -> str | None:
        seen = set()
        for raw in r.out.splitlines():
            doc = json.loads(raw)
            seen.add(doc["line"])
            line = lines[doc["line"] - 1].rstrip("\r\n")
            for span in doc["spans"]:
                if line[span["start"]:span["end"]] != span["text"]:
                    return f"line {doc['line']}: span {span} is {line[span['start']:span['end']]!r} in the input"
            if any("\ufeff" in t for t in doc["tokens"]):
                return "a byte-order mark was read as a token"
        wanted = {i for i, line in enumerate(lines, 1) if line.split()}
        return f"lines {sorted(wanted - seen)[:5]} have words and no output" if wanted - seen else None
    return check


def check_conll_tokens(data: bytes) -> Callable[[Result], str | None]:
    """``tag --format conll`` writes one token per line for each input word, and no byte-order mark."""
    words = sum(len(line.split()) for line in text_lines(data))
    def check(r: Result) -> str | None:
        rows = [line for line in r.out.splitlines() if line.strip()]
        if words and not rows:
            return "no tokens written"
        if any(len(row.split(" ")) < 2 for row in rows):
            return "a token line without a label"
        return "a byte-order mark was read as a token" if any("\ufeff" in row for row in rows) else None
    return check


def check_file(path: Path, min_lines: int = 1) -> Callable[[Result], str | None]:
    return lambda r: None if path.is_file() and len(path.read_text().splitlines()) >= min_lines else \
        f"{path.name}: missing or under {min_lines} lines after exit 0"
