"""Drives `offset-vault mcp` with the official MCP Python SDK's stdio client, for the
integration tests in tests/integration/mcp.rs.

It reads a script as JSON on stdin and prints what happened as JSON on stdout:

    {"command": ["/path/offset-vault", "--bootstrap-server", "...", "mcp"],
     "env": {"NAME": "value"},
     "elicitation": null | "accept" | "refuse" | "decline" | "cancel",
     "steps": [{"op": "list_tools"},
               {"op": "call", "tool": "list_snapshots", "arguments": {}, "progress": true},
               {"op": "call", "tool": "describe_live", "arguments": {}, "timeout": 3},
               {"op": "processes", "all_of": ["--via", "client.id=x"], "gone_within": 20}]}

`elicitation` null means the client does not offer elicitation; otherwise it answers every
confirmation the server asks for: "accept" says yes, "refuse" submits the form with
confirm = false, "decline" and "cancel" are the person's other answers.

Output:

    {"server": {"name": ..., "version": ..., "protocol_version": ...},
     "elicitations": [{"message": ..., "schema": {...}}],
     "results": [one per step]}

A list_tools step gives {"tools": [{"name", "annotations", "input_schema", "output_schema"}]};
a call gives {"is_error", "structured", "text", "progress": [{"progress", "total", "message"}]},
or, when it has a "timeout" (seconds) and no answer came in time, {"timed_out": true, "error"}:
the SDK then abandons the request and sends notifications/cancelled. A processes step waits up to
"gone_within" seconds until no process's command line holds every string of "all_of", and gives
{"remaining": [command lines still running], "waited": seconds}.
"""

import json
import os
import sys
import time

import anyio
import mcp_types as types
from mcp.client.session import ClientSession
from mcp.client.stdio import StdioServerParameters, stdio_client


def matching(all_of):
    """Command lines of the running processes that hold every string of all_of."""
    found = []
    for pid in os.listdir("/proc"):
        if not pid.isdigit():
            continue
        try:
            with open(f"/proc/{pid}/cmdline", "rb") as f:
                args = [a.decode(errors="replace") for a in f.read().split(b"\0") if a]
        except OSError:
            continue
        line = " ".join(args)
        if all(s in line for s in all_of):
            found.append(line)
    return found


async def await_gone(all_of, seconds):
    start = time.monotonic()
    while True:
        remaining = matching(all_of)
        waited = time.monotonic() - start
        if not remaining or waited >= seconds:
            return {"remaining": remaining, "waited": waited}
        await anyio.sleep(0.2)


def dump(model):
    if model is None:
        return None
    return model.model_dump(by_alias=True, mode="json", exclude_none=True)


async def run(script):
    command = script["command"]
    params = StdioServerParameters(command=command[0], args=command[1:], env=script.get("env") or {})
    answer = script.get("elicitation")
    elicitations = []

    async def elicit(_context, params):
        elicitations.append({"message": params.message, "schema": getattr(params, "requested_schema", None)})
        if answer == "accept":
            return types.ElicitResult(action="accept", content={"confirm": True})
        if answer == "refuse":
            return types.ElicitResult(action="accept", content={"confirm": False})
        return types.ElicitResult(action=answer)

    results = []
    async with stdio_client(params) as (read, write):
        async with ClientSession(read, write, elicitation_callback=elicit if answer else None) as session:
            init = await session.initialize()
            for step in script["steps"]:
                if step["op"] == "list_tools":
                    listed = await session.list_tools()
                    results.append(
                        {
                            "tools": [
                                {
                                    "name": t.name,
                                    "annotations": dump(t.annotations),
                                    "input_schema": t.input_schema,
                                    "output_schema": t.output_schema,
                                }
                                for t in listed.tools
                            ]
                        }
                    )
                elif step["op"] == "call":
                    progress = []

                    async def on_progress(value, total, message, progress=progress):
                        progress.append({"progress": value, "total": total, "message": message})

                    try:
                        result = await session.call_tool(
                            step["tool"],
                            step.get("arguments") or {},
                            read_timeout_seconds=step.get("timeout"),
                            progress_callback=on_progress if step.get("progress") else None,
                        )
                    except Exception as e:  # the SDK's timeout error
                        if step.get("timeout") is None:
                            raise
                        results.append({"timed_out": True, "error": repr(e), "progress": progress})
                        continue
                    results.append(
                        {
                            "is_error": bool(result.is_error),
                            "structured": result.structured_content,
                            "text": [c.text for c in result.content if getattr(c, "type", None) == "text"],
                            "progress": progress,
                        }
                    )
                elif step["op"] == "processes":
                    results.append(await await_gone(step["all_of"], step["gone_within"]))
                else:
                    raise SystemExit(f"unknown step {step['op']!r}")
    return {
        "server": {
            "name": init.server_info.name,
            "version": init.server_info.version,
            "protocol_version": init.protocol_version,
        },
        "elicitations": elicitations,
        "results": results,
    }


def main():
    script = json.load(sys.stdin)
    out = anyio.run(run, script)
    json.dump(out, sys.stdout)
    sys.stdout.write("\n")


if __name__ == "__main__":
    main()
