"""Bulk tagging throughput: ``seqlab tag --workers 1`` vs ``--workers 2`` vs Ray (2 actors), tokens/s and peak RSS.

    OMP_NUM_THREADS=1 python -m benchmarks.tag_scaling --lines 50000 [--model en-ner-conll03]

The input is the first ``--lines`` non-blank lines (paragraphs) of the 2014 English Wikipedia dump under
``$SEQLAB_DATA/unlabeled/wikipedia_en_2014`` (default ../shared/data), written to a scratch file. Each mode
is a whole process whose CoNLL output goes to a file:

* ``workers_N``: ``python -m seqlab tag MODEL FILE --workers N --format conll`` (N = 1: in-process, one
  torch thread; N > 1: N worker processes of one thread each);
* ``ray``: this script in ``--ray-child`` mode: ``ray.init(num_cpus=ACTORS)``, ``ray.data.read_text`` of
  the file, :func:`seqlab.apps.ray.tag_dataset` with ``ACTORS`` actors and the driver writing the same
  CoNLL output in input order (``preserve_order``); ``tagging_seconds`` leaves out ``ray.init``. The
  file is read by a task that asks for no CPU (the actors hold them all), and the actors run at nice 0
  (``RAY_worker_niceness=0``; Ray's default is 15), as the other modes' processes do.

tokens/s is the number of tokens written over the whole process's wall time (start-up and model loading
included). Peak RSS is read from ``/proc/PID/status`` (``VmHWM``) of every process of the job, polled every
0.2 s: ``main`` is the process started, ``workers`` the tagging processes (pool workers, Ray actors).
Every mode's output must be byte-identical to ``--workers 1``'s (``same_output``). Target: ``--workers 2``
at least 1.8× ``--workers 1``.

``--ceiling`` adds ``shards_2``: two independent ``seqlab tag --shard i/2`` processes (one thread each) started
together, timed until both end: what this machine gives two one-process jobs with nothing shared, the most
any 2-process mode can reach here. ``--rounds R`` repeats every mode R times, alternating (1, 2, shards, 1,
2, ...), and reports each mode's median round beside every round's seconds; the speed-ups are of medians.
"""
from __future__ import annotations

import argparse
import gzip
import hashlib
import itertools
import json
import os
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def data_root() -> Path:
    root = Path(os.environ.get("SEQLAB_DATA", ROOT.parent / "shared" / "data"))
    if not (root / "unlabeled" / "wikipedia_en_2014").is_dir():
        sys.exit(f"tag_scaling: no unlabeled/wikipedia_en_2014 under {root}; set SEQLAB_DATA")
    return root


def wikipedia_lines(root: Path, count: int, out: Path) -> Path:
    """The first ``count`` non-blank lines of the Wikipedia dump's first part."""
    source = sorted((root / "unlabeled" / "wikipedia_en_2014").glob("enwiki2014_part_*.txt.gz"))[0]
    with gzip.open(source, "rt", encoding="utf-8") as handle:
        out.write_text("".join(itertools.islice((line for line in handle if line.strip()), count)), encoding="utf-8")
    return out


def _proc(pid: int, name: str) -> str:
    with open(f"/proc/{pid}/{name}", "rb") as f:
        return f.read().decode(errors="replace")


def _hwm_mb(pid: int) -> float:
    for line in _proc(pid, "status").splitlines():
        if line.startswith("VmHWM:"):
            return int(line.split()[1]) / 1024
    return 0.0


class PeakRss:
    """Polls the peak RSS (VmHWM) of ``root`` and its descendants, and of processes whose command line
    contains ``also`` (Ray actors are the raylet's children, not the driver's)."""

    def __init__(self, root: int, also: str | None = None) -> None:
        self.root, self.also, self.peaks, self.names = root, also, {}, {}
        self.stop = threading.Event()
        self.thread = threading.Thread(target=self._poll, daemon=True)
        self.thread.start()

    def _poll(self) -> None:
        while not self.stop.wait(0.2):
            parents, commands = {}, {}
            for entry in os.listdir("/proc"):
                if entry.isdigit():
                    try:
                        stat = _proc(int(entry), "stat")
                        parents[int(entry)] = int(stat[stat.rindex(")") + 2:].split()[1])
                        commands[int(entry)] = _proc(int(entry), "cmdline").replace("\0", " ").strip()
                    except (OSError, ValueError):
                        continue
            tree, grew = {self.root}, True
            while grew:
                more = {pid for pid, parent in parents.items() if parent in tree} - tree
                tree |= more
                grew = bool(more)
            if self.also:
                tree |= {pid for pid, command in commands.items() if self.also in command}
            for pid in tree:
                try:
                    self.peaks[pid] = max(self.peaks.get(pid, 0.0), _hwm_mb(pid))
                    if pid in commands:  # the latest: a Ray worker is renamed when it becomes an actor
                        self.names[pid] = commands[pid][:80]
                except OSError:
                    continue

    def finish(self) -> dict[str, float]:
        self.stop.set()
        self.thread.join()
        return self.peaks


def run_mode(command: list[str], output: Path, workers_marker: str, also: str | None = None) -> dict:
    env = {**os.environ, "OMP_NUM_THREADS": "1", "MKL_NUM_THREADS": "1"}
    start = time.perf_counter()
    with open(output, "w", encoding="utf-8") as out:
        process = subprocess.Popen(command, stdout=out, stderr=subprocess.PIPE, cwd=ROOT, env=env)
        watch = PeakRss(process.pid, also)
        _, stderr = process.communicate()
    seconds = time.perf_counter() - start
    peaks = watch.finish()
    if process.returncode != 0:
        sys.exit(f"tag_scaling: {' '.join(command)} failed:\n{stderr.decode()[-3000:]}")
    with open(output, encoding="utf-8") as handle:
        tokens = sum(1 for line in handle if line.strip())
    workers = sorted(round(mb, 1) for pid, mb in peaks.items()
                     if pid != process.pid and workers_marker in watch.names.get(pid, ""))
    result = {"seconds": round(seconds, 2), "tokens": tokens, "tokens_per_second": round(tokens / seconds),
              "peak_rss_mb": {"main": round(peaks.get(process.pid, 0.0), 1), "workers": workers},
              "sha256": hashlib.sha256(output.read_bytes()).hexdigest()}
    for line in stderr.decode().splitlines():  # the Ray child's own timing
        if line.startswith("{\"tagging_seconds\""):
            result.update(json.loads(line))
    return result


def run_concurrent(commands: list[list[str]], outputs: list[Path]) -> dict:
    """Start ``commands`` together (stdout to ``outputs``) and time them until the last one ends."""
    env = {**os.environ, "OMP_NUM_THREADS": "1", "MKL_NUM_THREADS": "1"}
    start = time.perf_counter()
    handles = [open(output, "w", encoding="utf-8") for output in outputs]
    processes = [subprocess.Popen(command, stdout=handle, stderr=subprocess.PIPE, cwd=ROOT, env=env)
                 for command, handle in zip(commands, handles)]
    watches = [PeakRss(process.pid) for process in processes]
    failures = [(command, process.communicate()[1]) for command, process in zip(commands, processes)
                if process.wait() != 0]
    seconds = time.perf_counter() - start
    for handle in handles:
        handle.close()
    peaks = [watch.finish() for watch in watches]
    if failures:
        sys.exit(f"tag_scaling: {' '.join(failures[0][0])} failed:\n{failures[0][1].decode()[-3000:]}")
    tokens = 0
    for output in outputs:
        with open(output, encoding="utf-8") as handle:
            tokens += sum(1 for line in handle if line.strip())
    return {"seconds": round(seconds, 2), "tokens": tokens, "tokens_per_second": round(tokens / seconds),
            "peak_rss_mb": {"main": [round(max(p.values(), default=0.0), 1) for p in peaks], "workers": []}}


def ray_child(model: str | None, path: Path, actors: int) -> None:
    """Tag ``path`` on a local Ray instance; CoNLL to standard output, the tagging time to standard error."""
    import ray

    from seqlab.apps.ray import tag_dataset

    ray.init(num_cpus=actors, include_dashboard=False, log_to_driver=False, logging_level="ERROR")
    context = ray.data.DataContext.get_current()
    context.enable_progress_bars = False
    context.execution_options.preserve_order = True  # CoNLL output in input order, as seqlab tag writes it
    start = time.perf_counter()
    dataset = ray.data.read_text(str(path), num_cpus=0)  # the actors hold every CPU: a read task needing one
    # would wait for ever
    out = sys.stdout
    for batch in tag_dataset(dataset, model, actors=actors, scheme="iob2", confidences=False).iter_batches(
            batch_format="pyarrow", batch_size=None):
        for sentences in batch.column("sentences").to_pylist():
            for sentence in sentences:
                out.writelines(f"{t} {l}\n" for t, l in zip(sentence["tokens"], sentence["labels"]))
                out.write("\n")
    out.flush()
    print(json.dumps({"tagging_seconds": round(time.perf_counter() - start, 2)}), file=sys.stderr)
    ray.shutdown()


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--model", default="en-ner-conll03", help="a run directory, a .seqlab file or an installed name")
    p.add_argument("--lines", type=int, default=50_000, help="Wikipedia lines")
    p.add_argument("--workers", type=int, nargs="+", default=[1, 2], help="seqlab tag --workers values")
    p.add_argument("--ray-actors", type=int, default=2, help="Ray actors (0: no Ray run)")
    p.add_argument("--ceiling", action="store_true",
                   help="also time two independent --shard i/2 processes at once (shards_2)")
    p.add_argument("--rounds", type=int, default=1, help="repeat every mode, alternating; medians reported")
    p.add_argument("--ray-child", type=Path, help=argparse.SUPPRESS)  # internal: the Ray run's process
    args = p.parse_args()
    if args.ray_child:
        ray_child(args.model, args.ray_child, args.ray_actors)
        return
    load_before = [round(x, 2) for x in os.getloadavg()]
    rounds: dict[str, list[dict]] = {}
    with tempfile.TemporaryDirectory() as scratch:
        text = wikipedia_lines(data_root(), args.lines, Path(scratch) / "wikipedia.txt")
        base = [sys.executable, "-m", "seqlab", "tag", args.model, str(text), "--format", "conll"]
        for _ in range(args.rounds):
            for n in args.workers:
                rounds.setdefault(f"workers_{n}", []).append(
                    run_mode(base + ["--workers", str(n)], Path(scratch) / f"w{n}.conll", "multiprocessing"))
            if args.ceiling:
                rounds.setdefault("shards_2", []).append(run_concurrent(
                    [base + ["--shard", f"{i}/2"] for i in range(2)], [Path(scratch) / f"s{i}.conll" for i in range(2)]))
            if args.ray_actors:
                os.environ["RAY_worker_niceness"] = "0"  # Ray starts its workers at nice 15; seqlab tag's run at 0
                command = [sys.executable, str(Path(__file__).resolve()), "--model", args.model, "--ray-actors",
                           str(args.ray_actors), "--ray-child", str(text)]
                rounds.setdefault(f"ray_{args.ray_actors}_actors", []).append(
                    run_mode(command, Path(scratch) / "ray.conll", "_Tagger", also="_Tagger"))
    results = {}
    for mode, runs in rounds.items():
        median = sorted(runs, key=lambda run: run["seconds"])[(len(runs) - 1) // 2]
        results[mode] = {**median, "rounds_seconds": [run["seconds"] for run in runs]}
    first = results[f"workers_{args.workers[0]}"]
    reference = first["sha256"]
    for result in results.values():
        result["speedup"] = round(result["tokens_per_second"] / first["tokens_per_second"], 2)
        if "sha256" in result:  # shards_2 writes two files in shard order: its tokens are compared instead
            result["same_output"] = result.pop("sha256") == reference
        else:
            result["same_tokens"] = result["tokens"] == first["tokens"]
    print(json.dumps({"model": args.model, "lines": args.lines, "threads_per_worker": 1, "cpus": os.cpu_count(),
                      "load_before": load_before, "load_after": [round(x, 2) for x in os.getloadavg()],
                      **results}, indent=2))


if __name__ == "__main__":
    main()
