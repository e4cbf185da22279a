"""The history checker of the concurrent rows (contract C4): lost, duplicated, unexpected, recovered.

Part of the suite.

Every handout and every ack is recorded with the worker, the claim and the
time. A job is *duplicated* when a second claim was handed out while an earlier
claim's lease was still unexpired and not handed back by a successful
``retry``/``fail``, or after a successful ack (the job ran
twice); *lost* when it was enqueued and never completed nor left accounted for;
*unexpected* when a handout names a job that was never enqueued; *recovered*
when a later claim legitimately followed a lapsed lease. Duplicates are
failures, not warnings (unlike Jepsen's counters).
"""

from __future__ import annotations

from collections import Counter, defaultdict
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from typing import Any

from alkstore_contract.hazards import PHRASES, Hazard
from alkstore_contract.types import Job, JobId


@dataclass(frozen=True, slots=True)
class Handout:
    """One job handed to one worker by one claim."""

    job_id: JobId
    worker: str
    claim: str
    """Who and which claim: e.g. ``"proc2/worker1#17"``."""
    claimed_at: datetime
    """The claim's ``now``: the lease's end minus the stamped visibility timeout."""
    lease_expires_at: datetime
    attempts: int


@dataclass(frozen=True, slots=True)
class Release:
    """The outcome of one ``ack``, ``retry`` or ``fail`` on a handout's handle."""

    job_id: JobId
    claim: str
    op: str
    succeeded: bool


def handout_from_job(
    job_id: JobId, worker: str, claim: str, lease_expires_at: datetime, visibility_timeout_s: float, attempts: int
) -> Handout:
    """Build a handout from what a handle's ``job`` says."""
    return Handout(
        job_id=job_id,
        worker=worker,
        claim=claim,
        claimed_at=lease_expires_at - timedelta(seconds=visibility_timeout_s),
        lease_expires_at=lease_expires_at,
        attempts=attempts,
    )


def handout_from_event(event: Mapping[str, Any]) -> Handout:
    """Build a handout from a worker process's ``handout`` event: its JSON keys, the lease as ISO text."""
    return handout_from_job(
        event["job"],
        event["worker"],
        event["claim"],
        datetime.fromisoformat(event["lease"]),
        float(event["vt"]),
        int(event["attempts"]),
    )


@dataclass
class Verdict:
    """The checker's classification; ``ok`` only with nothing lost, duplicated or unexpected.

    ``lost`` is ``Hazard.LOST``; ``duplicated`` holds both ``Hazard.CONCURRENT`` (a second claim while an earlier
    lease was unexpired) and ``Hazard.TWICE`` (a second claim after an ack) — the rows that read it fail C4 on
    either (``alkstore_contract.hazards``)."""

    lost: list[JobId] = field(default_factory=list)
    duplicated: dict[JobId, list[str]] = field(default_factory=dict)
    hazards: dict[JobId, Hazard] = field(default_factory=dict)
    """Each duplicated job's hazard: ``CONCURRENT`` (its second claim came while the first lease held) or ``TWICE``
    (after the first claim's ack)."""
    unexpected: list[JobId] = field(default_factory=list)
    recovered: list[JobId] = field(default_factory=list)
    handouts: int = 0
    acks: int = 0

    @property
    def ok(self) -> bool:
        return not (self.lost or self.duplicated or self.unexpected)

    def describe(self, limit: int = 10) -> str:
        """A one-paragraph account naming the offending jobs."""

        def some(ids: Iterable[object]) -> str:
            listed = list(ids)
            shown = ", ".join(repr(x) for x in listed[:limit])
            return shown + (f" … (+{len(listed) - limit} more)" if len(listed) > limit else "")

        parts = [f"{self.handouts} handouts, {self.acks} successful acks"]
        if self.lost:
            parts.append(f"{len(self.lost)} lost: {some(self.lost)}")
        if self.duplicated:
            dup = [
                f"{job}: {' & '.join(claims)} ({PHRASES[self.hazards[job]]})"
                for job, claims in list(self.duplicated.items())[:limit]
            ]
            parts.append(f"{len(self.duplicated)} duplicated: {'; '.join(dup)}")
        if self.unexpected:
            parts.append(f"{len(self.unexpected)} unexpected: {some(self.unexpected)}")
        if self.recovered:
            parts.append(f"{len(self.recovered)} recovered after a lapsed lease")
        return "; ".join(parts)


def check_history(
    enqueued: Iterable[JobId],
    handouts: Iterable[Handout],
    releases: Iterable[Release],
    *,
    still_present: Iterable[JobId] = (),
) -> Verdict:
    """Classify every job. ``still_present`` are jobs left in the store (not lost, just not done)."""
    enqueued_set = set(enqueued)
    present = set(still_present)
    by_job: dict[JobId, list[Handout]] = defaultdict(list)
    verdict = Verdict()
    for handout in handouts:
        by_job[handout.job_id].append(handout)
        verdict.handouts += 1
    acked_claims: dict[JobId, set[str]] = defaultdict(set)
    handed_back: set[str] = set()
    for release in releases:
        if not release.succeeded:
            continue
        if release.op == "ack":
            acked_claims[release.job_id].add(release.claim)
            verdict.acks += 1
        else:
            handed_back.add(release.claim)
    verdict.unexpected = sorted((j for j in by_job if j not in enqueued_set), key=repr)
    for job_id, claims in by_job.items():
        claims.sort(key=lambda h: (h.claimed_at, h.attempts))
        for earlier_index, earlier in enumerate(claims):
            for later in claims[earlier_index + 1 :]:
                overlapping = later.claimed_at < earlier.lease_expires_at and earlier.claim not in handed_back
                after_ack = earlier.claim in acked_claims[job_id]
                if overlapping or after_ack:
                    verdict.duplicated.setdefault(job_id, [earlier.claim, later.claim])
                    verdict.hazards.setdefault(job_id, Hazard.CONCURRENT if overlapping else Hazard.TWICE)
        if len(claims) > 1 and job_id not in verdict.duplicated:
            verdict.recovered.append(job_id)
    verdict.lost = sorted((j for j in enqueued_set if not acked_claims[j] and j not in present), key=repr)
    return verdict


@dataclass
class ClientHistory:
    """What the clients of a queue under faults saw: confirmed results, and the ops whose outcome is unknown.

    An op that raised under a fault may have taken effect all the same (the server committed it just
    before the connection went). An enqueue that raised may have stored its job: every payload carries
    a tag, and a job whose tag belongs to an enqueue in doubt counts as enqueued once it shows up. An
    ack that raised may have committed: its job may be gone without a confirmed ack, which the caller
    judges from ``acks_in_doubt``. The network-history row and the Postgres fault tests both keep one.
    """

    enqueued: set[JobId] = field(default_factory=set)
    tags_in_doubt: set[str] = field(default_factory=set)
    """Payload tags of enqueues that raised: their job may or may not exist."""
    tag_of: dict[JobId, str] = field(default_factory=dict)
    """The payload tag of every job a worker was handed."""
    handouts: list[Handout] = field(default_factory=list)
    releases: list[Release] = field(default_factory=list)
    acks_in_doubt: set[JobId] = field(default_factory=set)
    claims_by: Counter[str] = field(default_factory=Counter)
    """How many handouts each worker has had: the number in the next claim's name."""

    def handed_out(self, job: Job, worker: str) -> str:
        """Record the handout of ``job`` (a handle's job, under its lease) and the tag its payload carries.

        Returns the claim's name, ``worker#n`` for the worker's n-th handout, for the release that follows.
        """
        if job.lease_expires_at is None:
            raise ValueError(f"{job!r} has no lease: it was not handed out by a claim")
        if isinstance(job.payload, dict):
            self.tag_of[job.id] = str(job.payload.get("tag"))
        self.claims_by[worker] += 1
        claim = f"{worker}#{self.claims_by[worker]}"
        self.handouts.append(
            handout_from_job(job.id, worker, claim, job.lease_expires_at, job.visibility_timeout_s, job.attempts)
        )
        return claim

    def verdict(self, still_present: Iterable[JobId], seen: Mapping[JobId, str] | None = None) -> Verdict:
        """``check_history`` over what was confirmed; each job of an enqueue in doubt that showed up is enqueued.

        ``seen``: the tags of jobs found another way than a handout (the rows left in the store).
        """
        tags = {**self.tag_of, **(seen or {})}
        enqueued = self.enqueued | {job_id for job_id, tag in tags.items() if tag in self.tags_in_doubt}
        return check_history(enqueued, self.handouts, self.releases, still_present=still_present)
