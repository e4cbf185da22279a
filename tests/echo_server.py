"""A TCP echo handler for ``asyncio.start_server``: the far end the fault proxy's tests put a proxy before."""

from __future__ import annotations

import asyncio


async def echo(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
    """Send back every byte read until the peer closes; a connection the proxy cut ends it quietly."""
    try:
        while data := await reader.read(1024):
            writer.write(data)
            await writer.drain()
    except OSError:
        pass
    finally:
        writer.close()
