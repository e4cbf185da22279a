"""Reproductions of the ecosystem libraries' safety differences with each library's own API alone.

``python -m tools.reproduce.pgqueuer [DSN]`` and ``python -m tools.reproduce.procrastinate [DSN]``
(docs/ecosystem.md, "Safety failures, reproduced without the suite"); they need the ``ecosystem``
extra and a Postgres server, and are no part of the adapters a user installs.
"""
