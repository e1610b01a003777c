"""Drives `gavel mcp` with the official Python MCP SDK (2.x) and prints what it
got as one JSON line, for crates/gavel/tests/mcp_server.rs to check.

usage: client.py stdio GAVEL_BINARY DB_URL
       client.py http URL
"""

import asyncio
import json
import sys

from mcp.client.client import Client
from mcp.client.session import ClientSession
from mcp.client.stdio import StdioServerParameters, stdio_client
from mcp.client.streamable_http import streamable_http_client
from mcp.shared.exceptions import MCPError


async def drive(read, write):
    async with ClientSession(read, write) as session:
        init = await session.initialize()
        tools = await session.list_tools()
        p95 = await session.call_tool(
            "query_evaluations", {"aggregation": "p95", "group_by": ["check"]}
        )
        try:
            await session.call_tool("query_evaluations", {"aggregation": "p96"})
            bad = None
        except MCPError as e:
            bad = {"code": e.error.code, "message": e.error.message}
        return {
            "server": init.server_info.name,
            "tools": sorted(t.name for t in tools.tools),
            "schema": next(
                t.input_schema for t in tools.tools if t.name == "query_evaluations"
            ),
            "p95": p95.structured_content,
            "bad": bad,
        }


async def main():
    mode = sys.argv[1]
    if mode == "stdio":
        params = StdioServerParameters(
            command=sys.argv[2], args=["mcp", "--db", sys.argv[3]]
        )
        async with stdio_client(params) as (read, write):
            out = await drive(read, write)
    else:
        async with streamable_http_client(sys.argv[2]) as (read, write):
            out = await drive(read, write)
        # The high-level client probes with `server/discover` first.
        async with Client(sys.argv[2]) as client:
            listed = await client.list_tools()
            out["high_level_tools"] = sorted(t.name for t in listed.tools)
    print(json.dumps(out))


asyncio.run(main())
