"""Pytest options of the Postgres engine (filled in by the Postgres engine work)."""
