import typing

import torch

from tracerl.policy.precision import WEIGHT_DTYPES, autocast, set_autocast, weights_dtype
from tracerl.policy.settings import Precision


def test_every_configurable_precision_has_a_weight_dtype():
    assert set(typing.get_args(Precision)) == set(WEIGHT_DTYPES)
    assert weights_dtype("bfloat16") == torch.bfloat16
    assert weights_dtype("bf16-autocast") == torch.float32


def test_autocast_follows_what_the_model_records():
    layer = torch.nn.Linear(4, 4)
    x = torch.randn(2, 4)
    with autocast(layer):
        assert layer(x).dtype == torch.float32
    set_autocast(layer, torch.bfloat16)
    with autocast(layer):
        assert layer(x).dtype == torch.bfloat16
    assert layer(x).dtype == torch.float32 and layer.weight.dtype == torch.float32
