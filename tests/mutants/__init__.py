"""Broken engines: each module breaks one SPEC clause of a real engine (see catalog.py)."""
