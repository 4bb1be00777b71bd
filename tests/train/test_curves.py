"""The curves as data: which panels a run's records make, shared by curves.png and the view."""

from __future__ import annotations

from tracerl.train.curves import panels

RL = [{"stage": "rl", "step": k, "reward_mean": 0.5, "unjudged": 0.0, "env_errors": 0.0,
       "guard/flag": float(k), "guard/block": 0.0, "kl": 0.0} for k in (1, 2)]


def _titles(records, **kw) -> list[str]:
    return [p.title for p in panels(records, [], **kw)]


def test_guard_decisions_get_one_series_per_recorded_action():
    (guard,) = [p for p in panels(RL, []) if p.title == "Guard decisions"]
    assert [s.label for s in guard.series] == ["guard/flag"]  # block: 0 at every step
    assert guard.series[0].values == [1.0, 2.0]


def test_all_zero_unjudged_and_kl_are_left_out_unless_zeros_are_kept():
    assert "Unjudged" not in _titles(RL) and "KL to reference" not in _titles(RL)
    kept = panels(RL, [], keep_zeros=True)
    unjudged = next(p for p in kept if p.title == "Unjudged")
    assert [s.label.split()[0] for s in unjudged.series] == ["unjudged", "env_errors"]
    assert "KL to reference" in [p.title for p in kept]


def test_an_unjudged_sample_shows_its_panel():
    records = [*RL, {"stage": "rl", "step": 3, "unjudged": 2.0}]
    assert "Unjudged" in _titles(records)
