"""Bayesian search: TPE over a discrete space of instruction candidates and few-shot
example choices, through optuna.

As in MIPROv2 (Opsahl-Ong et al., "Optimizing Instructions and Demonstrations for
Multi-Stage Language Model Programs", 2024), the space is categorical: for each
optimized slot, which of its candidate texts; for each few-shot position, which pool
example or none. A Tree-structured Parzen Estimator (Bergstra et al., NeurIPS 2011;
optuna's TPESampler, seeded) proposes each trial from the scores so far, and the trial
is scored on every search task.

Departures: the instruction candidates are teacher paraphrases of the starting text
(MIPROv2 grounds its proposals in a data summary and the program's code, which a task
family does not have); every trial is scored on all search tasks rather than on
minibatches with periodic full evaluations (the search sets are a few dozen tasks).
A trial whose rollouts could not be judged is told to optuna as failed.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from tracerl.optimize.optimizers.base import variant_pool

if TYPE_CHECKING:
    from tracerl.optimize.search import Search

NONE = "-"


@dataclass(frozen=True)
class BayesianSearch:
    variants: int = 3
    """Teacher paraphrases of each optimized slot's starting text (the instruction
    candidates; the starting text is always one)."""
    startup_trials: int = 4
    """Random trials before TPE models the scores."""
    name: str = "bayesian"

    def run(self, search: Search) -> None:
        try:
            import optuna  # optional: pip install 'tracerl[optimize]'
        except ImportError as e:
            raise ImportError("optimizer=bayesian needs optuna: pip install "
                              "'tracerl[optimize]'") from e
        pools = variant_pool(search, self.variants)
        pool_ids = [NONE, *sorted(search.data.examples)]
        optuna.logging.set_verbosity(optuna.logging.WARNING)
        sampler = optuna.samplers.TPESampler(seed=search.rng.randrange(2**31),
                                             n_startup_trials=self.startup_trials)
        study = optuna.create_study(direction="maximize", sampler=sampler)
        positions = search.settings.max_examples if len(pool_ids) > 1 else 0
        while True:
            trial = study.ask()
            prompt = search.start
            for slot, texts in pools.items():
                pick = trial.suggest_categorical(f"{slot}", list(range(len(texts))))
                prompt = prompt.with_slot(slot, texts[int(pick)])
            chosen = [str(trial.suggest_categorical(f"example_{j}", pool_ids))
                      for j in range(positions)]
            prompt = prompt.with_examples(list(dict.fromkeys(c for c in chosen if c != NONE)))
            entry = search.score(prompt, operation="trial", parents=(0,))
            if entry.score is None:
                study.tell(trial, state=optuna.trial.TrialState.FAIL)
            else:
                study.tell(trial, entry.score)
