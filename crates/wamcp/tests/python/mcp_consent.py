"""Call one tool with an elicitation callback that answers as told.

Usage: mcp_consent.py MODE ANSWER TOOL ARGS_JSON COMMAND [ARGS...]
ANSWER is "yes" (accept, allow=true), "always" (accept, allow=true,
always=true), "no" (accept, allow=false) or "decline". A call with execute
true and no expected_executable is planned first and given the plan's
identity. Prints one JSON object: the questions asked and the result.
"""

import asyncio
import json
import os
import sys

from mcp import Client, StdioServerParameters, types


async def main() -> None:
    mode, answer, tool, arguments, command, *args = sys.argv[1:]
    params = StdioServerParameters(command=command, args=args, env=dict(os.environ))
    questions = []

    async def on_elicit(context, request):
        questions.append(request.message)
        if answer == "decline":
            return types.ElicitResult(action="decline")
        if answer == "always":
            return types.ElicitResult(action="accept", content={"allow": True, "always": True})
        return types.ElicitResult(action="accept", content={"allow": answer == "yes"})

    async with Client(params, mode=mode, elicitation_callback=on_elicit) as client:
        arguments = json.loads(arguments)
        if arguments.get("execute") and "expected_executable" not in arguments:
            # A run repeats the identity its plan reviewed, as a model must.
            plan_args = dict(arguments, execute=False)
            plan = await client.call_tool(tool, plan_args)
            plan = json.loads(plan.content[0].text)
            for field in ("executable", "executable_identity_kind", "executable_identity_sha256"):
                if plan.get(field) is not None:
                    arguments["expected_" + field] = plan[field]
        result = await client.call_tool(tool, arguments)
        print(json.dumps({
            "questions": questions,
            "is_error": result.is_error,
            "text": result.content[0].text if result.content else None,
        }))


asyncio.run(main())
