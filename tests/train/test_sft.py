from tracerl.envs.calc import CalcFamily
from tracerl.rollout.render import ChatRenderer
from tracerl.train.sft import cosine_lr, demonstrations


def test_cosine_schedule_warms_up_then_decays_to_zero():
    lrs = [cosine_lr(s, 100, 1.0) for s in range(100)]
    assert lrs[0] == 0.2 and lrs[4] == 1.0
    assert all(a >= b for a, b in zip(lrs[4:], lrs[5:], strict=False))
    assert lrs[-1] < 0.01


def test_demonstrations_start_where_rollouts_start(chat_tokenizer):
    renderer = ChatRenderer(chat_tokenizer("tiny"))
    bare = demonstrations(CalcFamily(), renderer, 2, seed=0)
    told = demonstrations(CalcFamily(describe_tools=True), renderer, 2, seed=0)
    assert [t.tools for t in bare] == [[], []]
    assert all(t.tools and "calculator" in renderer.decode(t.prompt_ids) for t in told)
    assert [t.turns[0].action_ids for t in bare] == [t.turns[0].action_ids for t in told]
