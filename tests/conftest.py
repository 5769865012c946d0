"""Shared pytest configuration and fixtures: anyio on asyncio for every async test, and the pool of
reference hosts the host and conformance tests share per module."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from tests.support.host_pool import HostPool


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


@pytest.fixture(scope="module")
def host_pool(
    tmp_path_factory: pytest.TempPathFactory, request: pytest.FixtureRequest
) -> Iterator[HostPool]:
    """One pool of reference hosts per test module: shared hosts live until the module ends."""
    hosts = HostPool(tmp_path_factory.mktemp(request.module.__name__.rpartition(".")[2]))
    yield hosts
    hosts.close()


@pytest.fixture
def pool(host_pool: HostPool) -> Iterator[HostPool]:
    """The module's host pool; the fresh hosts a test asked for are stopped when it ends."""
    yield host_pool
    host_pool.end_test()
