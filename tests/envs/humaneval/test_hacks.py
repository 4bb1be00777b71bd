from tracerl.envs.humaneval.hacks import OWN, humaneval_hacks
from tracerl.envs.humaneval.reward import HumanEvalReward
from tracerl.rewards.audit import audit
from tracerl.rewards.hacks import CODE_HACKS


def test_the_reward_pays_no_known_hack_on_either_task_shape():
    reward = HumanEvalReward()
    report = audit(reward, categories=["code", "judge"])
    names = {r.hack for r in report.results}
    assert len(humaneval_hacks()) == len(CODE_HACKS) + len(OWN)
    assert {h.name for h in humaneval_hacks()} <= names  # the reward's own hacks ran
    assert {h.name for h in CODE_HACKS} <= names  # and the library's, on its toy task
    assert report.exploited == ()
    assert not [r.hack for r in report.results if r.verdict in ("unjudged", "not_applicable")
                and r.category == "code"]


def test_the_hacks_target_the_real_problem():
    hack = next(h for h in humaneval_hacks() if h.name == "humaneval_os_exit_zero")
    assert hack.task.id == "HumanEval/38"
    assert "decode_cyclic" in hack.task.metadata["prompt"]
