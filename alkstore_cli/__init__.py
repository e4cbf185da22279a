"""The ``alkstore`` command, on top of every part: ``certify``, ``report``, ``faults``, ``worker``, ``jobs``.

``main`` parses and dispatches; ``certify`` runs the contract suite on one engine; ``render`` turns reports
into a matrix. The command lived in ``alkstore_contract.report.cli`` until 0.2, where it made the report
import the faults harness and, through it, the suite; that path still imports, with a warning, until 0.3.
"""

from alkstore_cli.main import main

__all__ = ["main"]
