"""Offer workspace roots, change them once, and report what the server made of them.

Usage: mcp_roots.py MODE FIRST_JSON SECOND_JSON COMMAND [ARGS...]
FIRST_JSON and SECOND_JSON are lists of file: URIs. The client lists the
first, writes "first.txt" into the first URI's folder, then lists the second,
says the list changed, and writes "second.txt" into the second list's first
folder. Prints the server info after each list and the write results.
"""

import asyncio
import json
import os
import sys
import urllib.parse
import warnings

from mcp import Client, StdioServerParameters, types

warnings.simplefilter("ignore", DeprecationWarning)


def folder(uri: str) -> str:
    return urllib.parse.unquote(urllib.parse.urlparse(uri).path)


async def main() -> None:
    mode, first, second, command, *args = sys.argv[1:]
    first, second = json.loads(first), json.loads(second)
    params = StdioServerParameters(command=command, args=args, env=dict(os.environ))
    offered = {"roots": first}
    asked = []

    async def on_list_roots(context):
        asked.append(len(asked) + 1)
        return types.ListRootsResult(roots=[types.Root(uri=u) for u in offered["roots"]])

    async def info(client):
        result = await client.call_tool("get_server_info", {})
        return json.loads(result.content[0].text)

    async def write(client, uri, name):
        path = os.path.join(folder(uri), name)
        result = await client.call_tool("write_file", {"path": path, "content": "x"})
        return {"is_error": result.is_error, "exists": os.path.exists(path)}

    async with Client(params, mode=mode, list_roots_callback=on_list_roots) as client:
        report = {"first_info": await info(client)}
        report["first_write"] = await write(client, first[0], "first.txt") if first else None
        offered["roots"] = second
        if hasattr(client, "send_roots_list_changed"):
            await client.send_roots_list_changed()
        else:
            await client.session.send_roots_list_changed()
        await asyncio.sleep(0.3)
        report["second_info"] = await info(client)
        report["second_write"] = await write(client, second[0], "second.txt") if second else None
        report["asked"] = len(asked)
        print(json.dumps(report))


asyncio.run(main())
