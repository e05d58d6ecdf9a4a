"""Progress records for long KVStore waits, so that a pull or barrier waiting on another
worker says so instead of staying silent until its timeout.

``with_progress`` awaits one RPC on the client's event loop; after ``FIRST_AFTER`` seconds
without an answer it logs an INFO record on the ``ndengine.kv`` logger naming what waits (the
store, this rank, the call, the key and round, the timeout) and how long it has waited,
then again every ``EVERY`` seconds. At ``limit`` seconds it gives up as ``asyncio.wait_for``
would (``asyncio.TimeoutError``, the RPC cancelled). The records go where the application's
logging sends them (``logging.basicConfig(level=logging.INFO)`` shows them on stderr); the
library configures no logging.
"""
import asyncio
import logging
import time

__all__ = ["with_progress", "FIRST_AFTER", "EVERY"]

logger = logging.getLogger("ndengine.kv")

FIRST_AFTER = 5.0  # seconds of waiting before the first record
EVERY = 15.0       # seconds between the records after it


async def with_progress(call, what, limit):
    """``await call`` (a coroutine or future), logging progress while it waits (module
    docstring); ``what`` names the wait, ``limit`` is its timeout in seconds."""
    task = asyncio.ensure_future(call)
    start = time.monotonic()
    pause = FIRST_AFTER
    while True:
        left = limit - (time.monotonic() - start)
        if left <= 0:
            task.cancel()
            raise asyncio.TimeoutError
        done, _ = await asyncio.wait({task}, timeout=min(pause, left))
        if done:
            return task.result()
        waited = time.monotonic() - start
        if waited < limit:
            logger.info("%s: still waiting after %.0f s", what, waited)
        pause = EVERY
