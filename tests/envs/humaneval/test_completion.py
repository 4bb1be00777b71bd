import pytest

from tracerl.envs.humaneval.completion import completion_of, reply_code


@pytest.mark.parametrize(("reply", "text", "shape"), [
    ("    return x + 1\n", "    return x + 1\n", "body"),
    ("def inc(x):\n    return x + 1", "\ndef inc(x):\n    return x + 1", "function"),
    ("Sure:\n```python\nimport math\ndef inc(x):\n    return x + 1\n```\nDone.",
     "\nimport math\ndef inc(x):\n    return x + 1\n", "function"),
    ("return x + 1", "    return x + 1\n", "unindented_body"),
    ("y = x\nreturn y", "    y = x\n    return y\n", "unindented_body"),
    ("import os\nos._exit(0)", "\nimport os\nos._exit(0)", "module"),
    ("", "", "body"),
])
def test_reply_shapes(reply, text, shape):
    got = completion_of(reply, "inc")
    assert (got.text, got.shape) == (text, shape)


def test_a_block_cut_off_before_its_closing_fence_is_still_the_code():
    assert reply_code("Here:\n```python\ndef inc(x):\n    return") == "def inc(x):\n    return"


def test_another_function_of_a_similar_name_is_not_the_entry_point():
    assert completion_of("def inc_all(xs):\n    return xs", "inc").shape == "module"
