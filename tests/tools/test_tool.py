import asyncio

import pytest

from tracerl.tools.tool import ToolArgumentError, tool


@tool
def lookup(city: str, days: int = 1, units: str | None = None) -> str:
    """Weather forecast for a city.

    Args:
        city: the city name.
        days: how many days ahead.
    """
    return f"{city}:{days}:{units}"


def test_schema_from_hints_and_docstring():
    fn = lookup.schema["function"]
    assert fn["name"] == "lookup"
    assert fn["description"] == "Weather forecast for a city."
    props = fn["parameters"]["properties"]
    assert props["city"] == {"type": "string", "description": "the city name."}
    assert props["days"]["type"] == "integer"
    assert props["units"] == {"type": "string"}
    assert fn["parameters"]["required"] == ["city"]


def test_validate_names_the_bad_argument():
    with pytest.raises(ToolArgumentError, match="'days' must be integer"):
        lookup.validate({"city": "Oslo", "days": "two"})
    with pytest.raises(ToolArgumentError, match="missing required"):
        lookup.validate({})
    with pytest.raises(ToolArgumentError, match="unknown argument"):
        lookup.validate({"city": "Oslo", "country": "NO"})


def test_bool_is_not_an_integer():
    with pytest.raises(ToolArgumentError):
        lookup.validate({"city": "Oslo", "days": True})


def test_acall_runs_sync_tools():
    assert asyncio.run(lookup.acall({"city": "Oslo", "days": 3})) == "Oslo:3:None"


def test_parameters_need_type_hints():
    with pytest.raises(TypeError, match="no type hint"):
        @tool
        def bad(x) -> str:  # type: ignore[no-untyped-def]
            return x
