"""Latency of the stage-2 features on a 2 KB text beside scan() itself, same run."""
import pathlib, sys, time
import numpy as np
import wordllama
sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[2] / "benchmarks"))
from guard import realistic  # noqa: E402
from tracerl.guard import scan

wl = wordllama.WordLlama.load(cache_dir=pathlib.Path(wordllama.__file__).parent, disable_download=True)
text = realistic(2048)
for name, fn in (("scan()", lambda: scan(text)), ("wordllama embed", lambda: wl.embed([text]))):
    for _ in range(20): fn()
    t = []
    for _ in range(300):
        t0 = time.perf_counter(); fn(); t.append(time.perf_counter() - t0)
    print(f"{name}: p50 {np.percentile(t, 50)*1e3:.2f} ms, p99 {np.percentile(t, 99)*1e3:.2f} ms")
