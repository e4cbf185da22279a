"""A reference model of the alkstore contract: docs/contract.md as a plain, readable state machine.

Part of the suite.

Read it beside docs/contract.md (the clauses and the decisions that refine them): one
method per operation, the clause ids in the comments where each rule acts.
The ``model_based`` row drives an engine and this model with the same random
sequence of operations and compares every answer and every snapshot.

What the model is not: an engine. It does no I/O and reads no clock — every
operation takes ``now``, the one clock read the engine makes for the same
operation. It favours clarity over speed (a claim sorts the whole queue). It
does not validate arguments (other rows pin S1–S3, C6, E8–E10); it assumes
the valid inputs the row generates, except for the one error the row does
provoke on purpose: an op on a spent handle (H4).

Ids: the model numbers jobs 1, 2, 3… in enqueue order (C2's tie-break) and
claims 1, 2, 3… in claim order. A model claim id stands for the engine's claim
token: a handle op is fenced on it (H1), and a reclaim gives the job a new one
(H5). The row maps engine ids to model ids; ``UNKNOWN_JOB`` stands for an id
the engine never issued (or of the wrong kind), which every op must treat as
"no such job".

Backoff jitter (R2) is the engine's own random draw, which the model cannot
know: a retry without ``delay`` takes the ready time the engine chose,
checks that it lies in ``[now + cap/2, now + cap]`` and adopts it.

The expected values are written here from the contract's text, not imported
from ``alkstore_contract.backoff``/``resolution``: the engines run that code,
so a bug in it would be a bug the model shares and cannot see.
"""

from __future__ import annotations

import copy
from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from fractions import Fraction

from alkstore_contract.errors import HandleSpent
from alkstore_contract.suite.expected import (
    BACKOFF_CAP_S,
    LAST_ERROR_EXPIRED,
    LAST_ERROR_FAILED,
    LAST_ERROR_MAX_ATTEMPTS,
)
from alkstore_contract.types import Duration, EnqueueCall, Job, JobState, QueueOpts

UNKNOWN_JOB = 0
"""The model id of a job that does not exist (model ids start at 1)."""
NO_OPTIONS = EnqueueCall()
"""An enqueue that sets no option: every one at the surface's default."""


def backoff_cap_s(attempts: int, base_s: float) -> Fraction:
    """R2's cap as the contract states it, ``min(b·2^(a−1), 3600)``, in exact arithmetic.

    Exact (a ``Fraction`` and an int power of two) rather than float, so no attempt
    count overflows and the model needs no clamp of its own: the contract's clamp is
    the engine's business, the model only needs the number.
    """
    uncapped: Fraction = Fraction(base_s) * 2 ** (attempts - 1)
    return min(uncapped, Fraction(BACKOFF_CAP_S))


def delta(duration: Duration) -> timedelta:
    """A duration (seconds or ``timedelta``) as the ``timedelta`` added to ``now``, rounded as the engines round."""
    seconds = duration.total_seconds() if isinstance(duration, timedelta) else float(duration)
    return timedelta(seconds=seconds)


@dataclass
class ModelJob:
    """One stored job: the fields of ``Job`` plus the claim holding it and why it last changed."""

    id: int
    queue: str
    payload: object
    priority: int
    max_attempts: int
    run_at: datetime
    expires_at: datetime | None
    enqueued_at: datetime
    visibility_timeout_s: float
    backoff_base_s: float
    dead_letter_retention_s: float | None
    state: JobState = JobState.READY
    attempts: int = 0
    lease_expires_at: datetime | None = None
    claimed_by: str | None = None
    last_error: str | None = None
    died_at: datetime | None = None
    unique_key: str | None = None
    """The key the job was enqueued with by ``enqueue_unique`` (K1); ``None`` for a plain enqueue, which holds none."""
    claim: int | None = None
    """The model claim id (the engine's token) of the claim holding the job; ``None`` unless processing."""
    changed_by: str = "E1"
    """The clause of the operation that last changed the job: what a snapshot mismatch cites."""

    def snapshot(self) -> Job:
        """The ``Job`` a ``get_job`` must show (B3); the payload is a fresh copy, as a decoded read is."""
        return Job(
            id=self.id,
            queue=self.queue,
            payload=copy.deepcopy(self.payload),
            state=self.state,
            priority=self.priority,
            attempts=self.attempts,
            max_attempts=self.max_attempts,
            run_at=self.run_at,
            expires_at=self.expires_at,
            enqueued_at=self.enqueued_at,
            lease_expires_at=self.lease_expires_at,
            claimed_by=self.claimed_by,
            visibility_timeout_s=self.visibility_timeout_s,
            backoff_base_s=self.backoff_base_s,
            dead_letter_retention_s=self.dead_letter_retention_s,
            last_error=self.last_error,
            died_at=self.died_at,
        )

    def release(self) -> None:
        """Drop the claim: ready and dead jobs hold no lease, claimant or token (DEC-unclaimed-fields)."""
        self.lease_expires_at = None
        self.claimed_by = None
        self.claim = None

    def kill(self, last_error: str, now: datetime, clause: str) -> None:
        """Move to dead at ``now`` with ``last_error`` (D1, R4, X2)."""
        self.state = JobState.DEAD
        self.last_error = last_error
        self.died_at = now
        self.release()
        self.changed_by = clause


@dataclass
class ModelClaim:
    """One claim, i.e. one ``JobHandle``: the job as claimed and whether a one-shot op spent it."""

    id: int
    job_id: int
    worker_id: str
    job: Job
    """``handle.job``: the snapshot right after the claim (C3)."""
    spent_by: str | None = None
    """The one-shot op (ack/retry/fail) that returned on this handle, if any (H4)."""


@dataclass(frozen=True, order=True)
class Deadline:
    """An instant where some job of ``queue`` changes by itself: its ready time, lease end, expiry or retention end."""

    at: datetime
    kind: str
    queue: str


@dataclass(frozen=True)
class Retried:
    """What ``retry`` did, and whether the engine's jittered ready time broke R2."""

    accepted: bool
    violation: str | None = None
    cap_s: Fraction | None = None
    """R2's cap when the engine's ready time was range-checked (a retry without delay that did not dead-letter)."""


@dataclass
class Model:
    """Every job of one store, by model id, and every claim ever made."""

    jobs: dict[int, ModelJob] = field(default_factory=dict)
    claims: dict[int, ModelClaim] = field(default_factory=dict)
    removed: dict[int, str] = field(default_factory=dict)
    """Jobs no longer stored, with the clause that removed them (H2, B1, B2, X2)."""
    slack: timedelta = field(default=timedelta(0), kw_only=True)
    """How far from the exact instant the engine may keep one: its declared time resolution less 1 µs.

    The contract compares instants to within the declared resolution (``DEC-time-resolution``).
    Only R2's bracket needs it here: every other instant of a program lies on the manual clock's whole
    milliseconds, but a jittered delay does not, and an engine that keeps milliseconds stores the
    nearest it can (with a base of 1 ms, R2's first bracket [0.5 ms, 1 ms] holds only one of them)."""
    _next_job: int = 1
    _next_claim: int = 1

    # --- E: enqueue ---------------------------------------------------------------------------------

    def enqueue(
        self, queue: str, opts: QueueOpts, payload: object, now: datetime, call: EnqueueCall = NO_OPTIONS
    ) -> int:
        """Store one job; every instant comes from the one ``now`` (E5, T1)."""
        delay, run_at, expires, max_attempts, priority = call
        if delay is not None:  # E2: delay wins over run_at
            ready_at = now + delta(delay)
        elif run_at is not None:  # E3: stored verbatim, past or future
            ready_at = run_at
        else:  # E4: ready now
            ready_at = now
        job = ModelJob(
            id=self._next_job,  # E10 (and C2's enqueue order)
            queue=queue,
            payload=copy.deepcopy(payload),  # E8: round-trips equal
            priority=priority,  # E7
            max_attempts=max_attempts if max_attempts is not None else opts.max_attempts,  # E6 over E1
            run_at=ready_at,
            expires_at=None if expires is None else now + delta(expires),  # E5
            enqueued_at=now,
            visibility_timeout_s=opts.visibility_timeout_s,  # E1: the handle's opts, stamped
            backoff_base_s=opts.backoff_base_s,
            dead_letter_retention_s=opts.dead_letter_retention_s,
            changed_by="E2" if delay is not None else "E3" if run_at is not None else "E4",
        )
        self.jobs[job.id] = job
        self._next_job += 1
        return job.id

    def holder(self, queue: str, unique_key: str) -> ModelJob | None:
        """K1, K2: the job of ``queue`` holding ``unique_key``, if any: stored, with that key, and not dead.

        Acked and cancelled jobs are no longer stored (H2, B1, B2), so only dead ones need
        excluding (R4, D1, X2). Nothing else frees a key: a claim, a retry, a release or a
        lapsed lease leaves the job unfinished, and an expired job holds its key until a
        sweep moves it to dead (DEC-key-until-swept).
        """
        for job in self.jobs.values():
            if job.queue == queue and job.unique_key == unique_key and job.state is not JobState.DEAD:
                return job
        return None

    def enqueue_unique(
        self, queue: str, opts: QueueOpts, payload: object, unique_key: str, now: datetime, call: EnqueueCall
    ) -> tuple[int, bool]:
        """K1: the holder's id and ``created=False``, storing and changing nothing; else (K2) a new job, ``True``."""
        held = self.holder(queue, unique_key)
        if held is not None:
            return held.id, False
        job_id = self.enqueue(queue, opts, payload, now, call)
        self.jobs[job_id].unique_key = unique_key
        return job_id, True

    def enqueue_many(
        self, queue: str, opts: QueueOpts, payloads: Sequence[object], now: datetime, call: EnqueueCall
    ) -> list[int]:
        """E11: every job resolved as ``enqueue`` from one ``now``; ids in input order."""
        return [self.enqueue(queue, opts, payload, now, call) for payload in payloads]

    # --- C: claims ----------------------------------------------------------------------------------

    def claimable(self, job: ModelJob, now: datetime) -> bool:
        """C1 (with X1, C7, D2): what a claim at ``now`` may hand out."""
        return self.why_not_claimable(job, now) is None

    def why_not_claimable(self, job: ModelJob, now: datetime) -> str | None:
        """``None`` when ``job`` is claimable at ``now``, else the clause that forbids it and why."""
        if job.state is JobState.DEAD:
            return "D2: it is dead"
        if job.expires_at is not None and job.expires_at <= now:
            return f"X1: it expired at {job.expires_at.isoformat()}"
        if job.state is JobState.READY:
            if job.run_at <= now:
                return None
            return f"C1: its ready time {job.run_at.isoformat()} is still to come"
        assert job.lease_expires_at is not None, "a processing job always has a lease"
        if job.lease_expires_at > now:
            return f"C1: its lease runs until {job.lease_expires_at.isoformat()} (never two live leases, C4)"
        if job.attempts >= job.max_attempts:
            return f"C7: its lease lapsed with attempts {job.attempts} >= max_attempts {job.max_attempts}"
        return None  # C1: a reclaim of a lapsed lease

    def claim_order(self, queue: str, now: datetime) -> list[ModelJob]:
        """Every claimable job of ``queue`` in C2 order: priority DESC, ready time ASC, enqueue order ASC."""
        found = [job for job in self.jobs.values() if job.queue == queue and self.claimable(job, now)]
        return sorted(found, key=lambda job: (-job.priority, job.run_at, job.id))

    def claim_batch(self, queue: str, worker_id: str, n: int, now: datetime) -> list[ModelClaim]:
        """C5: ``n <= 0`` claims nothing; else up to ``n`` jobs in C2 order, each under its own claim (C3)."""
        if n <= 0:
            return []
        claims: list[ModelClaim] = []
        for job in self.claim_order(queue, now)[:n]:
            job.state = JobState.PROCESSING  # C3
            job.claimed_by = worker_id
            job.lease_expires_at = now + delta(job.visibility_timeout_s)  # C3: the stamp, from now
            job.attempts += 1  # C3: a reclaim consumes an attempt too
            job.claim = self._next_claim  # a fresh token: an older claim of this job is fenced off (H5)
            job.changed_by = "C3"
            claim = ModelClaim(id=self._next_claim, job_id=job.id, worker_id=worker_id, job=job.snapshot())
            self.claims[claim.id] = claim
            self._next_claim += 1
            claims.append(claim)
        return claims

    def claim_one(self, queue: str, worker_id: str, now: datetime) -> ModelClaim | None:
        """``claim_batch(worker_id, 1)``, as one handle or ``None``."""
        claims = self.claim_batch(queue, worker_id, 1, now)
        return claims[0] if claims else None

    # --- H: handle operations -----------------------------------------------------------------------

    def why_not_held(self, claim_id: int, now: datetime) -> str | None:
        """The H1 predicate: ``None`` when the claim holds its job at ``now``, else the clause and why.

        Whether the handle is spent (H4) is a separate question, asked before this one.
        """
        claim = self.claims[claim_id]
        job = self.jobs.get(claim.job_id)
        if job is None:
            return f"D3: the job is gone ({self.removed.get(claim.job_id, 'removed')})"
        if job.state is JobState.DEAD:
            return "D3: the job is dead"
        if job.claim != claim_id:
            if job.state is JobState.PROCESSING:
                return f"H5: the job was reclaimed (claim {job.claim} by {job.claimed_by})"
            return "H5: the job was reclaimed since, and released again"
        assert job.lease_expires_at is not None, "a processing job always has a lease"
        if not now < job.lease_expires_at:
            return f"H1: the lease ended at {job.lease_expires_at.isoformat()}"
        return None

    def _held(self, claim_id: int, now: datetime) -> ModelJob | None:
        """The job, if this very claim holds it at ``now`` (H1); else ``None`` and the op returns False."""
        if self.why_not_held(claim_id, now) is not None:
            return None
        return self.jobs[self.claims[claim_id].job_id]

    def _spend(self, claim_id: int, op: str) -> None:
        """H4: ack/retry/fail are one-shot; a spent handle raises ``HandleSpent`` and touches nothing."""
        self._refuse_if_spent(claim_id, op)
        self.claims[claim_id].spent_by = op

    def _refuse_if_spent(self, claim_id: int, op: str) -> None:
        spent_by = self.claims[claim_id].spent_by
        if spent_by is not None:
            raise HandleSpent(f"{op}() after {spent_by}() (H4)")

    def ack(self, claim_id: int, now: datetime) -> bool:
        """H2: a valid ack deletes the job."""
        self._spend(claim_id, "ack")
        job = self._held(claim_id, now)  # H1, H5, D3
        if job is None:
            return False
        del self.jobs[job.id]
        self.removed[job.id] = "H2: acked"
        return True

    def retry(
        self,
        claim_id: int,
        now: datetime,
        *,
        error: str | None = None,
        delay: Duration | None = None,
        observed_run_at: datetime | None = None,
    ) -> Retried:
        """R1–R4. ``observed_run_at`` is the engine's ready time after the retry, needed for R2's jitter."""
        self._spend(claim_id, "retry")
        job = self._held(claim_id, now)  # H1, H5, D3
        if job is None:
            return Retried(accepted=False)
        if job.attempts >= job.max_attempts:  # R4: dead-letters instead
            job.kill(error if error is not None else LAST_ERROR_MAX_ATTEMPTS, now, "R4")
            return Retried(accepted=True)
        violation = None
        cap_s = None
        if delay is not None:  # R3: verbatim, no cap, no jitter
            ready_at = now + delta(delay)
            job.changed_by = "R3"
        else:  # R2: equal jitter, d uniform on [cap/2, cap], cap = min(b·2^(a−1), 3600 s)
            cap_s = backoff_cap_s(job.attempts, job.backoff_base_s)
            low, high = now + delta(float(cap_s / 2)), now + delta(float(cap_s))
            if observed_run_at is None or not low - self.slack <= observed_run_at <= high + self.slack:
                widened = f", widened by the engine's resolution ({self.slack})" if self.slack else ""
                violation = (
                    f"[R2] after retry() without delay at attempts={job.attempts}, backoff_base_s="
                    f"{job.backoff_base_s}, the engine's ready time is {observed_run_at!r}; R2 demands one in "
                    f"[now + {float(cap_s / 2)} s, now + {float(cap_s)} s] = [{low.isoformat()}, {high.isoformat()}]"
                    f"{widened}"
                )
            ready_at = observed_run_at if observed_run_at is not None else low
            job.changed_by = "R2"
        job.state = JobState.READY  # R1
        job.run_at = ready_at
        if error is not None:  # R1: the given error; without one the old last_error stays (DEC-retry-keeps-error)
            job.last_error = error
        job.release()
        return Retried(accepted=True, violation=violation, cap_s=cap_s)

    def fail(self, claim_id: int, now: datetime, *, error: str | None = None) -> bool:
        """D1: dead at once, ``last_error`` = error or ``"failed"``, ``died_at`` = now."""
        self._spend(claim_id, "fail")
        job = self._held(claim_id, now)  # H1, H5, D3
        if job is None:
            return False
        job.kill(error if error is not None else LAST_ERROR_FAILED, now, "D1")
        return True

    def release(self, claim_id: int, now: datetime, *, delay: Duration | None = None) -> bool:
        """L1–L3: ready at now + delay, the claim's attempt given back, the last error kept. One-shot (L4)."""
        self._spend(claim_id, "release")
        job = self._held(claim_id, now)  # L1: fenced like ack (H1, H5, D3)
        if job is None:
            return False
        job.state = JobState.READY
        job.run_at = now + delta(delay if delay is not None else 0)
        job.attempts -= 1
        job.release()
        job.changed_by = "L2"
        return True

    def heartbeat(self, claim_id: int, now: datetime, *, extend: Duration | None = None) -> bool:
        """H3: lease = now + (extend or the stamped visibility timeout), never old deadline + extend. Repeatable."""
        self._refuse_if_spent(claim_id, "heartbeat")  # H4: not one-shot itself, but refused once spent
        job = self._held(claim_id, now)  # H1: at or after the deadline -> False
        if job is None:
            return False
        job.lease_expires_at = now + delta(extend if extend is not None else job.visibility_timeout_s)
        job.changed_by = "H3"
        return True

    # --- B: batch ack, cancel, get_job --------------------------------------------------------------

    def _of_queue(self, queue: str, job_id: int) -> ModelJob | None:
        """The job ``job_id`` if it is stored in ``queue``: a job of another queue is not seen (S4)."""
        job = self.jobs.get(job_id)
        return job if job is not None and job.queue == queue else None

    def ack_batch(self, queue: str, ids: Sequence[int], now: datetime) -> int:
        """B1: delete each listed job of ``queue`` that is processing with an unexpired lease; no worker check."""
        acked = 0
        for job_id in set(ids):  # duplicates count once
            job = self._of_queue(queue, job_id)
            if job is None or job.state is not JobState.PROCESSING:
                continue
            assert job.lease_expires_at is not None, "a processing job always has a lease"
            if now < job.lease_expires_at:
                del self.jobs[job.id]
                self.removed[job.id] = "B1: batch-acked"
                acked += 1
        return acked

    def cancel(self, queue: str, job_id: int) -> bool:
        """B2: delete the job of ``queue`` in any state; True iff one was deleted."""
        job = self._of_queue(queue, job_id)
        if job is None:
            return False
        del self.jobs[job.id]
        self.removed[job.id] = "B2: cancelled"
        return True

    def get_job(self, queue: str, job_id: int) -> Job | None:
        """B3: a snapshot with the resolved stamps, or ``None``."""
        job = self._of_queue(queue, job_id)
        return None if job is None else job.snapshot()

    # --- X: sweep -----------------------------------------------------------------------------------

    def sweep_expired(self, queue: str, now: datetime) -> int:
        """X2 for ``queue`` in the order of DEC-sweep-order; returns how many moved to dead."""
        mine = [job for job in self.jobs.values() if job.queue == queue]
        for job in mine:  # (a) retention over: died_at + retention <= now; None keeps forever
            if (
                job.state is JobState.DEAD
                and job.dead_letter_retention_s is not None
                and job.died_at is not None
                and job.died_at + delta(job.dead_letter_retention_s) <= now
            ):
                del self.jobs[job.id]
                self.removed[job.id] = "X2: dead-letter retention ran out"
        moved = 0
        for job in mine:  # (b) expired (expires_at <= now) in a live state; jobs (a) deleted are dead, so skipped
            if job.state is not JobState.DEAD and job.expires_at is not None and job.expires_at <= now:
                job.kill(LAST_ERROR_EXPIRED, now, "X2")
                moved += 1
        for job in mine:  # (c) lapsed lease with attempts exhausted (C7); (b)'s jobs are dead now
            if (
                job.state is JobState.PROCESSING
                and job.lease_expires_at is not None
                and job.lease_expires_at <= now
                and job.attempts >= job.max_attempts
            ):
                job.kill(LAST_ERROR_MAX_ATTEMPTS, now, "X2")
                moved += 1
        return moved

    # --- for the row: the instants where something changes ------------------------------------------

    def deadlines(self, now: datetime) -> list[Deadline]:
        """Every future instant at which a job's claimability, lease, expiry or retention flips, soonest first."""
        found: set[Deadline] = set()
        for job in self.jobs.values():
            if job.state is JobState.READY:
                found.add(Deadline(job.run_at, "ready", job.queue))
            if job.state is JobState.PROCESSING and job.lease_expires_at is not None:
                found.add(Deadline(job.lease_expires_at, "lease", job.queue))
            if job.state is not JobState.DEAD and job.expires_at is not None:
                found.add(Deadline(job.expires_at, "expiry", job.queue))
            if job.state is JobState.DEAD and job.died_at is not None and job.dead_letter_retention_s is not None:
                found.add(Deadline(job.died_at + delta(job.dead_letter_retention_s), "retention", job.queue))
        return sorted(deadline for deadline in found if deadline.at > now)
