import asyncio
import random

from tracerl.envs.registry import FamilyContext, build_family
from tracerl.envs.sentiment import QUESTION, SentimentFamily, is_heldout, normalize_label
from tracerl.types import Status, Task, Trajectory, Turn


def test_splits_never_overlap_and_are_seeded():
    fam = SentimentFamily()
    train = fam.tasks("train", 200, seed=0)
    held = fam.tasks("heldout", 50, seed=0)
    assert not {t.metadata["review"] for t in train} & {t.metadata["review"] for t in held}
    assert all(is_heldout(t.metadata["review"]) for t in held)
    assert [t.messages for t in fam.tasks("train", 5, seed=3)] == \
        [t.messages for t in fam.tasks("train", 5, seed=3)]
    assert {t.answer for t in train} == {"positive", "negative"}
    assert train[0].messages[0].content.startswith(QUESTION)


def _final(text: str, answer: str = "negative") -> Trajectory:
    task = Task("t", (), answer=answer)
    return Trajectory(task=task, prompt_ids=[], turns=[Turn([], [], text)])


def test_reward_needs_exactly_the_label():
    reward = SentimentFamily().reward
    assert reward(_final("negative")) == 1.0
    assert reward(_final(" Negative.<|im_end|>")) == 1.0
    assert reward(_final("The review is negative.")) == 0.0  # a sentence is not the label
    assert reward(_final("positive")) == 0.0
    assert reward(Trajectory(task=Task("t", ()), prompt_ids=[], turns=[])) is None
    assert normalize_label("Positive!") == "positive"


def test_the_oracle_ends_the_episode_in_one_turn_with_full_reward():
    fam = build_family("sentiment", None, FamilyContext())
    task = fam.tasks("heldout", 1, seed=1)[0]
    (answer,) = fam.demonstration(task, random.Random(0))
    env = fam.make_env()

    async def play():
        assert await env.reset(task) == list(task.messages)
        return await env.step(answer.content)

    step = asyncio.run(play())
    assert step.terminated and not step.observations
    traj = Trajectory(task=task, prompt_ids=[], turns=[Turn([], [], answer.content)],
                      status=Status.DONE)
    assert fam.reward(traj) == 1.0
