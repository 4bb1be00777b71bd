import pytest

from tracerl.guard import Action, GuardConfig, Rule


def test_rule_accepts_action_names():
    assert Rule("block").action is Action.BLOCK  # type: ignore[arg-type]


def test_rule_rejects_unknown_action_naming_the_choices():
    with pytest.raises(ValueError, match="Rule.action must be one of"):
        Rule("explode")  # type: ignore[arg-type]


def test_rule_rejects_out_of_range_score():
    with pytest.raises(ValueError, match="min_score"):
        Rule(Action.FLAG, 1.5)


def test_from_dict_overrides_only_named_scanners():
    cfg = GuardConfig.from_dict(
        {"tool_call": {"pii": "block", "secrets": {"action": "redact", "min_score": 0.9}}}
    )
    assert cfg.tool_call["pii"] == Rule(Action.BLOCK)
    assert cfg.tool_call["secrets"] == Rule(Action.REDACT, 0.9)
    assert cfg.tool_call["code_injection"] == Rule(Action.BLOCK)


def test_from_dict_rejects_unknown_fields():
    with pytest.raises(ValueError, match="unknown fields"):
        GuardConfig.from_dict({"tool_calls": {}})


def test_from_dict_rejects_unknown_rule_fields_with_their_path():
    with pytest.raises(ValueError, match="guard.observation.pii: unknown rule fields"):
        GuardConfig.from_dict({"observation": {"pii": {"action": "flag", "level": 3}}})


def test_action_severity_orders_off_flag_redact_block():
    assert [a.severity for a in (Action.OFF, Action.FLAG, Action.REDACT, Action.BLOCK)] == [
        0,
        1,
        2,
        3,
    ]
