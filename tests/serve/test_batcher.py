"""seqlab.serve.batcher: the micro-batcher hands concurrent requests to the model together, without waiting on
clients that do not come back."""
from __future__ import annotations

import asyncio
import time

from seqlab.serve.batcher import MicroBatcher


def test_the_batcher_waits_for_the_clients_it_just_answered_instead_of_running_a_batch_of_one():
    sizes = []

    def run(kind, items):
        sizes.append(len(items))
        time.sleep(0.3)
        return items

    async def client(start: float, rounds: int) -> list:
        await asyncio.sleep(start)
        return [await batcher.submit("texts", [f"{start} {i}"]) for i in range(rounds)]

    async def main() -> list:  # 7 clients, and an 8th that comes while the model runs their first batch
        return await asyncio.gather(*[client(0, 3) for _ in range(7)], client(0.3, 3))

    batcher = MicroBatcher(run, wait=0.2)
    try:
        answers = asyncio.run(main())
    finally:
        batcher.close(timeout=10)
    assert answers[-1] == [["0.3 0"], ["0.3 1"], ["0.3 2"]]
    # the 8th alone the moment the model is free, then the 7 (batches of 1 and 7 alternating), were the old way
    assert sizes == [7, 8, 8, 1]


def test_the_batcher_keeps_a_model_saturated_by_independent_senders_busy():
    runs = []

    def run(kind, items):
        start = time.monotonic()
        time.sleep(0.05)
        runs.append((start, time.monotonic()))
        return items

    async def main() -> list:  # a request every 10 ms, none waiting for an answer before the next
        tasks = []
        for i in range(150):
            tasks.append(asyncio.ensure_future(batcher.submit("texts", [str(i)])))
            await asyncio.sleep(0.01)
        return await asyncio.gather(*tasks)

    batcher = MicroBatcher(run, wait=0.25)
    try:
        answers = asyncio.run(main())
    finally:
        batcher.close(timeout=10)
    assert answers == [[str(i)] for i in range(150)]
    idle = [start - end for (_, end), (start, _) in zip(runs, runs[1:])]
    # it may wait for clients to come back at first, not on and on: batches of 28 with a 0.25 s wait each were
    # the way before
    assert len(runs) > 10 and max(idle[len(idle) // 2:]) < 0.2, idle


def test_a_batch_that_fails_is_run_again_request_by_request_so_only_the_culprit_fails():
    calls = []

    def run(kind, items):
        calls.append(list(items))
        if "bad" in items:
            raise RuntimeError("the model failed")  # not a SeqlabError: retried alone all the same
        return [item.upper() for item in items]

    async def main() -> list:
        return await asyncio.gather(*[batcher.submit("texts", [item]) for item in ("a", "bad", "c")],
                                    return_exceptions=True)

    batcher = MicroBatcher(run, wait=0.1)
    try:
        answers = asyncio.run(main())
    finally:
        batcher.close(timeout=10)
    assert answers[0] == ["A"] and answers[2] == ["C"] and isinstance(answers[1], RuntimeError)
    assert calls[0] == ["a", "bad", "c"] and sorted(map(tuple, calls[1:])) == [("a",), ("bad",), ("c",)]
