"""The project's tools: what generates its docs from the code and from committed results, kept out of the wheel.

The wheel (pyproject's ``[tool.hatch.build.targets.wheel]``) carries what a
user runs: the contract, the kit, the suite, the report, the wire protocol and
the engines. What only the project's own checkout needs lives here and runs
from the repository's root: ``python -m tools.public_api`` and
``python -m tools.api_reference`` regenerate docs/api.md and the listings of
docs/certify-reference.md from the code, ``python -m tools.perf_summary``
the README's performance summary from the committed benchmark runs, and
``python -m tools.ecosystem_page`` the ecosystem matrix (docs/ecosystem.md and
its HTML page) from the committed reports (the tests hold each page to its
generator).
"""
