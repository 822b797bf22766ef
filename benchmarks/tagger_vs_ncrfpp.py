"""BiLSTM-CRF tagger speed, seqlab against NCRF++, side by side on CoNLL-2003; prints one JSON object.

    OMP_NUM_THREADS=1 python -m benchmarks.tagger_vs_ncrfpp --run RUN \
        --ncrfpp /tmp/ncrfpp --ncrfpp-dset /tmp/ncrfpp_runs/glove.dset \
        --ncrfpp-model /tmp/ncrfpp_runs/glove.0.model --ncrfpp-decode-config /tmp/ncrfpp_runs/decode.config \
        --rounds 3 --threads 1

Setting up NCRF++ (source tree, patch, data conversion, configs, its 1-epoch model) is
described in benchmarks/peers/README.md. Three comparisons, each alternating the sides
round by round (seqlab, NCRF++, seqlab, NCRF++, ...) at the same thread count:

* ``train`` (in-process): sentences/s over ``--train-sentences`` training sentences after
  ``--warmup-sentences`` untimed ones, each tool with its own batching and update step at
  batch 10: seqlab's bucketed batches, loss, backward, gradient clipping and SGD step (as
  its trainer); NCRF++'s batches in shuffled file order, ``calculate_loss`` (which also runs
  Viterbi on every batch), ``predict_check``, backward and SGD step (as its ``main.train``).
  Data are indexed beforehand on both sides. Both models keep training across rounds.
* ``decode`` (in-process, models loaded): the CoNLL-2003 test set at batch ``--decode-batch``
  from indexed sentences to label strings. seqlab: ``seqlab.tagging.predict.predict`` (sorted
  batches, inference mode). NCRF++: the loop of its ``main.evaluate`` without the F1
  scoring (batches in file order, ``batchify_with_label``, forward + Viterbi,
  ``recover_label``), as shipped, i.e. with autograd enabled; ``ncrfpp_no_grad`` is the same
  loop under ``torch.no_grad()``, a fairer variant than the tool itself runs.
* ``whole_process``: wall and CPU seconds of ``python -m seqlab eval RUN test.txt
  --batch-size 100`` against NCRF++'s ``python main.py --config decode.config`` (batch 100)
  on the same test sentences, start-up, loading, decoding, scoring and writing included;
  both with OMP_NUM_THREADS/MKL_NUM_THREADS set to ``--threads``.

Each ratio is seqlab's figure over NCRF++'s of the same run: for throughputs (sentences/s)
above 1 means seqlab is faster, for seconds below 1 means seqlab is faster.
"""
from __future__ import annotations

import argparse
import contextlib
import copy
import json
import os
import random
import statistics
import sys
import time
from pathlib import Path

import torch

from benchmarks.sidebyside import (
    command_line, load_average, machine, one_thread_env, package_version, portable_command, portable_path, run_process,
    summarise,
)


def seqlab_surface():
    """Every seqlab import of this benchmark, in one place (module paths may move)."""
    from seqlab.core.optim import build_optimizer
    from seqlab.data.batching import encode, iterate
    from seqlab.data.dataset import read_split
    from seqlab.tagging.api import SequenceTagger
    from seqlab.tagging.build import parameter_groups
    from seqlab.tagging.features import encode_options
    from seqlab.tagging.predict import predict

    return SequenceTagger, build_optimizer, parameter_groups, encode, iterate, read_split, predict, encode_options


class SeqlabSide:
    def __init__(self, run: str) -> None:
        (SequenceTagger, build_optimizer, parameter_groups, encode, iterate, read_split, predict,
         encode_options) = seqlab_surface()
        self.iterate, self.predict = iterate, predict
        tagger = SequenceTagger.load(run, "cpu")
        self.config, self.vocabs, model, features = tagger.config, tagger.vocabs, tagger.model, tagger.features
        train = read_split(self.config.data, "train")
        test = read_split(self.config.data, "test")
        self.train_data = encode(train.tokens, self.vocabs, tags=train.tags, **encode_options(features))
        self.test_data = encode(test.tokens, self.vocabs, **encode_options(features))
        self.model = model
        self.train_model = copy.deepcopy(model).train()
        self.optimizer, _ = build_optimizer(parameter_groups(self.train_model, self.config.train), self.config.train)
        self.params = [p for p in self.train_model.parameters() if p.requires_grad]
        self.generator = torch.Generator().manual_seed(0)
        self.batches = self._batches()
        self.info = {
            "run": portable_path(run), "train_sentences": len(self.train_data), "test_sentences": len(self.test_data),
            "test_tokens": int(self.test_data.lengths.sum()), "word_vocab": len(self.vocabs["words"]),
            "parameters": sum(p.numel() for p in model.parameters() if p.requires_grad),
            "batch_size": self.config.train.batch_size, "optimizer": self.config.train.optimizer,
            "lr": self.config.train.lr, "momentum": self.config.train.momentum, "clip": self.config.train.clip,
        }

    def _batches(self):
        t = self.config.train
        while True:
            yield from self.iterate(self.train_data, t.batch_size, shuffle=True, generator=self.generator,
                                    bucket_factor=t.bucket_factor)

    def train(self, sentences: int) -> tuple[int, int, float]:
        """(sentences, tokens, seconds) of training on at least ``sentences`` sentences."""
        self.train_model.train()
        clip = self.config.train.clip
        seen = tokens = 0
        start = time.perf_counter()
        while seen < sentences:
            batch = next(self.batches)
            loss = self.train_model.loss(batch)
            if not torch.isfinite(loss):
                raise RuntimeError("seqlab loss is not finite")
            self.optimizer.zero_grad(set_to_none=True)
            loss.backward()
            if clip > 0:
                torch.nn.utils.clip_grad_norm_(self.params, clip)
            self.optimizer.step()
            seen += int(batch.indices.shape[0])
            tokens += int(batch.mask.sum())
        return seen, tokens, time.perf_counter() - start

    def decode(self, batch_size: int) -> tuple[int, float]:
        start = time.perf_counter()
        out = self.predict(self.model, self.test_data, self.vocabs["tags"], batch_size=batch_size)
        elapsed = time.perf_counter() - start
        if len(out) != len(self.test_data):
            raise RuntimeError("seqlab decoded the wrong number of sentences")
        return len(out), elapsed


class NcrfppSide:
    def __init__(self, source: str, dset: str, model_path: str) -> None:
        sys.path.insert(0, source)
        import main as ncrf  # NCRF++'s main.py (seeds random, numpy and torch at import)
        from model.seqlabel import SeqLabel
        from utils.data import Data

        self.ncrf = ncrf
        data = Data()
        data.load(dset)
        data.HP_gpu = False
        self.data = data
        model = SeqLabel(data)  # mutates data.label_alphabet_size, so built once
        model.load_state_dict(torch.load(model_path, map_location="cpu", weights_only=True))  # a state dict: tensors only
        self.model = model.eval()
        self.train_model = copy.deepcopy(model).train()
        self.optimizer = torch.optim.SGD(self.train_model.parameters(), lr=data.HP_lr, momentum=data.HP_momentum,
                                         weight_decay=data.HP_l2)
        self.rng = random.Random(0)
        self.batches = self._batches()
        self.info = {
            "source": portable_path(source), "train_sentences": len(data.train_Ids), "test_sentences": len(data.test_Ids),
            "test_tokens": sum(len(s[0]) for s in data.test_Ids), "word_vocab": data.word_alphabet.size(),
            "parameters": sum(p.numel() for p in model.parameters() if p.requires_grad),
            "batch_size": data.HP_batch_size, "optimizer": data.optimizer, "lr": data.HP_lr,
            "momentum": data.HP_momentum, "l2": data.HP_l2, "clip": "none (NCRF++ reads clip but never applies it)",
            "hidden_dim": data.HP_hidden_dim, "char_hidden_dim": data.HP_char_hidden_dim,
            "char_feature_extractor": data.char_feature_extractor, "word_feature_extractor": data.word_feature_extractor,
            "features": dict(zip(data.feature_name, data.feature_emb_dims)), "tag_scheme": data.tagScheme,
        }

    def _batches(self):
        size = self.data.HP_batch_size
        while True:
            ids = list(self.data.train_Ids)
            self.rng.shuffle(ids)
            for start in range(0, len(ids), size):
                if ids[start:start + size]:
                    yield ids[start:start + size]

    def train(self, sentences: int) -> tuple[int, int, float]:
        ncrf, model = self.ncrf, self.train_model
        model.train()
        seen = tokens = 0
        start = time.perf_counter()
        while seen < sentences:
            instance = next(self.batches)
            (word, features, wordlen, _, char, charlen, charrecover, label,
             mask) = ncrf.batchify_with_label(instance, False, True, False)
            loss, tag_seq = model.calculate_loss(word, features, wordlen, char, charlen, charrecover, label, mask)
            ncrf.predict_check(tag_seq, label, mask, False)
            loss.item()
            loss.backward()
            self.optimizer.step()
            model.zero_grad()
            seen += len(instance)
            tokens += int(wordlen.sum())
        return seen, tokens, time.perf_counter() - start

    def decode(self, batch_size: int, no_grad: bool = False) -> tuple[int, float]:
        ncrf, data, model = self.ncrf, self.data, self.model
        model.eval()
        instances = data.test_Ids
        results = []
        start = time.perf_counter()
        with torch.no_grad() if no_grad else torch.enable_grad():
            for first in range(0, len(instances), batch_size):
                instance = instances[first:first + batch_size]
                (word, features, wordlen, wordrecover, char, charlen, charrecover, label,
                 mask) = ncrf.batchify_with_label(instance, False, False, False)
                tag_seq = model(word, features, wordlen, char, charlen, charrecover, mask)
                pred, _ = ncrf.recover_label(tag_seq, label, mask, data.label_alphabet, wordrecover, False)
                results += pred
        elapsed = time.perf_counter() - start
        if len(results) != len(instances):
            raise RuntimeError("NCRF++ decoded the wrong number of sentences")
        return len(results), elapsed


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--run", required=True, help="a trained seqlab run directory (configs/conll03_glove.yaml)")
    p.add_argument("--ncrfpp", default="/tmp/ncrfpp", help="NCRF++ source tree (patched, see benchmarks/peers)")
    p.add_argument("--ncrfpp-dset", default="/tmp/ncrfpp_runs/glove.dset")
    p.add_argument("--ncrfpp-model", default="/tmp/ncrfpp_runs/glove.0.model")
    p.add_argument("--ncrfpp-decode-config", default="/tmp/ncrfpp_runs/decode.config")
    p.add_argument("--test-file", default=None, help="CoNLL-2003 test file for seqlab eval (default: the run's)")
    p.add_argument("--rounds", type=int, default=3)
    p.add_argument("--threads", type=int, default=1)
    p.add_argument("--train-sentences", type=int, default=2000)
    p.add_argument("--warmup-sentences", type=int, default=200)
    p.add_argument("--decode-batch", type=int, default=100)
    p.add_argument("--parts", nargs="+", default=["train", "decode", "whole_process"],
                   choices=["train", "decode", "whole_process"])
    args = p.parse_args()
    torch.set_num_threads(args.threads)
    load_before = load_average()
    started = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())
    result: dict = {
        "benchmark": "bilstm_crf_tagger_vs_ncrfpp", "started_utc": started,
        "threads": args.threads, "torch_threads": torch.get_num_threads(),
        "omp_num_threads": os.environ.get("OMP_NUM_THREADS"), "rounds": args.rounds,
        "machine": machine(), "versions": {"torch": torch.__version__, "seqlab": package_version("seqlab"),
                                           "ncrfpp": "jiesutd/NCRFpp 105a53a (patched, benchmarks/peers)"},
        "command": command_line(), "load_average_before": load_before,
    }
    need_models = {"train", "decode"} & set(args.parts)
    if need_models:
        t0 = time.perf_counter()
        ours = SeqlabSide(args.run)
        t1 = time.perf_counter()
        with contextlib.redirect_stdout(sys.stderr):  # NCRF++ prints its model summary
            theirs = NcrfppSide(args.ncrfpp, args.ncrfpp_dset, args.ncrfpp_model)
        t2 = time.perf_counter()
        result["seqlab"] = {**ours.info, "load_and_index_seconds": round(t1 - t0, 2)}
        result["ncrfpp"] = {**theirs.info, "load_seconds": round(t2 - t1, 2)}
    if "train" in args.parts:
        ours.train(args.warmup_sentences)
        theirs.train(args.warmup_sentences)
        rounds, detail = [], []
        for _ in range(args.rounds):
            row, info = {}, {}
            for name, side in (("seqlab", ours), ("ncrfpp", theirs)):
                time.sleep(0.5)
                seen, tokens, seconds = side.train(args.train_sentences)
                row[name] = round(seen / seconds, 2)
                info[name] = {"sentences": seen, "tokens": tokens, "seconds": round(seconds, 3),
                              "tokens_per_second": round(tokens / seconds, 1)}
            rounds.append(row)
            detail.append(info)
        result["train"] = {"scope": "in-process", "units": "training sentences per second",
                           "sentences_per_round": args.train_sentences, "warmup_sentences": args.warmup_sentences,
                           **summarise(rounds, "seqlab", "ncrfpp", lower_is_better=False), "round_detail": detail,
                           "load_average": load_average()}
    if "decode" in args.parts:
        ours.decode(args.decode_batch)
        theirs.decode(args.decode_batch)
        theirs.decode(args.decode_batch, no_grad=True)
        rounds = []
        for _ in range(args.rounds):
            row = {}
            for name, fn in (("seqlab", lambda: ours.decode(args.decode_batch)),
                             ("ncrfpp", lambda: theirs.decode(args.decode_batch)),
                             ("ncrfpp_no_grad", lambda: theirs.decode(args.decode_batch, no_grad=True))):
                time.sleep(0.5)
                n, seconds = fn()
                row[name] = round(n / seconds, 2)
            rounds.append(row)
        summary = summarise(rounds, "seqlab", "ncrfpp", lower_is_better=False)
        summary["median"]["ncrfpp_no_grad"] = round(statistics.median(r["ncrfpp_no_grad"] for r in rounds), 2)
        summary["ratio_seqlab_over_ncrfpp_no_grad"] = round(
            summary["median"]["seqlab"] / summary["median"]["ncrfpp_no_grad"], 3)
        summary["ratio_seqlab_over_ncrfpp_no_grad_per_round"] = [
            round(r["seqlab"] / r["ncrfpp_no_grad"], 3) for r in rounds]
        result["decode"] = {"scope": "in-process, models loaded, test set indexed beforehand",
                            "units": "test sentences per second", "batch_size": args.decode_batch, **summary,
                            "load_average": load_average()}
    if "whole_process" in args.parts:
        env = one_thread_env(args.threads)
        worktree = str(Path(__file__).resolve().parents[1])
        env["PYTHONPATH"] = worktree + (os.pathsep + env["PYTHONPATH"] if env.get("PYTHONPATH") else "")
        if args.test_file is None:
            from seqlab.core.paths import resolve_data_path

            args.test_file = str(resolve_data_path("conll2003/test.txt", key="--test-file"))
        test_file = args.test_file
        out_dir = Path("/tmp/tagger_vs_ncrfpp")
        out_dir.mkdir(parents=True, exist_ok=True)
        seqlab_cmd = [sys.executable, "-m", "seqlab", "eval", args.run, test_file,
                      "--batch-size", str(args.decode_batch), "--output", str(out_dir / "seqlab_test.pred.txt")]
        ncrfpp_cmd = [sys.executable, "main.py", "--config", args.ncrfpp_decode_config]
        rounds, cpu_rounds = [], []
        for _ in range(args.rounds):
            row, cpu = {}, {}
            for name, cmd, cwd in (("seqlab", seqlab_cmd, worktree), ("ncrfpp", ncrfpp_cmd, args.ncrfpp)):
                time.sleep(0.5)
                timing = run_process(cmd, cwd=cwd, env=env, stdout_path=str(out_dir / f"{name}.stdout"))
                row[name], cpu[name] = timing["wall_seconds"], timing["cpu_seconds"]
            rounds.append(row)
            cpu_rounds.append(cpu)
        result["whole_process"] = {
            "scope": "whole process: start-up, loading, decoding, scoring, writing predictions",
            "units": "wall seconds per run", "commands": {"seqlab": portable_command(seqlab_cmd[1:]),
                                                          "ncrfpp": "(cd NCRF++) " + portable_command(ncrfpp_cmd[1:])},
            **summarise(rounds, "seqlab", "ncrfpp", lower_is_better=True),
            "cpu_seconds": summarise(cpu_rounds, "seqlab", "ncrfpp", lower_is_better=True),
            "load_average": load_average(),
        }
    result["load_average_after"] = load_average()
    print(json.dumps(result, indent=2))


if __name__ == "__main__":
    main()
