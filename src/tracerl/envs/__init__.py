"""Environments and built-in task families."""
