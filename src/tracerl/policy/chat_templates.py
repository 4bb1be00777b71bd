"""Chat templates the zoo gives a model whose source carries none.

Gemma 3 (the `gemma3-270m` base model: its GGUF holds no `tokenizer.chat_template`) gets
Gemma's documented turn format: `<start_of_turn>user` / `<start_of_turn>model`, each turn
closed by `<end_of_turn>` and a newline, the conversation opened by `<bos>`, and
`<start_of_turn>model\\n` as the generation prompt. Gemma has no system role: as in
Google's template for the instruction-tuned Gemma 3 models, a leading system message is
folded into the first turn, its text followed by a blank line before the user's.

Where this departs from Google's template, and why:
- Tool results (role `tool`, which Google's template refuses: roles must alternate) are
  a user turn, each result inside `<tool_response>` ... `</tool_response>` (the Hermes
  convention the default tool prompt teaches; consecutive results share one turn).
- Content is rendered verbatim, never trimmed: token-in, token-out needs the rendered
  conversation to extend the ids the policy sampled (tracerl.rollout.render).
- An assistant message that carries only structured `tool_calls` (OpenAI-format data)
  gets them rendered in Hermes style, as the built-in ChatML template does.
"""

from __future__ import annotations

HERMES_TOOL_CALLS = (
    "{%- if m['role'] == 'assistant' and m.get('tool_calls') and '<tool_call>' not in "
    "(m['content'] or '') -%}"
    "{%- for c in m['tool_calls'] -%}"
    "{{- '<tool_call>{\"name\": \"' + c['function']['name'] + '\", \"arguments\": ' + "
    "c['function']['arguments'] + '}</tool_call>' -}}"
    "{%- endfor -%}"
    "{%- endif -%}"
)
"""Inside a template's loop over messages `m`: an assistant message that carries only
structured `tool_calls` gets them written as Hermes `<tool_call>` blocks."""

GEMMA3 = (
    "{{- bos_token -}}"
    "{%- set ns = namespace(prefix='') -%}"
    "{%- set turns = messages -%}"
    "{%- if messages and messages[0]['role'] == 'system' -%}"
    "{%- set ns.prefix = (messages[0]['content'] or '') + '\\n\\n' -%}"
    "{%- set turns = messages[1:] -%}"
    "{%- if not turns -%}"
    "{{- '<start_of_turn>user\\n' + (messages[0]['content'] or '') + '<end_of_turn>\\n' -}}"
    "{%- endif -%}"
    "{%- endif -%}"
    "{%- for m in turns -%}"
    "{%- if m['role'] == 'tool' -%}"
    "{%- if loop.first or turns[loop.index0 - 1]['role'] != 'tool' -%}"
    "{{- '<start_of_turn>user\\n' + (ns.prefix if loop.first else '') -}}"
    "{%- endif -%}"
    "{{- '<tool_response>\\n' + (m['content'] or '') + '\\n</tool_response>' -}}"
    "{%- if loop.last or turns[loop.index0 + 1]['role'] != 'tool' -%}"
    "{{- '<end_of_turn>\\n' -}}"
    "{%- else -%}{{- '\\n' -}}{%- endif -%}"
    "{%- else -%}"
    "{{- '<start_of_turn>' + ('model' if m['role'] == 'assistant' else 'user') + '\\n' -}}"
    "{{- (ns.prefix if loop.first else '') + (m['content'] or '') -}}"
    + HERMES_TOOL_CALLS +
    "{{- '<end_of_turn>\\n' -}}"
    "{%- endif -%}"
    "{%- endfor -%}"
    "{%- if add_generation_prompt -%}{{- '<start_of_turn>model\\n' -}}{%- endif -%}"
)
"""Gemma 3's turn format, system folded into the first turn, tool results as user turns."""
