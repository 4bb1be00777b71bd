"""Math verification speed: math_answer_batch against math-verify in-process (issue 15).

Both sides verify the same batches of typical answers in the same run:
- baseline: math-verify called in this process, one pair after another
  (`verify(parse(gold), parse(answer))`, its own timeouts off: the cheapest way to call
  it, and the way TRL calls it off the main thread; no isolation, no timeout at all);
- tracerl: `math_answer_batch(completions, golds)`: extraction, the exact fast path,
  and the rest in one sandboxed session forked from the warm worker, every answer under
  its own wall-clock limit.

A batch holds `--batch` answers in the mix a GSM8K/MATH-style GRPO step produces:
integers (right and wrong), fractions, decimals, radicals, polynomials, intervals and
tuples, some written differently from the gold. Every round uses fresh numbers (seeded),
so neither side is helped by a cache of the exact same strings; both warm up first on
their own round. The per-answer time of a round is its wall time / batch size; the
figure compared is the median over rounds. Verdicts of both sides are compared too.

Then the hostile cases: answers that hang or blow up sympy must time out and score 0
while the rest of their batch is judged normally.

    python benchmarks/rewards.py [--batch 256] [--rounds 5] [--timeout 5]
"""

from __future__ import annotations

import argparse
import os
import random
import statistics
import time
import warnings

from math_verify import parse, verify

from tracerl.rewards import math_answer_batch
from tracerl.rewards.extract import extract_answer
from tracerl.rewards.math import _as_latex, math_pool

warnings.filterwarnings("ignore")


def typical_batch(rng: random.Random, n: int) -> tuple[list[str], list[str]]:
    """(completions, golds): n answers in a typical mix, about 70% right."""
    comps, golds = [], []
    for _ in range(n):
        gold, right, wrong = _problem(rng)
        answer = right if rng.random() < 0.7 else wrong
        style = rng.random()
        if style < 0.6:
            text = f"Step by step we get the result.\nThe answer is $\\boxed{{{answer}}}$."
        elif style < 0.8:
            text = f"<think>work</think><answer>{answer}</answer>"
        else:
            text = f"So the total is {answer}.\nAnswer: {answer}"
        comps.append(text)
        golds.append(gold)
    return comps, golds


def _problem(rng: random.Random) -> tuple[str, str, str]:
    """(gold, an equal answer, a wrong answer)."""
    kind = rng.random()
    a, b = rng.randint(2, 99), rng.randint(2, 99)
    if kind < 0.45:  # integer answers (GSM8K): most of a batch
        v = rng.randint(1, 5000)
        return str(v), str(v), str(v + rng.choice([-1, 1, 10]))
    if kind < 0.55:
        return f"\\frac{{{a}}}{{{a + b}}}", f"\\frac{{{2 * a}}}{{{2 * (a + b)}}}", \
            f"\\frac{{{a + 1}}}{{{a + b}}}"
    if kind < 0.65:
        v = round(rng.uniform(0, 100), 2)
        return f"{v}", f"{v:.2f}", f"{v + 0.5:.2f}"
    if kind < 0.75:
        return f"{a}\\sqrt{{2}}", f"\\sqrt{{{2 * a * a}}}", f"{a + 1}\\sqrt{{2}}"
    if kind < 0.85:
        return f"(x+{a})^2", f"x^2+{2 * a}x+{a * a}", f"x^2+{a}x+{a * a}"
    if kind < 0.92:
        return f"[{a}, {a + b})", f"[{a},{a + b})", f"({a}, {a + b})"
    return f"\\frac{{{a}}}{{{b}}}\\pi", f"\\frac{{{a}\\pi}}{{{b}}}", f"\\frac{{{a}}}{{{b + 1}}}\\pi"


def in_process(comps: list[str], golds: list[str]) -> list[float]:
    """math-verify in this process, on the same extracted answers tracerl judges."""
    out = []
    for completion, gold in zip(comps, golds, strict=True):
        answer, _ = extract_answer(completion)
        g = parse(_as_latex(gold), parsing_timeout=None)
        a = parse(_as_latex(answer or ""), parsing_timeout=None)
        out.append(float(bool(g) and bool(a) and verify(g, a, timeout_seconds=None)))
    return out


def timed(fn, *args) -> tuple[float, object]:  # noqa: ANN001
    t0 = time.perf_counter()
    out = fn(*args)
    return time.perf_counter() - t0, out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--batch", type=int, default=256)
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--timeout", type=float, default=5.0)
    args = parser.parse_args()
    rng = random.Random(15)
    pool = math_pool()
    missing = list(pool.missing_isolation) or "none"
    print(f"host: {os.cpu_count()} cpus, load {os.getloadavg()[0]:.2f}; batch {args.batch}, "
          f"{args.rounds} rounds; isolation layers missing: {missing}")
    warm = typical_batch(rng, args.batch)
    in_process(*warm)
    math_answer_batch(*warm, pool=pool, timeout_s=args.timeout)
    base_s, ours_s, agree, exact = [], [], 0, 0
    for _ in range(args.rounds):
        comps, golds = typical_batch(rng, args.batch)
        tb, base = timed(in_process, comps, golds)
        to, ours = timed(lambda c, g: math_answer_batch(c, g, pool=pool, timeout_s=args.timeout),
                         comps, golds)
        base_s.append(tb / args.batch)
        ours_s.append(to / args.batch)
        agree += sum(b == r.score for b, r in zip(base, ours, strict=True))  # type: ignore[union-attr]
        exact += sum(bool(r.details.get("exact")) for r in ours)  # type: ignore[union-attr]
    n = args.batch * args.rounds
    b, o = statistics.median(base_s), statistics.median(ours_s)
    print(f"{'':44s}{'median ms/answer':>18s}{'min':>8s}{'max':>8s}")
    print(f"{'math-verify in-process (no isolation)':44s}{b * 1e3:18.3f}"
          f"{min(base_s) * 1e3:8.3f}{max(base_s) * 1e3:8.3f}")
    print(f"{'tracerl math_answer_batch (sandboxed)':44s}{o * 1e3:18.3f}"
          f"{min(ours_s) * 1e3:8.3f}{max(ours_s) * 1e3:8.3f}")
    print(f"ratio tracerl / in-process: {o / b:.2f}x (target <= 3x); verdicts agree on "
          f"{agree}/{n}; decided by the exact path: {exact}/{n}")
    hostile(pool, args.timeout)


def hostile(pool: object, timeout_s: float) -> None:
    """Answers that hang sympy, among ordinary ones: each times out alone and scores 0."""
    bad = ["\\boxed{9^{9^{9^{9^{9}}}}}", "\\boxed{10^{10^{10^{10}}}!}"]
    comps = ["\\boxed{12}", bad[0], "\\boxed{\\frac{2}{4}}", bad[1], "\\boxed{x^2+2x+1}"]
    golds = ["12", "391", "1/2", "7", "(x+1)^2"]
    t, out = timed(lambda: math_answer_batch(comps, golds, pool=pool, timeout_s=1.0))
    verdicts = [(r.score, r.status) for r in out]  # type: ignore[union-attr]
    print(f"hostile batch (timeout 1 s), {t:.1f} s: {verdicts}")


if __name__ == "__main__":
    main()
