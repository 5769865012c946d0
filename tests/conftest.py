"""Shared pytest configuration and fixtures: anyio on asyncio for every async test, the pool of
reference hosts the host and conformance tests share per module, and one clear skip for the
tests that read the ASP definition data when it is not there.


A test that reads the official schemas, examples or fixtures is marked `needs_definitions`. Without
the data (`$ASP_DEFINITION_DIR`, else `../shared/asp` beside the checkout) those tests are skipped
at collection, with one reason, before they start anything — a skip raised later, inside a task
group, would surface as an exception group and a traceback. Every other test still runs.
"""

from __future__ import annotations

import os
import shutil
import tempfile
from collections.abc import Iterator

import pytest

from tests.support.definitions import MISSING, definition_dir
from tests.support.host_pool import HostPool

# The host's documented cache variable, spelled out: the suites drive the host from outside.
CACHE_ENV = "ASP_HOST_CACHE_DIR"


def pytest_configure(config: pytest.Config) -> None:
    # hosts started by tests give providers a cache directory of the test run, never the user's
    if CACHE_ENV not in os.environ:
        os.environ[CACHE_ENV] = _OWN_CACHE[0] = tempfile.mkdtemp(prefix="asp-test-cache-")
    config.addinivalue_line(
        "markers", "needs_definitions: reads the official ASP schemas, examples or fixtures"
    )


_OWN_CACHE = [""]


def pytest_unconfigure(config: pytest.Config) -> None:
    if _OWN_CACHE[0]:
        shutil.rmtree(_OWN_CACHE[0], ignore_errors=True)


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    if definition_dir() is not None:
        return
    skip = pytest.mark.skip(reason=MISSING)
    for item in items:
        if item.get_closest_marker("needs_definitions") is not None:
            item.add_marker(skip)


def pytest_report_header(config: pytest.Config) -> str:
    found = definition_dir()
    return f"ASP definition data: {found}" if found else f"ASP definition data: none ({MISSING})"


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
