"""BfclEnv on real entries and real simulators: episodes as BFCL runs them."""

import asyncio
import json
import random

import pytest

from tracerl.envs.base import check_env
from tracerl.envs.bfcl.answers import canonical_calls
from tracerl.envs.bfcl.data import ADDED_FUNCTIONS_PROMPT, entry_by_id, load_category
from tracerl.envs.bfcl.env import RECORDED, SINGLE_TURN_MAX_ACTIONS, BfclEnv
from tracerl.envs.bfcl.family import BfclFamily, task_of
from tracerl.envs.bfcl.hacks import BROKEN, DONE, call_text, play
from tracerl.envs.bfcl.reward import BfclReward, decoded_multi, turn_check, verdict
from tracerl.envs.registry import FamilyContext, build_family, families
from tracerl.types import Trajectory, Turn


def step(env, text):
    return asyncio.run(env.step(text))


@pytest.fixture
def fs_env():
    env = BfclEnv()
    asyncio.run(env.reset(task_of(entry_by_id("multi_turn_base", "multi_turn_base_0"))))
    return env


def test_registered_with_its_section():
    assert "bfcl" in families()
    section = families()["bfcl"].section(categories=("simple_python",))
    family = build_family("bfcl", section, FamilyContext())
    assert family.name == "bfcl" and family.categories == ("simple_python",)


def test_calls_run_on_the_simulator_and_results_come_back(fs_env):
    r = step(fs_env, call_text("cd", {"folder": "document"}))
    assert r.tool_results[0].ok and json.loads(r.observations[0].content) == {
        "current_working_directory": "document"}
    assert fs_env.simulation.instances["GorillaFileSystem"]._current_dir.name == "document"


def test_refusals_are_observations_and_never_run(fs_env):
    r = step(fs_env, '<tool_call>{"name": "cd", "arguments": {</tool_call>')
    assert r.tool_results[0].error == "malformed_call"
    r = step(fs_env, call_text("format_disk", {}))
    assert r.tool_results[0].error == "unknown_tool" and "available:" in r.observations[0].content
    r = step(fs_env, call_text("cd", {"folder": 3}))
    assert r.tool_results[0].error == "bad_arguments"
    r = step(fs_env, call_text("cd", {"folder": "document", "force": True}))
    assert r.tool_results[0].error == "bad_arguments"
    assert fs_env.simulation.instances["GorillaFileSystem"]._current_dir.name == "workspace"
    r = step(fs_env, call_text("cd", {"folder": "nowhere"}))  # runs; the simulator says no
    assert "No such file or directory" in r.observations[0].content


def test_user_turns_arrive_after_an_answer_without_a_call(fs_env):
    entry = fs_env.entry
    r = step(fs_env, DONE)
    assert not r.terminated and [m.role for m in r.observations] == ["user"]
    assert r.observations[0].content == entry.turns[1][0]["content"]
    for _ in entry.turns[2:]:
        assert not step(fs_env, DONE).terminated
    assert step(fs_env, DONE).terminated


def test_miss_func_offers_the_held_back_function_at_its_turn():
    entry = entry_by_id("multi_turn_miss_func", "multi_turn_miss_func_0")
    env = BfclEnv()
    asyncio.run(env.reset(task_of(entry)))
    assert "sort" not in {s["function"]["name"] for s in env.tool_schemas}
    for _ in range(2):
        step(env, DONE)
    assert step(env, call_text("sort", {"file_name": "x"})).tool_results[0].error == "unknown_tool"
    r = step(env, DONE)  # turn 3 opens with the new function's doc
    text = r.observations[0].content
    assert text.endswith(ADDED_FUNCTIONS_PROMPT) and '"name": "sort"' in text
    assert step(env, call_text("sort", {"file_name": "x"})).tool_results[0].error != "unknown_tool"


def test_step_limit_truncates_like_bfcl_force_quit(fs_env):
    fs_env.max_steps_per_turn = 3
    results = [step(fs_env, call_text("pwd", {})) for _ in range(4)]
    assert [r.truncated for r in results] == [False, False, False, True]


def test_single_turn_acknowledges_and_ends_at_the_answer():
    family = BfclFamily(("simple_python",))
    task = family.tasks("train", 1, 0)[0]
    env = family.make_env()
    asyncio.run(env.reset(task))
    r = step(env, call_text("anything", {}))
    assert r.tool_results[0].error == "unknown_tool" and not r.terminated
    assert step(env, DONE).terminated
    asyncio.run(env.reset(task))  # a second call can no longer be accepted: cut there
    assert [step(env, call_text("anything", {})).truncated for _ in range(2)] == [False, True]


def test_a_single_turn_episode_is_cut_once_no_continuation_can_be_accepted():
    parallel = entry_by_id("parallel", "parallel_0")
    wanted = len(parallel.answer)
    env = BfclEnv()
    asyncio.run(env.reset(task_of(parallel)))
    calls = [step(env, call_text("anything", {})).truncated for _ in range(wanted + 1)]
    assert calls == [False] * wanted + [True]
    asyncio.run(env.reset(task_of(parallel)))
    assert step(env, BROKEN).truncated  # a malformed block: undecodable whatever follows
    # relevance categories read a malformed block as "no call": only the action cap cuts
    irrelevance = load_category("irrelevance")[0]
    asyncio.run(env.reset(task_of(irrelevance)))
    assert not step(env, BROKEN).truncated
    flood = [step(env, call_text("anything", {})).truncated
             for _ in range(SINGLE_TURN_MAX_ACTIONS)]
    assert flood == [False] * (SINGLE_TURN_MAX_ACTIONS - 1) + [True]


def test_the_cut_never_changes_a_verdict(monkeypatch):
    """Random replies (the accepted calls, repeats, wrong calls, malformed blocks, an
    answer) judged as the cut env ends them and as an uncut env plays them out."""
    rng = random.Random(0)
    entries = [e for c in ("simple_python", "multiple", "parallel", "parallel_multiple",
                           "irrelevance", "live_relevance") for e in load_category(c)[:25]]
    # parallel_158 is one whose accepted answer holds the same call twice
    entries += [entry_by_id("parallel", "parallel_158")]
    replies = []
    for entry in entries:
        answer = [call_text(c.name, c.arguments) for c in canonical_calls(entry.answer)]
        pool = answer + [call_text("anything", {}), BROKEN] if answer else [
            call_text(entry.functions[0]["name"], {}), BROKEN]
        for _ in range(6):
            picks = [rng.choice(pool) for _ in range(rng.randint(0, 10))]
            replies.append((entry, [*picks, DONE]))
        replies.append((entry, [*answer, DONE]))
        replies.append((entry, [*answer, *answer[:1], DONE]))
    cut = [verdict(play(entry, actions)) for entry, actions in replies]
    monkeypatch.setattr(BfclEnv, "_decided", lambda self: False)
    uncut = [verdict(play(entry, actions)) for entry, actions in replies]
    assert [v.valid for v in cut] == [v.valid for v in uncut]
    assert sum(v.valid for v in cut) >= len(entries) - 5  # the accepted answers pass


def test_check_env_conformance():
    family = BfclFamily(("multi_turn_base",))
    task = family.tasks("train", 1, 0)[0]
    turns = len(entry_by_id("multi_turn_base", task.id).turns)
    asyncio.run(check_env(family.make_env, task, [DONE] * turns))


@pytest.mark.parametrize("form", ["one_per_action", "one_reply"])
def test_demonstrations_replay_through_the_env_to_full_reward(form):
    family = BfclFamily(("simple_python", "parallel", "parallel_multiple", "irrelevance",
                         "multi_turn_miss_func", "multi_turn_miss_param"), demo_format=form)
    reward = BfclReward()
    for task in family.tasks("train", 12, seed=3):
        demo = family.demonstration(task, random.Random(0))
        actions = [m.content for m in demo if m.role == "assistant"]
        traj = play(entry_by_id(task.metadata["category"], task.id), actions)
        observed = [o.content for t in traj.turns for o in t.observations]
        assert observed == [m.content for m in demo if m.role != "assistant"], task.id
        assert reward(traj) == 1.0, (task.id, verdict(traj))


def test_one_reply_demonstrations_make_every_single_turn_call_in_one_action():
    entry = entry_by_id("parallel_multiple", "parallel_multiple_0")
    wanted = [c.name for c in canonical_calls(entry.answer)]
    assert len(wanted) > 1
    per_action = BfclFamily(("parallel_multiple",)).demonstration(task_of(entry), None)
    one = BfclFamily(("parallel_multiple",), demo_format="one_reply").demonstration(
        task_of(entry), None)
    replies = [m for m in one if m.role == "assistant"]
    assert [c.name for c in replies[0].tool_calls] == wanted
    assert replies[0].content.startswith("<tool_call>[{") and replies[1].content == DONE
    assert [m.content for m in one if m.role == "tool"] == \
        [m.content for m in per_action if m.role == "tool"]
    assert len([m for m in per_action if m.role == "assistant"]) == len(wanted) + 1
    # multi-turn demonstrations keep one call per action (a call may need the last result)
    mt = task_of(entry_by_id("multi_turn_base", "multi_turn_base_0"))
    assert BfclFamily(("multi_turn_base",), demo_format="one_reply").demonstration(mt, None) \
        == BfclFamily(("multi_turn_base",)).demonstration(mt, None)
    with pytest.raises(ValueError, match="demo_format must be one of"):
        BfclFamily(("simple_python",), demo_format="all_at_once")


def test_one_reply_episodes_end_at_the_first_reply_as_bfcl_scores_it():
    entry = entry_by_id("parallel_multiple", "parallel_multiple_0")
    family = BfclFamily(("parallel_multiple", "irrelevance"), single_turn="one_reply")
    demo = family.demonstration(task_of(entry), None)
    assert len(demo) == 1 and demo[0].content.startswith("<tool_call>[{")  # no ack, no "Done."
    answer = canonical_calls(entry.answer)
    assert [c.name for c in demo[0].tool_calls] == [c.name for c in answer]
    env = family.make_env()
    asyncio.run(env.reset(task_of(entry)))
    r = step(env, demo[0].content)
    assert r.terminated and not r.observations and len(r.tool_results) == len(answer)
    assert BfclReward()(play(entry, [demo[0].content], one_reply=True)) == 1.0
    # the first call alone is the whole reply: nothing acknowledged, no second chance
    first = play(entry, [call_text(answer[0].name, answer[0].arguments),
                         *[call_text(c.name, c.arguments) for c in answer[1:]]], one_reply=True)
    assert len(first.turns) == 1 and BfclReward()(first) == 0.0
    # prose ends it too; for irrelevance that is the right answer
    irrelevance = family.tasks("train", 40, 0)
    irrelevant = next(t for t in irrelevance if t.metadata["category"] == "irrelevance")
    asyncio.run(env.reset(irrelevant))
    assert step(env, DONE).terminated
    # multi-turn episodes are BFCL's loop whatever single_turn says
    mt = BfclFamily(("multi_turn_base",), single_turn="one_reply")
    assert mt.demonstration(task_of(entry_by_id("multi_turn_base", "multi_turn_base_0")), None) \
        == BfclFamily(("multi_turn_base",)).demonstration(
            task_of(entry_by_id("multi_turn_base", "multi_turn_base_0")), None)
    with pytest.raises(ValueError, match="single_turn must be one of"):
        BfclFamily(("simple_python",), single_turn="first_call")


def test_one_reply_demonstrations_replay_to_full_reward():
    family = BfclFamily(("simple_python", "multiple", "parallel", "parallel_multiple",
                         "irrelevance"), single_turn="one_reply")
    for task in family.tasks("train", 40, seed=5):
        demo = family.demonstration(task, random.Random(0))
        traj = play(entry_by_id(task.metadata["category"], task.id),
                    [m.content for m in demo], one_reply=True)
        assert len(traj.turns) == 1 and BfclReward()(traj) == 1.0, task.id


def test_turn_check_gives_per_user_turn_credit():
    entry = entry_by_id("multi_turn_base", "multi_turn_base_0")
    family = BfclFamily(("multi_turn_base",))
    demo = family.demonstration(task_of(entry), random.Random(0))
    actions = [m.content for m in demo if m.role == "assistant"]
    traj = play(entry, actions)
    assert all(turn_check(traj, i) == 1.0 for i in range(len(traj.turns)))
    # skip the second user turn's calls: its check fails, the first turn's holds
    second = [i for i, t in enumerate(traj.turns) if not t.tool_results][0] + 1
    broken = actions[:second] + [DONE] + actions[second + 2 + 1:]
    traj = play(entry, broken)
    assert turn_check(traj, 0) == 1.0 and turn_check(traj, second) == 0.0
    assert BfclReward()(traj) == 0.0
    assert len(decoded_multi(traj, len(entry.turns))) == len(entry.turns)


def test_single_turn_reply_is_every_call_made():
    entry = entry_by_id("simple_python", "simple_python_0")
    ok = call_text("calculate_triangle_area", {"base": 10, "height": 5})
    assert BfclReward()(play(entry, [ok, DONE])) == 1.0
    assert RECORDED in play(entry, [ok, DONE]).turns[0].observations[0].content
    assert BfclReward()(play(entry, [ok, ok, DONE])) == 0.0


def test_a_runaway_simulator_call_times_out_and_never_counts():
    entry = next(e for e in load_category("multi_turn_base") if "MathAPI" in e.involved_classes)
    traj = play(entry, [call_text("power", {"base": 10, "exponent": 2})])
    assert decoded_multi(traj, 1) == [[["power(base=10, exponent=2)"]]]
    env = BfclEnv(call_timeout_s=0.01)
    asyncio.run(env.reset(task_of(entry)))
    # about 2 s of mpmath at 20,000 digits (BFCL's harness would wait for it)
    r = step(env, call_text("logarithm", {"value": 3, "base": 7, "precision": 20_000}))
    assert r.tool_results[0].error == "timeout" and "abandoned" in r.observations[0].content
    traj = Trajectory(task=task_of(entry), prompt_ids=[],
                      turns=[Turn([], [], "", tool_calls=r.tool_calls,
                                  tool_results=r.tool_results)])
    assert decoded_multi(traj, 1) == [[]]  # a call that timed out never counts as run
