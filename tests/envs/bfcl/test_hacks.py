"""The BFCL reward pays none of its known hacks; one of them BFCL's own harness would pay."""

from tracerl.envs.bfcl import check_multi_turn
from tracerl.envs.bfcl.calls import format_call
from tracerl.envs.bfcl.data import entry_by_id
from tracerl.envs.bfcl.hacks import HACKS
from tracerl.envs.bfcl.reward import BfclReward
from tracerl.rewards.audit import audit


def test_audit_finds_no_exploit():
    report = audit(BfclReward(), hacks=HACKS)
    assert report.ok and len(report.results) == len(HACKS)
    assert all(r.verdict == "clean" for r in report.results), report.summary()


def test_held_back_call_would_pass_bfcl_harness_but_is_refused_here():
    hack = next(h for h in HACKS if h.name == "held_back_function_early")
    traj = hack.trajectory()
    entry = entry_by_id("multi_turn_miss_func", "multi_turn_miss_func_0")
    # what BFCL's eval() harness would have run: every parsed call, refused or not
    turns: list[list[list[str]]] = [[]]
    for t in traj.turns:
        if not t.tool_results:
            turns.append([])
        else:
            turns[-1].append([format_call(r.call.name, r.call.arguments) for r in t.tool_results])
    assert check_multi_turn(entry.raw, entry.answer, turns[:len(entry.turns)]).valid
    assert any(r.error == "unknown_tool" for t in traj.turns for r in t.tool_results)
    assert BfclReward()(traj) == 0.0
