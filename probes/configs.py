"""Config attacks and smoke runs for :mod:`probes.sweep`: YAML that tries to exhaust memory, time or the stack, or to
run code, and out-of-range integers, through every door a YAML document comes in by; then short smoke runs.

* YAML in a config file, in a ``--set`` value, in a run directory's config.yaml (x ``tag``, ``eval``,
  ``package``, ``train --resume``, ``summarize``) and in a model file's config.yaml (x ``tag``, ``inspect``), in a
  ``--label-map`` file and in a sweep file: "billion laughs" alias bombs (9**10 values written out), an alias
  inside its own anchor, lists, mappings and block sequences nested 10,000 deep, ``!!python/...`` tags (one of them
  a payload that would create a file), integers out of range (``model.hidden: 2147483648``, a seed of 10**30
  written out, 5,000 digits, a negative ``model.capitalization.dim``, ``model.layers: 1000``, hex and ``_``
  forms), a key given twice. Each must end in one line naming what was refused (the key, or the YAML problem with
  its file, line and column), within 60 s and 1.5 GB more memory; a legal config with aliases and a merge key
  trains.
* Smoke runs (``--set data.limit=50 --set train.epochs=1``) of a CoNLL-2000-style windowed chunker whose
  ``data.dev_sample`` exceeds the sentences kept: the run ends, holding out a fifth and saying so.
"""
from __future__ import annotations

import re
import shutil
from pathlib import Path
from typing import Callable

from probes.hostile import forge
from probes.inputs import NER, ROOT
from probes.runner import Result, Sweep, check_run

CHUNK = ROOT / "tests" / "fixtures" / "chunk"
#: The bounds every YAML probe runs under: a refusal takes seconds, and memory barely grows.
BOUNDS = {"timeout": 60.0, "max_mb": 1500.0}
DEEP = 10_000
Texts = dict[str, tuple[str, str]]  # probe name -> (YAML text or --set item, what the one-line error must say)


def laughs(levels: int = 10, width: int = 9, *, flow: bool = False) -> str:
    """A "billion laughs" YAML document: ``levels`` anchors, each a list of ``width`` aliases of the one before
    (9**10, about 3.5 billion values once written out). ``flow``: one line (a value), else top-level keys."""
    rows = [["lol"] * width] + [[f"*lol{i - 1}"] * width for i in range(1, levels)]
    if flow:
        return "[" + ", ".join(f"&lol{i} [{', '.join(row)}]" for i, row in enumerate(rows)) + "]"
    return "".join(f"lol{i}: &lol{i} [{', '.join(row)}]\n" for i, row in enumerate(rows))


def nested(kind: str, depth: int = DEEP) -> str:
    """A YAML value nested ``depth`` levels: flow lists ``[``, flow mappings ``{`` or block sequences ``-``."""
    if kind == "[":
        return "[" * depth + "]" * depth
    if kind == "{":
        return "{a: " * depth + "1" + "}" * depth
    return "- " * depth + "1"


def edit(text: str, old: str, new: str) -> str:
    """``text`` with its one ``old`` replaced by ``new``; a fixture that no longer holds ``old`` is an error."""
    if text.count(old) != 1:
        raise ValueError(f"probes.configs: expected {old!r} once in the fixture config, found it {text.count(old)} times")
    return text.replace(old, new)


def config_files(base: str, pwned: Path) -> Texts:
    """Hostile edits of the tiny NER config (``base``, tests/fixtures/ner/tiny.yaml)."""
    hidden = lambda value: edit(base, "  hidden: 16\n", f"  hidden: {value}\n")  # noqa: E731
    seed = lambda value: edit(base, "  epochs: 3\n", f"  epochs: 3\n  seed: {value}\n")  # noqa: E731
    return {
        "billion laughs as top-level keys": (base + laughs(), "aliases expand it to more than"),
        "billion laughs as model.hidden": (hidden(laughs(flow=True)), "aliases expand it to more than"),
        "alias inside its own anchor": (hidden("&h [1, *h]"), "an alias refers to the value that holds it"),
        "lists nested 10^4 deep": (hidden(nested("[")), "nested deeper than"),
        "mappings nested 10^4 deep": (hidden(nested("{")), "nested deeper than"),
        "block sequences nested 10^4 deep": (base + "deep:\n  " + nested("-") + "\n", "nested deeper than"),
        "!!python/object/apply payload": (hidden(f"!!python/object/apply:os.system ['touch {pwned}']"),
                                          "python/object/apply:os.system"),
        "!!python/object": (hidden("!!python/object:collections.OrderedDict {}"), "python/object:collections"),
        "!!python/name": (hidden("!!python/name:os.system ''"), "python/name:os.system"),
        "model.hidden 2147483648": (hidden(2147483648), "model.hidden"),
        "model.hidden 0x80000000": (hidden("0x80000000"), "model.hidden"),
        "model.hidden 1_000_000_000_000": (hidden("1_000_000_000_000"), "model.hidden"),
        "train.seed 10**30": (seed(10**30), "train.seed"),
        "train.seed -1": (seed(-1), "train.seed"),
        "train.seed of 5000 digits": (seed("9" * 5000), "digits"),
        "train.epochs 2147483648": (edit(base, "  epochs: 3\n", "  epochs: 2147483648\n"), "train.epochs"),
        "negative model.capitalization.dim": (edit(base, "capitalization: {dim: 4}", "capitalization: {dim: -4}"),
                                              "model.capitalization.dim"),
        "model.layers 1000": (edit(base, "  hidden: 16\n", "  hidden: 16\n  layers: 1000\n"), "model.layers"),
        "model.chars.hidden 2**40": (edit(base, "chars: {dim: 8, hidden: 8}", f"chars: {{dim: 8, hidden: {2**40}}}"),
                                     "model.chars.hidden"),
        "key given twice in a flow mapping": (edit(base, "chars: {dim: 8, hidden: 8}", "chars: {dim: 8, hidden: 8, dim: 4}"),
                                              "duplicate key 'dim'"),
        "section given twice": (base + "model: {hidden: 8}\n", "duplicate key 'model'"),
    }


def legal_aliases(base: str) -> str:
    """The tiny config written with anchors, aliases and a merge key that a later key overrides: legal YAML that
    must train as the plain config does."""
    text = edit(base, "format: glove, dim: 4,", "format: glove, dim: &four 4,")
    text = edit(text, "capitalization: {dim: 4}", "capitalization: {dim: *four}")
    return edit(text, "chars: {dim: 8, hidden: 8}", "chars: {<<: {dim: 8, hidden: 4}, hidden: 8}")


def set_items(pwned: Path) -> Texts:
    """``--set KEY=VALUE`` items whose value attacks the YAML reader or is out of range."""
    return {
        "billion laughs": (f"model.hidden={laughs(flow=True)}", "--set model.hidden: aliases expand"),
        "alias inside its own anchor": ("model.hidden=&h [1, *h]", "--set model.hidden: an alias refers"),
        "lists nested 10^4 deep": (f"model.hidden={nested('[')}", "--set model.hidden: nested deeper"),
        "mappings nested 10^4 deep": (f"model.hidden={nested('{')}", "--set model.hidden: nested deeper"),
        "!!python/object/apply payload": (f"model.hidden=!!python/object/apply:os.system ['touch {pwned}']",
                                          "--set model.hidden: could not determine a constructor"),
        "model.hidden 2147483648": ("model.hidden=2147483648", "model.hidden"),
        "train.seed 10**30": (f"train.seed={10**30}", "train.seed"),
        "train.seed of 200 digits": (f"train.seed={'9' * 200}", "digits"),
        "negative model.capitalization.dim": ("model.capitalization.dim=-4", "model.capitalization.dim"),
        "model.layers 1000": ("model.layers=1000", "model.layers"),
        "key given twice": ("model.chars={dim: 8, hidden: 8, dim: 4}", "--set model.chars: duplicate key 'dim'"),
    }


def model_configs(run_config: str, pwned: Path) -> Texts:
    """Hostile YAML in a trained run's config.yaml (block style, as ``seqlab train`` writes it), which every reader
    of it refuses."""
    return {
        "billion laughs": (run_config + laughs(), "aliases expand it to more than"),
        "lists nested 10^4 deep": (run_config + f"deep: {nested('[')}\n", "nested deeper than"),
        "!!python/object/apply payload": (run_config + f"deep: !!python/object/apply:os.system ['touch {pwned}']\n",
                                          "python/object/apply:os.system"),
        "section given twice": (run_config + "model: {hidden: 8}\n", "duplicate key 'model'"),
    }


def model_ranges(run_config: str) -> Texts:
    """Sizes out of range in a trained run's config.yaml, which every verb that builds the model refuses before
    allocating it (``inspect`` and ``summarize`` build none)."""
    return {
        "model.hidden 2147483648": (edit(run_config, "\n  hidden: 16\n", "\n  hidden: 2147483648\n"), "model.hidden"),
        "negative model.capitalization.dim": (edit(run_config, "capitalization:\n    dim: 4\n",
                                                   "capitalization:\n    dim: -4\n"), "model.capitalization.dim"),
        "model.layers 1000": (edit(run_config, "\n  layers: 1\n", "\n  layers: 1000\n"), "model.layers"),
    }


def _name(text: str) -> str:
    return re.sub(r"[^A-Za-z0-9]+", "_", text).strip("_")


def yaml_probes(sw: Sweep, tagger: Path, packaged: Path) -> None:
    """Every YAML attack through every door; a python payload that ran is ``security``."""
    folder = sw.scratch / "yaml"
    folder.mkdir()
    pwned = folder / "PWNED"
    ran = lambda: "a !!python payload ran (PWNED exists)" if pwned.exists() else None  # noqa: E731
    text = folder / "text.txt"
    text.write_text("Angela Merkel visited Paris.\n")
    base = (NER / "tiny.yaml").read_text()
    out = str(sw.scratch / "yaml_run")
    for name, (yaml_text, says) in config_files(base, pwned).items():
        path = folder / f"{_name(name)}.yaml"
        path.write_text(yaml_text)
        sw.probe(f"yaml config {name}", ["train", str(path), "--quiet", "--output", out], "clear-error",
                 says=says, security=ran, **BOUNDS)
    legal = folder / "legal_aliases.yaml"
    legal.write_text(legal_aliases(base))
    run = sw.scratch / "yaml_legal_run"
    sw.probe("yaml config aliases and a merge key (legal)", ["train", str(legal), "--set", "train.epochs=1", "--quiet",
                                                             "--output", str(run)], "ok", check_run(run))
    for name, (item, says) in set_items(pwned).items():
        sw.probe(f"yaml --set {name}", ["train", str(NER / "tiny.yaml"), "--set", item, "--quiet", "--output", out],
                 "clear-error", says=says, security=ran, **BOUNDS)
    run_config = (tagger / "config.yaml").read_text()
    ranges = model_ranges(run_config)
    for name, (yaml_text, says) in {**model_configs(run_config, pwned), **ranges}.items():
        run = folder / f"run_{_name(name)}"
        shutil.copytree(tagger, run)
        (run / "config.yaml").write_text(yaml_text)
        checkpoint = (run / "checkpoint.pt").read_bytes()
        kept = lambda run=run, before=checkpoint: (None if (run / "checkpoint.pt").read_bytes() == before  # noqa: E731
                                                   else "checkpoint.pt was changed")
        verbs = {"tag": ["tag", str(run), str(text)], "eval": ["eval", str(run), str(NER / "dev.txt"), "--output",
                                                               str(folder / "x.pred")],
                 "package": ["package", str(run), "--out", str(folder / "p.seqlab")],
                 "train --resume": ["train", "--resume", str(run), "--quiet"]}
        if name not in ranges:
            verbs["summarize"] = ["summarize", str(run)]
        for verb, argv in verbs.items():
            sw.probe(f"yaml run config.yaml {name}: {verb}", argv, "clear-error", after=kept, says=says, security=ran,
                     **BOUNDS)
        model = forge(packaged, folder / f"{_name(name)}.seqlab",
                      lambda members, data=yaml_text.encode(): members.__setitem__("config.yaml", data))
        verbs = {"tag": ["tag", str(model), str(text)]} | ({} if name in ranges else {"inspect": ["inspect", str(model)]})
        for verb, argv in verbs.items():
            sw.probe(f"yaml model file config.yaml {name}: {verb}", argv, "clear-error", says=says, security=ran,
                     env={"SEQLAB_CACHE": str(folder / "cache")}, **BOUNDS)
    bomb = folder / "bomb_label_map.yaml"
    bomb.write_text(laughs())
    sw.probe("yaml --label-map file billion laughs", ["eval", str(tagger), str(NER / "dev.txt"), "--label-map",
                                                      str(bomb), "--output", str(folder / "x.pred")], "clear-error",
             says="aliases expand", **BOUNDS)
    twice = folder / "twice_label_map.yaml"
    twice.write_text("PER: PER\nLOC: LOC\nPER: ORG\n")
    sw.probe("yaml --label-map file key given twice", ["eval", str(tagger), str(NER / "dev.txt"), "--label-map",
                                                       str(twice), "--output", str(folder / "x.pred")], "clear-error",
             says="duplicate key 'PER'", **BOUNDS)
    sweep = folder / "bomb_sweep.yaml"
    sweep.write_text(f"config: {NER / 'tiny.yaml'}\noutput: {folder / 'sweep'}\n" + laughs())
    sw.probe("yaml sweep file billion laughs", ["sweep", str(sweep), "--dry-run"], "clear-error",
             says="aliases expand", **BOUNDS)


# ---------------------------------------------------------------- smoke runs

def chunk_sentences(count: int) -> str:
    """A CoNLL-2000-style file of ``count`` sentences: the chunk fixture's sentences repeated."""
    blocks = [b for b in (CHUNK / "train.txt").read_text().split("\n\n") if b.strip()]
    return "\n\n".join(blocks[i % len(blocks)].strip("\n") for i in range(count)) + "\n"


def smoke_cases(train: Path) -> dict[str, tuple[list[str], str, str]]:
    """name -> (--set items, expected outcome, what stderr must say) of smoke runs of the windowed chunker;
    ``train``: a CoNLL-2000-style file of 120 sentences."""
    smoke = ["data.limit=50", "train.epochs=1"]
    return {
        "120 sentences, data.dev_sample 1000": ([f"data.train={train}", *smoke, "data.dev_sample=1000"], "ok",
                                                "holding out 10 of the 50 training sentences"),
        "120 sentences, data.dev_sample 60": ([f"data.train={train}", *smoke, "data.dev_sample=60"], "ok",
                                              "holding out 10 of the 50 training sentences"),
        "the fixture's 10 sentences, data.dev_sample 60": ([*smoke, "data.dev_sample=60"], "ok", "holding out 2 of"),
        "120 sentences, data.dev_sample 5 (within a fifth)": ([f"data.train={train}", *smoke, "data.dev_sample=5"],
                                                              "ok", "a smoke run on the first 50 sentences"),
        "data.limit 1: nothing left to hold out": ([f"data.train={train}", "data.limit=1", "train.epochs=1",
                                                    "data.dev_sample=1000"], "clear-error", "data.dev_sample"),
        "no data.limit, data.dev_sample 60 of 10 sentences": (["train.epochs=1", "data.dev_sample=60"], "clear-error",
                                                              "data.dev_sample"),
    }


def _warned(run: Path, says: str) -> Callable[[Result], str | None]:
    """The run finished and its standard error says ``says``."""
    done = check_run(run)
    return lambda r: done(r) or (None if says in r.err else f"finished without saying {says!r}")


def smoke_probes(sw: Sweep) -> None:
    """Smoke runs (data.limit) of a CoNLL-2000-style chunker whose dev_sample exceeds what the limit keeps."""
    folder = sw.scratch / "smoke"
    folder.mkdir()
    train = folder / "train120.txt"
    train.write_text(chunk_sentences(120))
    for name, (items, expect, says) in smoke_cases(train).items():
        run = folder / _name(name)
        argv = ["train", str(CHUNK / "window.yaml"), *[a for item in items for a in ("--set", item)], "--quiet",
                "--output", str(run)]
        sw.probe(f"smoke run {name}", argv, expect, _warned(run, says), env={"SEQLAB_DATA": str(CHUNK)},
                 says=says if expect == "clear-error" else None, timeout=300, max_mb=2000)
