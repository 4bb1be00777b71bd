"""The chosen stage 2 (E/mlp, band p in [0.05, thr) plus detector-only fires below p 0.9,
t2 calibrated on the held-out fifth's real text) scored once on the held-out sources."""
import sys
sys.argv = ["x"]
exec(open(__import__("pathlib").Path(__file__).with_name("cascade.py")).read().split('if __name__ == "__main__":')[0])
s2 = run("E", "mlp")
base = lambda gs: np.zeros(sum(len(R[g]["y"]) for g in gs))
for thr, target in ((0.5, 0.003), (0.335, 0.01)):
    for tag, fn, veto in (("BASE", base, None), ("STAGE2", s2, 0.9)):
        t2 = report(f"{tag} thr={thr}", fn, thr, 0.05, 10**9, target, veto, show_held=True)
        if tag == "BASE": t2 = 2.0
        for g in HELD:
            f, band = decide([g], fn([g]), thr, 0.05, 10**9, t2, veto)
            y = R[g]["y"]
            k = f[y].sum() if y.any() else f[~y].sum()
            print(f"   {g}: {rate(int(k), len(y))} band {band.mean():.3f}")
        fa = np.concatenate([decide([g], fn([g]), thr, 0.05, 10**9, t2, veto)[0][~R[g]["y"]] for g in HELD])
        ra = np.concatenate([decide([g], fn([g]), thr, 0.05, 10**9, t2, veto)[0][R[g]["y"]] for g in HELD])
        print(f"   ALL held-out sources: recall {rate(int(ra.sum()), len(ra))}; false alarms {rate(int(fa.sum()), len(fa))}")
