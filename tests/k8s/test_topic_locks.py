"""The per-topic locks between reconciles of drift and the delete handler."""

from __future__ import annotations

import asyncio
import threading

import pytest

from kafka_topic_operator.k8s.topic_locks import TopicLocks

WAIT = 10.0  # a bound for what happens at once


def test_a_topic_always_gets_the_same_lock() -> None:
    locks = TopicLocks(stripes=8)
    assert locks("orders") is locks("orders")
    assert len({id(locks(f"topic-{i}")) for i in range(100)}) == 8


def test_wait_for_returns_once_the_holder_is_done() -> None:
    locks = TopicLocks()
    done: list[str] = []
    locks("orders").acquire()
    waiter = threading.Thread(target=lambda: (locks.wait_for("orders"), done.append("waited")))
    waiter.start()
    waiter.join(0.2)
    assert done == []  # still held
    locks("orders").release()
    waiter.join(WAIT)
    assert done == ["waited"]


def test_a_coroutine_cancelled_while_waiting_leaves_the_lock_free() -> None:
    """kopf cancels a timer when the operator stops: the thread that was taking the lock for
    it must not keep it."""
    locks = TopicLocks()

    async def scenario() -> None:
        locks("orders").acquire()
        entered = False

        async def timer() -> None:
            nonlocal entered
            async with locks.held("orders"):
                entered = True

        task = asyncio.create_task(timer())
        await asyncio.sleep(0)  # the task runs up to its wait for the thread taking the lock
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task
        assert not entered
        locks("orders").release()
        # The thread takes the lock now; once it is done (the executor shut down), the lock is
        # given back by the callback its cancelled coroutine left.
        await asyncio.get_running_loop().shutdown_default_executor()
        for _ in range(int(WAIT / 0.01)):
            if not locks("orders").locked():
                return
            await asyncio.sleep(0.01)
        raise AssertionError("the lock stayed taken after its waiter was cancelled")

    asyncio.run(scenario())


def test_a_coroutine_holds_the_lock_in_its_block() -> None:
    locks = TopicLocks()

    async def scenario() -> None:
        async with locks.held("orders"):
            assert locks("orders").locked()
        assert not locks("orders").locked()

    asyncio.run(scenario())
