"""Tools: `@tool` schemas and the Hermes tool-call format."""

from tracerl.tools.hermes import MalformedCall, ParsedAction, format_tool_call, parse_tool_calls
from tracerl.tools.tool import Tool, ToolArgumentError, tool

__all__ = [
    "MalformedCall",
    "ParsedAction",
    "Tool",
    "ToolArgumentError",
    "format_tool_call",
    "parse_tool_calls",
    "tool",
]
