"""A sweep of bad inputs and faults through the command line, counting tracebacks and wrong results.

    python benchmarks/probe_sweep.py [--model en-ner-conll03] [--no-tmpfs] [--train]

Each probe runs ``python -m seqlab ...`` in a fresh process on a scratch folder and states what must happen:
``ok`` (exit 0, plus a check of the output where one can be wrong) or ``error`` (a non-zero exit with a
one-line ``seqlab: error: ...`` and no Python traceback). Kinds: input files (empty, binary, not UTF-8,
a folder, missing, NFD text, CRLF, a long line) x the verbs that read them (tag, eval, score, train); config
errors; damaged model files; a full disk (a 3 MB tmpfs, when this process may mount one: root on Linux);
two writers on one run directory (with ``--train``: it trains the tiny test fixture twice at once).
Prints one JSON object: probes run, tracebacks, wrong results, and each failure with its stderr tail.
"""
from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import unicodedata
import zipfile
from pathlib import Path
from typing import Callable

ROOT = Path(__file__).resolve().parents[1]
TINY = ROOT / "tests" / "fixtures" / "ner"
TEXT = "Angela Merkel visited Montréal and Paris. The EU met in Brussels.\n"
ENV = {**os.environ, "PYTHONPATH": str(ROOT), "OMP_NUM_THREADS": "1", "SEQLAB_DATA": str(TINY)}


def run(argv: list[str], cwd: Path, stdout: Path | None = None, timeout: int = 300) -> subprocess.CompletedProcess:
    out = open(stdout, "w") if stdout else subprocess.PIPE
    try:
        return subprocess.run([sys.executable, "-m", "seqlab", *argv], cwd=cwd, env=ENV, stdout=out,
                              stderr=subprocess.PIPE, text=True, timeout=timeout)
    finally:
        if stdout:
            out.close()


class Sweep:
    def __init__(self, scratch: Path) -> None:
        self.scratch, self.count, self.failures = scratch, 0, []

    def probe(self, name: str, argv: list[str], expect: str, check: Callable[[str], bool] | None = None,
              stdout: Path | None = None) -> None:
        self.count += 1
        proc = run(argv, self.scratch, stdout)
        err = proc.stderr or ""
        problem = None
        if "Traceback (most recent call last)" in err:
            problem = "traceback"
        elif expect == "ok" and proc.returncode != 0:
            problem = f"exit {proc.returncode}"
        elif expect == "error" and (proc.returncode == 0 or "seqlab: error:" not in err):
            problem = "no clear error" if proc.returncode else "accepted"
        elif check is not None and not check(proc.stdout if stdout is None else stdout.read_text(errors="replace")):
            problem = "wrong result"
        if problem:
            self.failures.append({"probe": name, "problem": problem, "rc": proc.returncode, "stderr": err[-400:]})


def files(scratch: Path) -> dict[str, Path]:
    """Input files of every kind, in ``scratch``."""
    made = {"empty": b"", "binary": bytes(range(256)) * 8, "latin1": "Montr\xe9al est belle.\n".encode("latin-1"),
            "crlf": TEXT.replace("\n", "\r\n").encode(), "nfd": unicodedata.normalize("NFD", TEXT).encode(),
            "long_line": (TEXT.strip() + " ") .encode() * 4000 + b"\n", "zero_width": "Paris\u200bLondon met.\n".encode()}
    paths = {}
    for name, data in made.items():
        paths[name] = scratch / f"{name}.txt"
        paths[name].write_bytes(data)
    paths["folder"] = scratch / "a_folder"
    paths["folder"].mkdir(exist_ok=True)
    paths["missing"] = scratch / "missing.txt"
    return paths


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--model", default="en-ner-conll03")
    p.add_argument("--no-tmpfs", action="store_true", help="skip the full-disk probes")
    p.add_argument("--train", action="store_true", help="also train the tiny fixture (two writers, disk full)")
    args = p.parse_args()
    scratch = Path(tempfile.mkdtemp(prefix="probe-"))
    sweep, inputs = Sweep(scratch), files(scratch)
    model = args.model
    nfc_spans = json.loads(run(["tag", model, str(inputs["crlf"]), "--format", "jsonl"], scratch).stdout
                           .splitlines()[0])["spans"]
    # input files x verbs
    for kind, path in inputs.items():
        bad = kind in ("binary", "latin1", "folder", "missing")
        sweep.probe(f"tag {kind}", ["tag", model, str(path), "--format", "jsonl"], "error" if bad else "ok")
        sweep.probe(f"eval {kind}", ["eval", model, str(path), "--output", str(scratch / f"{kind}.pred")], "error")
        sweep.probe(f"score {kind}", ["score", "conll", str(path)], "error" if kind != "empty" else "ok")
        sweep.probe(f"train config {kind}", ["train", str(path), "--output", str(scratch / f"run_{kind}")], "error")
    same = lambda out: [(s["type"], s["text"]) for s in json.loads(out.splitlines()[0])["spans"]] == \
        [(s["type"], unicodedata.normalize("NFD", s["text"])) for s in nfc_spans]  # noqa: E731
    sweep.probe("tag nfd finds the nfc entities", ["tag", model, str(inputs["nfd"]), "--format", "jsonl"], "ok", same)
    sweep.probe("tag long line: one document", ["tag", model, str(inputs["long_line"]), "--format", "jsonl"], "ok",
                lambda out: {json.loads(line)["line"] for line in out.splitlines()} == {1})
    # config errors
    base = (TINY / "tiny.yaml").read_text()
    configs = {"duplicate key": base.replace("epochs: 3", "epochs: 3\n  epochs: 5"),
               "unknown key": base.replace("epochs: 3", "epochz: 3"), "wrong type": base.replace("epochs: 3", "epochs: x"),
               "negative clip": base.replace("epochs: 3", "epochs: 3\n  clip: -1"), "not a mapping": "- a\n- b\n",
               "bad yaml": "data: [unclosed\n", "unknown scheme": base.replace("tag_scheme: bilou", "tag_scheme: iobx")}
    for name, text in configs.items():
        path = scratch / f"config_{name.replace(' ', '_')}.yaml"
        path.write_text(text)
        sweep.probe(f"config {name}", ["train", str(path), "--output", str(scratch / "cfg_run")], "error")
    sweep.probe("set unknown key", ["train", str(TINY / "tiny.yaml"), "--set", "train.epochz=1", "--output",
                                    str(scratch / "r")], "error")
    # damaged model files
    sys.path.insert(0, str(ROOT))
    from seqlab.tasks import model_path

    source = model_path(model)
    data = source.read_bytes()
    damaged = {"truncated": data[: len(data) // 2], "flipped": data[:1000] + bytes([data[1000] ^ 1]) + data[1001:],
               "zero bytes": b"", "text": b"not a model\n"}
    foreign = scratch / "foreign.seqlab"
    with zipfile.ZipFile(foreign, "w") as zf:
        zf.writestr("hello.txt", "hi")
    for name, payload in damaged.items():
        path = scratch / f"{name.replace(' ', '_')}.seqlab"
        path.write_bytes(payload)
        sweep.probe(f"model {name}", ["tag", str(path), str(inputs["crlf"])], "error")
    sweep.probe("model foreign zip", ["tag", str(foreign), str(inputs["crlf"])], "error")
    sweep.probe("model folder without config", ["tag", str(inputs["folder"]), str(inputs["crlf"])], "error")
    sweep.probe("eval output is a folder", ["eval", model, str(TINY / "dev.txt"), "--output", str(inputs["folder"])],
                "error")
    # a full disk
    if not args.no_tmpfs and os.geteuid() == 0:
        full = scratch / "full"
        full.mkdir()
        mounted = subprocess.run(["mount", "-t", "tmpfs", "-o", "size=3m", "tmpfs", str(full)],
                                 capture_output=True).returncode == 0
        if mounted:
            try:
                (full / "filler").write_bytes(b"\0" * (3 * 1024 * 1024 - 64 * 1024))
                sweep.probe("disk full: tag > file", ["tag", model, str(inputs["long_line"])], "error",
                            stdout=full / "tagged.txt")
                sweep.probe("disk full: eval --output", ["eval", model, str(TINY / "dev.txt"), "--output",
                                                         str(full / "dev.pred")], "error")
                if args.train:
                    tiny = scratch / "tiny_run"
                    run(["train", str(TINY / "tiny.yaml"), "--set", "train.epochs=1", "--output", str(tiny)], scratch)
                    sweep.probe("disk full: package --out", ["package", str(tiny), "--out", str(full / "x.seqlab")],
                                "error")
                    sweep.probe("disk full: train", ["train", str(TINY / "tiny.yaml"), "--set", "train.epochs=1",
                                                     "--output", str(full / "run")], "error")
            finally:
                subprocess.run(["umount", str(full)], capture_output=True)
    if args.train:  # two writers on one run directory: one trains, the other is refused
        sweep.count += 1
        argv = [sys.executable, "-m", "seqlab", "train", str(TINY / "tiny.yaml"), "--set", "train.epochs=2",
                "--output", str(scratch / "shared_run")]
        procs = [subprocess.Popen(argv, cwd=scratch, env=ENV, stderr=subprocess.PIPE, text=True) for _ in range(2)]
        results = [(proc.wait(), proc.stderr.read()) for proc in procs]
        codes = sorted(rc for rc, _ in results)
        if codes[0] != 0 or codes[1] == 0 or any("Traceback" in err for _, err in results):
            sweep.failures.append({"probe": "two writers", "problem": "both ran or traceback", "rc": codes,
                                   "stderr": results[1][1][-400:]})
    tracebacks = sum(f["problem"] == "traceback" for f in sweep.failures)
    print(json.dumps({"probes": sweep.count, "tracebacks": tracebacks,
                      "wrong_or_unclear": len(sweep.failures) - tracebacks, "failures": sweep.failures}, indent=2))
    shutil.rmtree(scratch, ignore_errors=True)


if __name__ == "__main__":
    main()
