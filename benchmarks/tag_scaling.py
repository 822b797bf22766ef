"""Bulk tagging throughput: ``seqlab tag --workers N`` vs Ray (``seqlab.apps.ray``, A actors), whole jobs side by side.

    OMP_NUM_THREADS=1 python -m benchmarks.tag_scaling --lines 50000 --workers 2 --rounds 3 [--format jsonl]

The input is the first ``--lines`` non-blank lines (paragraphs) of the 2014 English Wikipedia dump under
``$SEQLAB_DATA/unlabeled/wikipedia_en_2014`` (default ../shared/data), written to a scratch file. Each mode
is a whole process (one torch thread per tagging process) timed from its start to its exit:

* ``workers_N``: ``python -m seqlab tag MODEL FILE --workers N --format FMT`` to a file (N = 1: in-process;
  N > 1: N worker processes, each tagging and rendering its chunks);
* ``ray``: this script in ``--ray-child`` mode: ``ray.init(num_cpus=ACTORS)``, ``ray.data.read_text`` of the file
  (a task that asks for no CPU: the actors hold them all), :func:`seqlab.apps.ray.tag_dataset` with ``ACTORS``
  actors (nice 0, as the other modes' processes: ``RAY_worker_niceness=0``) and the driver writing every
  batch, in input order (``preserve_order``), into a Parquet file with ``pyarrow.parquet.ParquetWriter``: no
  Python object per row in the driver. After the run (not timed) the Parquet rows are rendered as ``seqlab
  tag --format FMT`` writes them and compared with the first mode's output (:func:`compare`: ``same_output``,
  byte for byte; for jsonl also ``same_but_confidences``). The child reports ``ray_init_s`` and
  ``first_batch_s`` (from its start), its start-up apart from tagging.

Every mode reports: ``seconds`` (wall) and ``tokens_per_second`` over the whole job (start-up included);
``first_output_s``, when the output file first grew (start-up and the first chunk); ``per_process_tokens_per_s``,
tokens over the time after that, per tagging process (the rate once started; it counts the first chunk's tokens
in both modes alike); ``cpu_s``, the CPU seconds (user + system) of every process of the job (``main``, the
tagging ``workers`` one by one, and ``other``: Ray's daemons and idle workers), read with the peak RSS
(``VmHWM``) of each from ``/proc`` every 0.2 s; ``peak_rss_mb`` of the main process and of every worker/actor.
``--rounds R`` alternates the modes R times; each mode's median round is reported with every round's seconds,
and ``ray_vs_workers`` gives the ratios of Ray to ``workers_N`` (the largest N) per round, min / median / max.
``--ceiling`` adds ``shards_2``: two independent ``seqlab tag --shard i/2`` processes started together.
"""
from __future__ import annotations

import argparse
import gzip
import hashlib
import itertools
import json
import os
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
TICK = os.sysconf("SC_CLK_TCK")


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


class Watch:
    """Polls, every 0.2 s, the peak RSS (VmHWM) and CPU seconds of ``root`` and its descendants (Ray's actors
    are the raylet's children, and the raylet the driver's), and when ``output`` first grew."""

    def __init__(self, root: int, output: Path) -> None:
        self.root, self.output, self.start = root, output, time.perf_counter()
        self.peaks: dict[int, float] = {}
        self.cpu: dict[int, float] = {}
        self.names: dict[int, str] = {}
        self.first_output: float | None = None
        self.stop = threading.Event()
        self.thread = threading.Thread(target=self._poll, daemon=True)
        self.thread.start()

    def _poll(self) -> None:
        while not self.stop.wait(0.2):
            if self.first_output is None and self.output.exists() and self.output.stat().st_size > 0:
                self.first_output = time.perf_counter() - self.start
            parents, stats = {}, {}
            for entry in os.listdir("/proc"):
                if entry.isdigit():
                    try:
                        stat = _proc(int(entry), "stat")
                        fields = stat[stat.rindex(")") + 2:].split()
                        parents[int(entry)], stats[int(entry)] = int(fields[1]), fields
                    except (OSError, ValueError):
                        continue
            tree, grew = {self.root}, True
            while grew:
                more = {pid for pid, parent in parents.items() if parent in tree} - tree
                tree |= more
                grew = bool(more)
            for pid in tree & stats.keys():
                try:
                    self.peaks[pid] = max(self.peaks.get(pid, 0.0), _hwm_mb(pid))
                    self.cpu[pid] = (int(stats[pid][11]) + int(stats[pid][12])) / TICK  # utime + stime
                    name = _proc(pid, "cmdline").replace("\0", " ").strip()[:80]
                    if name:  # the latest (Ray renames a worker that becomes an actor); a zombie's is empty
                        self.names[pid] = name
                except (OSError, ValueError):
                    continue

    def finish(self) -> None:
        self.stop.set()
        self.thread.join()


def _env() -> dict[str, str]:
    return {**os.environ, "OMP_NUM_THREADS": "1", "MKL_NUM_THREADS": "1", "RAY_worker_niceness": "0"}


def run_mode(command: list[str], output: Path, marker: str, *, to_stdout: bool = True) -> dict:
    """Run ``command`` (its standard output to ``output``, or it writes ``output`` itself) and measure it;
    processes whose command line holds ``marker`` are its tagging workers."""
    output.unlink(missing_ok=True)
    start = time.perf_counter()
    with open(output if to_stdout else os.devnull, "w", encoding="utf-8") as out:
        process = subprocess.Popen(command, stdout=out, stderr=subprocess.PIPE, cwd=ROOT, env=_env())
        watch = Watch(process.pid, output)
        _, stderr = process.communicate()
    seconds = time.perf_counter() - start
    watch.finish()
    if process.returncode != 0:
        sys.exit(f"tag_scaling: {' '.join(command)} failed:\n{stderr.decode()[-3000:]}")
    workers = sorted(pid for pid in watch.peaks if pid != process.pid and marker in watch.names.get(pid, ""))
    others = set(watch.cpu) - set(workers) - {process.pid}
    result = {"seconds": round(seconds, 2), "first_output_s": round(watch.first_output or seconds, 2),
              "cpu_s": {"total": round(sum(watch.cpu.values()), 1), "main": round(watch.cpu.get(process.pid, 0.0), 1),
                        "workers": [round(watch.cpu[pid], 1) for pid in workers],
                        "other": round(sum(watch.cpu[pid] for pid in others), 1)},
              "peak_rss_mb": {"main": round(watch.peaks.get(process.pid, 0.0), 1),
                              "workers": [round(watch.peaks[pid], 1) for pid in workers]}}
    for line in stderr.decode().splitlines():  # the Ray child's own timing
        if line.startswith("{\"ray_init_s\""):
            result.update(json.loads(line))
    return result


def run_concurrent(commands: list[list[str]], outputs: list[Path]) -> dict:
    """Start ``commands`` together (stdout to ``outputs``) and time them until the last one ends."""
    start = time.perf_counter()
    handles = [open(output, "w", encoding="utf-8") for output in outputs]
    processes = [subprocess.Popen(command, stdout=handle, stderr=subprocess.PIPE, cwd=ROOT, env=_env())
                 for command, handle in zip(commands, handles)]
    watches = [Watch(process.pid, output) for process, output in zip(processes, outputs)]
    failures = [(command, process.communicate()[1]) for command, process in zip(commands, processes)
                if process.wait() != 0]
    seconds = time.perf_counter() - start
    for handle, watch in zip(handles, watches):
        handle.close()
        watch.finish()
    if failures:
        sys.exit(f"tag_scaling: {' '.join(failures[0][0])} failed:\n{failures[0][1].decode()[-3000:]}")
    return {"seconds": round(seconds, 2), "cpu_s": {"total": round(sum(sum(w.cpu.values()) for w in watches), 1)},
            "peak_rss_mb": {"main": [round(max(w.peaks.values(), default=0.0), 1) for w in watches]}}


def ray_child(model: str | None, path: Path, actors: int, out: Path, fmt: str) -> None:
    """Tag ``path`` on a local Ray instance, the rows written in input order to the Parquet file ``out``; the
    start-up and tagging times to standard error."""
    start = time.perf_counter()
    import pyarrow.parquet as pq
    import ray

    from seqlab.apps.ray import tag_dataset

    ray.init(num_cpus=actors, include_dashboard=False, log_to_driver=False, logging_level="ERROR")
    ray_init = time.perf_counter() - start
    context = ray.data.DataContext.get_current()
    context.enable_progress_bars = False
    context.execution_options.preserve_order = True  # rows in input order, as seqlab tag writes them
    dataset = ray.data.read_text(str(path), num_cpus=0)  # the actors hold every CPU: a read task needing one
    # would wait for ever
    tagged = tag_dataset(dataset, model, actors=actors, scheme="iob2", confidences=fmt == "jsonl")
    writer, first = None, None
    with open(out, "wb") as sink:
        for batch in tagged.iter_batches(batch_format="pyarrow", batch_size=None):
            if writer is None:
                first = time.perf_counter() - start
                writer = pq.ParquetWriter(sink, batch.schema)
            writer.write_table(batch)
            sink.flush()
        if writer is not None:
            writer.close()
    print(json.dumps({"ray_init_s": round(ray_init, 2), "first_batch_s": round(first or 0.0, 2),
                      "tagging_s": round(time.perf_counter() - start - ray_init, 2)}), file=sys.stderr)
    ray.shutdown()


def render_parquet(path: Path, fmt: str) -> bytes:
    """The rows of the Ray child's Parquet file (one per input line, in order) as ``seqlab tag --format fmt``
    writes them."""
    import pyarrow.parquet as pq

    parts, number = [], 0
    for batch in pq.ParquetFile(path).iter_batches(columns=["sentences"]):
        for sentences in batch.column("sentences").to_pylist():
            number += 1
            for sentence in sentences:
                if fmt == "jsonl":
                    parts.append(json.dumps({"line": number, **sentence}, ensure_ascii=False) + "\n")
                else:
                    parts.append("\n".join(map(" ".join, zip(sentence["tokens"], sentence["labels"]))) + "\n\n")
    return "".join(parts).encode("utf-8")


def count_tokens(data: bytes, fmt: str) -> int:
    if fmt == "jsonl":
        return sum(len(json.loads(line)["tokens"]) for line in data.splitlines())
    return sum(1 for line in data.splitlines() if line.strip())


def compare(data: bytes, reference: bytes, fmt: str) -> dict:
    """``same_output``: byte for byte; for jsonl also ``same_but_confidences`` (every field but the spans'
    confidences equal) and the largest confidence difference: the fourth decimal of a confidence can differ
    between two processes that tagged the same line, as a word's spelling vector depends (in its last bits) on
    the batch of new words it was computed in, and so on what the process tagged before."""
    result: dict = {"same_output": data == reference}
    if fmt != "jsonl" or result["same_output"]:
        return result
    ours, theirs = data.splitlines(), reference.splitlines()
    same, largest = len(ours) == len(theirs), 0.0
    for a, b in zip(ours, theirs):
        if a != b:
            x, y = json.loads(a), json.loads(b)
            cx = [span.pop("confidence") for span in x["spans"]]
            cy = [span.pop("confidence") for span in y["spans"]]
            same = same and x == y and len(cx) == len(cy)
            largest = max([largest, *(abs(u - v) for u, v in zip(cx, cy))])
    return {**result, "same_but_confidences": same, "largest_confidence_difference": round(largest, 4)}


def _spread(values: list[float]) -> dict[str, float]:
    return {"min": round(min(values), 3), "median": round(statistics.median(values), 3), "max": round(max(values), 3)}


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--model", default="en-ner-conll03", help="a run directory, a .seqlab file or an installed name")
    p.add_argument("--lines", type=int, default=50_000, help="Wikipedia lines")
    p.add_argument("--workers", type=int, nargs="+", default=[1, 2], help="seqlab tag --workers values")
    p.add_argument("--ray-actors", type=int, default=2, help="Ray actors (0: no Ray run)")
    p.add_argument("--format", choices=("jsonl", "conll"), default="jsonl", help="seqlab tag --format (both modes)")
    p.add_argument("--ceiling", action="store_true",
                   help="also time two independent --shard i/2 processes at once (shards_2)")
    p.add_argument("--rounds", type=int, default=1, help="repeat every mode, alternating; medians reported")
    p.add_argument("--ray-child", type=Path, help=argparse.SUPPRESS)  # internal: the Ray run's process
    p.add_argument("--ray-out", type=Path, help=argparse.SUPPRESS)
    args = p.parse_args()
    if args.ray_child:
        ray_child(args.model, args.ray_child, args.ray_actors, args.ray_out, args.format)
        return
    load_before = [round(x, 2) for x in os.getloadavg()]
    rounds: dict[str, list[dict]] = {}
    with tempfile.TemporaryDirectory() as scratch:
        text = wikipedia_lines(data_root(), args.lines, Path(scratch) / "wikipedia.txt")
        base = [sys.executable, "-m", "seqlab", "tag", args.model, str(text), "--format", args.format]
        reference: bytes | None = None
        for _ in range(args.rounds):
            for n in args.workers:
                output = Path(scratch) / f"w{n}.out"
                run = run_mode(base + ["--workers", str(n)], output, "multiprocessing.spawn")
                run["processes"] = n
                data = output.read_bytes()
                reference = reference or data  # the first round's first mode
                run.update(tokens=count_tokens(data, args.format), **compare(data, reference, args.format))
                rounds.setdefault(f"workers_{n}", []).append(run)
            if args.ceiling:
                run = run_concurrent([base + ["--shard", f"{i}/2"] for i in range(2)],
                                     [Path(scratch) / f"s{i}.out" for i in range(2)])
                run["tokens"] = sum(count_tokens((Path(scratch) / f"s{i}.out").read_bytes(), args.format) for i in range(2))
                rounds.setdefault("shards_2", []).append(run)
            if args.ray_actors:
                output = Path(scratch) / "ray.parquet"
                command = [sys.executable, str(Path(__file__).resolve()), "--model", args.model, "--ray-actors",
                           str(args.ray_actors), "--format", args.format, "--ray-child", str(text),
                           "--ray-out", str(output)]
                run = run_mode(command, output, "_Tagger", to_stdout=False)
                run["processes"] = args.ray_actors
                data = render_parquet(output, args.format)  # not timed
                run.update(tokens=count_tokens(data, args.format), **compare(data, reference, args.format))
                rounds.setdefault(f"ray_{args.ray_actors}_actors", []).append(run)
    for runs in rounds.values():
        for run in runs:
            run["tokens_per_second"] = round(run["tokens"] / run["seconds"])
            if "first_output_s" in run:
                run["per_process_tokens_per_s"] = round(run["tokens"] / (run["seconds"] - run["first_output_s"])
                                                        / run["processes"])
    results = {}
    for mode, runs in rounds.items():
        median = sorted(runs, key=lambda run: run["seconds"])[(len(runs) - 1) // 2]
        results[mode] = {**median, "rounds_seconds": [run["seconds"] for run in runs],
                         "rounds_cpu_s": [run["cpu_s"]["total"] for run in runs]}
    ray_mode, workers_mode = f"ray_{args.ray_actors}_actors", f"workers_{max(args.workers)}"
    if ray_mode in rounds and workers_mode in rounds:
        pairs = list(zip(rounds[ray_mode], rounds[workers_mode]))
        results["ray_vs_workers"] = {
            "against": workers_mode,
            "throughput": _spread([r["tokens_per_second"] / w["tokens_per_second"] for r, w in pairs]),
            "per_process_after_startup": _spread([r["per_process_tokens_per_s"] / w["per_process_tokens_per_s"]
                                                  for r, w in pairs]),
            "cpu_seconds": _spread([r["cpu_s"]["total"] / w["cpu_s"]["total"] for r, w in pairs])}
    print(json.dumps({"model": args.model, "lines": args.lines, "format": args.format, "threads_per_worker": 1,
                      "cpus": os.cpu_count(), "load_before": load_before,
                      "load_after": [round(x, 2) for x in os.getloadavg()], **results}, indent=2))


if __name__ == "__main__":
    main()
