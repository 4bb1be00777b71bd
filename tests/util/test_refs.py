"""References to users' objects: what can be named back by module:attribute, and why not."""

import pytest

from tracerl.envs.calc import CalcFamily
from tracerl.util.refs import Rebuild, import_reference, not_recorded, rebuild_reference


def module_function(trajectory) -> float:
    return 1.0


class Counted:
    def __init__(self, size: int, label: str = "x", guard=None) -> None:
        self.size, self.label, self.guard = size, label, guard


class Hidden:
    def __init__(self, size: int) -> None:
        self._size = size


INSTANCE = Counted(3)


def test_a_module_function_and_a_module_level_instance_are_named_as_they_are():
    assert rebuild_reference(module_function) == Rebuild(f"{__name__}:module_function")
    assert rebuild_reference(INSTANCE) == Rebuild(f"{__name__}:INSTANCE")


def test_an_instance_is_its_class_with_the_arguments_read_back():
    found = rebuild_reference(Counted(5, label="y", guard=object()), frozenset({"guard"}))
    assert found == Rebuild(f"{__name__}:Counted", {"size": 5, "label": "y"}, call=True)
    assert rebuild_reference(Counted(5)).args == {"size": 5}  # defaults are not recorded


def test_what_cannot_be_named_back_says_why():
    assert "lambda" in rebuild_reference(lambda t: 0.0)

    class Local:
        pass

    assert "inside a function" in rebuild_reference(Local())
    assert "'size' is not kept" in rebuild_reference(Hidden(2))
    assert "not plain data" in rebuild_reference(Counted(object()))  # type: ignore[arg-type]


def test_a_not_recorded_value_is_refused_with_the_key_to_set():
    value = not_recorded("units", "it is a lambda")
    with pytest.raises(ValueError, match=r"\(units; it is a lambda\).*task.family=module:attr"):
        import_reference(value, "task.family")


def test_an_argument_left_at_a_default_that_is_not_plain_data_is_not_needed():
    assert rebuild_reference(CalcFamily(calls=3), frozenset({"guard", "tool_timeout_s"})) == \
        Rebuild("tracerl.envs.calc:CalcFamily", {"calls": 3}, call=True)
