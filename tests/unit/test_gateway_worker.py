"""The gateway's worker thread: calls in arrival order on one thread, at most one waiting."""

from __future__ import annotations

import asyncio
import contextvars
import threading

import pytest

from memvault.gateway.worker import GatewayWorker

REQUEST = contextvars.ContextVar("request", default="none")


def thread_name() -> str:
    return threading.current_thread().name


def test_calls_run_off_the_loop_one_after_another_on_one_thread() -> None:
    async def scenario() -> None:
        worker = GatewayWorker()
        names = [await worker.run(thread_name) for _ in range(5)]
        assert len(set(names)) == 1 and names[0].startswith("memvault-gateway")
        assert names[0] != thread_name()

        # Arguments, results, exceptions and the caller's context variables go through.
        assert await worker.run(divmod, 17, 5) == (3, 2)
        with pytest.raises(ZeroDivisionError):
            await worker.run(divmod, 1, 0)
        REQUEST.set("req-1")
        assert await worker.run(REQUEST.get) == "req-1"
        worker.close()

    asyncio.run(scenario())


def test_a_call_that_would_queue_behind_two_runs_elsewhere() -> None:
    async def scenario() -> None:
        worker = GatewayWorker()
        release = threading.Event()
        order: list[str] = []

        def blocked() -> str:
            release.wait(10)
            order.append("first")
            return thread_name()

        def second() -> str:
            order.append("second")
            return thread_name()

        first_call = asyncio.ensure_future(worker.run(blocked))
        await asyncio.sleep(0.05)  # the thread is now busy with it
        second_call = asyncio.ensure_future(worker.run(second))  # waits behind it
        await asyncio.sleep(0.05)
        # A third would wait behind two: it runs on the default pool, at once.
        third = await asyncio.wait_for(worker.run(thread_name), timeout=5)
        assert not first_call.done() and not second_call.done()
        release.set()
        first, second_name = await first_call, await second_call
        assert order == ["first", "second"]  # the thread keeps arrival order
        assert first == second_name and first.startswith("memvault-gateway")
        assert not third.startswith("memvault-gateway")

        # Once both are done, calls are the thread's again.
        assert (await worker.run(thread_name)) == first
        worker.close()

    asyncio.run(scenario())


def test_a_closed_worker_starts_again_on_next_use() -> None:
    async def scenario() -> None:
        worker = GatewayWorker()
        before = await worker.run(threading.get_ident)
        worker.close()
        # Mangum closes it after every invocation; the next one must still be served.
        assert await worker.run(divmod, 7, 2) == (3, 1)
        worker.close()
        worker.close()  # closing twice is harmless
        assert isinstance(before, int)

    asyncio.run(scenario())


def test_a_failing_call_frees_its_place() -> None:
    async def scenario() -> None:
        worker = GatewayWorker(max_in_flight=1)
        for _ in range(3):
            with pytest.raises(ValueError):
                await worker.run(int, "not a number")
        assert (await worker.run(thread_name)).startswith("memvault-gateway")
        worker.close()

    asyncio.run(scenario())
