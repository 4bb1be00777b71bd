"""Token-in, token-out rendering: observation ids as deltas of the chat template.

The ids the policy sampled are kept as sampled. What the env adds after an action
(the end-of-turn marker, tool messages, the next generation prompt) is obtained by
rendering the conversation through the tokenizer's chat template and taking the text
after everything already in the context. The rendered text must extend the context's
text exactly (prefix consistency); a template that rewrites earlier turns (some strip
reasoning from past turns) raises TemplateMismatchError instead of silently training
on tokens the model never saw.

How a turn ends is the renderer's too: `turn_end` (ChatML's `<|im_end|>`, or the
tokenizer's end-of-sequence token) and `stop_strings` (the end of a tool call, then the
turn end). The runner asks the sampler to stop at exactly these, and demonstrations end
their actions at exactly these, so SFT trains the token layout RL samples.

Tools the env offers (`tool_schemas`) are described in the model's own format when its
chat template supports tools (`apply_chat_template(..., tools=...)`: Qwen2.5/Qwen3,
Llama 3.x, Hermes templates). A template that ignores `tools=` (SmolLM2's) is detected
by rendering with and without a probe tool; then the default tool prompt
(tracerl.tools.hermes.describe_tools) goes into the system message instead.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from transformers import PreTrainedTokenizerBase

from tracerl.tools.hermes import CLOSE, describe_tools
from tracerl.types import Message

Schemas = Sequence[Mapping[str, Any]]
_PROBE_TOOL = {"type": "function", "function": {
    "name": "probe", "description": "Probe.", "parameters": {"type": "object", "properties": {}}}}


class TemplateMismatchError(RuntimeError):
    """Rendering the conversation does not extend what the policy already saw."""


def _template_dict(m: Message) -> dict[str, object]:
    # Assistant content is rendered verbatim: it already holds the sampled tool-call
    # text, and re-serialising structured calls could differ from what was sampled.
    if m.role == "assistant":
        return {"role": m.role, "content": m.content}
    return m.to_openai()


def turn_end_of(tokenizer: PreTrainedTokenizerBase) -> str:
    """The text that ends an assistant turn: `<|im_end|>` where it is one token (ChatML),
    else the end-of-sequence token (Llama 3's `<|eot_id|>`, ...)."""
    if len(tokenizer.encode("<|im_end|>", add_special_tokens=False)) == 1:
        return "<|im_end|>"
    if tokenizer.eos_token is None:
        raise ValueError("tokenizer has neither <|im_end|> nor an eos token to end turns")
    return str(tokenizer.eos_token)


def _with_system_text(dicts: list[dict[str, Any]], text: str) -> list[dict[str, Any]]:
    """Append `text` to the leading system message, or open the chat with one."""
    if dicts and dicts[0]["role"] == "system":
        first = dict(dicts[0], content=f"{dicts[0]['content']}\n\n{text}")
        return [first, *dicts[1:]]
    return [{"role": "system", "content": text}, *dicts]


class ChatRenderer:
    """Renders messages with a tokenizer's chat template and encodes text deltas."""

    def __init__(self, tokenizer: PreTrainedTokenizerBase, turn_end: str | None = None) -> None:
        self.tokenizer = tokenizer
        self.turn_end = turn_end or turn_end_of(tokenizer)
        # A turn ends after a tool call (the env answers) or at the end of turn.
        self.stop_strings: tuple[str, ...] = (CLOSE, self.turn_end)
        # The Rust tokenizer behind a fast tokenizer encodes the same ids without the
        # Python wrapper's per-call overhead (about 3x faster on short texts).
        self._backend = getattr(tokenizer, "backend_tokenizer", None)
        self._native_tools: bool | None = None

    @property
    def native_tools(self) -> bool:
        """Whether the chat template renders `tools=` itself (it changes the text)."""
        if self._native_tools is None:
            chat = [{"role": "user", "content": "hi"}]
            plain = self.tokenizer.apply_chat_template(chat, tokenize=False)
            try:
                with_tools = self.tokenizer.apply_chat_template(chat, tools=[_PROBE_TOOL],
                                                                tokenize=False)
            except Exception:  # a template that chokes on tools= has no tool support
                with_tools = plain
            self._native_tools = with_tools != plain
        return self._native_tools

    def render(self, messages: Sequence[Message], add_generation_prompt: bool,
               tools: Schemas = ()) -> str:
        """The chat template's text; `tools` are described in the model's own tool format
        (or the default tool prompt in the system message when the template has none)."""
        dicts = [_template_dict(m) for m in messages]
        extra: dict[str, Any] = {}
        if tools and self.native_tools:
            extra["tools"] = [dict(t) for t in tools]
        elif tools:
            dicts = _with_system_text(dicts, describe_tools(tools))
        return self.tokenizer.apply_chat_template(
            dicts, tokenize=False, add_generation_prompt=add_generation_prompt, **extra)

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

    def prompt_ids(self, messages: Sequence[Message], tools: Schemas = ()) -> list[int]:
        return self.encode(self.render(messages, add_generation_prompt=True, tools=tools))

    def content_of(self, action_text: str) -> str:
        """The assistant message content of an action (without its end-of-turn token)."""
        if action_text.endswith(self.turn_end):
            return action_text[: -len(self.turn_end)]
        return action_text

    def observation_ids(self, before: Sequence[Message], action_text: str,
                        after: Sequence[Message], final: bool, tools: Schemas = ()) -> list[int]:
        """Ids that follow `action_text` once the conversation has become `after`.

        `before` is the conversation the action was sampled from; `after` is it plus
        the assistant message and the env's observations. With `final`, no generation
        prompt follows (the closing template text only). `tools` are the episode's.
        """
        seen = self.render(before, add_generation_prompt=True, tools=tools) + action_text
        full = self.render(after, add_generation_prompt=not final, tools=tools)
        if not full.startswith(seen):
            at = next((i for i, (a, b) in enumerate(zip(seen, full, strict=False)) if a != b),
                      min(len(seen), len(full)))
            raise TemplateMismatchError(
                "chat template does not extend the sampled context at character "
                f"{at}: sampled {seen[at:at + 40]!r}, template {full[at:at + 40]!r}"
            )
        return self.encode(full[len(seen):])
