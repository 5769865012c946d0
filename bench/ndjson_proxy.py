"""The floor for one stdio hop (not a test): a raw NDJSON pass-through proxy in front of a host.

    python bench/ndjson_proxy.py HOST_COMMAND...

Copies complete lines stdin → host and host → stdout on the event loop, parsing nothing; both
directions are non-blocking pipe transports (no thread, no blocking write in the loop), so what it
adds to a round trip is the least any stdio bridge in Python can add.
"""

from __future__ import annotations

import asyncio
import sys


async def pump(reader: asyncio.StreamReader, write: asyncio.StreamWriter) -> None:
    while line := await reader.readline():
        write.write(line)
        await write.drain()
    write.close()


async def main() -> None:
    loop = asyncio.get_running_loop()
    stdin = asyncio.StreamReader(limit=64 * 1024 * 1024)
    await loop.connect_read_pipe(lambda: asyncio.StreamReaderProtocol(stdin), sys.stdin)
    transport, protocol = await loop.connect_write_pipe(
        lambda: asyncio.streams.FlowControlMixin(), sys.stdout
    )
    stdout = asyncio.StreamWriter(transport, protocol, None, loop)
    host = await asyncio.create_subprocess_exec(
        *sys.argv[1:],
        stdin=asyncio.subprocess.PIPE,
        stdout=asyncio.subprocess.PIPE,
        limit=64 * 1024 * 1024,
    )
    assert host.stdin is not None and host.stdout is not None
    await asyncio.gather(pump(stdin, host.stdin), pump(host.stdout, stdout))
    await host.wait()


if __name__ == "__main__":
    asyncio.run(main())
