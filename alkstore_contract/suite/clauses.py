"""Every clause of docs/contract.md, once: its id, a one-line title, and the capability it needs.

Part of the suite.

Rows, checks, skip reasons, the report and the docs cite clauses by id; this
registry is where an id is known to exist. ``tests/test_clauses.py`` fails
when a clause here has no check anywhere in the suite, unless the clause is
marked ``untested`` with the reason (the Reactive Streams TCK's ``untested_``
rules), and when a row cites an id that is not here.

A clause with a ``capability`` is part of the certificate only for an engine
that declares that capability; every other clause is *core* and binds every
engine (docs/capabilities.md, "What a certificate covers").
"""

from __future__ import annotations

from dataclasses import dataclass

from alkstore_contract.adapter import Capability


@dataclass(frozen=True, slots=True)
class Clause:
    """One clause of the contract."""

    id: str
    title: str
    capability: Capability | None = None
    """The capability an engine must declare for this clause to bind it; ``None``: core."""
    untested: str | None = None
    """Why no row checks this clause (it still appears in the report, as untested)."""
    since: str = "2.0"
    """The contract version that added the clause (docs/contract.md, "What 2.1 added")."""

    @property
    def family(self) -> str:
        """The letter family (``C`` for ``C4``): the contract's section."""
        return self.id.rstrip("0123456789")


_CLAUSES: tuple[Clause, ...] = (
    Clause("S1", "queue names: checked by store.queue(), no I/O"),
    Clause("S2", "QueueOpts validate themselves"),
    Clause("S3", "a closed store refuses everything with StoreClosed"),
    Clause("S4", "queues never see each other's jobs"),
    Clause("E1", "a job is stamped with its queue handle's options"),
    Clause("E2", "delay wins over run_at"),
    Clause("E3", "run_at alone is stored verbatim, past or future"),
    Clause("E4", "neither delay nor run_at: ready now"),
    Clause("E5", "expires is relative to the enqueue's now"),
    Clause("E6", "a per-call max_attempts overrides the stamp"),
    Clause("E7", "priority: a 64-bit int, default 0, higher first"),
    Clause("E8", "the payload is any JSON value and reads back equal"),
    Clause("E9", "bad options raise InvalidArgument and store nothing"),
    Clause("E10", "ids are unique, hashable and JSON-representable"),
    Clause("E11", "enqueue_many: one clock read, all or nothing"),
    Clause("C1", "what is claimable: ready and due, or a lapsed lease with attempts left; never expired"),
    Clause("C2", "claim order: priority desc, run_at asc, id asc"),
    Clause("C3", "a claim sets processing, claimant, lease, attempts + 1 and a fresh token"),
    Clause("C4", "never two unexpired leases on one job"),
    Clause("C5", "claim_batch: n ≤ 0 claims nothing; n > 0 up to n in order"),
    Clause("C6", "worker ids are non-empty str"),
    Clause("C7", "a lapsed lease with no attempts left is never handed out again"),
    Clause("H1", "a handle op succeeds only for its own live claim"),
    Clause("H2", "ack deletes the job"),
    Clause("H3", "heartbeat resets the lease from now"),
    Clause("H4", "ack, retry and fail are one-shot"),
    Clause("H5", "after a reclaim the old handle is fenced off"),
    Clause("R1", "retry with attempts left: ready again at now + delay"),
    Clause("R2", "equal jitter: uniform on [cap/2, cap], cap = min(b·2^(a−1), 3600 s)"),
    Clause("R3", "an explicit delay is used verbatim"),
    Clause("R4", "retry on the last attempt dead-letters"),
    Clause("R5", "the jitter spreads, and a store's seed replays it"),
    Clause("D1", "fail: dead at once with its error"),
    Clause("D2", "a dead job is never claimable and shows why it died"),
    Clause("D3", "handle ops on a dead, cancelled or acked job return False"),
    Clause("X1", "an expired job is never handed out"),
    Clause("X2", "sweep_expired: purge by retention, then move expired and exhausted jobs to dead"),
    Clause("X3", "concurrent sweeps move each job once"),
    Clause("B1", "ack_batch deletes this queue's live leased jobs and counts them"),
    Clause("B2", "cancel deletes a job in any state"),
    Clause("B3", "get_job returns a snapshot with the resolved stamps, or None"),
    Clause(
        "G1",
        "no claim returns nothing while more than N jobs are claimable and unleased (N concurrent workers)",
        since="2.1",
    ),
    Clause(
        "G2",
        "a drain whose workers stop at their first empty claim hands every job out",
        since="2.1",
    ),
    Clause(
        "L1",
        "release is fenced like ack: a stale handle's release returns False",
        Capability.RELEASE,
        since="2.1",
    ),
    Clause(
        "L2",
        "a release makes the job ready at now + delay with its attempt given back, keeping its id",
        Capability.RELEASE,
        since="2.1",
    ),
    Clause(
        "L3",
        "a released job is claimable at now + delay and not before",
        Capability.RELEASE,
        since="2.1",
    ),
    Clause(
        "L4",
        "release is one-shot with ack, retry and fail; a bad delay is refused",
        Capability.RELEASE,
        since="2.1",
    ),
    Clause(
        "K1",
        "while a job with the key is unfinished, enqueue_unique stores nothing and returns its id",
        Capability.UNIQUE_KEYS,
        since="2.1",
    ),
    Clause("K2", "an acked, dead or cancelled job frees its key", Capability.UNIQUE_KEYS, since="2.1"),
    Clause(
        "K3",
        "concurrent enqueues of one key store exactly one job",
        Capability.UNIQUE_KEYS,
        since="2.1",
    ),
    Clause(
        "K4",
        "a key is a str of 1 to 200 characters; bad keys store nothing",
        Capability.UNIQUE_KEYS,
        since="2.1",
    ),
    Clause(
        "W1",
        "a job enqueued in the caller's transaction is invisible before commit",
        Capability.TRANSACTIONAL_ENQUEUE,
        since="2.1",
    ),
    Clause(
        "W2",
        "after the caller's rollback the job is gone",
        Capability.TRANSACTIONAL_ENQUEUE,
        since="2.1",
    ),
    Clause(
        "W3",
        "after the caller's commit the job is stored as enqueue would store it",
        Capability.TRANSACTIONAL_ENQUEUE,
        since="2.1",
    ),
    Clause(
        "W4",
        "the store never commits the caller's transaction",
        Capability.TRANSACTIONAL_ENQUEUE,
        since="2.1",
    ),
    Clause("T1", "one clock read per operation, at least millisecond precision"),
    Clause("T2", "an injectable clock is the engine's only time source", Capability.INJECTABLE_CLOCK),
    Clause(
        "T3",
        "a networked engine's default clock is its server's: every instant an op stamps is the server's",
        Capability.NETWORKED,
    ),
    Clause("P1", "stores on one location share one state and keep C4", Capability.SHARED_LOCATION),
    Clause("P2", "C4 holds across OS processes", Capability.MULTI_PROCESS),
    Clause("P3", "committed writes survive close, kill -9 and reopen", Capability.DURABLE),
    Clause("N1", "during an outage an op raises StoreUnavailable within the reported bound", Capability.NETWORKED),
    Clause("N2", "after the outage the same open store serves again within the reported bound", Capability.NETWORKED),
    Clause("N3", "an op cut during its commit stores its job at most once; a lost claim lapses", Capability.NETWORKED),
    Clause("N4", "across faults: no lost job, no job completed twice, no unexpected id", Capability.NETWORKED),
    Clause("N5", "a handle whose lease lapsed in a stall cannot complete the job after it", Capability.NETWORKED),
    Clause(
        "N6",
        "a settle that raised StoreUnavailable leaves its handle unspent; a fenced repeat settles the job once",
        Capability.NETWORKED,
    ),
)

CLAUSES: dict[str, Clause] = {c.id: c for c in _CLAUSES}
"""Every clause, by id, in docs/contract.md's order."""


class UnknownClause(KeyError):
    """A clause id that docs/contract.md does not have."""


def clause(clause_id: str) -> Clause:
    """The clause with this id; an unknown id is a defect in the suite, named in the error."""
    try:
        return CLAUSES[clause_id]
    except KeyError:
        raise UnknownClause(f"{clause_id!r} is not a clause of docs/contract.md (known: {' '.join(CLAUSES)})") from None


def binding(capabilities: frozenset[Capability]) -> list[Clause]:
    """The clauses that bind an engine declaring ``capabilities``: the core and its capabilities' own."""
    return [c for c in _CLAUSES if c.capability is None or c.capability in capabilities]
