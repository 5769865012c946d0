"""Running one incoming request: its optional `prepare` step as soon as it is read, then its
handler in the request's cancel scope, the outcome (result, typed error, cancelled) for the answer.

`prepare` exists for handlers whose first step is to start slow work elsewhere — the host's
status starts `git status` — and it runs synchronously while the endpoint dispatches the line,
before the request's task has had its first turn on the event loop (a turn costs a status
about a tenth of a millisecond on the project's 2-core machine, git's start included). What it
returns is the handler's input instead of the params; the endpoint closes it once the request is
over, whether the handler answered, failed or was cancelled — also when the endpoint shut down
before the task's first turn: anyio starts every task it was given, and the task's `finally`
closes it — so a process it started is never left behind.
"""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable
from typing import Any

import anyio

from asp_protocol.errors import AspError, ConnectionClosed, ErrorCode
from asp_protocol.rpc_types import Inflight, Prepare, RequestHandler

log = logging.getLogger("asp_protocol.jsonrpc")

#: A handler's result (a 1-tuple, as a result may be None), its typed error, or None.
Outcome = AspError | tuple[Any] | None


def internal_error(endpoint: str, method: str, exc: Exception) -> AspError:
    """A handler (or its prepare step) that raised something untyped: logged, answered typed."""
    log.error("%s: handler for %s failed", endpoint, method, exc_info=exc)
    return AspError(ErrorCode.INTERNAL_ERROR, "internal error", detail=exc.__class__.__name__)


def prepared_input(
    endpoint: str, method: str, prepare: Prepare, params: Any
) -> tuple[Any, AspError | None]:
    """(the handler's input, None), or (None, the error to answer) when `prepare` refused."""
    try:
        return prepare(params), None
    except AspError as error:
        return None, error
    except Exception as exc:
        return None, internal_error(endpoint, method, exc)


async def run_handler(
    endpoint: str, handler: RequestHandler, params: Any, inflight: Inflight
) -> Outcome:
    """The handler's outcome in the request's cancel scope; `$/cancelRequest` gives CANCELLED."""
    outcome: Outcome = None
    with inflight.scope:
        try:
            outcome = (await handler(params, inflight.context),)
        except AspError as error:
            outcome = error
        except (anyio.get_cancelled_exc_class(), ConnectionClosed):
            raise
        except Exception as exc:
            outcome = internal_error(endpoint, inflight.context.method, exc)
    if inflight.scope.cancelled_caught:
        outcome = AspError(ErrorCode.CANCELLED, "request cancelled by $/cancelRequest")
    return outcome


def close_prepared(inflight: Inflight) -> None:
    """Close the request's prepared input, once (a handler may have closed it already)."""
    prepared, inflight.prepared = inflight.prepared, None
    if prepared is not None:
        try:
            prepared.close()
        except Exception:
            log.exception("closing the prepared input of %s failed", inflight.context.method)


async def logged_call(what: str, callback: Callable[[Any], Awaitable[None]], value: Any) -> None:
    """A notification handler or progress callback: what it raises is logged, never answered."""
    try:
        await callback(value)
    except Exception:
        log.exception("%s failed", what)
