"""The project's own pytest setup: pytester for the plugin and mutant tests."""

pytest_plugins = ["pytester"]
