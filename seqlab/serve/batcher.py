"""The micro-batcher of ``seqlab serve``: the items of concurrent requests run through the model together, in one
worker thread, so that the event loop never waits on the model."""
from __future__ import annotations

import asyncio
import logging
import queue
import threading
from dataclasses import dataclass
from typing import Any, Callable

from seqlab.core.errors import SeqlabError

log = logging.getLogger("seqlab.serve")


@dataclass
class _Job:
    """One request's items (texts, token lists or marked sentences), waiting for the model."""

    kind: str
    items: list[Any]
    future: asyncio.Future
    arrived: float  # the event loop's clock


_Answer = tuple[_Job, Any, "BaseException | None"]


class MicroBatcher:
    """Runs a model on the items of concurrent requests together, in one worker thread, so that the event loop
    never waits on the model. The event loop collects requests, and hands them over together once the worker is
    free and either all the clients it last saw are back (the requests of its last batch and those that came
    meanwhile), or ``max_items`` items wait, or ``wait`` seconds have passed since the first of them arrived or
    the worker became free, whichever was later. (Handing over whatever waits the moment the worker is free
    alternates a batch of the one request that came in last with a batch of all the others: at concurrency 32,
    batches of 1 and 31.) Once such a wait runs out (clients that do not come back at once: independent
    senders keeping the model saturated), requests go to the worker as with ``wait`` 0 (the moment it is free),
    until, when it becomes free, three quarters of the clients expected wait already. The worker calls
    ``run(kind, items)`` once per kind of request in the batch and answers all of them with one wake-up of the
    event loop, each with its own slice. A batch of several requests that fails (a :class:`SeqlabError` or any other exception) is run again
    request by request, so that one bad request does not fail the others."""

    def __init__(self, run: Callable[[str, list[Any]], list[Any]], *, wait: float = 0.005, max_items: int = 256
                 ) -> None:
        self.run, self.wait, self.max_items = run, wait, max_items
        self.pending: list[_Job] = []  # on the event loop: requests not yet handed to the worker
        self.pending_items = 0  # their items
        self.expected = 0  # the requests of the last batch and those that came meanwhile: the clients expected
        self.freed = float("-inf")  # when the worker last became free (the event loop's clock)
        self.patient = True  # wait for the clients expected (else hand over as with ``wait`` 0)
        self.busy = False  # on the event loop: a batch is with the worker
        self.timer: asyncio.TimerHandle | None = None
        self.loop: asyncio.AbstractEventLoop | None = None
        self.batches: queue.SimpleQueue[list[_Job] | None] = queue.SimpleQueue()
        # started by the first request, in the process that serves it (a forked worker of ``--workers``)
        self.worker = threading.Thread(target=self._serve, name="seqlab-batcher", daemon=True)

    async def submit(self, kind: str, items: list[Any]) -> list[Any]:
        """The model's results for ``items`` (awaited on the event loop; the model runs in the worker thread)."""
        if self.loop is None:
            self.worker.start()
        self.loop = asyncio.get_running_loop()
        job = _Job(kind, items, self.loop.create_future(), self.loop.time())
        self.pending.append(job)
        self.pending_items += len(items)
        if not self.busy:
            self._when_ready()
        return await job.future

    def _when_ready(self) -> None:
        """On the event loop, the worker free: hand the waiting requests over now, or once the first has waited
        ``wait`` seconds."""
        if not self.pending:
            return
        if (self.wait <= 0 or not self.patient or self.pending_items >= self.max_items
                or len(self.pending) >= self.expected > 0):
            self._dispatch()
        elif self.timer is None:
            self.timer = self.loop.call_at(max(self.pending[0].arrived, self.freed) + self.wait, self._timed_out)

    def _timed_out(self) -> None:
        if self.pending and self.pending[0].arrived <= self.freed:  # the wait began when the worker became free
            self.patient = False
        self._dispatch()

    def _dispatch(self) -> None:
        """On the event loop: hand the waiting requests (up to ``max_items`` items, at least one request) to the
        worker, unless it is busy."""
        if self.timer is not None:
            self.timer.cancel()
            self.timer = None
        if self.busy or not self.pending:
            return
        count = 0
        for taken, job in enumerate(self.pending):
            if taken and count + len(job.items) > self.max_items:
                break
            count += len(job.items)
        else:
            taken = len(self.pending)
        batch, self.pending = self.pending[:taken], self.pending[taken:]
        self.pending_items -= count
        self.busy = True
        self.batches.put(batch)

    def _finished(self, answers: list[_Answer]) -> None:
        """On the event loop: answer each request of a batch (a request whose client left is skipped), then
        hand the requests that arrived meanwhile to the worker (now or soon)."""
        for job, result, error in answers:
            if not job.future.done():
                if error is None:
                    job.future.set_result(result)
                else:
                    job.future.set_exception(error)
        self.busy, self.expected, self.freed = False, len(answers) + len(self.pending), self.loop.time()
        if 4 * len(self.pending) >= 3 * self.expected:  # most clients came back while the worker was busy
            self.patient = True
        self._when_ready()

    def close(self, timeout: float | None = None) -> None:
        """Stop the worker once the batch it has is done (call when no request is waiting any more)."""
        if self.worker.is_alive():
            self.batches.put(None)
            self.worker.join(timeout)

    def _serve(self) -> None:
        while (batch := self.batches.get()) is not None:
            answers: list[_Answer] = []
            for kind in dict.fromkeys(job.kind for job in batch):
                answers += self._run_group(kind, [job for job in batch if job.kind == kind])
            loop = self.loop
            if loop is not None and not loop.is_closed():
                loop.call_soon_threadsafe(self._finished, answers)

    def _run_group(self, kind: str, jobs: list[_Job]) -> list[_Answer]:
        try:
            results = self.run(kind, [item for job in jobs for item in job.items])
        except Exception as err:  # the worker goes on
            if len(jobs) > 1:  # find the request at fault: each alone
                return [answer for job in jobs for answer in self._run_group(kind, [job])]
            if not isinstance(err, SeqlabError):  # not the request's fault: the log says why
                log.exception("the model failed on a batch of %d requests", len(jobs))
            return [(jobs[0], None, err)]
        out, start = [], 0
        for job in jobs:
            out.append((job, results[start: start + len(job.items)], None))
            start += len(job.items)
        return out
