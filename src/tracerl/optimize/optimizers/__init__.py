"""The six prompt optimizers, by name. Each is a frozen dataclass of its own knobs
(its config section, `<name>.*`) with `run(search)`; each module's docstring names the
paper and says where the code departs from it and why.
"""

from __future__ import annotations

from tracerl.optimize.optimizers.bayesian import BayesianSearch
from tracerl.optimize.optimizers.gepa import GEPA
from tracerl.optimize.optimizers.metaprompt import MetaPrompt
from tracerl.optimize.optimizers.promptwizard import PromptWizard
from tracerl.optimize.optimizers.protegi import ProTeGi
from tracerl.optimize.optimizers.random_search import RandomSearch

# The one table of optimizer names.
OPTIMIZERS: dict[str, type] = {
    "random_search": RandomSearch, "bayesian": BayesianSearch, "protegi": ProTeGi,
    "metaprompt": MetaPrompt, "promptwizard": PromptWizard, "gepa": GEPA,
}
