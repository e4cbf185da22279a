"""The project's own pytest setup.

Deliberately free of ``pytest_plugins`` and of anything that changes collection:
when alkstore is installed editable, a user's ``pytest --alkstore-engine=…`` run
collects the suite's anchor file from this checkout, and pytest then loads this
file as a non-root conftest. ``pytester`` is enabled in pyproject's ``addopts``.
"""
