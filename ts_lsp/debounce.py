"""A keyed, locked and capped debouncer for asyncio (one timer per document).

Modelled on jedi-language-server's `debounce(interval_s, keyed_by="uri")`:

* `schedule(key, delay_s, job)` starts a timer for `key`; a second call before the timer
  fires replaces it, so a burst of edits runs `job` once, `delay_s` after the last edit.
* Jobs of one key never overlap: each runs under that key's `asyncio.Lock`. A job that is
  already running is not interrupted by a newer `schedule`; the newer job waits for the
  lock, and the older one's result is expected to be dropped by its caller when stale.
* At most `max_concurrent` jobs (all keys together) run at once (a semaphore), so opening
  a hundred files does not start a hundred lint runs.
* `cancel(key)` drops a pending timer (a running job finishes; see above).
"""
from __future__ import annotations

import asyncio
import logging
from typing import Awaitable, Callable, Dict, Hashable, Optional

__all__ = ["KeyedDebouncer"]

log = logging.getLogger(__name__)

Job = Callable[[], Awaitable[None]]


class KeyedDebouncer:
    def __init__(self, max_concurrent: int = 4):
        self._pending: Dict[Hashable, asyncio.Task] = {}
        self._locks: Dict[Hashable, asyncio.Lock] = {}
        self._max = max_concurrent
        self._sem: Optional[asyncio.Semaphore] = None
        self.runs = 0          # jobs started (for tests and benchmarks)

    def lock(self, key: Hashable) -> asyncio.Lock:
        lock = self._locks.get(key)
        if lock is None:
            lock = self._locks[key] = asyncio.Lock()
        return lock

    def _semaphore(self) -> asyncio.Semaphore:
        if self._sem is None:          # created lazily, inside the running loop
            self._sem = asyncio.Semaphore(self._max)
        return self._sem

    def pending(self, key: Hashable) -> bool:
        return key in self._pending

    def schedule(self, key: Hashable, delay_s: float, job: Job) -> asyncio.Task:
        """(Re)starts the timer of `key`; `job()` runs after `delay_s` unless replaced."""
        self.cancel(key)
        task = asyncio.ensure_future(self._run(key, max(0.0, delay_s), job))
        self._pending[key] = task
        return task

    def cancel(self, key: Hashable) -> None:
        task = self._pending.pop(key, None)
        if task is not None and not task.done():
            task.cancel()

    def forget(self, key: Hashable) -> None:
        """Cancels the timer and drops the key's lock when nothing holds it (document closed)."""
        self.cancel(key)
        lock = self._locks.get(key)
        if lock is not None and not lock.locked():
            del self._locks[key]

    async def _run(self, key: Hashable, delay_s: float, job: Job) -> None:
        me = asyncio.current_task()
        try:
            if delay_s:
                await asyncio.sleep(delay_s)
        except asyncio.CancelledError:
            return
        # past the timer: from here on a newer schedule() no longer cancels this run
        if self._pending.get(key) is me:
            del self._pending[key]
        try:
            async with self._semaphore():
                async with self.lock(key):
                    self.runs += 1
                    await job()
        except asyncio.CancelledError:
            raise
        except Exception:  # a failing job must not kill the timer machinery
            log.exception("debounced job for %r failed", key)
