"""Experiment of issue 15 (not shipped): an override detector over static token
embeddings distilled from an LLM (PyPI `wordllama` 0.4.0.post1: its l2_supercat_256
table, 32,000 Llama-2 tokens x 256 float16, and its tokenizer file), so that synonyms
and translations of an order land near each other where hashed character n-grams see
unrelated strings.

A span's features are the mean and the max of its tokens' embeddings (512 numbers); a
head (logistic regression, or one hidden layer of 64) is trained in torch on the same
generated segments as the shipped linear model (guard_model.generate.dataset, seed 15,
10% held back), and a text is scored, like the shipped detector, by its best span
(segments and pairs of adjacent segments of override_model.py). Choices are made on the
development data only (paraphrase sets 1-2 and the corpus's dev split); paraphrase set 6
was written and committed before this file existed and is scored once, by `--final`.

    pip download wordllama==0.4.0.post1 --no-deps -d /tmp/wl && unzip /tmp/wl/*.whl -d /tmp/wl/x
    cd benchmarks && python -m guard_model.static_embed --wordllama /tmp/wl/x/wordllama
    cd benchmarks && python -m guard_model.static_embed --wordllama /tmp/wl/x/wordllama --final

Result: docs/benchmarks.md, "Guard, static embeddings".
"""

from __future__ import annotations

import argparse
import time
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import torch
from guard_corpus import load_corpus
from guard_corpus.score import print_recall_table

from guard_model.devdata import DEV_FPR, dev_sets, recall_at_fpr, rules, shipped_logit, split, view
from guard_model.generate import dataset
from tracerl.guard import override_model
from tracerl.guard.jailbreak import CLASSIFIER_MIN_P
from tracerl.guard.override_model import codes_of, segments, spans


@dataclass(frozen=True)
class Embedder:
    """wordllama's token table and tokenizer: span features of a text."""

    table: np.ndarray
    """(vocabulary, 256) float32, with one extra zero row (index -1) for empty spans."""
    tokenizer: object

    @staticmethod
    def load(root: Path) -> Embedder:
        from safetensors.numpy import load_file
        from tokenizers import Tokenizer

        weights = load_file(str(root / "weights" / "l2_supercat_256.safetensors"))
        table = weights["embedding.weight"].astype(np.float32)
        table = np.vstack([table, np.zeros((1, table.shape[1]), np.float32)])
        tok = Tokenizer.from_file(str(root / "tokenizers" / "l2_supercat_tokenizer_config.json"))
        tok.no_padding()
        tok.no_truncation()
        return Embedder(table, tok)

    def features(self, text: str, starts: np.ndarray, ends: np.ndarray) -> np.ndarray:
        """(len(starts), 512): mean and max of the embeddings of the tokens that start
        inside each character span [starts[i], ends[i]) of `text`."""
        enc = self.tokenizer.encode(text, add_special_tokens=False)
        emb = self.table[np.array(enc.ids + [len(self.table) - 1], dtype=np.int64)]
        first = np.array([o[0] for o in enc.offsets] + [len(text)])
        lo, hi = np.searchsorted(first, starts), np.searchsorted(first, ends)
        prefix = np.vstack([np.zeros((1, emb.shape[1]), np.float32), np.cumsum(emb[:-1], 0)])
        count = np.maximum(hi - lo, 1)[:, None]
        mean = (prefix[hi] - prefix[lo]) / count
        idx = np.empty(2 * len(lo), dtype=np.int64)
        idx[0::2], idx[1::2] = lo, np.maximum(hi, lo + 1)
        mx = np.maximum.reduceat(emb, np.minimum(idx, len(emb) - 1), axis=0)[0::2]
        mx[hi <= lo] = 0.0
        return np.hstack([mean, mx]).astype(np.float32)

    def whole(self, texts: list[str]) -> np.ndarray:
        """Features of each text as one span (a training segment)."""
        return np.vstack([self.features(t, np.array([0]), np.array([len(t)])) for t in texts])


class Head(torch.nn.Module):
    """Standardised features (training mean and spread) into a linear layer or an MLP."""

    def __init__(self, hidden: int, center: np.ndarray, scale: np.ndarray) -> None:
        super().__init__()
        self.register_buffer("center", torch.from_numpy(center))
        self.register_buffer("scale", torch.from_numpy(scale))
        self.net = (torch.nn.Linear(512, 1) if hidden == 0 else torch.nn.Sequential(
            torch.nn.Linear(512, hidden), torch.nn.ReLU(), torch.nn.Linear(hidden, 1)))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.net((x - self.center) / self.scale).squeeze(-1)


def train(x: np.ndarray, y: np.ndarray, hidden: int, epochs: int, l2: float) -> Head:
    torch.manual_seed(0)
    head = Head(hidden, x.mean(0), x.std(0) + 1e-6)
    opt = torch.optim.Adam(head.parameters(), lr=1e-3, weight_decay=l2)
    xt, yt = torch.from_numpy(x), torch.from_numpy(y.astype(np.float32))
    pos_weight = torch.tensor((y == 0).sum() / max((y == 1).sum(), 1), dtype=torch.float32)
    for _ in range(epochs):
        for batch in torch.randperm(len(xt)).split(512):
            opt.zero_grad()
            loss = torch.nn.functional.binary_cross_entropy_with_logits(
                head(xt[batch]), yt[batch], pos_weight=pos_weight)
            loss.backward()
            opt.step()
    return head


@dataclass(frozen=True)
class Detector:
    embedder: Embedder
    head: Head
    bias: float = 0.0

    def logit(self, text: str) -> float:
        """The best span's logit of the canonical view of `text` (-inf: too short)."""
        v = view(text)
        codes = codes_of(v)
        if len(codes) < override_model.MIN_SEGMENT:
            return float("-inf")
        s, e = spans(*segments(codes), len(codes))
        with torch.no_grad():
            z = self.head(torch.from_numpy(self.embedder.features(v, s, e))).numpy()
        return float(z.max()) + self.bias


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--wordllama", type=Path, required=True,
                        help="the unpacked wordllama package folder (weights/, tokenizers/)")
    parser.add_argument("--final", action="store_true",
                        help="also score held-out data and paraphrase sets 3-6 (once)")
    args = parser.parse_args()
    torch.set_num_threads(1)
    emb = Embedder.load(args.wordllama)
    corpus = [i.text for i in load_corpus("dev") if not (i.positive and i.category == "jailbreak")]
    texts, labels = dataset(15, corpus=corpus)
    y = np.array(labels)
    cut = len(texts) * 9 // 10
    t0 = time.perf_counter()
    x = emb.whole(texts).astype(np.float32)
    print(f"features of {len(texts)} generated segments in {time.perf_counter() - t0:.0f} s")
    dev = dev_sets()
    dev_all = [x for v in dev.values() for x in v]
    print("| detector | held-back generated, recall at 2% FPR | dev recall at 2% FPR |")
    print("|---|---:|---:|")
    r, _ = recall_at_fpr(shipped_logit, dev_all, DEV_FPR)
    print(f"| linear, shipped | - | {r:.3f} |")
    candidates = {}
    for hidden, epochs, l2 in ((0, 10, 1e-5), (64, 10, 1e-5), (256, 10, 1e-5)):
        t0 = time.perf_counter()
        head = train(x[:cut], y[:cut], hidden, epochs, l2)
        with torch.no_grad():
            z = head(torch.from_numpy(x[cut:])).numpy()
        zn = np.sort(z[y[cut:] == 0])
        thr = zn[int(len(zn) * (1 - DEV_FPR))]
        held = float((z[y[cut:] == 1] > thr).mean())
        det = Detector(emb, head)
        r, _ = recall_at_fpr(det.logit, dev_all, DEV_FPR)
        name = f"static embeddings, hidden {hidden}, {epochs} epochs, l2 {l2:g}"
        candidates[name] = (r, det)
        print(f"| {name} | {held:.3f} | {r:.3f} | ({time.perf_counter() - t0:.0f} s)")
    best_name = max(candidates, key=lambda k: candidates[k][0])
    best = candidates[best_name][1]
    # calibrate like the shipped model: fire (p >= CLASSIFIER_MIN_P) on at most 2% of the
    # development negatives
    _, thr = recall_at_fpr(best.logit, dev_all, DEV_FPR)
    z_min = float(np.log(CLASSIFIER_MIN_P / (1 - CLASSIFIER_MIN_P)))
    best = Detector(best.embedder, best.head, z_min - thr)
    print(f"\nchosen on the development data: {best_name}\n")
    from guard import realistic

    text = realistic(2048)
    times = []
    for _ in range(200):
        t0 = time.perf_counter()
        best.logit(text)
        times.append((time.perf_counter() - t0) * 1e3)
    times.sort()
    print(f"latency of the chosen detector on the 2 KB realistic text: p50 {times[100]:.3f} ms, "
          f"p99 {times[197]:.3f} ms (shipped detector alone: about 0.1 ms)\n")
    sets = dict(dev)
    if args.final:
        from guard_corpus.paraphrase_set3 import SETS_3
        from guard_corpus.paraphrase_set4 import SETS_4
        from guard_corpus.paraphrase_set5 import SETS_5
        from guard_corpus.paraphrase_set6 import SETS_6

        sets["held-out split"] = split(load_corpus("heldout"))
        for name, s in (("set 3", SETS_3), ("set 4", SETS_4), ("set 5", SETS_5),
                        ("set 6 (blind)", SETS_6)):
            sets[name] = [x for v in s.values() for x in v]
    z_ship = float(np.log(CLASSIFIER_MIN_P / (1 - CLASSIFIER_MIN_P)))
    detectors = {"rules + shipped linear": lambda t: rules(t) or shipped_logit(t) >= z_ship,
                 "rules + static embeddings": lambda t: rules(t) or best.logit(t) >= z_min}
    print_recall_table(sets, detectors)


if __name__ == "__main__":
    main()
