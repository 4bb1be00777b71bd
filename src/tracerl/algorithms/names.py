"""The method names the config accepts, without importing torch.

Each name is a key of one table: KL estimators of `kl_estimate`, loss aggregations of
`aggregate`, advantage estimators, policy losses and importance-sampling levels of
tracerl.train.methods (a test
checks that the names here and the tables agree).
"""

from typing import Literal

KLEstimator = Literal["k1", "k2", "k3"]
LossAgg = Literal["token-mean", "seq-mean-token-mean", "seq-mean-token-sum"]
Advantage = Literal["grpo", "dr_grpo", "rloo", "reinforce_pp", "reinforce_pp_baseline", "gae",
                    "turn_gae", "mt_grpo", "gigpo"]
PolicyLoss = Literal["ppo", "gspo", "cispo"]
ISLevel = Literal["token", "sequence"]
