"""Long KVStore waits log progress on ``ndengine.kv`` (kv/progress.py) instead of staying
silent until their timeout."""
import asyncio
import logging

import pytest

from ndengine.kv import progress


@pytest.fixture
def quick(monkeypatch):
    monkeypatch.setattr(progress, "FIRST_AFTER", 0.05)
    monkeypatch.setattr(progress, "EVERY", 0.05)


def _records(caplog):
    return [r for r in caplog.records if r.name == "ndengine.kv"]


def test_a_long_wait_logs_what_it_waits_for(quick, caplog):
    async def slow():
        await asyncio.sleep(0.3)
        return "value"
    with caplog.at_level(logging.INFO, logger="ndengine.kv"):
        assert asyncio.run(progress.with_progress(slow(), "pull of key 3 (round 2)", 10)) \
            == "value"
    records = _records(caplog)
    assert len(records) >= 2  # the first after FIRST_AFTER, then every EVERY
    assert all(r.levelno == logging.INFO and "pull of key 3 (round 2): still waiting after"
               in r.getMessage() for r in records)


def test_a_quick_answer_logs_nothing(quick, caplog):
    async def quick_reply():
        return 1
    with caplog.at_level(logging.INFO, logger="ndengine.kv"):
        assert asyncio.run(progress.with_progress(quick_reply(), "pull", 10)) == 1
    assert _records(caplog) == []


def test_the_limit_still_times_out(quick):
    cancelled = []

    async def never():
        try:
            await asyncio.sleep(60)
        except asyncio.CancelledError:
            cancelled.append(True)
            raise

    async def run():
        return await progress.with_progress(never(), "barrier 1", 0.2)
    with pytest.raises(asyncio.TimeoutError):
        asyncio.run(run())
    assert cancelled == [True]
