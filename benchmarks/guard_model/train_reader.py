"""Train the experimental stage 2 reader (guard_model/reader.py) and write reader.npz.

From benchmarks/: `python -m guard_model.train_reader [--seed 15] [--epochs 2]` (torch,
CPU, about 15 minutes on 2 busy cores). Run it after `python -m guard_model.train`
when stage 1 changes, since the gate and the windows come from stage 1.

1. Data: the segments of generate.py (phrases.py, grammar.py, grammar_more.py). Each
   text is cut as the scanner cuts it: stage 1's best span, widened to the reader's
   window (reader.window), and only windows that pass stage 1's gate (less a
   margin) are trained on, since the reader never sees the others. 10% are held back.
2. Model: reader.py's architecture in torch (hashed character 1-4-gram
   embeddings, dilated convolutions, max- and mean-pooling), masked so that padding
   behaves like the numpy code's zero padding; exported tap-major for numpy, and the
   numpy forward pass is checked against torch's on held-back windows.
3. Gate (set first, from stage 1 alone): the stage-1 logit at which stage 2 is
   consulted, low enough that stage 1 passes 99.5% of the held-back generated positives
   and 98% of the development positives (the rest are leetspeak, base64 and template
   tokens, which the rules catch).
4. Calibration: the output bias is shifted so that the scanner's threshold
   (CLASSIFIER_MIN_P) fires on at most 2% of the development negatives (paraphrase sets
   1 and 2 and the corpus dev split), judged by the whole cascade. The held-out split and
   paraphrase sets 3-5 are never read here.
"""

from __future__ import annotations

import argparse
import random
import time
from collections.abc import Callable
from pathlib import Path

import numpy as np
import torch
from guard_corpus import load_corpus
from guard_corpus.paraphrase_sets import SETS, SETS_2
from torch import nn

from guard_model import reader as override_reader
from guard_model.generate import dataset
from guard_model.reader import BITS, DILATIONS, KERNEL, Cascade, Reader, reader_ids
from guard_model.train import DEV_FPR, view
from tracerl.guard import override_model
from tracerl.guard.jailbreak import CLASSIFIER_MIN_P
from tracerl.guard.override_model import codes_of, segments, spans

DIM, CHANNELS = 32, 32
PAD = 1 << BITS
"""Embedding row of padding positions (zero, never trained)."""


def cut(stage1: override_model.OverrideModel, text: str) -> tuple[np.ndarray, float]:
    """(codes of the window the reader would read, stage 1's best logit) for `text`."""
    codes = codes_of(view(text))
    if len(codes) < override_model.MIN_SEGMENT:
        return codes, -30.0
    spans_s, spans_e = spans(*segments(codes), len(codes))
    z = stage1.logits(codes, spans_s, spans_e)
    i = int(np.argmax(z))
    lo, hi = override_reader.window(len(codes), int(spans_s[i]), int(spans_e[i]))
    return codes[lo:hi], float(z[i])


class Net(nn.Module):
    """override_reader.Reader in torch."""

    def __init__(self) -> None:
        super().__init__()
        self.embed = nn.Embedding(PAD + 1, DIM, padding_idx=PAD)
        nn.init.normal_(self.embed.weight, std=0.1)
        with torch.no_grad():
            self.embed.weight[PAD].zero_()
        dims = (DIM,) + (CHANNELS,) * len(DILATIONS)
        self.convs = nn.ModuleList(
            nn.Conv1d(dims[i], dims[i + 1], KERNEL, dilation=d, padding=d * (KERNEL // 2))
            for i, d in enumerate(DILATIONS))
        self.out = nn.Linear(2 * CHANNELS, 1)
        self.drop = nn.Dropout(0.25)

    def forward(self, ids: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
        x = self.drop(self.embed(ids).sum(dim=2)).transpose(1, 2)  # (B, DIM, L)
        m = mask[:, None, :]
        for conv in self.convs:
            x = torch.relu(conv(x)) * m
        pooled = torch.cat((x.max(dim=2).values, x.sum(dim=2) / m.sum(dim=2)), dim=1)
        return self.out(self.drop(pooled)).squeeze(1)


def batch(windows: list[np.ndarray]) -> tuple[torch.Tensor, torch.Tensor]:
    n = max(len(w) for w in windows)
    ids = np.full((len(windows), n, len(override_reader.ORDERS)), PAD, dtype=np.int64)
    mask = np.zeros((len(windows), n), dtype=np.float32)
    for r, w in enumerate(windows):
        ids[r, : len(w)] = reader_ids(w)
        mask[r, : len(w)] = 1.0
    return torch.from_numpy(ids), torch.from_numpy(mask)


def dev_recall(net: Net, stage1: override_model.OverrideModel, gate: float,
               dev: tuple[list[str], list[str]]) -> float:
    """Recall of the cascade on the development positives at the score that fires on
    2% of the development negatives (the checkpoint selection criterion)."""
    net.eval()
    casc = Cascade(stage1, export(net, gate))
    pos = np.array([casc.best(view(t))[0] for t in dev[0]])
    neg = np.sort([casc.best(view(t))[0] for t in dev[1]])[::-1]
    net.train()
    return float(np.mean(pos > neg[int(DEV_FPR * len(neg))]))


def train(windows: list[np.ndarray], y: np.ndarray, epochs: int, seed: int,
          select: Callable[[Net], float]) -> Net:
    """Adam with a one-cycle schedule; every 100 batches the checkpoint is scored by
    `select` (development recall at 2% FPR) and the best one is kept."""
    torch.manual_seed(seed)
    net = Net()
    opt = torch.optim.AdamW(net.parameters(), lr=3e-3, weight_decay=1e-4)
    pos_weight = torch.tensor(float((y == 0).sum() / max((y == 1).sum(), 1)))
    loss_fn = nn.BCEWithLogitsLoss(pos_weight=pos_weight)
    order = np.argsort([len(w) for w in windows], kind="stable")
    chunks = [order[i : i + 128] for i in range(0, len(order), 128)]
    rng = np.random.default_rng(seed)
    steps, step = epochs * len(chunks), 0
    best, best_state = -1.0, None
    sched = torch.optim.lr_scheduler.OneCycleLR(opt, max_lr=3e-3, total_steps=steps)
    for epoch in range(epochs):
        t0, total = time.perf_counter(), 0.0
        for c in rng.permutation(len(chunks)):
            idx = chunks[c]
            ids, mask = batch([windows[i] for i in idx])
            loss = loss_fn(net(ids, mask), torch.from_numpy(y[idx]).float())
            opt.zero_grad()
            loss.backward()
            opt.step()
            sched.step()
            total += float(loss.detach()) * len(idx)
            step += 1
            if step % 100 == 0 or step == steps:
                r = select(net)
                print(f"  step {step}/{steps}: dev recall at 2% FPR {r:.3f}", flush=True)
                if r > best:
                    best, best_state = r, {k: v.clone() for k, v in net.state_dict().items()}
        print(f"epoch {epoch + 1}: loss {total / len(windows):.4f} "
              f"({time.perf_counter() - t0:.0f} s)", flush=True)
    net.load_state_dict(best_state)
    net.eval()
    print(f"kept the checkpoint with dev recall {best:.3f}")
    return net


def export(net: Net, gate: float) -> Reader:
    convs = tuple((c.weight.detach().permute(2, 1, 0).reshape(-1, c.out_channels).numpy().copy(),
                   c.bias.detach().numpy().copy()) for c in net.convs)
    return Reader(net.embed.weight.detach()[:PAD].numpy().copy(), convs,
                  net.out.weight.detach()[0].numpy().copy(), float(net.out.bias), gate)


def roundtrip(reader: Reader) -> Reader:
    """The reader as the scanner loads it (float16 weights)."""
    path = override_reader.WEIGHTS_PATH.with_suffix(".tmp.npz")
    override_reader.save(reader, path)
    try:
        return override_reader.load.__wrapped__(path)
    finally:
        path.unlink()


def dev_items() -> tuple[list[str], list[str]]:
    """(positives, negatives) of the development data: paraphrase sets 1 and 2 and the
    corpus dev split (jailbreak positives, all hard negatives)."""
    items = [x for s in (SETS, SETS_2) for v in s.values() for x in v]
    dev = load_corpus("dev")
    pos = [t for t, y in items if y] + [i.text for i in dev if i.positive
                                        and i.category == "jailbreak"]
    neg = [t for t, y in items if not y] + [i.text for i in dev if not i.positive]
    return pos, neg


def logit_of(p: float) -> float:
    p = min(max(p, 1e-9), 1 - 1e-9)
    return float(np.log(p / (1 - p)))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seed", type=int, default=15)
    parser.add_argument("--epochs", type=int, default=2)
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--stage1", type=Path, default=override_reader.STAGE1_PATH,
                        help="linear weights to gate with (default: the ones the shipped "
                             "reader.npz was trained behind)")
    parser.add_argument("--limit", type=int, default=0,
                        help="use only this many segments (smoke runs)")
    args = parser.parse_args()
    torch.set_num_threads(args.threads)
    t0 = time.perf_counter()
    corpus = [i.text for i in load_corpus("dev") if not (i.positive and i.category == "jailbreak")]
    texts, labels = dataset(args.seed, corpus=corpus, more=True, quoted_attacks=True)
    items = list(zip(texts, labels, strict=True))
    random.Random(args.seed).shuffle(items)
    items = items[: args.limit or len(items)]
    stage1 = override_model.load.__wrapped__(args.stage1)
    cuts = [cut(stage1, t) for t, _ in items]
    windows = [w for w, _ in cuts]
    z1 = np.array([z for _, z in cuts])
    y = np.array([lab for _, lab in items], dtype=np.float32)
    keep = np.array([len(w) > 0 for w in windows])
    print(f"{len(items)} segments ({int(y.sum())} positive) cut in "
          f"{time.perf_counter() - t0:.0f} s", flush=True)
    n_train = len(items) * 9 // 10
    dev_pos, dev_neg = dev_items()
    dev_pos_z1 = np.array([cut(stage1, t)[1] for t in dev_pos])
    held_pos_z1 = z1[n_train:][y[n_train:] == 1]
    gate = min(float(np.quantile(held_pos_z1, 0.005)), float(np.quantile(dev_pos_z1, 0.02)))
    held_neg_z1 = z1[n_train:][y[n_train:] == 0]
    dev_neg_z1 = np.array([cut(stage1, t)[1] for t in dev_neg])
    print(f"gate: stage-1 logit {gate:.2f}; passes {np.mean(held_pos_z1 >= gate):.4f} of held-back "
          f"positives, {np.mean(held_neg_z1 >= gate):.3f} of held-back negatives, "
          f"{np.mean(dev_pos_z1 >= gate):.3f} of dev positives, "
          f"{np.mean(dev_neg_z1 >= gate):.3f} of dev negatives", flush=True)
    tr = [i for i in range(n_train) if keep[i] and z1[i] >= gate - 1.0]
    print(f"training on {len(tr)} windows ({int(y[tr].sum())} positive)", flush=True)
    net = train([windows[i] for i in tr], y[tr], args.epochs, args.seed,
                lambda n: dev_recall(n, stage1, gate, (dev_pos, dev_neg)))
    reader = roundtrip(export(net, gate))
    net.eval()

    with torch.no_grad():  # the numpy forward pass must match torch's
        sample = [i for i in range(n_train, len(items)) if keep[i]][:64]
        ids, mask = batch([windows[i] for i in sample])
        want = net(ids, mask).numpy()
    got = np.array([reader.logit(windows[i]) for i in sample])
    print(f"numpy vs torch logits on 64 windows: max |diff| {np.abs(got - want).max():.2e} "
          "(float16 weights)")

    casc = Cascade(stage1, reader)
    neg = sorted((logit_of(casc.best(view(t))[0]) for t in dev_neg), reverse=True)
    allowed = int(DEV_FPR * len(neg))
    cut_z = max(neg[allowed] + 0.05, 0.0)
    target = logit_of(CLASSIFIER_MIN_P)
    reader = Reader(reader.embed, reader.convs, reader.out_w, reader.out_b - cut_z + target, gate)
    casc = Cascade(stage1, reader)
    fired = lambda t: casc.best(view(t))[0] >= CLASSIFIER_MIN_P  # noqa: E731
    print(f"calibrated on {len(dev_pos)} positives / {len(neg)} negatives (dev): "
          f"dev recall {np.mean([fired(t) for t in dev_pos]):.3f}, "
          f"dev FPR {np.mean([fired(t) for t in dev_neg]):.3f}")
    held = [i for i in range(n_train, len(items))][:3000]
    hp = np.array([fired(items[i][0]) for i in held])
    hy = y[held]
    print(f"held-back generated segments (cascade): recall {hp[hy == 1].mean():.3f}, "
          f"FPR {hp[hy == 0].mean():.4f}")
    override_reader.save(reader)
    print(f"wrote {override_reader.WEIGHTS_PATH} in {time.perf_counter() - t0:.0f} s")


if __name__ == "__main__":
    main()
