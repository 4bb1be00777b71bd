"""Evals: evaluate(), metrics, trajectory match and judges."""
