"""The arguments of every `tracerl` subcommand, and nothing else.

Building the `tracerl` parser (and printing help) imports only this module, so
`tracerl --help` does not pay for torch, transformers or OpenTelemetry. Each command
is implemented beside its package (`tracerl.cli.train`, `tracerl.cli.eval`,
...), which `tracerl.cli` imports only when that command runs; an implementation module
with a `python -m` entry point builds it from these same definitions. Keep this module
free of tracerl imports: names the parser needs from a heavy module are repeated here,
and tests/test_cli.py checks that the copies agree.
"""

from __future__ import annotations

import argparse

# tracerl.cli.eval.METRICS, the names the CLI maps to metric constructors (the
# catalogue, tracerl.evals.catalogue; `tracerl metrics` describes each).
METRIC_NAMES = (
    "exact_match", "contains", "regex_match", "contains_all", "contains_any", "contains_none",
    "length", "one_line", "starts_with", "ends_with", "contains_email", "contains_url",
    "json_valid", "json_in_text", "json_schema", "schema_compliance", "json_field_match",
    "json_tree_similarity", "bleu", "rouge_1", "rouge_2", "rouge_l", "chrf", "edit_similarity",
    "set_f1", "set_precision", "set_recall", "numeric_match", "numeric_closeness",
    "precision_at_k", "recall_at_k", "mrr", "ndcg", "citation_presence", "citation_validity",
    "tool_selection", "tool_call_validity", "tool_success", "tool_call_credit",
    "step_efficiency", "step_budget", "no_loop", "trajectory_match", "action_safety",
    "code_syntax", "banned_code", "code_tests", "latency_s", "tokens", "semantic_similarity",
    "answer_relevance", "profanity_free",
)
METRIC_FAMILIES = ("code", "models", "retrieval", "similarity", "strings", "structured",
                   "tools", "usage")
# tracerl.rewards.hacks.CATEGORIES
HACK_CATEGORIES = ("code", "math", "format", "judge")

TRAIN_DESCRIPTION = "Train a policy. With no arguments: the built-in tiny policy on `calc`."

EVAL_DESCRIPTION = """\
Score a JSONL file or a trace store with metrics, or a checkpoint on a task family's
held-out split.

    tracerl eval runs/calc-tiny                       # the run's latest checkpoint
    tracerl eval path/to/model task.family=calc task.calc.calls=2 --k 8
    tracerl eval smollm2-135m threads=1 --tasks 8 --k 2  # a pretrained model by name
    tracerl eval smollm2-135m --family humaneval --k 5 --out he.json  # another family
    tracerl eval smollm2-135m --family bfcl --categories simple_python multiple

    tracerl eval convs.jsonl --metric exact_match --metric bleu:max_n=2
    tracerl eval runs/exp1 --run exp1 --metric "tool_selection:required=search|fetch" --json
    tracerl eval convs.jsonl --metric rubric_judge:rubric="Is it polite?" \\
        --judge-url http://127.0.0.1:8000/v1 --judge-model qwen

A metric spec is `name` or `name:key=value,key=value`; values are JSON when they parse
(numbers, true), lists are `a|b`, and `@file.json` reads a JSON file (schemas).
`tracerl metrics` lists every metric with its inputs and range.

    tracerl eval new.jsonl --metric exact_match --by tag --baseline old-report.json
"""

METRICS_DESCRIPTION = """\
List the local metric catalogue: each metric's family, range, kind and inputs.

    tracerl metrics                   # every metric
    tracerl metrics --family tools -v # one family, with each metric's description
    tracerl metrics --json
"""

AUDIT_DESCRIPTION = """\
Run the known reward hacks against a reward.

Exit code 0 when no hack scored above 0, 1 when any did, 2 when REWARD is invalid.
"""

DOCTOR_DESCRIPTION = "Report which sandbox isolation layers work on this host."

SCAN_DESCRIPTION = """\
Run the guard's scanners (jailbreak and instruction overrides, code injection, secrets,
PII, invisible text) over files or standard input and print each finding: where it is,
which scanner and kind, its score. Exit status: 0 nothing found, 1 found, 2 bad input.

    tracerl scan page.html tool_output.json
    cat transcript.txt | tracerl scan --scanners jailbreak,secrets
    tracerl scan --lines --json observations.txt      # one text per line, JSON out
"""

EXPORT_DESCRIPTION = """\
Write a run's latest checkpoint as a full model directory: with LoRA the adapter is
merged into its base. The result loads like any local model (model=DIR).

    tracerl export runs/calc-lora                    # -> runs/calc-lora/export
    tracerl export runs/calc-lora --out models/calc
"""

TRACES_DESCRIPTION = """\
List, show and export the trajectories in a run's trace store.

    tracerl traces list runs/exp1 --runs
    tracerl traces list runs/exp1 --tool calculator --min-reward 1 --json
    tracerl traces show runs/exp1                     # the latest trajectory, as a conversation
    tracerl traces show runs/exp1 --min-reward 1     # the latest successful one
    tracerl traces show runs/exp1 3fa2c1 | less      # one trajectory by (a prefix of) its id
    tracerl traces show runs/exp1 3fa2c1 --spans     # its span tree (--attributes: every value)
    tracerl traces export runs/exp1 --format openai --out convs.jsonl --status done
"""


def add_train_arguments(parser: argparse.ArgumentParser) -> None:
    _add_run_arguments(parser, "rl.steps=20", "continue a run from its last checkpoint "
                       "(key=value overrides apply; a larger rl.steps extends a finished run)")


def _add_run_arguments(parser: argparse.ArgumentParser, example: str, resume: str) -> None:
    """CONFIG.yaml and key=value, --resume RUN_DIR, --overwrite (train and optimize)."""
    parser.add_argument("config", nargs="*", metavar="CONFIG.yaml | key=value",
                        help=f"an optional YAML file, then overrides like {example}")
    parser.add_argument("--resume", metavar="RUN_DIR", help=resume)
    parser.add_argument("--overwrite", action="store_true",
                        help="replace out_dir/name if it exists (default: write name-2, ...)")


def add_eval_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("data", help="a .jsonl file of {'messages': [...], ...} lines, or a "
                                     "trace store (run directory or traces.sqlite)")
    parser.add_argument("--metric", action="append", default=[], metavar="SPEC",
                        help=f"name[:key=value,...]; names: {', '.join(METRIC_NAMES)}, "
                             "rubric_judge")
    parser.add_argument("--run", help="with a trace store: only this run")
    parser.add_argument("--json", action="store_true", help="print the full report as JSON")
    parser.add_argument("--out", help="also write the full JSON report to this file")
    parser.add_argument("--by", choices=("task", "tag"),
                        help="break the table down per task or per tag (reference 'tags')")
    parser.add_argument("--baseline", metavar="REPORT.json",
                        help="compare with an earlier report (--out) item by item, with a "
                             "paired sign-flip test")
    parser.add_argument("--judge-url", help="OpenAI-compatible base URL for rubric_judge")
    parser.add_argument("--judge-model", help="model name for rubric_judge")
    ck = parser.add_argument_group(
        "checkpoint mode (DATA is a run directory, a model directory or a model name such "
        "as smollm2-135m, and no --metric)")
    ck.add_argument("overrides", nargs="*", metavar="key=value",
                    help="train-config keys for the task family, e.g. task.calc.calls=2")
    ck.add_argument("--family", metavar="NAME",
                    help="evaluate on this task family (task.family=NAME, over a run's own); "
                         "its options as key=value, e.g. task.humaneval.tools=[run_python]; "
                         "bfcl prints BFCL's report (below)")
    ck.add_argument("--tasks", type=int, default=100, help="held-out tasks (default 100)")
    ck.add_argument("--k", type=int, default=1, help="samples per task, for pass@k (default 1)")
    ck.add_argument("--temperature", type=float, default=1.0, help="sampling temperature")
    ck.add_argument("--seed", type=int, default=0, help="seed of tasks and sampling")
    bf = parser.add_argument_group(
        "external benchmarks (checkpoint mode): `--family bfcl` scores BFCL v4 by its rules "
        "and prints BFCL's layout (docs/bfcl.md)")
    bf.add_argument("--categories", nargs="+", metavar="CATEGORY",
                    help="BFCL categories (shell patterns such as live_* work; default: all)")
    bf.add_argument("--split", default="heldout", choices=("heldout", "unseen_api", "train"),
                    help="which ids to score (default heldout)")
    bf.add_argument("--tasks-per-category", type=int, default=0, metavar="N",
                    help="at most N entries per category (default 0: all of the split)")


def add_metrics_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--family", choices=METRIC_FAMILIES, help="only this family")
    parser.add_argument("-v", "--verbose", action="store_true",
                        help="also print each metric's description")
    parser.add_argument("--json", action="store_true", help="print the catalogue as JSON")


def add_audit_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("reward", help="code_tests, math_answer, bfcl or bfcl_partial (BFCL's "
                                       "rewards against its own hacks on real entries), or "
                                       "module:attr")
    parser.add_argument("--category", action="append", choices=HACK_CATEGORIES,
                        help="only hacks of this category (repeatable; default: all)")
    parser.add_argument("--timeout", type=float, default=2.0,
                        help="seconds per test case for code_tests / per verification")
    parser.add_argument("--json", action="store_true", help="print the report as JSON")
    parser.add_argument("--verbose", action="store_true", help="list clean hacks too")


def add_export_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("run_dir", metavar="RUN_DIR",
                        help="a run directory (its latest checkpoint) or a checkpoint directory")
    parser.add_argument("--out", metavar="DIR", help="output directory (default RUN_DIR/export)")


def add_doctor_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--json", action="store_true", help="print the report as JSON")


def add_scan_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("paths", nargs="*", metavar="PATH",
                        help="files to scan ('-' or none: standard input)")
    parser.add_argument("--scanners", help="comma-separated scanner names (default: all)")
    parser.add_argument("--min-score", type=float, default=0.5,
                        help="report findings at or above this score (default 0.5)")
    parser.add_argument("--lines", action="store_true",
                        help="scan each line of the input as its own text")
    parser.add_argument("--json", action="store_true",
                        help="one JSON object per finding (source, scanner, kind, start, "
                             "end, score, detail)")
    parser.add_argument("--as", dest="target", choices=("observation", "prompt"),
                        help="decide as the Guard does for this kind of text, with its "
                             "default rules and thresholds for that source (observation: "
                             "a tool's output or a retrieved document; prompt: a user "
                             "message): one line per input with the action and the "
                             "findings that triggered it; exit 1 if any input is blocked "
                             "or flagged. --scanners and --min-score do not apply")


def _add_trace_filters(p: argparse.ArgumentParser, limit: bool = True) -> None:
    p.add_argument("store", help="run directory or traces.sqlite file")
    p.add_argument("--run", help="only this run (session.id)")
    p.add_argument("--step", type=int, help="only this training step")
    p.add_argument("--status", choices=("done", "truncated", "error"), help="only this status")
    p.add_argument("--tool", help="only trajectories that called this tool")
    p.add_argument("--min-reward", type=float, help="only outcome reward >= this")
    p.add_argument("--max-reward", type=float, help="only outcome reward <= this")
    if limit:
        p.add_argument("--limit", type=int, help="at most this many trajectories (list: the "
                   "latest N)")


def add_traces_arguments(parser: argparse.ArgumentParser) -> None:
    sub = parser.add_subparsers(dest="traces_command", required=True)
    ls = sub.add_parser("list", help="list runs or trajectories")
    _add_trace_filters(ls)
    ls.add_argument("--runs", action="store_true", help="one line per run instead")
    ls.add_argument("--json", action="store_true", help="JSON lines instead of a table")
    show = sub.add_parser(
        "show", help="print one trajectory as a conversation",
        description="Print one trajectory as a conversation: each message with its role, "
                    "the tool calls and their results, the guard decisions that acted, then "
                    "status, reward and its parts. Without TRACE_ID: the latest trajectory "
                    "that matches the filters: the run's last rollout or evaluation "
                    "(evaluations are recorded as run NAME:eval; --run NAME keeps to "
                    "training rollouts).")
    _add_trace_filters(show, limit=False)
    show.add_argument("trace_id", nargs="?", metavar="TRACE_ID",
                      help="trace id or a unique prefix of it (default: the latest matching)")
    show.add_argument("--full", action="store_true",
                      help="do not clip long tool results and system prompts")
    show.add_argument("--color", choices=("auto", "always", "never"), default="auto",
                      help="colour the roles (auto: only on a terminal, unless NO_COLOR is set)")
    show.add_argument("--spans", action="store_true",
                      help="print the span tree instead of the conversation")
    show.add_argument("--attributes", action="store_true",
                      help="print the span tree with every attribute (token ids included)")
    exp = sub.add_parser("export", help="export trajectories to a file")
    _add_trace_filters(exp)
    exp.add_argument("--format", choices=("openai", "otlp"), default="openai",
                     help="openai: JSONL conversations; otlp: OTLP/JSON, one request a line")
    exp.add_argument("--out", help="output file (default: stdout)")


VIEW_DESCRIPTION = """\
A local web dashboard over one or more run directories: the config, the summary and the
curves (several runs overlaid), the trajectories (filters, text search), each trajectory
with its tool calls, guard decisions and sampled tokens coloured by advantage or
log-probability, and two trajectories side by side. Read-only; it works on a run that is
still training (refresh for new steps). Needs `pip install 'tracerl[view]'`.

    tracerl view runs/calc-tiny
    tracerl view runs/calc-tiny runs/calc-tiny-2 --port 8800
"""


def add_view_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("run_dirs", nargs="+", metavar="RUN_DIR", help="run directories")
    parser.add_argument("--port", type=int, default=8765,
                        help="port to listen on (default 8765; 0 picks a free one)")
    parser.add_argument("--host", default="127.0.0.1",
                        help="address to bind (default 127.0.0.1, this machine only; the "
                             "viewer has no authentication, so bind others with care)")


SERVE_DESCRIPTION = """\
Serve a policy as an OpenAI-compatible endpoint on 127.0.0.1 that records every call
(prompt ids, sampled ids, log-probabilities) into episodes, so an agent written against
the chat-completions API can be trained unchanged (docs/serve.md).

    tracerl serve tiny                                # a fresh tiny policy (plumbing)
    tracerl serve smollm2-135m --port 8000            # a model by name or directory
    tracerl serve runs/calc-tiny rl.lr=5e-5 --train   # a run's latest checkpoint, trainable

Clients pass `extra_body={"episode_id": ..., "task_id": ...}` (or the X-Episode-Id and
X-Task-Id headers), post each episode's reward to /v1/episodes/ID/reward, and with
--train call POST /v1/train between batches: the server then serves the new weights.
"""
# tracerl.serve.episodes.OnMismatch
ON_MISMATCH = ("split", "drop", "reject")


def add_serve_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("source", nargs="?", default="tiny", metavar="MODEL|RUN_DIR",
                        help="tiny (default), a model name, a model directory or a run "
                             "directory (its latest checkpoint)")
    parser.add_argument("overrides", nargs="*", metavar="key=value",
                        help="train-config keys, e.g. rl.lr=5e-5 (the learner's settings)")
    parser.add_argument("--port", type=int, default=8000, help="port on 127.0.0.1 "
                        "(default 8000; 0 picks a free one)")
    parser.add_argument("--name", help="the model id clients use (default: the run's, the "
                                       "directory's or the model's name)")
    parser.add_argument("--train", action="store_true",
                        help="enable POST /v1/train: RL updates on the finished episodes")
    parser.add_argument("--out", metavar="RUN_DIR",
                        help="with --train: write a checkpoint here after every update "
                             "(without it the updates are discarded at exit)")
    parser.add_argument("--on-mismatch", choices=ON_MISMATCH, default="split",
                        help="history that does not match the recorded replies: split "
                             "(new root), drop (episode not trained on), reject (HTTP 409)")
    parser.add_argument("--max-tokens", type=int, default=256,
                        help="tokens per completion when a request gives no max_tokens")
    parser.add_argument("--max-batch", type=int, default=64,
                        help="concurrent requests' contexts per sampler call (1: no batching)")
    parser.add_argument("--max-body-mb", type=float, default=4.0,
                        help="largest request body in MiB (HTTP 413 beyond; default 4)")
    parser.add_argument("--max-episodes", type=int, default=10_000,
                        help="open episodes with an id kept; the oldest are forgotten "
                             "(counted) beyond it")
    parser.add_argument("--max-anonymous", type=int, default=1_000,
                        help="open episodes of calls without an episode id kept (a cap of "
                             "their own: they never push out named episodes)")
    parser.add_argument("--no-record-anonymous", action="store_true",
                        help="do not record calls that carry no episode id")


OPTIMIZE_DESCRIPTION = """\
Optimize the agent's prompt instead of its weights: six optimizers (random_search,
bayesian, protegi, metaprompt, promptwizard, gepa) score candidate prompts on real
rollouts of a task family, within a budget of model calls and tokens, and write a run
directory (history.jsonl, best_prompt.txt, summary.json, score.png, traces.sqlite).
Example: tracerl optimize optimizer=gepa task.calc.calls=1 budget.calls=600"""


def add_optimize_arguments(parser: argparse.ArgumentParser) -> None:
    _add_run_arguments(parser, "optimizer=protegi", "continue an interrupted search (cached "
                       "calls are free; key=value overrides apply, e.g. a larger budget.calls)")
