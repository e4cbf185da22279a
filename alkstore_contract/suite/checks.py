"""How a row says what went wrong: what the engine did, and what the clause demands.

Part of the suite.

Rows raise ``ContractViolation`` (an ``AssertionError``, so pytest reports a
failure, never an error) through ``expect``. The message starts with the clause
id, so a failing run names the broken clause on its first line.
"""

from __future__ import annotations

from collections.abc import Awaitable
from datetime import datetime, timedelta

from alkstore_contract.suite.ledger import count_check
from alkstore_contract.surface import JobHandle, Queue
from alkstore_contract.types import Job, JobId, JobState


class ContractViolation(AssertionError):
    """The engine broke a clause of docs/contract.md; ``clause`` is its id (read from the message when not given)."""

    def __init__(self, message: str, *, clause: str | None = None) -> None:
        super().__init__(message)
        self.clause = clause if clause is not None else _clause_of(message)


def _clause_of(message: str) -> str | None:
    """The id of a message written ``[C4] ...``."""
    if message.startswith("[") and "]" in message:
        return message[1 : message.index("]")]
    return None


def expect(condition: bool, clause: str, *, did: str, demands: str) -> None:
    """Fail with ``[clause] the engine <did>; <clause> demands <demands>`` unless ``condition``.

    Every call counts as one check of ``clause`` in the running row's ledger, pass or fail: a clause is
    passed only when at least one of its checks ran.
    """
    count_check(clause)
    if not condition:
        raise ContractViolation(f"[{clause}] the engine {did}; {clause} demands {demands}", clause=clause)


def expect_equal(actual: object, expected: object, clause: str, what: str) -> None:
    """``what`` must equal ``expected``."""
    expect(actual == expected, clause, did=f"gave {what} = {actual!r}", demands=f"{what} = {expected!r}")


def expect_ids(handles: list[JobHandle], expected: list[JobId], clause: str, what: str) -> None:
    """The ids a claim handed out, in its order, must be ``expected``: ``what`` names the claim in the message."""
    expect_equal([handle.job.id for handle in handles], expected, clause, what)


async def expect_stored(queue: Queue, job_id: JobId, clause: str) -> Job:
    """``get_job`` of a job the row knows the queue holds: it must be there."""
    count_check(clause)
    job = await queue.get_job(job_id)
    if job is None:
        raise ContractViolation(
            f"[{clause}] the engine returned None from get_job({job_id!r}) for a job the queue holds; "
            f"{clause} demands the stored job",
            clause=clause,
        )
    return job


async def expect_left_as(
    queue: Queue, job_id: JobId, state: JobState, attempts: int, clause: str, refused: str
) -> None:
    """The stored job must still be in ``state`` with ``attempts`` after the calls the engine ``refused``: a
    refused call changes nothing."""
    job = await expect_stored(queue, job_id, clause)
    expect(
        job.state == state and job.attempts == attempts,
        clause,
        did=f"left job {job_id!r} as state={job.state}, attempts={job.attempts} after refused {refused}",
        demands=f"refused {refused} to change nothing",
    )


def expect_handed_out(
    handle: JobHandle | None, job_id: JobId, clause: str, *, when: str = "", demands: str
) -> JobHandle:
    """A claim's ``handle`` must hold ``job_id``; returns it, known not ``None``.

    The message reads "handed out <id> <when>", so one line says which claim it was (through which handle, at
    which instant); ``demands`` says why ``job_id`` is the job to hand out.
    """
    shown = f"{None if handle is None else handle.job.id!r}"
    expect(
        handle is not None and handle.job.id == job_id,
        clause,
        did=f"handed out {shown} {when}" if when else f"handed out {shown}",
        demands=demands,
    )
    assert handle is not None
    return handle


def expect_nothing_handed_out(
    handles: list[JobHandle], clause: str, *, shown: object = None, when: str, demands: str
) -> None:
    """A claim must have handed out no job: the message names what it did hand out (``shown``, else the ids)."""
    what = [handle.job.id for handle in handles] if shown is None else shown
    expect(not handles, clause, did=f"handed out {what} {when}", demands=demands)


async def expect_claimed(queue: Queue, worker: str, job_id: JobId, clause: str, *, because: str) -> JobHandle:
    """``claim_one(worker)`` must hand out ``job_id``; ``because`` says why that job is the one to hand out."""
    handle = await queue.claim_one(worker)
    return expect_handed_out(handle, job_id, clause, when=f"to {worker!r}", demands=f"job {job_id!r}: {because}")


async def expect_ready(queue: Queue, job_id: JobId, attempts: int, clause: str, *, after: str, demands: str) -> None:
    """``job_id`` must be stored ready with ``attempts`` attempts made: left as it was, or put back (R1)."""
    job = await queue.get_job(job_id)
    expect(
        job is not None and job.state == JobState.READY and job.attempts == attempts,
        clause,
        did=f"left job {job_id} as {job!r} after {after}",
        demands=demands,
    )


def expect_instant(
    actual: datetime | None,
    expected: datetime,
    clause: str,
    what: str,
    *,
    tolerance_s: float,
) -> None:
    """``what`` must be ``expected``, exactly under a manual clock, within ``tolerance_s`` on real time."""
    if tolerance_s == 0:
        expect_equal(actual, expected, clause, what)
        return
    slack = timedelta(seconds=tolerance_s)
    expect(
        actual is not None and expected - slack <= actual <= expected + slack,
        clause,
        did=f"gave {what} = {actual!r}",
        demands=f"{what} = {expected!r} (± {tolerance_s} s on the real clock)",
    )


async def expect_raises(
    operation: Awaitable[object], error: type[BaseException], clause: str, what: str
) -> BaseException:
    """Awaiting ``operation`` must raise ``error``; returns it so the message can be checked."""
    count_check(clause)
    try:
        result = await operation
    except error as exc:
        return exc
    except Exception as exc:
        raise ContractViolation(
            f"[{clause}] the engine raised {type(exc).__name__}({exc}) for {what}; {clause} demands {error.__name__}",
            clause=clause,
        ) from exc
    raise ContractViolation(
        f"[{clause}] the engine returned {result!r} for {what}; {clause} demands {error.__name__}", clause=clause
    )


def expect_message_names(exc: BaseException, clause: str, *fragments: str) -> None:
    """A bad-input error must name the argument and the value: each fragment must appear in its message."""
    text = str(exc)
    missing = [f for f in fragments if f not in text]
    expect(
        not missing,
        clause,
        did=f"raised {type(exc).__name__}({text!r}), which does not mention {missing}",
        demands="a message naming the argument, the value and the rule",
    )
