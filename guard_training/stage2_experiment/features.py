"""Stage-2 experiment features: for every text, the jailbreak scanner's best score,
whether rules fired, the detector's best-span p, text length, and wordllama embeddings
of the whole text and of the best span."""
import sys, time, pathlib, pickle
sys.path.insert(0, str(__import__("pathlib").Path(__file__).resolve().parents[1]))
import numpy as np
import wordllama
from guard_corpus import paraphrase_set
from guard_model.devdata import dev_sets, training_sets, view
from guard_model.written import load_written
from guard_model.train_mil import hold_back
from real import BY_NAME, load_all
from tracerl.guard import scan, override_model

def groups():
    out = {}
    written = load_written()
    tr, held = hold_back(written, 15)
    out["written-train"] = [(i.text, i.attack) for i in tr]
    out["written-held"] = [(i.text, i.attack) for i in held]
    d = {**dev_sets(later=True), **training_sets()}
    out["sets-train"] = [x for v in d.values() for x in v]
    out["blind-25-28"] = [x for n in (25, 26, 27, 28) for v in paraphrase_set(n).values() for x in v]
    for name, items in load_all("train").items():
        out[f"real-train:{name}"] = [(i.text, i.attack) for i in items]
    for name, items in load_all("heldout").items():
        tag = "real-heldsrc" if BY_NAME[name].held_out else "real-heldfifth"
        out[f"{tag}:{name}"] = [(i.text, i.attack) for i in items]
    return out

def main():
    wl = wordllama.WordLlama.load(cache_dir=pathlib.Path(wordllama.__file__).parent, disable_download=True)
    model = override_model.load()
    res = {}
    for g, items in groups().items():
        t0 = time.time()
        texts = [t for t, _ in items]
        y = np.array([a for _, a in items], bool)
        best, rules, p, n, spans = [], [], [], [], []
        for t in texts:
            f = scan(t, ["jailbreak"])
            best.append(max((x.score for x in f), default=0.0))
            rules.append(any(x.score >= 0.5 and x.detail != "override detector" for x in f))
            v = view(t)
            pp, s, e = model.best(v)
            p.append(pp); n.append(len(t)); spans.append(t[s:e] if e > s else t)
        E = wl.embed(texts, batch_size=64).astype(np.float32)
        S = wl.embed(spans, batch_size=64).astype(np.float32)
        res[g] = dict(y=y, best=np.array(best), rules=np.array(rules), p=np.array(p),
                      n=np.array(n), E=E, S=S, texts=texts)
        print(g, len(texts), f"{time.time()-t0:.0f}s", flush=True)
    with open("/tmp/stage2_feats.pkl", "wb") as f:
        pickle.dump(res, f)

main()
