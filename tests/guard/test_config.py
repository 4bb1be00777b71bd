import dataclasses
import typing

import pytest
import yaml

from tracerl.cli import main
from tracerl.guard import (
    SCANNERS,
    Action,
    GuardConfig,
    ObservationRules,
    PromptRules,
    Rule,
    ToolCallRules,
)
from tracerl.guard.config import ActionName
from tracerl.train import configlib
from tracerl.train.config import TrainConfig
from tracerl.train.configlib import ConfigError


def test_config_actions_are_the_guard_actions():
    assert typing.get_args(ActionName) == tuple(a.value for a in Action)


def test_rule_accepts_action_names_and_members_and_stores_the_name():
    assert Rule("block") == Rule(Action.BLOCK)
    assert type(Rule(Action.BLOCK).action) is str  # plain data: dumps to YAML


def test_rule_rejects_unknown_action_naming_the_choices():
    with pytest.raises(ValueError, match="action must be one of \\['off', 'flag'"):
        Rule("explode")  # type: ignore[arg-type]


def test_rule_rejects_out_of_range_score():
    with pytest.raises(ValueError, match="min_score must be in \\[0, 1\\], got 1.5"):
        Rule("flag", 1.5)


@pytest.mark.parametrize("section", [ToolCallRules, ObservationRules, PromptRules])
def test_each_target_has_one_rule_per_builtin_scanner(section):
    assert {f.name for f in dataclasses.fields(section)} == set(SCANNERS)


def test_defaults_block_risky_calls_and_redact_observations():
    cfg = GuardConfig()
    assert cfg.tool_call.secrets.action == cfg.tool_call.code_injection.action == "block"
    assert cfg.observation.secrets.action == cfg.observation.pii.action == "redact"


def test_action_severity_orders_off_flag_redact_block():
    order = (Action.OFF, Action.FLAG, Action.REDACT, Action.BLOCK)
    assert [a.severity for a in order] == [0, 1, 2, 3]


def test_yaml_sets_a_rule_and_keeps_the_other_defaults(tmp_path):
    path = tmp_path / "c.yaml"
    path.write_text(
        "guard:\n"
        "  block_penalty: 0.5\n"
        "  tool_call:\n"
        "    pii: {action: block, min_score: 0.9}\n"
        "    secrets: {min_score: 0.7}\n"
    )
    guard = configlib.load(TrainConfig, str(path)).guard
    assert guard.block_penalty == 0.5
    assert guard.tool_call.pii == Rule("block", 0.9)
    assert guard.tool_call.secrets == Rule("block", 0.7)  # the scanner's default action kept
    assert guard.tool_call.jailbreak == GuardConfig().tool_call.jailbreak
    assert guard.observation == ObservationRules()


def test_key_value_overrides_set_a_rule():
    guard = configlib.load(TrainConfig, None, [
        "guard.tool_call.secrets.action=redact", "guard.tool_call.secrets.min_score=0.7",
        "guard.observation.pii.action=off", "guard.penalty=true",
    ]).guard
    assert guard.tool_call.secrets == Rule("redact", 0.7)
    assert guard.observation.pii.action == "off"  # YAML 1.1 reads `off` as false
    assert guard.penalty is True


@pytest.mark.parametrize("override,message", [
    ("guard.tool_call.secrets.action=explode",
     "guard.tool_call.secrets.action: 'explode' is not one of ['off', 'flag', 'redact', 'block']"),
    ("guard.tool_call.nope.action=block", "unknown config key 'guard.tool_call.nope'"),
    ("guard.observation.pii.level=3", "unknown config key 'guard.observation.pii.level'"),
    ("guard.tool_call.secrets.min_score=1.5",
     "guard.tool_call.secrets: min_score must be in [0, 1], got 1.5"),
    ("guard.tool_call.secrets=block", "guard.tool_call.secrets: expected a mapping"),
    ("guard.block_penalty=-1", "guard: block_penalty and flag_penalty must be >= 0"),
])
def test_bad_guard_config_is_rejected_naming_the_key(override, message):
    with pytest.raises(ConfigError) as e:
        configlib.load(TrainConfig, None, [override])
    assert message in str(e.value)


def test_saved_config_round_trips_through_yaml(tmp_path):
    cfg = configlib.load(TrainConfig, None, ["guard.observation.jailbreak.action=block",
                                             "guard.observation.pii.action=off"])
    cfg = dataclasses.replace(cfg, guard=dataclasses.replace(
        cfg.guard, tool_call=ToolCallRules(pii=Rule(Action.REDACT))))
    path = tmp_path / "config.yaml"
    path.write_text(yaml.safe_dump(configlib.to_dict(cfg), sort_keys=False))
    assert configlib.load(TrainConfig, str(path)) == cfg


def test_help_lists_the_guard_keys_with_their_defaults_and_docs(capsys):
    rows = {key: (tp, default, doc) for key, tp, default, doc in configlib.describe(TrainConfig)}
    assert rows["guard.tool_call.secrets.action"][1] == "'block'"
    assert rows["guard.observation.secrets.action"][1] == "'redact'"
    assert rows["guard.tool_call.secrets.min_score"][1:] == (
        "0.5", "Least finding score (0 to 1) that triggers the action.")
    with pytest.raises(SystemExit):
        main(["train", "--help"])
    out = capsys.readouterr().out
    assert "guard.tool_call.secrets.action (Literal, default 'block')" in out
    assert "guard.block_penalty (float, default 1.0)" in out


def test_prompt_rules_flag_jailbreaks_at_the_detectors_prompt_threshold():
    """Issue 31: a user message is judged at the detector's calibrated prompt threshold,
    the one the shipped weights carry, and by default only flagged."""
    from tracerl.guard import override_model
    from tracerl.guard.config import PROMPT_MIN_SCORE

    rule = GuardConfig().prompt.jailbreak
    assert (rule.action, rule.min_score) == ("flag", PROMPT_MIN_SCORE)
    assert PROMPT_MIN_SCORE == pytest.approx(override_model.load().prompt_p, abs=1e-3)
    assert PROMPT_MIN_SCORE <= GuardConfig().observation.jailbreak.min_score


def test_key_value_sets_a_prompt_rule():
    cfg = configlib.load(TrainConfig, None, ["guard.prompt.jailbreak.action=block"])
    assert cfg.guard.prompt.jailbreak == Rule("block", GuardConfig().prompt.jailbreak.min_score)
