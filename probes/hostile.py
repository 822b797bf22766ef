"""Hostile inputs for :mod:`probes.sweep`: forged model files, a tampered model cache, requests to ``seqlab serve``
that must fail alone, and ``eval`` edge cases that must agree with ``seqlab score conll``.

* model files: the sweep's tiny ``.seqlab`` file changed as an attacker would, its checksums and sizes recomputed
  (feature paths absolute, climbing out, ``/dev/zero``, a FIFO; member names with ``./``, ``..``, a leading ``/``,
  a backslash, a case twin; a member inflating 1,000 times; a 2 MB manifest; encrypted or LZMA members;
  malformed config.yaml, JSON nested 100,000 deep, an empty label table) x ``tag``, ``eval``, ``inspect``;
* the cache: a cached copy with its labels swapped, a file added, a member replaced by a link or removed, must
  be unpacked again (the tags equal the first run's); with the cache off no copy may be left behind;
* ``seqlab serve`` (a real server on a free port): bad requests alone, then 48 concurrent clients of which one in
  six sends a lone surrogate: every good answer equals the one its text gets alone;
* eval: a ``-X-`` line inside a sentence, a TAB file's tag with a space at its edge or inside (a token-label
  model's label holding a space is tested in ``tests/tagging/test_evaluate.py``).

Beyond the sweep's outcomes a probe here can end ``security``: a forged file was read past its refusal (the
refusal does not name what was wrong, or the load hung on a device or FIFO), a payload ran, or a tampered cache
changed the answers.
"""
from __future__ import annotations

import hashlib
import json
import os
import signal
import socket
import time
import urllib.error
import urllib.request
import zipfile
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Callable

import yaml

from probes.inputs import NER
from probes.runner import Result, Sweep, classify, fork_run, real_run

Change = Callable[[dict[str, bytes]], None]
DEEP = b"[" * 100_000 + b"]" * 100_000


def forge(source: Path, target: Path, change: Change = lambda m: None,
          manifest: Callable[[dict], None] = lambda m: None, method: int = zipfile.ZIP_DEFLATED,
          extra: tuple[str, bytes] | None = None) -> Path:
    """``source`` with its members changed and its manifest's checksums and sizes recomputed (self-consistent);
    ``extra``: one more entry, under a name of its own, after the others."""
    with zipfile.ZipFile(source) as zf:
        members = {name: zf.read(name) for name in zf.namelist()}
    tree = json.loads(members.pop("manifest.json"))
    change(members)
    tree["members"] = {name: hashlib.sha256(data).hexdigest() for name, data in members.items()}
    tree["sizes"] = {name: len(data) for name, data in members.items()}
    manifest(tree)
    with zipfile.ZipFile(target, "w", method) as zf:
        zf.writestr("manifest.json", json.dumps(tree))
        for name, data in members.items():
            zf.writestr(name, data)
        if extra is not None:
            zf.writestr(*extra)
    return target


def _feature(path: str) -> Change:
    def change(members: dict[str, bytes]) -> None:
        tree = yaml.safe_load(members["config.yaml"])
        tree["model"]["features"] = [{"type": "brown", "path": path, "prefixes": [2], "dim": 2}]
        members["config.yaml"] = yaml.safe_dump(tree).encode()
    return change


def _member(name: str, data: bytes) -> Change:
    return lambda members: members.__setitem__(name, data)


def _empty_labels(members: dict[str, bytes]) -> None:
    vocabs = json.loads(members["vocabs.json"])
    vocabs["tags"]["itos"] = []
    members["vocabs.json"] = json.dumps(vocabs).encode()


def forged_files(folder: Path, packaged: Path) -> dict[str, tuple[Path, str]]:
    """Each forged model file with a piece of the refusal that shows it was refused for the right reason."""
    canary, fifo, pwned = folder / "canary_paths.txt", folder / "paths.fifo", folder / "PWNED"
    canary.write_text("0\tthe\t5\n1\tcanary\t3\n")
    os.mkfifo(fifo)
    python = f"!!python/object/apply:os.system ['touch {pwned}']\n".encode()
    cases: dict[str, dict] = {
        "feature path absolute": {"change": _feature(str(canary)), "says": "is not a member of this model file"},
        "feature path climbs out": {"change": _feature("../" * 12 + str(canary)[1:]), "says": "is not a member"},
        "feature path /dev/zero": {"change": _feature("/dev/zero"), "says": "is not a member"},
        "feature path a FIFO": {"change": _feature(str(fifo)), "says": "is not a member"},
        "member ./ twin": {"extra": ("./vocabs.json", b"{}"), "says": "are one name"},
        "member case twin": {"extra": ("VOCABS.json", b"{}"), "says": "are one name"},
        "member absolute": {"extra": ("/tmp/evil.py", b"x"), "says": "is absolute"},
        "member climbs out": {"extra": ("../../evil.py", b"x"), "says": "climbs out"},
        "member backslash": {"extra": ("..\\evil.py", b"x"), "says": "backslash"},
        "member inflates 1000x": {"change": _member("features.json", b"{}" + b" " * (64 << 20)),
                                  "says": "would inflate"},
        "manifest 2 MB": {"manifest": lambda m: m.__setitem__("junk", "x" * (2 << 20)),
                          "says": "a manifest is at most"},
        "manifest members a list": {"manifest": lambda m: m.__setitem__("members", list(m["members"])),
                                    "says": "'members' must map"},
        "manifest sizes lie": {"manifest": lambda m: m["sizes"].__setitem__("model.pt", 1), "says": "in the manifest"},
        "member LZMA": {"method": zipfile.ZIP_LZMA, "says": "compressed with zip method 14"},
        "config not UTF-8": {"change": _member("config.yaml", "caf\xe9: 1\n".encode("latin-1")), "says": "UTF-8"},
        "config a list": {"change": _member("config.yaml", b"- a\n"), "says": "expected a mapping"},
        "config empty": {"change": _member("config.yaml", b""), "says": "an empty document"},
        "config python tag": {"change": _member("config.yaml", python), "says": "could not determine a constructor"},
        "vocabs nested 100000 deep": {"change": _member("vocabs.json", DEEP), "says": "nested deeper"},
        "features nested 100000 deep": {"change": _member("features.json", DEEP), "says": "nested deeper"},
        "empty label table": {"change": _empty_labels, "says": "the label table 'tags' is empty"},
        "no vocabs.json": {"change": lambda m: m.pop("vocabs.json"), "says": "no member 'vocabs.json'"},
    }
    made = {}
    for name, case in cases.items():
        target = folder / f"{name.replace(' ', '_').replace('/', '')}.seqlab"
        forge(packaged, target, case.get("change", lambda m: None), case.get("manifest", lambda m: None),
              case.get("method", zipfile.ZIP_DEFLATED), case.get("extra"))
        made[name] = (target, case["says"])
    encrypted = bytearray(packaged.read_bytes())
    encrypted[encrypted.find(b"PK\x01\x02") + 8] |= 1  # the first central directory entry flagged encrypted
    (folder / "encrypted.seqlab").write_bytes(bytes(encrypted))
    made["member encrypted"] = (folder / "encrypted.seqlab", "is encrypted")
    return made


def _judged(sw: Sweep, name: str, r: Result, says: str, pwned: Path) -> None:
    """Record a forged file's probe: refused in one line naming what was wrong, or ``security``."""
    outcome, detail = classify(r), ""
    if pwned.exists():
        outcome, detail = "security", "the config's !!python payload ran"
    elif r.rc == -9:
        outcome, detail = "security", "killed after the time limit: the load hung or ran away"
    elif outcome == "ok":
        outcome, detail = "security", "the forged file was loaded"
    elif outcome == "clear-error" and says not in r.err:
        outcome, detail = "security", f"refused, but not for what was forged (expected {says!r})"
    sw.record(name, "clear-error", outcome, detail, r.err)


def model_file_probes(sw: Sweep, packaged: Path) -> None:
    folder = sw.scratch / "forged"
    folder.mkdir()
    text = folder / "text.txt"
    text.write_text("Angela Merkel visited Paris.\n")
    pwned = folder / "PWNED"
    for name, (path, says) in forged_files(folder, packaged).items():
        for verb, argv in (("tag", ["tag", str(path), str(text)]),
                           ("eval", ["eval", str(path), str(NER / "dev.txt"), "--output", str(folder / "x.pred")]),
                           ("inspect", ["inspect", str(path)])):
            probe = f"forged model file {name}: {verb}"
            if not sw.only or sw.only in probe:
                env = {"SEQLAB_CACHE": str(folder / "cache")}
                _judged(sw, probe, fork_run(argv, sw.scratch, env=env, timeout=60), says, pwned)


def _tamper(copy: Path, how: str) -> None:
    """Alter an unpacked copy in the cache as a local attacker (or a stray edit) would."""
    vocabs = copy / "vocabs.json"
    vocabs.chmod(0o644)
    if how == "labels swapped":  # O and U-PER: the tiny model's all-O tags become U-PER
        tree = json.loads(vocabs.read_text())
        labels = tree["tags"]["itos"]
        o, per = labels.index("O"), labels.index("U-PER")
        labels[o], labels[per] = labels[per], labels[o]
        vocabs.write_text(json.dumps(tree))
    elif how == "encoder.json added":
        (copy / "encoder.json").write_text('{"path": "/elsewhere", "sha256": "0"}')
    elif how == "vocabs.json a link out":
        outside = copy.parent.parent / "outside.json"
        outside.write_bytes(vocabs.read_bytes().replace(b'"U-PER"', b'"U-ORG"'))
        vocabs.unlink()
        vocabs.symlink_to(outside)
    else:
        (copy / "model.pt").chmod(0o644)
        (copy / "model.pt").unlink()


def cache_probes(sw: Sweep, packaged: Path) -> None:
    """A tampered cached copy is unpacked again (the tags equal the first run's); the cache off leaves no copy."""
    if sw.only and "cache" not in sw.only:
        return
    text = sw.scratch / "cache_text.txt"
    text.write_text("Angela Merkel visited Paris .\nPeter Blackburn met the EU in Brussels .\n")
    argv = ["tag", str(packaged), str(text), "--format", "conll"]
    for how in ("labels swapped", "encoder.json added", "vocabs.json a link out", "model.pt removed"):
        cache = sw.scratch / f"cache_{how.split()[0]}"
        first = fork_run(argv, sw.scratch, env={"SEQLAB_CACHE": str(cache)})
        (copy,) = (cache / "models").iterdir()
        _tamper(copy, how)
        again = fork_run(argv, sw.scratch, env={"SEQLAB_CACHE": str(cache)})
        outcome, detail = classify(again), ""
        if outcome == "ok" and (first.rc != 0 or again.out != first.out):
            outcome, detail = "security", "the tampered cached copy changed the tags"
        elif outcome == "ok" and "unpacking it again" not in again.err:
            outcome, detail = "security", "the tampered cached copy was used without a word"
        sw.record(f"cache: cached copy with {how}: tag", "ok", outcome, detail, again.err)
    tmp = sw.scratch / "tmp"
    tmp.mkdir()
    r = fork_run(argv, sw.scratch, env={"SEQLAB_CACHE": "off", "TMPDIR": str(tmp)})
    left = [p.name for p in tmp.iterdir()]
    outcome = classify(r)
    sw.record("cache: off, tag leaves no unpacked copy", "ok", "silent-wrong" if outcome == "ok" and left else outcome,
              f"left behind: {left}" if left else "", r.err)


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _post(url: str, body: bytes, timeout: float = 60) -> tuple[int, dict | None, float]:
    """(status, parsed answer, seconds); status 0 when no answer came."""
    started = time.monotonic()
    request = urllib.request.Request(url, data=body, headers={"Content-Type": "application/json"})
    try:
        with urllib.request.urlopen(request, timeout=timeout) as answer:
            status, raw = answer.status, answer.read()
    except urllib.error.HTTPError as err:
        status, raw = err.code, err.read()
    except OSError:
        return 0, None, time.monotonic() - started
    try:
        return status, json.loads(raw), time.monotonic() - started
    except ValueError:
        return status, None, time.monotonic() - started


def _http_outcome(status: int, answer: dict | None) -> str:
    if status == 200:
        return "ok"
    if 400 <= status < 500 and answer and isinstance(answer.get("error"), str) and "\n" not in answer["error"]:
        return "clear-error"
    return "traceback" if status == 500 else "unclear-error"


def _record_http(sw: Sweep, name: str, expect: str, got: tuple[int, dict | None, float], says: str = "",
                 wanted: dict | None = None, within: float = 30.0) -> None:
    status, answer, seconds = got
    outcome, detail = _http_outcome(status, answer), ""
    if outcome == "ok" and expect == "clear-error":
        outcome, detail = "silent-wrong", "bad request accepted"
    elif outcome == "ok" and wanted is not None and answer != wanted:
        outcome, detail = "silent-wrong", "the answer differs from the one the text gets alone"
    elif outcome == "clear-error" and says not in answer["error"]:
        outcome, detail = "unclear-error", f"expected {says!r}"
    if seconds > within:
        outcome, detail = "silent-wrong", f"took {seconds:.1f} s (at most {within} s)"
    sw.record(name, expect, outcome, detail or f"HTTP {status}", json.dumps(answer)[:300])


def serve_probes(sw: Sweep, packaged: Path) -> None:
    """A real ``seqlab serve`` on a free port: bad requests alone, then 48 concurrent clients mixing good and bad."""
    if sw.only and "serve" not in sw.only:
        return
    try:
        import starlette  # noqa: F401
        import uvicorn  # noqa: F401
    except ImportError:
        sw.skip("serve x 60 requests", "the serve extra is not installed (pip install 'seqlab[serve]')")
        return
    port = _free_port()
    proc = real_run(["serve", str(packaged), "--port", str(port), "--max-tokens", "2000", "--batch-wait-ms", "20"],
                    sw.scratch)
    url = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 120
        while time.monotonic() < deadline and proc.poll() is None:
            try:
                urllib.request.urlopen(url + "/health", timeout=2).close()
                break
            except OSError:
                time.sleep(0.2)
        else:
            sw.record("serve: start", "ok", classify(Result(proc.returncode or 1, "", "")), "the server did not start")
            return
        _serve_requests(sw, url + "/tag")
        try:
            urllib.request.urlopen(url + "/health", timeout=10).close()
            up = "ok"
        except OSError:
            up = "unclear-error"
        sw.record("serve: still up after every probe", "ok", up)
    finally:
        proc.send_signal(signal.SIGTERM)
        try:
            _, err = proc.communicate(timeout=60)
        except Exception:  # noqa: BLE001  a server that does not stop is killed, and said so
            proc.kill()
            _, err = proc.communicate()
        sw.record("serve: SIGTERM stops it gracefully", "ok", "ok" if proc.returncode == 0 else
                  classify(Result(proc.returncode, "", err)), f"rc {proc.returncode}", err)


def _serve_requests(sw: Sweep, url: str) -> None:
    bad = {
        "lone surrogate in text": (b'{"text": "Paris \\ud800"}', "text: character 7 is a lone surrogate"),
        "lone surrogate in texts": (b'{"texts": ["ok", "\\udfff"]}', "texts[1]: character 1 is a lone surrogate"),
        "lone surrogate in tokens": (b'{"tokens": [["\\ud800"]]}', "tokens[0][0]: character 1 is a lone surrogate"),
        "JSON nested 100000 deep": (b'{"text": ' + DEEP + b"}", "nested deeper than 64 levels"),
        "not JSON": (b"{text", "not UTF-8 JSON"),
        "a JSON list": (b"[1]", "expected a JSON object"),
        "unknown field": (b'{"txt": "a"}', "unknown field 'txt'"),
        "one whitespace word of 800,000 tokens": (b'{"text": "' + b"a," * 400_000 + b'"}', "tokens in this request"),
        "1500 words of 2 tokens each": (json.dumps({"text": "a, " * 1500}).encode(), "3000 tokens in this request"),
    }
    for name, (body, says) in bad.items():
        _record_http(sw, f"serve: {name}", "clear-error", _post(url, body), says, within=15)
    two_words = json.dumps({"text": "x" * 18_000 + " " + "y" * 18_000}).encode()
    _record_http(sw, "serve: a 36 KB text of two words", "ok", _post(url, two_words), within=10)
    texts = [f"Peter Blackburn visited Brussels {i} times ." if i % 3 else f"EU rejects German call {i} ."
             for i in range(48)]
    alone = {text: _post(url, json.dumps({"text": text}).encode())[1] for text in set(texts)}
    bodies = [b'{"text": "bad \\ud800 text"}' if i % 6 == 5 else json.dumps({"text": t}).encode()
              for i, t in enumerate(texts)]
    with ThreadPoolExecutor(16) as pool:
        answers = list(pool.map(lambda body: _post(url, body), bodies))
    for i, (text, got) in enumerate(zip(texts, answers)):
        if i % 6 == 5:
            _record_http(sw, f"serve: 48 at once, bad client {i}", "clear-error", got, "lone surrogate")
        else:
            _record_http(sw, f"serve: 48 at once, good client {i}", "ok", got, wanted=alone[text])


def eval_probes(sw: Sweep, tagger: Path, packaged: Path) -> None:
    """eval's report equals ``seqlab score conll`` of its prediction file, whose lines keep three fields."""
    from seqlab.data.conll import split_fields
    from seqlab.data.metrics import score_conll_file

    folder = sw.scratch / "eval_edges"
    folder.mkdir()
    rows = (NER / "dev.txt").read_text().split("\n")
    tab = "\n".join("\t".join(line.split()) for line in rows)
    inside = "\n".join(rows).replace("call NN I-NP O\n", "call NN I-NP O\n-X- -X- O O\n", 1)
    files = {"a -X- line inside a sentence": (inside, "ok"),
             "TAB file, a tag with a trailing space": (tab.replace("\tI-ORG\n", "\tI-ORG \n", 1), "ok"),
             "TAB file, a span tag holding a space": (tab.replace("\tI-MISC\n", "\tI MISC\n", 1), "clear-error")}

    def agrees(pred: Path) -> Callable[[Result], str | None]:
        def check(r: Result) -> str | None:
            lines = [split_fields(line) for line in pred.read_text(encoding="utf-8").splitlines() if line.strip()]
            if any(len(fields) != 3 for fields in lines):
                return "a prediction line without exactly three fields"
            report = r.out.split("predictions written to", 1)[0]
            return None if score_conll_file(pred) == report else "score conll of the prediction file disagrees"
        return check

    for name, (text, expect) in files.items():
        gold = folder / f"{len(os.listdir(folder))}.txt"
        gold.write_text(text, encoding="utf-8")
        for model, kind in ((tagger, "run"), (packaged, "seqlab")):
            pred = gold.with_suffix(f".{kind}.pred")
            sw.probe(f"eval[{kind}] {name}", ["eval", str(model), str(gold), "--output", str(pred)], expect,
                     agrees(pred))
