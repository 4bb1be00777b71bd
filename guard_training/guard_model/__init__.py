"""Training data and trainer of the override detector (tracerl/guard/override_model.py)."""
