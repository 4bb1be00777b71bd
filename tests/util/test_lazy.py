"""Lazy package exports: every public name resolves to what its module defines, even
after every submodule has been imported (which binds module objects on the package)."""

import importlib
import pkgutil
import types

import pytest

import tracerl

LAZY = ["tracerl.algorithms", "tracerl.envs", "tracerl.policy", "tracerl.rewards",
        "tracerl.rollout", "tracerl.train"]


@pytest.mark.parametrize("name", LAZY)
def test_every_export_is_the_object_its_module_defines(name):
    package = importlib.import_module(name)
    for info in pkgutil.walk_packages(package.__path__, name + "."):
        if not info.name.endswith(("__main__", "_serve")):
            importlib.import_module(info.name)
    for export in package.__all__:
        value = getattr(package, export)
        assert not isinstance(value, types.ModuleType), f"{name}.{export} is a module"
        module = importlib.import_module(package._EXPORTS[export])
        assert value is getattr(module, export)
    assert set(package.__all__) <= set(dir(package))


def test_an_unknown_name_is_an_attribute_error():
    with pytest.raises(AttributeError, match="has no attribute 'nope'"):
        tracerl.train.nope  # noqa: B018
