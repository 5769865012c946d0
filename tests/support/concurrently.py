"""Many calls in flight at once, for the tests that prove answers are not crossed: anyio has no
`gather`, and each such test would otherwise write its own task group and result table."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import TypeVar

import anyio

T = TypeVar("T")


async def all_at_once(count: int, call: Callable[[int], Awaitable[T]]) -> dict[int, T]:
    """Run `call(0)` ... `call(count - 1)` concurrently in one task group; their results by index."""
    results: dict[int, T] = {}

    async def one(index: int) -> None:
        results[index] = await call(index)

    async with anyio.create_task_group() as tg:
        for index in range(count):
            tg.start_soon(one, index)
    return results
