"""RQ's side of the RQ runner: the job function, importable by ``rq worker --path .``."""

from __future__ import annotations

from rq import get_current_job

from alkstore_faults.handler import perform


def run_job(job: str, duration_s: float, fail: bool) -> str:
    current = get_current_job()
    attempt = None if current is None else current.meta.get("attempt")
    return perform(job, duration_s, fail, attempt)
