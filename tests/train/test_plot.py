"""curves.png: one labelled panel per quantity, absent data leave their panel out."""

from __future__ import annotations

import matplotlib.pyplot as plt
import pytest

from tracerl.train.plot import curves_figure, plot_curves


def _records() -> list[dict]:
    sft = [{"stage": "sft", "step": s, "loss": 3.0 / s} for s in (10, 20, 30)]
    rl = [{"stage": "rl", "step": k, "reward_mean": 0.2 * k, "success": 0.1 * k,
           "tool_use": 0.5, "tool_errors": 0.1, "kl": 0.0, "approx_kl": 0.01 * k,
           "clip_fraction": 0.05} for k in (1, 2, 3, 4)]
    return [*sft, {"stage": "eval", "step": 0, "success": 0.0}, *rl]


EVALS = [{"step": 0, "success": 0.1, "mean_reward": 0.1},
         {"step": 2, "success": 0.3, "mean_reward": 0.3},
         {"step": 4, "success": 0.6, "mean_reward": 0.6, "final": True}]


@pytest.fixture(scope="module")
def figure():
    """Built once: laying out the panels is most of the cost (read-only in the tests)."""
    fig = curves_figure(_records(), EVALS, "exp")
    yield fig
    plt.close(fig)


def _axes(fig) -> dict:
    return {ax.get_title(): ax for ax in fig.axes if ax.get_title()}


def test_one_panel_per_quantity_with_data(figure):
    # no DPO, no entropy: not recorded; no KL to reference: kl is 0 (kl_coef 0)
    assert list(_axes(figure)) == ["Reward", "Success", "Tool use", "SFT loss",
                                   "KL to behaviour policy", "Clip fraction"]
    assert figure.get_suptitle() == "exp: training curves"


def test_axes_are_labelled_with_their_steps(figure):
    axes = _axes(figure)
    assert axes["SFT loss"].get_xlabel() == "SFT step"
    assert {axes[t].get_xlabel() for t in ("Reward", "Success", "Tool use",
                                           "KL to behaviour policy")} == {"RL step"}
    assert all(ax.get_ylabel() for ax in axes.values())


def test_success_has_train_per_step_and_held_out_at_every_evaluation(figure):
    train, held_out = _axes(figure)["Success"].get_lines()
    assert list(train.get_xdata()) == [1, 2, 3, 4]
    assert list(held_out.get_xdata()) == [0, 2, 4] and list(held_out.get_ydata()) == [0.1, 0.3, 0.6]
    assert held_out.get_marker() == "o" and held_out.get_linestyle() == "--"


def test_kl_to_a_missing_reference_is_left_out(figure):
    """Without a reference (kl_coef 0) only the update's KL to the behaviour policy is
    drawn, under a title that says so, not one a reader takes for KL to the reference."""
    assert "KL to reference" not in _axes(figure)
    (line,) = _axes(figure)["KL to behaviour policy"].get_lines()
    assert line.get_label().startswith("approx_kl (sampling policy")


def test_plot_curves_writes_the_png_and_names_its_panels(tmp_path):
    path = tmp_path / "run" / "curves.png"
    path.parent.mkdir()
    titles = plot_curves([r for r in _records() if r["stage"] == "sft"], EVALS[:1], path)
    assert titles == ["Reward", "Success", "SFT loss"]  # an SFT-only run: one evaluation
    assert path.read_bytes()[:4] == b"\x89PNG"


def test_no_records_still_write_a_figure(tmp_path):
    assert plot_curves([], [], tmp_path / "curves.png") == []
    assert (tmp_path / "curves.png").exists()


def test_the_train_line_is_drawn_over_an_equal_held_out_line_and_guard_events_are_markers():
    records = [{"stage": "rl", "step": k, "success": 0.0, "kl": 0.02, "approx_kl": 0.001,
                **({"guard/block": 1.0} if k in (2, 9) else {"guard/block": 0.0})}
               for k in range(1, 11)]
    evals = [{"step": 0, "success": 0.0}, {"step": 10, "success": 0.0, "final": True}]
    fig = curves_figure(records, evals)
    try:
        axes = _axes(fig)
        train, held_out = axes["Success"].get_lines()
        assert train.get_zorder() > held_out.get_zorder() and held_out.get_fillstyle() == "none"
        (guard,) = axes["Guard decisions"].get_lines()
        assert list(guard.get_xdata()) == [2, 9] and guard.get_linestyle() == "None"
        (kl,) = axes["KL to reference"].get_lines()
        assert kl.get_label().startswith("kl (policy || reference")
    finally:
        plt.close(fig)
