"""The built-in character tokenizer with a ChatML chat template, made locally.

Every printable ASCII character plus newline and tab is one token; roles and tool
calls get special tokens. It is saved and loaded as an ordinary Hugging Face fast
tokenizer (`tokenizer.json` + `tokenizer_config.json` with the chat template), so the
tiny policy goes through exactly the code path of a real model. Characters outside
the vocabulary map to `<unk>`.
"""

from __future__ import annotations

from pathlib import Path

from tokenizers import Regex, Tokenizer, decoders, models, pre_tokenizers
from transformers import PreTrainedTokenizerFast

from tracerl.policy.chat_templates import HERMES_TOOL_CALLS

PAD, UNK, EOS = "<|endoftext|>", "<unk>", "<|endoftext|>"
IM_START, IM_END = "<|im_start|>", "<|im_end|>"
TOOL_OPEN, TOOL_CLOSE = "<tool_call>", "</tool_call>"
SPECIAL = [PAD, UNK, IM_START, IM_END]
ADDED = [TOOL_OPEN, TOOL_CLOSE]

# ChatML, as Qwen-family models use it. Assistant content is rendered verbatim (it
# already holds the <tool_call> text the policy wrote); messages that carry only
# structured tool_calls (OpenAI-format data) get them rendered in Hermes style.
CHAT_TEMPLATE = (
    "{%- for m in messages -%}"
    "{{- '<|im_start|>' + m['role'] + '\\n' + (m['content'] or '') -}}"
    + HERMES_TOOL_CALLS +
    "{{- '<|im_end|>\\n' -}}"
    "{%- endfor -%}"
    "{%- if add_generation_prompt -%}{{- '<|im_start|>assistant\\n' -}}{%- endif -%}"
)


def character_vocab() -> list[str]:
    return ["\n", "\t"] + [chr(c) for c in range(32, 127)]


def build_char_tokenizer(tool_tokens: bool = True) -> PreTrainedTokenizerFast:
    """The character tokenizer; without `tool_tokens`, `<tool_call>` and `</tool_call>`
    are spelt in characters (a stop string of many tokens, as in most real vocabularies)."""
    vocab = {tok: i for i, tok in enumerate(SPECIAL + character_vocab())}
    core = Tokenizer(models.WordLevel(vocab=vocab, unk_token=UNK))
    # Split into single characters (any character, newline included).
    core.pre_tokenizer = pre_tokenizers.Split(Regex(r"[\s\S]"), behavior="isolated")
    core.decoder = decoders.Fuse()
    tok = PreTrainedTokenizerFast(
        tokenizer_object=core,
        unk_token=UNK,
        pad_token=PAD,
        eos_token=EOS,
        additional_special_tokens=[IM_START, IM_END],
    )
    if tool_tokens:
        tok.add_tokens(ADDED)
    tok.chat_template = CHAT_TEMPLATE
    tok.model_max_length = 4096
    return tok


def save_char_tokenizer(path: str | Path) -> None:
    build_char_tokenizer().save_pretrained(str(path))
