"""Call one tool with a progress callback and print what arrived.

Usage: mcp_progress.py MODE TOOL ARGS_JSON COMMAND [ARGS...]
Prints one JSON object: the progress notifications seen (progress, message)
and the tool result's text.
"""

import asyncio
import json
import os
import sys

from mcp import Client, StdioServerParameters


async def main() -> None:
    mode, tool, arguments, command, *args = sys.argv[1:]
    params = StdioServerParameters(command=command, args=args, env=dict(os.environ))
    seen = []

    async def on_progress(progress, total, message):
        seen.append({"progress": progress, "message": message})

    async with Client(params, mode=mode) as client:
        result = await client.call_tool(tool, json.loads(arguments), progress_callback=on_progress)
        print(json.dumps({
            "progress": seen,
            "is_error": result.is_error,
            "text": result.content[0].text if result.content else None,
        }))


asyncio.run(main())
