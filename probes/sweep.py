"""A sweep of bad inputs and faults through the command line, counting tracebacks, wrong results and lost data.

    python -m probes.sweep [--no-tmpfs] [--only SUBSTRING] [--model MODEL]

Each probe runs ``seqlab ARGS`` as its own process, on a scratch folder, and classifies what happened:
``ok`` (exit 0, and an explicit check of the output passed), ``clear-error`` (exit != 0, one ``...error: ...``
line, no traceback), ``traceback``, ``silent-wrong`` (exit 0 with a wrong or missing result, or bad input
accepted), ``unclear-error`` (exit != 0 without a one-line message) or ``data-lost`` (a file that existed
before, or a run that must resume, is damaged). A probe fails when the outcome is not the one it expects
(:mod:`probes.runner` runs and judges each one). Processes are forked from this one after seqlab and torch are
imported (each probe behaves as ``python -m seqlab``: an uncaught exception prints its traceback), so that 300
probes take minutes; kill -9, SIGINT and two writers use real ``python -m seqlab`` processes.

Kinds (see :mod:`probes.inputs`): labelled CoNLL files x (eval of a run directory, eval of a .seqlab file, score,
train, train with the file as dev); raw text x (tag conll, tag jsonl with a check of every span's offsets,
features brown, features cw); SemEval files x (relation train, relation eval); config errors; damaged
model files x (tag, eval, inspect, export); kill -9 at several points then ``--resume``; SIGINT; a full
disk (a 3 MB tmpfs, when this process may mount one); two writers on one run directory or model file; forged
model files, a tampered model cache, ``seqlab serve`` under bad and concurrent requests and eval edge cases
(:mod:`probes.hostile`, whose probes can also end ``security``); YAML attacks through every door a config comes
in by and smoke runs (:mod:`probes.configs`); pathological lines for the tokenizer, the Python API's arguments,
closed standard streams, bad ports and every verb's help, trainings sharing a new parent and SIGTERM
(:mod:`probes.defences`). A probe with a bound on time or memory that it passes ends ``hang`` or ``memory``.
A tiny tagger and a tiny relation model are trained once per sweep. Prints one JSON object: probes,
outcome counts, skipped probes with the reason, and each failure with its stderr tail.
"""
from __future__ import annotations

import os

os.environ.setdefault("OMP_NUM_THREADS", "1")

import argparse  # noqa: E402
import json  # noqa: E402
import shutil  # noqa: E402
import signal  # noqa: E402
import subprocess  # noqa: E402
import tempfile  # noqa: E402
import time  # noqa: E402
from pathlib import Path  # noqa: E402
from typing import Callable  # noqa: E402

from probes.configs import smoke_probes, yaml_probes  # noqa: E402
from probes.defences import (api_probes, cli_probes, shared_parent_probes, sigterm_probes,  # noqa: E402
                             tokenizer_probes)
from probes.formats import trust_probes  # noqa: E402
from probes.hostile import cache_probes, eval_probes, model_file_probes, serve_probes  # noqa: E402
from probes.inputs import NER, SEMEVAL, labelled_kinds, materialise, raw_kinds, semeval_kinds  # noqa: E402
from probes.runner import (PRELOADED, Result, Sweep, check_conll_tokens, check_eval, check_file,  # noqa: E402
                           check_jsonl, check_run, check_score_perfect, classify, finish, fork_run, real_run,
                           text_lines)

# ---------------------------------------------------------------- probe groups

SCHEME_PREFIXES = {"iob2": "BIO", "bilou": "BILUO", "iobes": "BIESO"}
COLUMNS = {1: "[word]", 2: "[word,ner]", 3: "[word,pos,ner]", 4: "[word,pos,chunk,ner]", 5: "[word,pos,chunk,_,ner]"}
TRAIN = ["--set", "train.epochs=1", "--quiet"]


def with_pred_column(data: bytes) -> bytes:
    """A labelled file as conlleval reads it: its last column copied as the prediction."""
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError:
        return data
    out = []
    for line in text.split("\n"):
        body = line.rstrip("\r")
        fields = body.split("\t") if "\t" in body else body.split()
        sep = "\t" if "\t" in body else " "
        out.append(body + sep + fields[-1] + line[len(body):] if fields else line)
    return "\n".join(out).encode()


def labelled_probes(sw: Sweep, tagger: Path, packaged: Path, root_user: bool) -> None:
    folder = sw.scratch / "labelled"
    folder.mkdir()
    for name, kind in labelled_kinds().items():
        if name == "unreadable" and root_user:
            sw.skip("labelled unreadable x 5 verbs", "running as root: chmod 000 does not stop root reading")
            continue
        path = materialise(folder, name, kind.data)
        expect = "ok" if kind.ok else "clear-error"
        prefixes = SCHEME_PREFIXES.get(name)
        for model, tag in ((tagger, "run"), (packaged, "seqlab")):
            pred = folder / f"{name}.{tag}.pred"
            sw.probe(f"eval[{tag}] {name}", ["eval", str(model), str(path), "--output", str(pred)], expect,
                     check_eval(path, pred, kind.tokens, prefixes))
        scored = folder / f"{name}.scored"
        if kind.data is not None:
            scored.write_bytes(with_pred_column(kind.data))
        else:
            scored = path
        empty = name in ("zero_byte", "blank_lines", "docstart_only")
        sw.probe(f"score {name}", ["score", "conll", str(scored)], "ok" if kind.ok or empty else "clear-error",
                 check_score_perfect(scored) if kind.data is not None else None)
        run = sw.scratch / f"train_{name}"
        layout = ["--set", f"data.columns={COLUMNS[kind.columns]}"] if kind.columns in COLUMNS else []
        if kind.columns != 4:  # dev and test in the same layout
            layout += ["--set", f"data.dev={path}", "--set", f"data.test={path}"]
        sw.probe(f"train data.train {name}", ["train", str(NER / "tiny.yaml"), "--set", f"data.train={path}",
                                              *layout, *TRAIN, "--output", str(run)], expect, check_run(run))
        if kind.columns == 4:
            run = sw.scratch / f"train_dev_{name}"
            dev_expect = "clear-error" if name == "unseen_label" else expect
            sw.probe(f"train data.dev {name}", ["train", str(NER / "tiny.yaml"), "--set", f"data.dev={path}",
                                                *TRAIN, "--output", str(run)], dev_expect, check_run(run))


def raw_probes(sw: Sweep, tagger: str, root_user: bool) -> None:
    """Raw text x verbs; ``tagger``: the installed model, whose spans the offset check needs (the tiny one finds few)."""
    folder = sw.scratch / "raw"
    folder.mkdir()
    for name, (data, readable) in raw_kinds().items():
        if name == "unreadable" and root_user:
            sw.skip("raw unreadable x 4 verbs", "running as root: chmod 000 does not stop root reading")
            continue
        path = materialise(folder, name, data)
        expect = "ok" if readable else "clear-error"
        sw.probe(f"tag conll {name}", ["tag", str(tagger), str(path), "--format", "conll"], expect,
                 check_conll_tokens(data) if readable else None)
        sw.probe(f"tag jsonl {name}", ["tag", str(tagger), str(path), "--format", "jsonl"], expect,
                 check_jsonl(data) if readable else None)
        has_words = readable and any(line.split() for line in text_lines(data))
        feature_expect = "ok" if has_words else "clear-error"
        out = folder / f"{name}.paths"
        sw.probe(f"features brown {name}", ["features", "brown", "--corpus", str(path), "--clusters", "2",
                                            "--quiet", "--out", str(out)], feature_expect, check_file(out))
        out = folder / f"{name}.vec"
        sw.probe(f"features cw {name}", ["features", "cw", "--corpus", str(path), "--dim", "4", "--epochs", "1",
                                         "--hidden", "4", "--window", "3", "--min-count", "1", "--batch-size", "4",
                                         "--device", "cpu", "--quiet", "--out", str(out)], feature_expect,
                 check_file(out, 2))


def semeval_probes(sw: Sweep, relation: Path) -> None:
    folder = sw.scratch / "semeval"
    folder.mkdir()
    env = {"SEQLAB_DATA": str(SEMEVAL)}
    for name, (data, readable) in semeval_kinds().items():
        path = materialise(folder, name, data)
        expect = "ok" if readable else "clear-error"
        run = sw.scratch / f"rel_{name}"
        sw.probe(f"relation train {name}", ["train", str(SEMEVAL / "tiny.yaml"), "--set", f"data.train={path}",
                                            *TRAIN, "--output", str(run)], expect, check_run(run), env=env)
        answers = folder / f"{name}.answers"
        records = (data or b"").decode("utf-8", "replace").count('"\r\n' if name == "crlf" else '"\n')
        sw.probe(f"relation eval {name}", ["eval", str(relation), str(path), "--output", str(answers)], expect,
                 check_file(answers, records), env=env)


def config_probes(sw: Sweep) -> None:
    base = (NER / "tiny.yaml").read_text()
    configs = {
        "unknown key": base.replace("epochs: 3", "epochz: 3"), "unknown section": base + "trian:\n  epochs: 1\n",
        "unknown nested key": base.replace("chars: {dim: 8", "chars: {dimm: 8"),
        "wrong type str": base.replace("epochs: 3", "epochs: x"), "wrong type list": base.replace("epochs: 3", "epochs: [3]"),
        "wrong type float for int": base.replace("epochs: 3", "epochs: 2.5"),
        "wrong type bool": base.replace("epochs: 3", "epochs: true"),
        "wrong type mapping": base.replace("hidden: 16", "hidden: {a: 1}"),
        "duplicate key": base.replace("epochs: 3", "epochs: 3\n  epochs: 5"),
        "duplicate section": base + "train:\n  epochs: 1\n",
        "negative epochs": base.replace("epochs: 3", "epochs: -1"), "zero epochs": base.replace("epochs: 3", "epochs: 0"),
        "zero batch": base.replace("batch_size: 2", "batch_size: 0"), "negative lr": base.replace("lr: 0.02", "lr: -0.1"),
        "nan lr": base.replace("lr: 0.02", "lr: .nan"), "inf lr": base.replace("lr: 0.02", "lr: .inf"),
        "negative clip": base.replace("epochs: 3", "epochs: 3\n  clip: -1"),
        "dropout 1": base.replace("dropout: 0.0", "dropout: 1.0"), "negative hidden": base.replace("hidden: 16", "hidden: -4"),
        "zero char dim": base.replace("chars: {dim: 8", "chars: {dim: 0"),
        "negative limit": base.replace("tag_scheme: bilou", "tag_scheme: bilou\n  limit: -2"),
        "unknown scheme": base.replace("tag_scheme: bilou", "tag_scheme: iobx"),
        "unknown task": "task: parsing\n" + base, "unknown encoder": base.replace("hidden: 16", "hidden: 16\n  encoder: lstmm"),
        "tag column not a column": base.replace("file_scheme: iob1", "file_scheme: iob1\n  tag_column: label"),
        "not a mapping": "- a\n- b\n", "bad yaml": "data: [unclosed\n", "tab indented": base.replace("  epochs", "\tepochs"),
        "empty": "", "comments only": "# nothing\n", "no data section": base.split("model:", 1)[1].join(["model:", ""]),
        "missing data file": base.replace("train: train.txt", "train: nowhere.txt"),
        "data file is a folder": base.replace("train: train.txt", "train: ."),
        "dev and dev_sample": base.replace("tag_scheme: bilou", "tag_scheme: bilou\n  dev_sample: 2"),
        "embeddings file missing": base.replace("path: vectors.txt", "path: novectors.txt"),
    }
    folder = sw.scratch / "configs"
    folder.mkdir()
    for name, text in configs.items():
        path = folder / f"{name.replace(' ', '_')}.yaml"
        path.write_text(text)
        sw.probe(f"config {name}", ["train", str(path), *TRAIN[2:], "--output", str(sw.scratch / "cfg_run")],
                 "clear-error")
    binary = folder / "binary.yaml"
    binary.write_bytes(bytes(range(256)) * 4)
    latin1 = folder / "latin1.yaml"
    latin1.write_bytes(base.replace("# A tiny", "# Montr\xe9al: a tiny").encode("latin-1"))
    utf16 = folder / "utf16.yaml"
    utf16.write_bytes(base.encode("utf-16"))
    for name, path in {"binary": binary, "latin1": latin1, "utf16": utf16, "missing": folder / "none.yaml",
                       "a folder": folder}.items():
        sw.probe(f"config file {name}", ["train", str(path), "--output", str(sw.scratch / "cfg_run")], "clear-error")
    sets = {"no equals": "train.epochs", "empty key": "=3", "unknown key": "train.epochz=1", "bad type": "train.epochs=x",
            "unknown section": "trian.epochs=1", "too deep": "train.epochs.x=1", "bad yaml value": "train.epochs=[1",
            "negative": "train.batch_size=-2", "empty value": "train.epochs=", "section replaced": "train=3"}
    for name, item in sets.items():
        sw.probe(f"--set {name}", ["train", str(NER / "tiny.yaml"), "--set", item, "--output",
                                   str(sw.scratch / "set_run")], "clear-error")
    rel = (SEMEVAL / "tiny.yaml").read_text()
    for name, text in {"unknown key": rel.replace("heads: 2", "headz: 2"), "zero dev_size": rel.replace("dev_size: 4", "dev_size: 0"),
                       "negative heads": rel.replace("heads: 2", "heads: -2")}.items():
        path = folder / f"relation_{name.replace(' ', '_')}.yaml"
        path.write_text(text)
        sw.probe(f"relation config {name}", ["train", str(path), "--output", str(sw.scratch / "rel_cfg")], "clear-error",
                 env={"SEQLAB_DATA": str(SEMEVAL)})


class Payload:
    """What an attacker's pickle would run on load: it creates a file named PWNED."""

    def __init__(self, target: Path) -> None:
        self.target = target

    def __reduce__(self):  # noqa: ANN204
        return (os.system, (f"touch {self.target}",))


def damaged_models(folder: Path, tagger: Path, packaged: Path) -> dict[str, Path]:
    """Model files and run directories damaged in every way probed, keyed by kind."""
    import pickle
    import zipfile

    import torch

    data = packaged.read_bytes()
    pwned = folder / "PWNED"
    made: dict[str, Path] = {}
    for name, payload in {"zero-byte": b"", "truncated": data[: len(data) // 2], "text": b"not a model\n",
                          "flipped byte": data[:2000] + bytes([data[2000] ^ 0xFF]) + data[2001:],
                          "flipped tail": data[:-30] + bytes([data[-30] ^ 0xFF]) + data[-29:],
                          "pickle file": pickle.dumps(Payload(pwned))}.items():
        made[name] = folder / f"{name.replace(' ', '_')}.seqlab"
        made[name].write_bytes(payload)
    with zipfile.ZipFile(packaged) as zf:
        members = {n: zf.read(n) for n in zf.namelist()}
    variants = {"foreign zip": {"hello.txt": b"hi"},
                "wrong version": {**members, "manifest.json": json.dumps(
                    {**json.loads(members["manifest.json"]), "format_version": 99}).encode()},
                "altered member": {**members, "vocabs.json": members["vocabs.json"].replace(b'"', b"'", 4)},
                "extra member": {**members, "evil.py": b"import os\n"},
                "manifest not json": {**members, "manifest.json": b"{"}}
    for name, content in variants.items():
        made[name] = folder / f"{name.replace(' ', '_')}.seqlab"
        with zipfile.ZipFile(made[name], "w") as zf:
            for member, blob in content.items():
                zf.writestr(member, blob)
    model_pt = (tagger / "model.pt").read_bytes()
    evil = folder / "evil.pt"
    torch.save({"state": Payload(pwned)}, evil)
    for name, (member, blob) in {"run model.pt zero-byte": ("model.pt", b""),
                                 "run model.pt truncated": ("model.pt", model_pt[: len(model_pt) // 3]),
                                 "run model.pt pickle payload": ("model.pt", evil.read_bytes()),
                                 "run model.pt missing": ("model.pt", None),
                                 "run config.yaml garbage": ("config.yaml", b"\x00\xff garbage: ["),
                                 "run config.yaml unknown key": ("config.yaml", (tagger / "config.yaml").read_bytes()
                                                                 .replace(b"epochs:", b"epochz:")),
                                 "run vocabs.json garbage": ("vocabs.json", b"{\"words\": [1, 2"),
                                 "run vocabs.json wrong shape": ("vocabs.json", b"[1, 2, 3]"),
                                 "run features.json garbage": ("features.json", b"nope")}.items():
        run = folder / name.replace(" ", "_")
        shutil.copytree(tagger, run)
        if blob is None:
            (run / member).unlink()
        else:
            (run / member).write_bytes(blob)
        made[name] = run
    return made


def model_probes(sw: Sweep, tagger: Path, packaged: Path, relation: Path) -> None:
    folder = sw.scratch / "models"
    folder.mkdir()
    text = folder / "text.txt"
    text.write_text("Angela Merkel visited Paris.\n")
    pwned = folder / "PWNED"
    safe = lambda: "the pickle payload ran (PWNED exists)" if pwned.exists() else None  # noqa: E731
    for name, model in damaged_models(folder, tagger, packaged).items():
        sw.probe(f"model {name}: tag", ["tag", str(model), str(text)], "clear-error", after=safe)
        sw.probe(f"model {name}: eval", ["eval", str(model), str(NER / "dev.txt"), "--output",
                                         str(folder / "x.pred")], "clear-error", after=safe)
        if model.suffix == ".seqlab":
            sw.probe(f"model {name}: inspect", ["inspect", str(model)], "clear-error", after=safe)
        else:
            sw.probe(f"model {name}: package", ["package", str(model), "--out", str(folder / "p.seqlab")],
                     "clear-error", after=safe)
    for name, model in {"a folder": folder, "missing": folder / "none.seqlab", "relation run": relation}.items():
        sw.probe(f"model {name}: tag", ["tag", str(model), str(text)], "clear-error")
        sw.probe(f"model {name}: export", ["export", str(model), "--format", "onnx", "--out", str(folder / "o")],
                 "clear-error")
    out = folder / "exported"
    sw.probe("export packaged model", ["export", str(packaged), "--format", "onnx", "--out", str(out)], "ok",
             lambda r: None if (out / "model.onnx").is_file() else "no model.onnx")
    sw.probe("export into a file path", ["export", str(packaged), "--format", "onnx", "--out", str(text)],
             "clear-error", after=lambda: None if text.read_text() == "Angela Merkel visited Paris.\n" else
             "the existing file was overwritten")
    sw.probe("eval output is a folder", ["eval", str(tagger), str(NER / "dev.txt"), "--output", str(folder)],
             "clear-error")
    sw.probe("package a missing run", ["package", str(folder / "norun"), "--out", str(folder / "n.seqlab")],
             "clear-error")
    sw.probe("inspect a good model", ["inspect", str(packaged), "--json"], "ok",
             lambda r: None if json.loads(r.out).get("task") == "tagging" else "manifest without the task")


def wait_for(predicate: Callable[[], bool], proc: subprocess.Popen, limit: float = 120) -> bool:
    deadline = time.monotonic() + limit
    while time.monotonic() < deadline and proc.poll() is None:
        if predicate():
            return True
        time.sleep(0.05)
    return False


def interrupt_probes(sw: Sweep) -> None:
    """kill -9 (and SIGINT) a tiny training at several points, then ``--resume`` it."""
    if sw.only and "kill" not in sw.only and "sigint" not in sw.only:
        return
    points: dict[str, Callable[[Path], bool] | float] = {
        "during start-up": 0.3, "after config.yaml": lambda d: (d / "config.yaml").is_file(),
        "after the first checkpoint": lambda d: (d / "checkpoint.pt").is_file(),
        "mid-training": lambda d: (d / "train.log").is_file() and (d / "train.log").read_text().count("epoch") >= 3,
        "after metrics.json": lambda d: (d / "metrics.json").is_file()}
    for signame, sig in (("kill -9", signal.SIGKILL), ("sigint", signal.SIGINT)):
        for point, when in points.items():
            if sig == signal.SIGINT and point not in ("after the first checkpoint", "mid-training"):
                continue
            run = sw.scratch / f"killed_{signame[-2:]}_{point.replace(' ', '_')}"
            proc = real_run(["train", str(NER / "tiny.yaml"), "--set", "train.epochs=8", "--quiet", "--output",
                             str(run)], sw.scratch)
            if isinstance(when, float):
                time.sleep(when)
            elif not wait_for(lambda: when(run), proc):
                proc.wait()
                sw.skip(f"{signame} {point}", f"training ended (rc {proc.returncode}) before that point")
                continue
            proc.send_signal(sig)
            _, err = proc.communicate()
            if sig == signal.SIGINT:
                outcome = classify(Result(proc.returncode, "", err))
                sw.record(f"sigint {point}: the interrupted run", "clear-error", outcome,
                          "" if proc.returncode == 130 or outcome != "clear-error" else f"rc {proc.returncode}", err)
            started = (run / "checkpoint.pt").is_file()  # a first epoch ended: there is something to resume
            sw.probe(f"{signame} {point}: --resume", ["train", "--resume", str(run), "--quiet"],
                     "ok" if started else "clear-error", check_run(run))
            if not started:  # nothing to resume: the same command starts it again in the same folder
                sw.probe(f"{signame} {point}: train again", ["train", str(NER / "tiny.yaml"), *TRAIN, "--output",
                                                             str(run)], "ok", check_run(run))


def writer_probes(sw: Sweep, tagger: Path, packaged: Path) -> None:
    """Two processes writing one run directory, one model file or one prediction file at once."""
    if sw.only and "writers" not in sw.only:
        return
    shared = sw.scratch / "shared_run"
    argv = ["train", str(NER / "tiny.yaml"), "--set", "train.epochs=3", "--quiet", "--output", str(shared)]
    procs = [real_run(argv, sw.scratch) for _ in range(2)]
    results = [finish(p) for p in procs]
    outcomes = sorted(classify(r) for r in results)
    sw.record("two writers: train, train one run dir (one trains, the other is refused)", "ok",
              "ok" if outcomes == ["clear-error", "ok"] and (shared / "model.pt").is_file() else "/".join(outcomes),
              err=results[0].err + results[1].err)
    busy = sw.scratch / "busy_run"
    proc = real_run(["train", str(NER / "tiny.yaml"), "--set", "train.epochs=30", "--quiet", "--output",
                     str(busy)], sw.scratch)
    if wait_for(lambda: (busy / "checkpoint.pt").is_file(), proc):
        sw.probe("two writers: --resume while it trains", ["train", "--resume", str(busy), "--quiet"], "clear-error")
        sw.probe("two writers: train into it while it trains", ["train", str(NER / "tiny.yaml"), *TRAIN, "--output",
                                                               str(busy)], "clear-error")
    proc.kill()
    proc.wait()
    out = sw.scratch / "same.seqlab"
    procs = [real_run(["package", str(tagger), "--out", str(out)], sw.scratch) for _ in range(2)]
    results = [finish(p) for p in procs]
    good = all(classify(r) == "ok" for r in results)
    check = fork_run(["inspect", str(out)], sw.scratch)
    sw.record("two writers: package, package one file", "ok",
              "ok" if good and check.rc == 0 else "data-lost" if good else classify(results[0]),
              check.err, results[0].err + results[1].err)
    pred = sw.scratch / "same.pred"
    procs = [real_run(["eval", str(packaged), str(NER / "dev.txt"), "--output", str(pred)], sw.scratch)
             for _ in range(2)]
    results = [finish(p) for p in procs]
    complete = pred.is_file() and len([x for x in pred.read_text().splitlines() if x.strip()]) == 39
    sw.record("two writers: eval, eval one output", "ok",
              ("ok" if complete else "data-lost") if all(classify(r) == "ok" for r in results) else classify(results[0]),
              "", results[0].err + results[1].err)


def disk_full_probes(sw: Sweep, tagger: Path, packaged: Path, allowed: bool) -> None:
    """A 3 MB tmpfs filled to the brim: every write fails cleanly and what was there survives."""
    names = ["tag > file", "eval --output", "package --out", "train", "resume", "features brown", "export"]
    if not allowed:
        for name in names:
            sw.skip(f"disk full: {name}", "no tmpfs (--no-tmpfs, or not root)")
        return
    full = sw.scratch / "full"
    full.mkdir()
    mount = subprocess.run(["mount", "-t", "tmpfs", "-o", "size=3m", "tmpfs", str(full)], capture_output=True, text=True)
    if mount.returncode != 0:
        for name in names:
            sw.skip(f"disk full: {name}", f"mount -t tmpfs refused: {mount.stderr.strip()}")
        return
    try:
        before = {"dev.pred": b"an earlier prediction file\n", "x.seqlab": packaged.read_bytes(),
                  "c.paths": b"0\tParis\t2\n"}
        for name, blob in before.items():
            (full / name).write_bytes(blob)
        resumable = full / "run"
        try:
            shutil.copytree(tagger, resumable, ignore=shutil.ignore_patterns("eval"))
        except OSError as err:
            size = sum(f.stat().st_size for f in tagger.rglob("*") if f.is_file())
            for name in names:
                sw.skip(f"disk full: {name}", f"the 3 MB tmpfs cannot hold the tiny run ({size} bytes): {err}")
            return
        checkpoint = (resumable / "checkpoint.pt").read_bytes()
        filler = full / "filler"
        with open(filler, "wb", buffering=0) as handle:  # unbuffered: closing it has nothing left to write
            try:
                while True:
                    handle.write(b"\0" * 4096)
            except OSError:
                pass
        kept = lambda name: (lambda: None if (full / name).read_bytes() == before[name]  # noqa: E731
                             else f"{name}, there before, was changed")
        text = sw.scratch / "raw" / "many_lines"
        sw.probe("disk full: tag > file", ["tag", str(tagger), str(text)], "clear-error", stdout=full / "tagged.txt")
        sw.probe("disk full: eval --output", ["eval", str(tagger), str(NER / "dev.txt"), "--output",
                                              str(full / "dev.pred")], "clear-error", after=kept("dev.pred"))
        sw.probe("disk full: package --out", ["package", str(tagger), "--out", str(full / "x.seqlab")],
                 "clear-error", after=kept("x.seqlab"))
        sw.probe("disk full: train", ["train", str(NER / "tiny.yaml"), *TRAIN, "--output", str(full / "new")],
                 "clear-error")
        sw.probe("disk full: resume", ["train", "--resume", str(resumable), "--set", "train.epochs=6", "--quiet"],
                 "clear-error", after=lambda: None if (resumable / "checkpoint.pt").read_bytes() == checkpoint
                 else "checkpoint.pt was changed by a failed resume")
        sw.probe("disk full: features brown", ["features", "brown", "--corpus", str(text), "--clusters", "3",
                                               "--quiet", "--out", str(full / "c.paths")], "clear-error",
                 after=kept("c.paths"))
        sw.probe("disk full: export", ["export", str(packaged), "--format", "onnx", "--out", str(full / "onnx")],
                 "clear-error")
    finally:
        subprocess.run(["umount", str(full)], capture_output=True)


def train_once(scratch: Path) -> tuple[Path, Path, Path]:
    """The tiny tagger (a run directory and its .seqlab file) and the tiny relation model, for every probe."""
    tagger, relation, packaged = scratch / "tagger", scratch / "relation", scratch / "tagger.seqlab"
    for argv, env in ((["train", str(NER / "tiny.yaml"), "--set", "train.epochs=2", "--quiet", "--output",
                        str(tagger)], None),
                      (["train", str(SEMEVAL / "tiny.yaml"), "--quiet", "--output", str(relation)],
                       {"SEQLAB_DATA": str(SEMEVAL)}),
                      (["package", str(tagger), "--out", str(packaged)], None)):
        r = fork_run(argv, scratch, env=env)
        if r.rc != 0:
            raise SystemExit(f"probes.sweep: could not prepare the tiny models: seqlab {' '.join(argv)}\n{r.err}")
    return tagger, packaged, relation


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--model", default="en-ner-conll03", help="the model that tags the raw text probes")
    p.add_argument("--no-tmpfs", action="store_true", help="skip the full-disk probes")
    p.add_argument("--only", help="run only probes whose name holds this text (tiny models are still trained)")
    args = p.parse_args()
    import importlib

    for module in PRELOADED:  # imported once here; every probe is forked from this process
        importlib.import_module(module)

    started = time.monotonic()
    scratch = Path(tempfile.mkdtemp(prefix="probe-"))
    sw = Sweep(scratch, args.only)
    root_user = os.geteuid() == 0
    seconds: dict[str, float] = {}
    try:
        tagger, packaged, relation = train_once(scratch)
        groups: list[tuple[str, Callable[[], None]]] = [
            ("labelled", lambda: labelled_probes(sw, tagger, packaged, root_user)),
            ("raw", lambda: raw_probes(sw, args.model, root_user)), ("semeval", lambda: semeval_probes(sw, relation)),
            ("config", lambda: config_probes(sw)), ("models", lambda: model_probes(sw, tagger, packaged, relation)),
            ("interrupt", lambda: interrupt_probes(sw)), ("writers", lambda: writer_probes(sw, tagger, packaged)),
            ("disk full", lambda: disk_full_probes(sw, tagger, packaged, not args.no_tmpfs and root_user)),
            ("forged model files", lambda: model_file_probes(sw, packaged)),
            ("cache", lambda: cache_probes(sw, packaged)),
            ("serve", lambda: serve_probes(sw, packaged)), ("eval edges", lambda: eval_probes(sw, tagger, packaged)),
            ("yaml", lambda: yaml_probes(sw, tagger, packaged)), ("smoke runs", lambda: smoke_probes(sw)),
            ("tokenizer time", lambda: tokenizer_probes(sw, args.model)), ("api", lambda: api_probes(sw, tagger)),
            ("cli", lambda: cli_probes(sw, tagger, packaged)),
            ("training faults", lambda: (shared_parent_probes(sw), sigterm_probes(sw))),
            ("trust", lambda: trust_probes(sw, tagger, packaged, relation))]
        for name, group in groups:
            begun = time.monotonic()
            group()
            seconds[name] = round(time.monotonic() - begun, 1)
    finally:
        report = sw.report()
        report["seconds"] = {"total": round(time.monotonic() - started, 1), **seconds}
        print(json.dumps(report, indent=2, ensure_ascii=False))
        shutil.rmtree(scratch, ignore_errors=True)


if __name__ == "__main__":
    main()
