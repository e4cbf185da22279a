"""The report part: the JSON certification report and the conformance matrix.

``model`` is the report's data, which the suite fills in (the report reads
nothing else of the suite: ``tests/test_boundaries.py``); ``build`` writes a
run's report (``report.schema.json``), ``read`` reads one back or says in one
line what is wrong with it, ``render`` turns reports into the HTML and Markdown
matrix. The ``alkstore`` command that runs them is ``alkstore_cli``, on top of every part.
"""

from alkstore_contract._moved import moved_names

__getattr__ = moved_names(
    __name__,
    "alkstore_contract.report.build",
    ("SCHEMA_PATH", "RowResult", "EngineInfo", "build_report", "write_report", "load_report"),
)
