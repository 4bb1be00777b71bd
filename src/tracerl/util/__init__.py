"""Helpers every layer may use: lazy package exports, JSONL reading, tables, HTTP.

This is the bottom layer beside types.py: it imports nothing else from tracerl.
"""
