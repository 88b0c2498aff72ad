"""The per-topic locks between reconciles of drift and the delete handler."""

from __future__ import annotations

import asyncio
import concurrent.futures

from kafka_topic_operator.k8s.topic_locks import TopicLocks

WAIT = 10.0  # a bound for what happens at once


def test_a_topic_always_gets_the_same_lock() -> None:
    locks = TopicLocks(stripes=8)
    assert locks("orders") is locks("orders")
    assert len({id(locks(f"topic-{i}")) for i in range(100)}) == 8


def test_a_coroutine_waits_while_a_thread_holds_the_lock() -> None:
    locks = TopicLocks()

    async def scenario() -> None:
        locks("orders").acquire()  # as the status follower's thread holds it
        entered = asyncio.Event()

        async def deletion() -> None:
            async with locks.held("orders"):
                entered.set()
                assert locks("orders").locked()

        task = asyncio.create_task(deletion())
        await asyncio.sleep(0.05)  # time to try, and try again
        assert not entered.is_set()
        locks("orders").release()
        await asyncio.wait_for(task, WAIT)
        assert entered.is_set() and not locks("orders").locked()

    asyncio.run(scenario())


def test_a_coroutine_cancelled_while_waiting_takes_nothing() -> None:
    locks = TopicLocks()

    async def scenario() -> None:
        locks("orders").acquire()

        async def timer() -> None:
            async with locks.held("orders"):
                raise AssertionError("entered a lock held by another")

        task = asyncio.create_task(timer())
        await asyncio.sleep(0.01)
        task.cancel()
        await asyncio.gather(task, return_exceptions=True)
        locks("orders").release()
        assert not locks("orders").locked()

    asyncio.run(scenario())


def test_waiting_coroutines_leave_the_loops_threads_to_the_holder() -> None:
    """The holder (a drift timer) may need a thread of the loop's executor (a status patch in
    `to_thread`) while others wait for its lock: waiting in those threads would leave it none."""
    locks = TopicLocks()

    async def scenario() -> None:
        loop = asyncio.get_running_loop()
        loop.set_default_executor(concurrent.futures.ThreadPoolExecutor(max_workers=2))
        async with locks.held("orders"):
            waiters = [asyncio.create_task(wait()) for _ in range(4)]
            await asyncio.sleep(0.01)  # the waiters are waiting
            assert await asyncio.wait_for(asyncio.to_thread(lambda: "patched"), WAIT) == "patched"
        await asyncio.wait_for(asyncio.gather(*waiters), WAIT)

    async def wait() -> None:
        async with locks.held("orders"):
            pass

    asyncio.run(scenario())
