"""code_tests against the empty-program floor, two source trees interleaved round by round.

On a shared host the load swings from one run of benchmarks/sandbox.py to the next, and
with it every ratio; comparing two versions of the harness needs them measured at the
same moments. This starts one measuring process per tree (each with its own
SandboxPool and its own sources on the path) and has them take turns: each round runs
code_tests over sandbox.py's 136 candidates and the empty program 100 times, and
reports CPU time per item (the process, its children and the pool's worker trees, as
sandbox.py counts it) and wall time. Printed per tree: code_tests' CPU and wall per
item over the empty program's (the part of sandbox.py's floor ratio that the harness
changes; the naive grader and the fresh interpreter do not depend on the tree), and
the parent process's share.

    python benchmarks/sandbox_ab.py --trees /path/to/main /path/to/branch --workers 2 --rounds 30
"""

from __future__ import annotations

import argparse
import os
import resource
import subprocess
import sys
import time

Item = tuple[float, float, float]  # CPU ms, wall ms, parent-process CPU ms per item


def serve(workers: int) -> None:
    """The measuring process: one pool; one line of figures per line read."""
    sys.path.insert(0, os.path.join(os.getcwd(), "benchmarks"))  # the tree's own sandbox.py
    import sandbox as bench
    from tracerl.rewards import code_tests
    from tracerl.sandbox import SandboxPool

    cands = bench.candidates()
    with SandboxPool(workers=workers) as pool:
        def ours(c: bench.Candidate) -> float | None:
            return code_tests(c.code, c.problem.hidden_tests, entry_point=c.problem.entry_point,
                              pool=pool, timeout_s=5, partial=False).score

        def empty(c: bench.Candidate) -> float:
            return float(pool.run_python(c.code).status == "ok")

        bench.measure(ours, cands, workers, 1)  # warm-up: every plan parsed and prepared
        print("ready", flush=True)
        blank = [bench.Candidate(cands[0].problem, "pass")] * 100
        for _ in sys.stdin:
            out = []
            for fn, items in ((ours, cands), (empty, blank)):
                own0, cpu0, t0 = _own(), bench.cpu_seconds(pool), time.perf_counter()
                bench.measure(fn, items, workers, 1)
                n = len(items)
                out += [(bench.cpu_seconds(pool) - cpu0) * 1e3 / n,
                        (time.perf_counter() - t0) * 1e3 / n, (_own() - own0) * 1e3 / n]
            print(" ".join(f"{x:.5f}" for x in out), flush=True)


def _own() -> float:
    r = resource.getrusage(resource.RUSAGE_SELF)
    return r.ru_utime + r.ru_stime


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--trees", nargs="+", required=True, help="checkouts to compare")
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--rounds", type=int, default=30)
    parser.add_argument("--serve", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.serve:
        serve(args.workers)
        return
    procs = {}
    for tree in args.trees:
        env = dict(os.environ, PYTHONPATH=os.path.join(tree, "src"))
        script = os.path.join(tree, "benchmarks", "sandbox_ab.py")
        if not os.path.exists(script):  # a tree from before this script: use ours
            script = os.path.abspath(__file__)
        procs[tree] = subprocess.Popen(
            [sys.executable, script, "--trees", tree, "--serve", "--workers", str(args.workers)],
            stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True, env=env, cwd=tree)
        assert procs[tree].stdout and procs[tree].stdout.readline().strip() == "ready"
    got: dict[str, list[tuple[Item, Item]]] = {t: [] for t in args.trees}
    print(f"load average at start: {os.getloadavg()[0]:.1f}")
    for r in range(args.rounds):
        order = args.trees if r % 2 == 0 else args.trees[::-1]  # who goes first alternates
        for tree in order:
            proc = procs[tree]
            assert proc.stdin and proc.stdout
            proc.stdin.write("round\n")
            proc.stdin.flush()
            x = [float(v) for v in proc.stdout.readline().split()]
            got[tree].append(((x[0], x[1], x[2]), (x[3], x[4], x[5])))
    print(f"load average at end: {os.getloadavg()[0]:.1f}; {args.rounds} rounds, "
          f"workers={args.workers}")
    for tree, rows in got.items():
        ours = [sum(r[0][i] for r in rows) / len(rows) for i in range(3)]
        empty = [sum(r[1][i] for r in rows) / len(rows) for i in range(3)]
        print(f"{tree}: code_tests / empty program: CPU {ours[0] / empty[0]:.3f} "
              f"({ours[0]:.2f} / {empty[0]:.2f} ms an item), wall {ours[1] / empty[1]:.3f}; "
              f"parent-process CPU {ours[2]:.3f} / {empty[2]:.3f} ms")
    for proc in procs.values():
        assert proc.stdin
        proc.stdin.close()
        proc.wait()


if __name__ == "__main__":
    main()
