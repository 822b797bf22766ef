"""``seqlab train``: any task's config, dispatched on its ``task`` key; ``--resume`` continues a run."""
from __future__ import annotations

import argparse
import contextlib
import logging
import os
from datetime import datetime
from pathlib import Path
from typing import Any

from seqlab.cli._util import positive_int
from seqlab.core.errors import SeqlabError
from seqlab.core.progress import Interrupted, lost
from seqlab.core.strict import dump_config

log = logging.getLogger("seqlab")
#: Set in the processes that ``seqlab train --nproc N`` starts: the launching process alone reports an interrupt.
LAUNCHED = "SEQLAB_LAUNCHED_BY_NPROC"

#: Keys a resumed run may change with --set: where it runs, not what it trains (a checkpoint moves between
#: CPU and GPU, or a run gets the cores another job has left).
RESUME_SETTABLE = ("train.threads", "train.device")
#: Keys a resumed run may raise: a finished or stopped run goes on for more epochs. Nothing else in training
#: depends on them (the learning rate decays per epoch, not towards the last one), so the result is the run
#: the larger value would have given from the start.
RESUME_EXTENDABLE = ("train.epochs", "train.patience")


def default_output(config_path: str) -> Path:
    return Path("runs") / f"{Path(config_path).stem}-{datetime.now():%Y%m%d-%H%M%S}"


def launch(nproc: int, argv: list[str], out_dir: Path) -> int:
    """Run ``seqlab train`` with ``argv`` in ``nproc`` processes on this machine, through torchrun (in this
    process, so that a failed rank is reported in one line naming it rather than as torchrun's traceback, and an
    interrupt once, saying how to resume the run in ``out_dir``)."""
    from torch.distributed.elastic.multiprocessing.api import SignalException
    from torch.distributed.elastic.multiprocessing.errors import ChildFailedError
    from torch.distributed.run import parse_args, run

    command = ["--standalone", "--nproc_per_node", str(nproc), "-m", "seqlab", "train", *argv]
    log.info("launching %d training processes: torchrun %s", nproc, " ".join(command))
    os.environ[LAUNCHED] = "1"  # inherited by the processes torchrun starts
    try:
        run(parse_args(command))
    except ChildFailedError as err:  # torchrun has stopped the other ranks
        rank, failure = err.get_first_failure()
        how = (f"was killed by {failure.signal_name()}" if failure.exitcode < 0
               else f"exited with status {failure.exitcode}")
        raise SeqlabError(f"training process rank {rank} of {nproc} {how} (pid {failure.pid}); torchrun stopped "
                          f"the others") from None
    except SignalException as err:  # Ctrl-C or a SIGTERM: torchrun has stopped the ranks; say so as for one process
        raise Interrupted(lost(out_dir, int(err.sigval)), int(err.sigval)) from None
    finally:
        del os.environ[LAUNCHED]
    return 0


def cmd_train(args: argparse.Namespace) -> int:
    """``seqlab train CONFIG`` or ``seqlab train --resume RUN_DIR``."""
    from seqlab.core import rundir
    from seqlab.apps.tasks import read_config
    from seqlab.apps.training import train

    if args.dry_run and (args.resume or not args.config):
        raise SeqlabError("seqlab train --dry-run: give a CONFIG file to resolve (not --resume RUN_DIR)")
    if args.nproc > 1 and "WORLD_SIZE" not in os.environ and not args.dry_run:
        if args.config and not args.output and not args.resume:  # one name for all ranks, and for a resume hint
            args.output = str(default_output(args.config))
        argv = [a for a in ([args.config] if args.config else []) if a]
        argv += [x for item in args.set for x in ("--set", item)]
        argv += [x for key in ("output", "resume") if getattr(args, key) for x in (f"--{key}", getattr(args, key))]
        return launch(args.nproc, argv + (["--quiet"] if args.quiet else []), Path(args.resume or args.output or "."))

    if args.resume:
        run_dir = Path(args.resume)
        changed = [item for item in args.set
                   if item.partition("=")[0].strip() not in RESUME_SETTABLE + RESUME_EXTENDABLE]
        if changed:
            raise SeqlabError(f"--set {changed[0]} cannot be combined with --resume: a resumed run keeps its own "
                              f"config.yaml (only {', '.join(RESUME_SETTABLE)}, which say where it runs, may change, "
                              f"and {', '.join(RESUME_EXTENDABLE)} may be raised)")
        saved = read_config(run_dir / rundir.CONFIG)
        main_rank = os.environ.get("RANK", "0") == "0"  # under torchrun, rank 0 alone writes the run directory
        # the lock is held from the config.yaml update to the end of training
        with rundir.run_lock(run_dir) if main_rank else contextlib.nullcontext():
            raised = [item for item in args.set if item.partition("=")[0].strip() in RESUME_EXTENDABLE]
            if raised and main_rank:
                extend_run(run_dir, saved, read_config(run_dir / rundir.CONFIG, raised))
            config = read_config(run_dir / rundir.CONFIG, args.set)
            if args.config and read_config(args.config, args.set) != config:
                log.warning("resuming with %s/config.yaml; %s differs from it and is ignored", run_dir, args.config)
            train(config, run_dir, resume=True, progress=not args.quiet)
        return 0
    if not args.config:
        raise SeqlabError("seqlab train: give a CONFIG file (or --resume RUN_DIR)")
    config = read_config(args.config, args.set)
    if args.dry_run:
        print(dump_config(config), end="")
        return 0
    out = Path(args.output) if args.output else default_output(args.config)
    train(config, out, progress=not args.quiet)
    if os.environ.get("RANK", "0") == "0":  # under torchrun, rank 0 speaks for the job
        print(f"run directory: {out}")
    return 0


def extend_run(run_dir: Path, saved: Any, extended: Any) -> None:
    """Check that ``extended`` only raises ``saved``'s epochs and patience, and record it in the run's config.yaml."""
    from seqlab.core import rundir

    rundir.check_output(run_dir, resume=True)  # no checkpoint: nothing to extend, and config.yaml stays as it was
    for key in ("epochs", "patience"):
        before, after = getattr(saved.train, key), getattr(extended.train, key)
        if after < before:
            raise SeqlabError(f"--set train.{key}={after}: a resumed run's train.{key} can only be raised "
                              f"({run_dir}/config.yaml has {before})")
        if after != before:
            log.warning("extending %s: train.%s %d -> %d", run_dir, key, before, after)
    if extended != saved:
        rundir.save_config(run_dir, dump_config(extended))


def add_parsers(sub: argparse._SubParsersAction) -> None:
    t = sub.add_parser("train", help="train a model from a YAML config (its 'task' key: tagging, the default, or "
                                     "relation)")
    t.add_argument("config", nargs="?", help="YAML config (see configs/)")
    t.add_argument("--set", action="append", default=[], metavar="KEY=VALUE", help="override, e.g. model.hidden=256")
    t.add_argument("--output", help="run directory (default runs/CONFIG-TIMESTAMP)")
    t.add_argument("--resume", metavar="RUN_DIR",
                   help="continue the run in RUN_DIR from its last checkpoint (--set train.epochs=N, or "
                        "train.patience=N, raises its limit: a finished run trains on)")
    t.add_argument("--quiet", action="store_true", help="no progress bar")
    t.add_argument("--dry-run", action="store_true",
                   help="print the resolved config (its base: chain merged, --set applied) as YAML and exit")
    t.add_argument("--nproc", type=positive_int, default=1,
                   help="train data-parallel in N processes on this machine (torchrun; train.batch_size is per "
                        "process); for several machines run torchrun yourself, see the README")
    t.set_defaults(func=cmd_train)
