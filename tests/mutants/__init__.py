"""Broken engines: each module breaks one contract clause of a real engine (see catalog.py)."""
