"""Drive a wamcp server with the official Python MCP SDK and print what it saw.

Usage: mcp_client.py MODE COMMAND [ARGS...] | MODE URL
MODE is "legacy" (initialize handshake) or "auto" (the SDK default, which
negotiates the stateless 2026-07-28 era when the server offers it). The
server inherits this process's environment. Prints one JSON object.
"""

import asyncio
import json
import os
import sys

from mcp import Client, StdioServerParameters


async def main() -> None:
    mode, command, *args = sys.argv[1:]
    # An http(s) URL is a running server (streamable HTTP); anything else is
    # a program to start over stdio.
    if command.startswith("http"):
        target = command
        token = os.environ.get("WAMCP_TEST_HTTP_TOKEN")
        if token:
            import httpx2
            from mcp.client.streamable_http import streamable_http_client

            client = httpx2.AsyncClient(
                headers={"Authorization": f"Bearer {token}"},
                timeout=httpx2.Timeout(30.0, read=300.0),
            )
            target = streamable_http_client(command, http_client=client)
    else:
        target = StdioServerParameters(command=command, args=args, env=dict(os.environ))
    async with Client(target, mode=mode) as client:
        tools = await client.list_tools()
        info = await client.call_tool("get_server_info", {})
        bad = await client.call_tool("get_system_info", {"unexpected": 1})
        version = None
        for attr in ("protocol_version", "negotiated_protocol_version"):
            version = getattr(client, attr, None) or version
        session = getattr(client, "session", None)
        if version is None and session is not None:
            version = getattr(session, "protocol_version", None)
        print(json.dumps({
            "protocol_version": str(version) if version is not None else None,
            "tools": [t.name for t in tools.tools],
            "info_is_error": info.is_error,
            "info": info.structured_content,
            "bad_is_error": bad.is_error,
            "bad": bad.structured_content,
        }))


asyncio.run(main())
