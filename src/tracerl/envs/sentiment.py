"""`sentiment`: label a one-sentence review `positive` or `negative`, in one word.

A single-turn task with no tools, made for prompt search: the reply must be exactly the
label (case and a trailing full stop aside), so the score needs both the right
judgement and the discipline to answer in one word. SmolLM2-135M-Instruct shows why a
prompt matters here: from the family's question alone it answers "Positive." or "The
review is positive, ..." and mostly says positive (about 0.4); with one or two
demonstrations in the few-shot block it answers in one word, and which demonstrations
it sees moves it anywhere between 0.46 and 0.96 (docs/benchmarks.md, "Prompt
optimizers at equal budget"). Replies are a few tokens, so scoring a prompt is cheap.

Reviews come from templates over nouns and adjectives (1,200 distinct sentences).
Splits: a review is held out iff the first byte of the SHA-256 of its text is below
`256 * HELDOUT_FRACTION`, so no train task can equal a held-out one, whatever the seeds.
"""

from __future__ import annotations

import hashlib
import random
import re
from dataclasses import dataclass

from tracerl.envs.family import Split
from tracerl.envs.registry import FamilyContext, register_family
from tracerl.envs.tool_env import ToolEnv, ToolEnvConfig
from tracerl.types import Message, Task, Trajectory

QUESTION = "Is the sentiment of this review positive or negative? Answer with one word."
LABELS = ("positive", "negative")
HELDOUT_FRACTION = 0.2
NOUNS = ("food", "service", "staff", "room", "coffee", "pizza", "waiter", "view", "bed",
         "music")
WORDS = {
    "positive": ("great", "delicious", "friendly", "wonderful", "fantastic", "excellent",
                 "lovely", "perfect", "superb", "charming", "spotless", "cozy"),
    "negative": ("awful", "terrible", "rude", "disgusting", "horrible", "bland", "dirty",
                 "slow", "noisy", "stale", "cramped", "overpriced"),
}
TEMPLATES = ("The {noun} was {word}.", "I thought the {noun} was {word}.",
             "Honestly, the {noun} was {word}.", "Our {noun} was {word}.",
             "We found the {noun} {word}.")
_TRAILING = re.compile(r"[\s.!]+$")


def is_heldout(review: str) -> bool:
    return hashlib.sha256(review.encode()).digest()[0] < int(256 * HELDOUT_FRACTION)


def normalize_label(text: str) -> str:
    """The reply as a label: end-of-turn token, surrounding space, trailing full stops
    and case dropped ("Positive." -> "positive"); anything longer stays as it is."""
    return _TRAILING.sub("", text.replace("<|im_end|>", "").strip()).lower()


@dataclass
class LabelReward:
    """1.0 iff the final reply is exactly the task's label (see `normalize_label`)."""

    name: str = "label_exact"

    def __call__(self, trajectory: Trajectory) -> float | None:
        if trajectory.task.answer is None:
            return None
        return float(normalize_label(trajectory.final_text) == trajectory.task.answer)


@dataclass
class SentimentFamily:
    """The `sentiment` task family (see module docstring)."""

    name: str = "sentiment"
    max_turns: int = 1
    """One reply ends the episode."""

    def __post_init__(self) -> None:
        self.reward = LabelReward()

    def tasks(self, split: Split, n: int, seed: int) -> list[Task]:
        if split not in ("train", "heldout"):
            raise ValueError(f"split must be 'train' or 'heldout', got {split!r}")
        rng = random.Random(f"sentiment/{split}/{seed}")
        out: list[Task] = []
        while len(out) < n:
            label = rng.choice(LABELS)
            review = rng.choice(TEMPLATES).format(noun=rng.choice(NOUNS),
                                                  word=rng.choice(WORDS[label]))
            if is_heldout(review) != (split == "heldout"):
                continue
            out.append(Task(id=f"sentiment-{split}-{seed}-{len(out)}",
                            messages=(Message("user", f"{QUESTION}\n{review}"),),
                            answer=label, metadata={"review": review, "label": label}))
        return out

    def make_env(self) -> ToolEnv:
        return ToolEnv([], ToolEnvConfig())

    def demonstration(self, task: Task, rng: random.Random) -> list[Message]:
        return [Message("assistant", str(task.answer))]


@dataclass(frozen=True)
class SentimentConfig:
    """`task.sentiment.*`: the sentiment family has no knobs."""


@register_family("sentiment", SentimentConfig)
def build_sentiment(section: SentimentConfig, context: FamilyContext) -> SentimentFamily:
    """One-word sentiment labels of one-sentence reviews (exact match; no tools)."""
    return SentimentFamily()
