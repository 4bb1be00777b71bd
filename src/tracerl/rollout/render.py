"""Token-in, token-out rendering: observation ids as deltas of the chat template.

The ids the policy sampled are kept as sampled. What the env adds after an action
(the end-of-turn marker, tool messages, the next generation prompt) is obtained by
rendering the conversation through the tokenizer's chat template and taking the text
after everything already in the context. The rendered text must extend the context's
text exactly (prefix consistency); a template that rewrites earlier turns (some strip
reasoning from past turns) raises TemplateMismatchError instead of silently training
on tokens the model never saw.
"""

from __future__ import annotations

from collections.abc import Sequence

from transformers import PreTrainedTokenizerBase

from tracerl.types import Message


class TemplateMismatchError(RuntimeError):
    """Rendering the conversation does not extend what the policy already saw."""


def _template_dict(m: Message) -> dict[str, object]:
    # Assistant content is rendered verbatim: it already holds the sampled tool-call
    # text, and re-serialising structured calls could differ from what was sampled.
    if m.role == "assistant":
        return {"role": m.role, "content": m.content}
    return m.to_openai()


class ChatRenderer:
    """Renders messages with a tokenizer's chat template and encodes text deltas."""

    def __init__(self, tokenizer: PreTrainedTokenizerBase, turn_end: str = "<|im_end|>") -> None:
        self.tokenizer = tokenizer
        self.turn_end = turn_end
        # The Rust tokenizer behind a fast tokenizer encodes the same ids without the
        # Python wrapper's per-call overhead (about 3x faster on short texts).
        self._backend = getattr(tokenizer, "backend_tokenizer", None)

    def render(self, messages: Sequence[Message], add_generation_prompt: bool) -> str:
        return self.tokenizer.apply_chat_template(
            [_template_dict(m) for m in messages], tokenize=False,
            add_generation_prompt=add_generation_prompt,
        )

    def encode(self, text: str) -> list[int]:
        if self._backend is not None:
            return self._backend.encode(text, add_special_tokens=False).ids
        return self.tokenizer.encode(text, add_special_tokens=False)

    def decode(self, ids: Sequence[int]) -> str:
        return self.tokenizer.decode(list(ids), skip_special_tokens=False,
                                     clean_up_tokenization_spaces=False)

    def readable(self, ids: Sequence[int]) -> str:
        """`ids` decoded without special tokens (the text a reward or a person reads)."""
        return self.tokenizer.decode(list(ids), skip_special_tokens=True,
                                     clean_up_tokenization_spaces=False)

    def prompt_ids(self, messages: Sequence[Message]) -> list[int]:
        return self.encode(self.render(messages, add_generation_prompt=True))

    def content_of(self, action_text: str) -> str:
        """The assistant message content of an action (without its end-of-turn token)."""
        if action_text.endswith(self.turn_end):
            return action_text[: -len(self.turn_end)]
        return action_text

    def observation_ids(self, before: Sequence[Message], action_text: str,
                        after: Sequence[Message], final: bool) -> list[int]:
        """Ids that follow `action_text` once the conversation has become `after`.

        `before` is the conversation the action was sampled from; `after` is it plus
        the assistant message and the env's observations. With `final`, no generation
        prompt follows (the closing template text only).
        """
        seen = self.render(before, add_generation_prompt=True) + action_text
        full = self.render(after, add_generation_prompt=not final)
        if not full.startswith(seen):
            at = next((i for i, (a, b) in enumerate(zip(seen, full, strict=False)) if a != b),
                      min(len(seen), len(full)))
            raise TemplateMismatchError(
                "chat template does not extend the sampled context at character "
                f"{at}: sampled {seen[at:at + 40]!r}, template {full[at:at + 40]!r}"
            )
        return self.encode(full[len(seen):])
