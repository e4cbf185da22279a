"""The state machine of ``model_based``: one program, run on the engine and on the reference model step by step.

Part of the suite.

Each step runs one op (or a few: a ``burn``) on the engine and on
``alkstore_contract.suite.model``, compares the return values, ``handle.job`` and
the snapshot of every job the op touched, and adds the op to the program's
script. After every clock move and every sweep it compares the whole state:
every job the program ever made, read back on its queue, and the oracle's raw
count of stored jobs, so a job the model does not know about shows too.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Iterable
from dataclasses import dataclass, fields
from datetime import UTC, datetime, timedelta
from typing import Any, ClassVar, NoReturn, TypeVar, cast

from hypothesis import strategies as st
from hypothesis.stateful import RuleBasedStateMachine, initialize, rule

from alkstore_contract.errors import HandleSpent
from alkstore_contract.suite.checks import ContractViolation
from alkstore_contract.suite.expected import BACKOFF_CAP_S
from alkstore_contract.suite.ledger import count_check
from alkstore_contract.suite.model import UNKNOWN_JOB, Model, ModelClaim
from alkstore_contract.suite.rows.model_based.bench import Bench
from alkstore_contract.suite.rows.model_based.script import Script, call_src, src
from alkstore_contract.suite.rows.model_based.strategies import (
    ADVANCES,
    BURN_MAX_ATTEMPTS,
    DURATIONS,
    ENQUEUE_ARGS,
    ENQUEUES,
    ERRORS,
    EXTENDS,
    FIRST_KEY,
    HANDLE_OPS,
    HOT_PRIORITY,
    LONG_HAUL,
    LONG_HAUL_INDEX,
    OPTS,
    OPTS_INDEX,
    PAYLOADS,
    PICK,
    QUEUE,
    QUEUE_NAMES,
    RELEASING_HANDLE_OPS,
    ROUNDS,
    STEP_KINDS,
    UNIQUE_ENQUEUES,
    UNIQUE_KEYS,
    WORKERS,
    ZERO,
    EnqueueArgs,
)
from alkstore_contract.surface import JobHandle, Queue, ReleasableJobHandle, UniqueQueue
from alkstore_contract.types import Duration, EnqueueCall, Enqueued, Job, JobId, JobState, QueueOpts

T = TypeVar("T")


@dataclass
class Held:
    """A handle the program holds: the engine's, the model's claim it stands for, and how the script names it."""

    handle: JobHandle
    claim: ModelClaim
    var: str
    queue: str


@dataclass(frozen=True)
class Ref:
    """A job id as a program uses it: what the engine is given, what the model is given, how the script writes it."""

    engine: JobId
    model: int
    var: str


Outcome = tuple[bool, object]
"""``(True, value)`` when an op returned, ``(False, exception)`` when it raised."""

FIELD_CLAUSES = {
    "queue": "S4",
    "payload": "B3",
    "priority": "E7",
    "max_attempts": "E6",
    "expires_at": "E5",
    "enqueued_at": "E5",
    "visibility_timeout_s": "E1",
    "backoff_base_s": "E1",
    "dead_letter_retention_s": "E1",
}
"""Job fields fixed at enqueue, and the clause that fixes them; the others cite the op that last changed the job."""


class ModelMachine(RuleBasedStateMachine):
    """One program: a fresh store on the bench's location, fresh queue names, a fresh model."""

    bench: ClassVar[Bench]

    def __init__(self) -> None:
        super().__init__()
        bench = self.bench
        bench.programs += 1
        bench.clock.set(bench.start)
        self.prefix = f"mb{bench.run}-{bench.programs}-"
        self.model = Model(slack=bench.slack)
        self.failed = False
        self.steps = 0
        self.queues: dict[tuple[int, int], tuple[Queue, str]] = {}
        self.refs: dict[int, Ref] = {}
        self.by_engine_id: dict[JobId, int] = {}
        self.queue_of: dict[int, str] = {}
        """The queue each job was enqueued on, by model id (kept after the job is gone)."""
        self.held: list[Held] = []
        self.script = Script(bench.engine_spec, bench.seed, bench.clock.now(), [])
        self.own_store = bench.first_violation is not None
        """From the first failure on, each program opens its own store (see ``Bench.shared_store``)."""
        if self.own_store:
            self.store = bench.open_store()
        else:
            self.store = bench.shared_store()
        self.opts: list[QueueOpts] = [*OPTS]
        """The queue options of this program: ``OPTS`` and the long-haul options ``some_work`` draws."""
        self.baseline = bench.stored_jobs()
        """The oracle's count before this program: the jobs earlier programs left at the location."""
        self.removals_compared = 0
        """How many of the model's removals the last whole-state comparison had seen."""
        self.keyed: dict[tuple[str, str], list[int]] = {}
        """Every job ``enqueue_unique`` stored, by queue and key, oldest first: what a K1/K2 failure recounts."""

    # --- plumbing ---

    def _run(self, operation: Awaitable[T]) -> T:
        async def wrapped() -> T:
            return await operation

        return self.bench.runner.run(wrapped())

    def _outcome(self, operation: Awaitable[object]) -> Outcome:
        try:
            return True, self._run(operation)
        except Exception as exc:
            return False, exc

    def _now(self) -> datetime:
        return self.bench.clock.now()

    def _violation(self, clause: str, text: str) -> NoReturn:
        self.failed = True
        message = f"[{clause}] {text}"
        report = (
            f"{message}\n\nThe shrunk program, as a script (engine {self.bench.engine_spec!r}, seed "
            f"{self.bench.seed}):\n\n{self.script.render(message)}"
        )
        if self.bench.first_violation is None:
            self.bench.first_violation = report
        raise ContractViolation(report)

    def _queue(self, name_index: int, opts_index: int = 0) -> tuple[Queue, str]:
        """The handle on queue ``name_index`` stamping ``self.opts[opts_index]``, made (and scripted) on first use."""
        key = (name_index, opts_index)
        if key not in self.queues:
            name = self.prefix + QUEUE_NAMES[name_index]
            var = f"q{QUEUE_NAMES[name_index]}{opts_index}"
            self.queues[key] = (self.store.queue(name, self.opts[opts_index]), var)
            self.script.add(f"{var} = store.queue({name!r}, {self.opts[opts_index]!r})")
        return self.queues[key]

    def _queue_of(self, model_id: int) -> Queue:
        """A handle on the queue job ``model_id`` was enqueued on (any handle reads every job of its queue)."""
        return self._queue(QUEUE_NAMES.index(self.queue_of[model_id].removeprefix(self.prefix)))[0]

    def _ref(self, pick: int) -> Ref:
        """A job id to hand to get_job/cancel/ack_batch.

        ``pick`` 0: the job of the newest live handle (else the newest job); 5, 6 (mod 8): ids never
        issued (an int, a str); 7 (mod 8): the str form of a real int id (a wrong kind, so not found,
        DEC-id-kind); other even: the job of a recent handle; other odd: any job.
        """
        kind = pick % 8
        if kind == 5 or not self.refs:
            return Ref(engine=-1, model=UNKNOWN_JOB, var="-1")
        if kind == 6:
            return Ref(engine="no-such-job", model=UNKNOWN_JOB, var="'no-such-job'")
        newest = self.refs[max(self.refs)]
        if kind == 7 and isinstance(newest.engine, int):
            return Ref(engine=str(newest.engine), model=UNKNOWN_JOB, var=f"str({newest.var})")
        held = self._handle(pick // 2)
        if pick % 2 == 0 and held is not None:
            return self.refs[held.claim.job_id]
        ids = sorted(self.refs)
        return self.refs[ids[-1 - (pick // 2) % len(ids)]]

    def _handle(self, pick: int) -> Held | None:
        """A handle the program holds, or None before the first claim.

        ``pick`` 0: the newest handle not spent (else the newest); 1: the newest handle not spent
        whose job a later claim took over (H5's old holder; else as 0); otherwise newest first, modulo.
        """
        if not self.held:
            return None
        unspent = [held for held in self.held if held.claim.spent_by is None]
        if pick == 1:
            superseded = [held for held in unspent if self._superseded(held)]
            return (superseded or unspent or self.held)[-1]
        if pick == 0:
            return (unspent or self.held)[-1]
        return self.held[-1 - pick % len(self.held)]

    def _superseded(self, held: Held) -> bool:
        """Whether a later claim holds (or held) this handle's job."""
        job = self.model.jobs.get(held.claim.job_id)
        return job is not None and job.claim is not None and job.claim != held.claim.id

    def _adopt(self, engine_ids: object, model_ids: list[int], clause: str, op: str) -> None:
        """Map the ids an enqueue returned to the model's; they must be new, distinct and hashable (E10)."""
        if not isinstance(engine_ids, list) or len(engine_ids) != len(model_ids):
            self._violation(clause, f"{op} returned {engine_ids!r}; it demands {len(model_ids)} ids in a list")
        for engine_id, model_id in zip(engine_ids, model_ids, strict=True):
            if not isinstance(engine_id, int | str) or isinstance(engine_id, bool) or engine_id in self.by_engine_id:
                self._violation(
                    "E10", f"{op} returned id {engine_id!r}, already issued or not an int/str; E10 demands unique ids"
                )
            self.refs[model_id] = Ref(engine=engine_id, model=model_id, var=f"j{model_id}")
            self.by_engine_id[engine_id] = model_id

    def _var(self, engine_id: JobId) -> str:
        model_id = self.by_engine_id.get(engine_id)
        return self.refs[model_id].var if model_id is not None else repr(engine_id)

    # --- comparing jobs ---

    def _job_src(self, job: Job, model_id: int) -> str:
        """The model's snapshot of job ``model_id`` as a ``Job(...)`` expression of the script."""
        parts = [f"id={self.refs[model_id].var}"]
        parts += [f"{f.name}={src(getattr(job, f.name))}" for f in fields(Job) if f.name != "id"]
        return f"Job({', '.join(parts)})"

    def _compare_job(self, got: object, model_id: int, queue: str, what: str) -> None:
        """``got`` (engine's) must equal the model's job ``model_id`` as ``queue`` sees it, field by field."""
        want = self.model.get_job(queue, model_id)
        job = self.model.jobs.get(model_id)
        count_check("B3" if job is None else job.changed_by)
        if want is None:
            if got is not None:
                gone = self.model.removed.get(model_id)
                clause = gone[:2] if gone else "S4" if job is not None else "B3"
                reason = gone or ("it is a job of another queue" if job is not None else "there is no such job")
                if model_id != UNKNOWN_JOB:
                    self.script.add(f"assert await {self._queue_var(queue)}.get_job({self.refs[model_id].var}) is None")
                self._violation(clause, f"{what} gave {got!r}; the model has no such job ({reason}), so None")
            return
        assert job is not None, "the model shows only stored jobs"
        if not isinstance(got, Job):
            self._violation(job.changed_by, f"{what} gave {got!r}; the model has {want!r}")
        mine = self.by_engine_id.get(got.id, UNKNOWN_JOB) if isinstance(got.id, int | str) else UNKNOWN_JOB
        differ = [f.name for f in fields(Job) if f.name != "id" and getattr(got, f.name) != getattr(want, f.name)]
        if mine != model_id:
            differ.insert(0, "id")
        zones = [
            f.name
            for f in fields(Job)
            if isinstance(getattr(got, f.name), datetime) and getattr(got, f.name).utcoffset() != timedelta(0)
        ]
        if differ:
            clause = FIELD_CLAUSES.get(differ[0], job.changed_by)
            lines = "\n".join(
                f"  {name}: engine {getattr(got, name)!r}, model {getattr(want, name) if name != 'id' else model_id!r}"
                for name in differ
            )
            expected = self._job_src(want, model_id)
            self.script.add(f"assert await {self._queue_var(queue)}.get_job({self.refs[model_id].var}) == {expected}")
            self._violation(
                clause,
                f"{what}: the engine's snapshot of {self.refs[model_id].var} differs from the model's "
                f"(last changed by {job.changed_by}):\n{lines}",
            )
        if zones:
            self._violation(
                "B3", f"{what}: instants {zones} of {got!r} are not in UTC; the surface demands aware UTC datetimes"
            )

    def _queue_var(self, queue: str) -> str:
        return self._queue(QUEUE_NAMES.index(queue.removeprefix(self.prefix)))[1]

    def _read(self, model_ids: list[int]) -> list[Outcome]:
        """``get_job`` of each job on its own queue, one after another, in one turn of the loop."""

        async def reads() -> list[Outcome]:
            outcomes: list[Outcome] = []
            for model_id in model_ids:
                try:
                    outcomes.append((True, await self._queue_of(model_id).get_job(self.refs[model_id].engine)))
                except Exception as exc:
                    outcomes.append((False, exc))
            return outcomes

        return self.bench.runner.run(reads())

    def _check_stored(self, model_ids: Iterable[int], reads: list[Outcome] | None = None) -> None:
        """Read each job back through the engine (on its own queue) and compare it with the model.

        ``reads``: the jobs' ``get_job`` outcomes when the step has read them already.
        """
        wanted = sorted(set(model_ids) - {UNKNOWN_JOB})
        for model_id, (ok, got) in zip(wanted, reads or self._read(wanted), strict=True):
            var = self.refs[model_id].var
            if not ok:
                self._violation("B3", f"get_job({var}) raised {got!r}; B3 demands a snapshot or None")
            self._compare_job(got, model_id, self.queue_of[model_id], f"get_job({var}) after step {self.steps}")

    def _check_all(self) -> None:
        """The whole state: every job the program made (stored or gone) read back, and the oracle's raw count.

        The count is what shows a job the model does not know about: a row an ack or a
        sweep only hid, a second row a retry wrote. It counts the whole location, so
        the jobs earlier programs left there (``baseline``) are added to the model's.
        """
        self._check_stored(self.refs.keys())
        ok, counted = self._outcome(self.bench.adapter.count_stored_jobs(self.bench.location))
        want = len(self.model.jobs)
        if not ok or counted != self.baseline + want:
            self.script.add(f"assert await adapter.count_stored_jobs(location) == {want}")
            removed = list(self.model.removed.values())[self.removals_compared :]
            shown = f"{counted!r} jobs" if ok else f"an error ({counted!r})"
            self._violation(
                removed[0][:2] if removed else "B3",
                f"after step {self.steps}: the oracle counts {shown} at the location, the model holds {want} "
                f"(+ {self.baseline} left by earlier programs); every job read back agrees with the model, so "
                "the rows stored and the jobs get_job shows differ"
                + (f" (removed since the last comparison: {'; '.join(removed)})" if removed else ""),
            )
        self.removals_compared = len(self.model.removed)
        self.bench.tally.full_states += 1

    def _expect_same(self, got: Outcome, want: Outcome, clause: str, op: str, why: str) -> None:
        """Compare an op's outcome on the engine with the model's: the same value, or the same error type."""
        count_check(clause)
        got_ok, got_value = got
        want_ok, want_value = want
        if got_ok and want_ok and got_value == want_value and type(got_value) is type(want_value):
            return
        if not got_ok and not want_ok and type(got_value) is type(want_value):
            return
        if isinstance(want_value, HandleSpent) or isinstance(got_value, HandleSpent):
            clause = "H4"
        shown = f"returned {got_value!r}" if got_ok else f"raised {type(got_value).__name__}({got_value})"
        expected = f"{want_value!r}" if want_ok else f"{type(want_value).__name__}"
        self._violation(clause, f"step {self.steps}: {op} {shown}; the model says {expected} ({why})")

    # --- rules: enqueue ---

    @initialize(
        long_haul=LONG_HAUL,
        o=OPTS_INDEX,
        payloads=st.lists(st.integers(min_value=0, max_value=999), min_size=1, max_size=4),
        expires=st.one_of(st.none(), st.sampled_from([5, 20, 60, 600])),
    )
    def some_work(self, long_haul: QueueOpts, o: int, payloads: list[object], expires: int | None) -> None:
        """Every program draws its long-haul queue options and starts with a few jobs ready on the first queue.

        The jobs let claims find work at once; their expiry, when drawn, often falls inside the
        first lease: a job that expires while held. Where the engine declares ``unique_keys`` the
        first of them comes by ``enqueue_unique`` with the first key: the job the first claim takes,
        so the program's later ``enqueue_unique`` calls meet its key held while it runs (K1), and
        freed once it is acked, dead or cancelled (K2).
        """
        self.opts.append(long_haul)
        args = EnqueueArgs("now", 0, 0, UTC, expires, None, 0)
        if self.bench.unique_keys:
            first, *payloads = payloads
            self._enqueue_unique(0, o, first, FIRST_KEY, args)
        self._enqueue_many(0, o, payloads, args)

    def _enqueue(self, q: int, o: int, payload: object, args: EnqueueArgs) -> None:
        self.steps += 1
        queue, var = self._queue(q, o)
        now = self._now()
        kwargs = args.resolve(now)
        model_id = self.model.enqueue(queue.name, self.opts[o], payload, now, EnqueueCall(**kwargs))
        self.queue_of[model_id] = queue.name
        self.script.add(f"j{model_id} = await {var}.enqueue({call_src([src(payload)], kwargs)})")
        ok, got = self._outcome(queue.enqueue(payload, **kwargs))
        if not ok:
            self._violation("E1", f"step {self.steps}: enqueue raised {got!r} on valid input")
        self._adopt([got], [model_id], "E10", "enqueue")
        self._check_stored([model_id])

    def _enqueue_many(self, q: int, o: int, payloads: list[object], args: EnqueueArgs) -> None:
        self.steps += 1
        queue, var = self._queue(q, o)
        now = self._now()
        kwargs = args.resolve(now)
        model_ids = self.model.enqueue_many(queue.name, self.opts[o], payloads, now, EnqueueCall(**kwargs))
        for model_id in model_ids:
            self.queue_of[model_id] = queue.name
        target = f"[{', '.join(f'j{i}' for i in model_ids)}] = " if model_ids else "assert [] == "
        self.script.add(f"{target}await {var}.enqueue_many({call_src([src(payloads)], kwargs)})")
        ok, got = self._outcome(queue.enqueue_many(payloads, **kwargs))
        if not ok:
            self._violation("E11", f"step {self.steps}: enqueue_many raised {got!r} on valid input")
        self._adopt(got if isinstance(got, list) else [got], model_ids, "E11", "enqueue_many")
        self._check_stored(model_ids)

    def _enqueue_unique(self, q: int, o: int, payload: object, key: str, args: EnqueueArgs) -> None:
        """``enqueue_unique``: the model's ``Enqueued`` (holder and ``False``, or a new job and ``True``) must match."""
        self.steps += 1
        queue, var = self._queue(q, o)
        now = self._now()
        kwargs = args.resolve(now)
        op = f"{var}.enqueue_unique({call_src([src(payload), src(key)], kwargs)})"
        story = self._key_story(queue.name, key, now)
        model_id, created = self.model.enqueue_unique(
            queue.name, self.opts[o], payload, key, now, EnqueueCall(**kwargs)
        )
        if created:
            self.queue_of[model_id] = queue.name
            self.keyed.setdefault((queue.name, key), []).append(model_id)
            self.script.add(f"e = await {op}")
            self.script.add("assert e.created is True")
            self.script.add(f"j{model_id} = e.id")
        else:
            self.script.add(f"assert await {op} == Enqueued(id={self.refs[model_id].var}, created=False)")
        ok, got = self._outcome(cast(UniqueQueue, queue).enqueue_unique(payload, key, **kwargs))
        clause = "K2" if created and story else "K1"
        count_check(clause)
        if not ok or not isinstance(got, Enqueued):
            self._violation(clause, f"step {self.steps}: {op} raised or returned {got!r} on valid input")
        if created and got.created is True:
            self._adopt([got.id], [model_id], "E10", "enqueue_unique")
        elif created or got != Enqueued(id=self.refs[model_id].engine, created=False):
            self._violation(clause, self._key_mismatch(op, got, model_id, created, story))
        self._check_stored([model_id])

    def _key_story(self, queue: str, key: str, now: datetime) -> list[str]:
        """What became of each job that ``enqueue_unique`` stored with ``key`` on ``queue``, oldest first."""
        story = []
        for model_id in self.keyed.get((queue, key), []):
            job = self.model.jobs.get(model_id)
            if job is None:
                fate = self.model.removed[model_id]
            elif job.state is JobState.DEAD:
                fate = f"dead ({job.changed_by}: {job.last_error!r})"
            else:
                fate = f"{job.state.value}, last changed by {job.changed_by}"
                if job.expires_at is not None and job.expires_at <= now:
                    fate += f", expired at {job.expires_at.isoformat()} but not swept yet"
                if job.lease_expires_at is not None and job.lease_expires_at <= now:
                    fate += f", its lease lapsed at {job.lease_expires_at.isoformat()}"
            story.append(f"{self.refs[model_id].var}: {fate}")
        return story

    def _key_mismatch(self, op: str, got: Enqueued, model_id: int, created: bool, story: list[str]) -> str:
        """The text of a K1/K2 failure: what the engine answered, what the model did, and where to look."""
        held = "; ".join(story) if story else "none"
        if not created:
            want = f"Enqueued(id={self.refs[model_id].var}, created=False)"
            hint = (
                f"{self.refs[model_id].var} is unfinished, so it holds the key (K1: ready, waiting a retry, "
                "processing, or a lapsed lease; expired, until a sweep moves it to dead). If this fails, check "
                "that a claim, a retry, a release or a lapsed lease does not free the key, that the key is "
                "looked up on this queue only, and that a held key stores nothing"
            )
        elif story:
            want = "a new job with created=True"
            hint = (
                "Every job that held the key is finished, so K2 frees it. If this fails, check that an ack, "
                "a batch ack, a cancel and every way to dead (fail, a retry past max_attempts, a sweep of an "
                "expired job or of a lapsed lease with no attempt left) free the key"
            )
        else:
            want = "a new job with created=True"
            hint = (
                "No job of this queue ever held the key. If this fails, check that the key is looked up on "
                "this queue only (the same key on another queue is another key) and that a plain enqueue holds none"
            )
        return (
            f"step {self.steps}: {op} returned {got!r}; the model says {want}. Jobs enqueued with this key "
            f"on this queue: {held}. {hint}"
        )

    # --- rules: claims ---

    def _claim(self, q: int, w: str, n: int | None) -> None:
        """``n`` None is ``claim_one``; otherwise ``claim_batch(w, n)``, n ≤ 0 included (C5)."""
        self.steps += 1
        queue, var = self._queue(q)
        now = self._now()
        order = [job.id for job in self.model.claim_order(queue.name, now)]
        reasons = {
            job.id: self.model.why_not_claimable(job, now)
            for job in self.model.jobs.values()
            if job.queue == queue.name
        }
        claims = self.model.claim_batch(queue.name, w, 1 if n is None else n, now)
        if n is None:
            self.script.add(f"hs = [h for h in [await {var}.claim_one({w!r})] if h is not None]")
            ok, got = self._outcome(queue.claim_one(w))
            handles: object = [got] if ok and got is not None else [] if ok else got
        else:
            self.script.add(f"hs = await {var}.claim_batch({w!r}, {n})")
            ok, handles = self._outcome(queue.claim_batch(w, n))
        op = f"claim_one({w!r})" if n is None else f"claim_batch({w!r}, {n})"
        if not ok or not isinstance(handles, list):
            self._violation("C1", f"step {self.steps}: {op} raised or returned {handles!r}")
        engine_ids = [handle.job.id for handle in handles]
        got_ids = [self.by_engine_id.get(engine_id, UNKNOWN_JOB) for engine_id in engine_ids]
        want_ids = [claim.job_id for claim in claims]
        expected = f"[{', '.join(self.refs[i].var for i in want_ids)}]"
        self.script.add(f"assert [h.job.id for h in hs] == {expected}")
        if got_ids != want_ids:
            self._violation(*self._claim_mismatch(op, n, got_ids, engine_ids, want_ids, order, reasons))
        names = [f"h{claim.id}" for claim in claims]
        if names:
            self.script.add(f"[{', '.join(names)}] = hs")
        for handle, claim, name in zip(handles, claims, names, strict=True):
            self.held.append(Held(handle=handle, claim=claim, var=name, queue=queue.name))
            self._compare_job(handle.job, claim.job_id, queue.name, f"{name}.job, the snapshot of the claim ({op})")
        self._check_stored(want_ids)

    def _claim_mismatch(
        self,
        op: str,
        n: int | None,
        got_ids: list[int],
        engine_ids: list[JobId],
        want_ids: list[int],
        order: list[int],
        reasons: dict[int, str | None],
    ) -> tuple[str, str]:
        """Which clause a claim that handed out other jobs than the model broke, and how."""
        handed = ", ".join(self._var(i) for i in engine_ids)
        shown = f"step {self.steps}: {op} handed out [{handed}]; the model hands out " + (
            f"[{', '.join(self.refs[i].var for i in want_ids)}]"
        )
        limit = 1 if n is None else n
        if limit <= 0:
            return "C5", f"{shown} (n ≤ 0 claims nothing and touches no job)"
        if len(got_ids) > limit:
            return "C5", f"{shown} (more than n = {limit})"
        for model_id in got_ids:
            if model_id == UNKNOWN_JOB:
                return "S4", f"{shown} (a job this queue does not hold)"
            reason = reasons.get(model_id)
            if model_id not in reasons:
                return "S4", f"{shown} ({self.refs[model_id].var} is a job of another queue)"
            if reason is not None:
                return reason[:2], f"{shown} ({self.refs[model_id].var} is not claimable: {reason})"
        if sorted(got_ids) == sorted(want_ids) or len(got_ids) == limit:
            claimable = ", ".join(self.refs[i].var for i in order)
            return "C2", f"{shown} (claimable in C2 order: [{claimable}])"
        missing = [self.refs[i].var for i in want_ids if i not in got_ids]
        return "C1", f"{shown} ({missing} are claimable: ready and due, or a lapsed lease with attempts left)"

    # --- rules: handle operations ---

    def _handle_op(
        self,
        pick: int,
        op: str,
        engine_op: Callable[[JobHandle], Awaitable[object]],
        model_op: Callable[[Held, datetime, Outcome], bool],
    ) -> Held | None:
        """Run one handle op on the engine, then on the model (which may look at the engine's outcome), compare.

        A wrong answer cites H1 when the claim holds its job (the engine refused a valid op:
        its validity predicate is not H1's), else the clause that makes the op invalid (H1 for
        a lapsed lease, H5 for a reclaim, D3 for a dead or deleted job; H4 for a spent handle).
        What a valid op then does to the job is checked on the snapshot that follows.
        """
        self.steps += 1
        held = self._handle(pick)
        if held is None:
            return None
        now = self._now()
        spent = held.claim.spent_by is not None
        why = self.model.why_not_held(held.claim.id, now)
        clause = "H1" if why is None else why[:2]
        if op.startswith("release("):
            clause = "L1"  # a release is fenced like ack, by its own clause (contract 2.1)
        if spent:
            self.script.add(f"await spent({held.var}.{op})")
        got = self._outcome(engine_op(held.handle))
        try:
            want: Outcome = (True, model_op(held, now, got))
        except HandleSpent as exc:
            want = (False, exc)
        if not spent:
            self.script.add(f"assert await {held.var}.{op} is {want[1]!r}")
        reason = why or f"{held.var} holds {self.refs[held.claim.job_id].var}: processing, this claim, now < lease"
        self._expect_same(got, want, clause, f"{held.var}.{op}", reason)
        return held

    def _ack(self, h: int) -> None:
        self._op_then_read(h, "ack", {}, lambda handle: handle.ack, self.model.ack)

    def _retry(self, h: int, error: str | None, delay: Duration | None) -> None:
        kwargs: dict[str, Any] = {}
        if error is not None:
            kwargs["error"] = error
        if delay is not None:
            kwargs["delay"] = delay
        violations: list[str] = []
        reads: list[Outcome] = []

        def on_model(held: Held, now: datetime, got: Outcome) -> bool:
            """The engine drew the jitter (R2): read back the ready time it stored, for the model to check and adopt.

            The read is kept: it is the snapshot compared once the model has moved too.
            """
            observed = None
            if got == (True, True):
                reads.extend(self._read([held.claim.job_id]))
                ok, after = reads[0]
                if ok and isinstance(after, Job) and after.state is JobState.READY:
                    observed = after.run_at
            retried = self.model.retry(held.claim.id, now, error=error, delay=delay, observed_run_at=observed)
            if retried.violation is not None:
                violations.append(retried.violation)
            if retried.cap_s is not None:
                count_check("R2")
                attempts = self.model.jobs[held.claim.job_id].attempts
                self.bench.tally.range_checked(attempts, retried.cap_s == BACKOFF_CAP_S)
            return retried.accepted

        held = self._handle_op(h, f"retry({call_src([], kwargs)})", lambda handle: handle.retry(**kwargs), on_model)
        if violations:
            self._violation("R2", f"step {self.steps}: {violations[0].removeprefix('[R2] ')}")
        if held is not None:
            self._check_stored([held.claim.job_id], reads or None)

    def _fail_op(self, h: int, error: str | None) -> None:
        self._op_then_read(h, "fail", {"error": error}, lambda handle: handle.fail, self.model.fail)

    def _release(self, h: int, delay: Duration | None) -> None:
        self._op_then_read(
            h, "release", {"delay": delay}, lambda handle: cast(ReleasableJobHandle, handle).release, self.model.release
        )

    def _handle_ops(self) -> st.SearchStrategy[str]:
        """The handle ops a program draws from: with ``release`` when the engine declares it."""
        return RELEASING_HANDLE_OPS if self.bench.releases else HANDLE_OPS

    def _heartbeat(self, h: int, extend: Duration | None) -> None:
        self._op_then_read(h, "heartbeat", {"extend": extend}, lambda handle: handle.heartbeat, self.model.heartbeat)

    def _op_then_read(
        self,
        h: int,
        name: str,
        options: dict[str, object],
        method: Callable[[JobHandle], Callable[..., Awaitable[bool]]],
        model_op: Callable[..., bool],
    ) -> None:
        """Handle op ``name`` on the engine and the model, then the job read back and compared.

        An option left ``None`` is not passed at all, to either side: the script shows the call as the
        program made it, and the op's own default is what gets tested.
        """
        kwargs = {key: value for key, value in options.items() if value is not None}
        held = self._handle_op(
            h,
            f"{name}({call_src([], kwargs)})",
            lambda handle: method(handle)(**kwargs),
            lambda held, now, _: model_op(held.claim.id, now, **kwargs),
        )
        if held is not None:
            self._check_stored([held.claim.job_id])

    # --- rules: batch ack, cancel, get_job, sweep ---

    def _ack_batch(self, q: int, picks: list[int]) -> None:
        self.steps += 1
        queue, var = self._queue(q)
        refs = [self._ref(pick) for pick in picks]
        want = self.model.ack_batch(queue.name, [ref.model for ref in refs], self._now())
        self.script.add(f"assert await {var}.ack_batch([{', '.join(ref.var for ref in refs)}]) == {want}")
        got = self._outcome(queue.ack_batch([ref.engine for ref in refs]))
        why = "B1 counts each listed job of this queue that is processing under an unexpired lease, once"
        self._expect_same(got, (True, want), "B1", f"{var}.ack_batch([{', '.join(ref.var for ref in refs)}])", why)
        self._check_stored(ref.model for ref in refs)

    def _cancel(self, q: int, pick: int) -> None:
        self.steps += 1
        queue, var = self._queue(q)
        ref = self._ref(pick)
        want = self.model.cancel(queue.name, ref.model)
        self.script.add(f"assert await {var}.cancel({ref.var}) is {want!r}")
        got = self._outcome(queue.cancel(ref.engine))
        why = "B2 deletes a job of this queue in any state" if want else "no job of this queue has that id (S4, B2)"
        self._expect_same(got, (True, want), "B2", f"{var}.cancel({ref.var})", why)
        self._check_stored([ref.model])

    def _get_job(self, q: int, pick: int) -> None:
        self.steps += 1
        queue, var = self._queue(q)
        ref = self._ref(pick)
        want = self.model.get_job(queue.name, ref.model)
        expected = "None" if want is None else self._job_src(want, ref.model)
        self.script.add(f"assert await {var}.get_job({ref.var}) == {expected}")
        ok, got = self._outcome(queue.get_job(ref.engine))
        if not ok:
            self._violation(
                "B3", f"step {self.steps}: {var}.get_job({ref.var}) raised {got!r}; B3 demands a snapshot or None"
            )
        self._compare_job(got, ref.model, queue.name, f"step {self.steps}: {var}.get_job({ref.var})")

    def _sweep_expired(self, q: int) -> None:
        self.steps += 1
        queue, var = self._queue(q)
        want = self.model.sweep_expired(queue.name, self._now())
        self.script.add(f"assert await {var}.sweep_expired() == {want}")
        got = self._outcome(queue.sweep_expired())
        why = "expired live jobs plus lapsed leases with no attempt left move to dead (dead jobs past retention go)"
        self._expect_same(got, (True, want), "X2", f"{var}.sweep_expired()", why)
        self._check_all()

    # --- rules: time ---

    def _advance(self, seconds: float) -> None:
        self.steps += 1
        self.bench.clock.advance(seconds)
        self.script.add(f"clock.advance({seconds!r})")
        self._check_all()

    def _advance_to_deadline(self, kind: str, k: int, nudge_ms: int, probe: str | None) -> None:
        """Move to exactly a job's expiry, lease end, ready time or retention end (or 1 ms either side); probe it.

        ``k`` picks the k-th soonest deadline of that kind (of any kind when there is none). The probe
        — a sweep or a claim of the queue of that job here; in ``_clock_step``, then an op on the
        newest live handle, or (``reclaim``) on the handle the claim just superseded — is the boundary
        test: ``<`` for ``<=`` anywhere shows only at the very instant.
        """
        self.steps += 1
        now = self._now()
        deadlines = self.model.deadlines(now)
        if not deadlines:
            return
        chosen = [deadline for deadline in deadlines if deadline.kind == kind] or deadlines
        deadline = chosen[k % len(chosen)]
        target = max(deadline.at + timedelta(milliseconds=nudge_ms), now)
        by = target - now
        self.bench.clock.advance(by)
        self.script.add(f"clock.advance({src(by)})  # to {deadline.kind} {src(deadline.at)} {nudge_ms:+d} ms")
        self._check_all()
        q = QUEUE_NAMES.index(deadline.queue.removeprefix(self.prefix))
        if probe == "sweep":
            self._sweep_expired(q)
        elif probe == "claim":
            self._claim(q, WORKERS[0], None)

    def _advance_to_reclaim(self, k: int, nudge_ms: int) -> None:
        """Move to the lease end of a held job (or 1 ms either side), and claim up to that job.

        ``k`` picks the k-th soonest lease. The claim asks for as many jobs as C2 puts up to
        and including that one (every claimable job and one more, when the job has no
        attempt left), so at the instant (and 1 ms after) it is reclaimed — or, spent, must
        not be (C7). The handle op that follows in ``_clock_step`` is then the old holder's,
        which must lose (H5). When no job is held, it claims one first. Random programs alone
        rarely get there: the lapsed job must not expire first, and must come first in C2 order
        when the next claim happens to run.
        """
        self.steps += 1
        leases = self._live_leases()
        if not leases:  # nothing held yet: claim something first, so there is a lease to lapse
            self._claim(0, WORKERS[k % len(WORKERS)], None)
            leases = self._live_leases()
        if not leases:
            return
        now = self._now()
        at, job_id = leases[k % len(leases)]
        target = max(at + timedelta(milliseconds=nudge_ms), now)
        by = target - now
        self.bench.clock.advance(by)
        self.script.add(
            f"clock.advance({src(by)})  # to the lease end {src(at)} of {self.refs[job_id].var} {nudge_ms:+d} ms"
        )
        self._check_all()
        queue = self.queue_of[job_id]
        order = [job.id for job in self.model.claim_order(queue, target)]
        n = order.index(job_id) + 1 if job_id in order else len(order) + 1
        self._claim(QUEUE_NAMES.index(queue.removeprefix(self.prefix)), WORKERS[k % len(WORKERS)], n)

    def _live_leases(self) -> list[tuple[datetime, int]]:
        """``(lease end, model id)`` of every job held under a lease still running, soonest first."""
        now = self._now()
        return sorted(
            (job.lease_expires_at, job.id)
            for job in self.model.jobs.values()
            if job.state is JobState.PROCESSING and job.lease_expires_at is not None and job.lease_expires_at > now
        )

    # --- the one rule ---------------------------------------------------------------------------------
    # One rule drawing the kind of step, rather than a rule per op: Hypothesis' swarm testing
    # would switch whole rules off for a program, and most bugs need claims, handle ops and
    # clock moves together. ``STEP_KINDS`` sets the mix. Each step draws only the arguments its
    # op needs (fewer draws: quicker programs and quicker shrinking).

    @rule(kind=STEP_KINDS, data=st.data())
    def step(self, kind: str, data: st.DataObject) -> None:
        """One step of the program."""
        if kind == "handle":
            self._handle_step(data.draw(PICK), data.draw(self._handle_ops()), data)
        elif kind == "claim":
            n = data.draw(st.sampled_from([None, 2, 1, 3, 5, 0, -1]))
            self._claim(data.draw(QUEUE), data.draw(st.sampled_from(WORKERS)), n)
        elif kind == "clock":
            self._clock_step(data)
        elif kind == "queue":
            self._queue_step(data.draw(QUEUE), data)
        elif kind == "burn":
            self._burn(data.draw(QUEUE), data.draw(ROUNDS), data.draw(BURN_MAX_ATTEMPTS), data.draw(ZERO))
        else:
            self._add_step(data)

    def _burn(self, q: int, rounds: int, max_attempts: int | None, zero: Duration) -> None:
        """A hot job: enqueued above every other priority, then claimed and handed back ``rounds`` times.

        Each round is ``claim_one`` and ``retry(delay=0)`` (R3: ready at once, so the next claim
        takes it again, C2), and the last claim is retried without a delay: R2's range checked at
        ``a = rounds + 1``, far up the curve where the 3600 s cap binds. The rounds stop short of
        the job's ``max_attempts`` so that last retry is a range check, not R4's dead letter (the
        small stamps of ``OPTS`` see to R4). Every op is compared as in any other step; the rounds
        stop early if the claim hands out anything else.
        """
        args = EnqueueArgs("now", 0, 0, UTC, None, max_attempts, HOT_PRIORITY)
        self._enqueue(q, LONG_HAUL_INDEX, 0, args)
        hot = max(self.refs)
        rounds = max(0, min(rounds, self.model.jobs[hot].max_attempts - 2))
        for round_ in range(rounds + 1):
            claimed = len(self.held)
            self._claim(q, WORKERS[0], None)
            if len(self.held) == claimed or self.held[-1].claim.job_id != hot:
                return
            self._retry(0, None, zero if round_ < rounds else None)

    def _add_step(self, data: st.DataObject) -> None:
        """``enqueue(payload)``, ``enqueue_many(payloads)``, or ``enqueue_unique(payload, key)`` where declared."""
        kind = data.draw(UNIQUE_ENQUEUES if self.bench.unique_keys else ENQUEUES)
        q, o = data.draw(QUEUE), data.draw(OPTS_INDEX)
        payloads = data.draw(st.lists(PAYLOADS, max_size=3)) if kind == "many" else [data.draw(PAYLOADS)]
        key = data.draw(UNIQUE_KEYS) if kind == "unique" else None
        args = data.draw(ENQUEUE_ARGS)
        if key is not None:
            self._enqueue_unique(q, o, payloads[0], key, args)
        elif kind == "one":
            self._enqueue(q, o, payloads[0], args)
        else:
            self._enqueue_many(q, o, payloads, args)

    def _handle_step(self, h: int, op: str, data: st.DataObject) -> None:
        """One op on a handle the program holds: fresh, lapsed, reclaimed, dead or spent."""
        if op == "ack":
            self._ack(h)
        elif op == "retry":
            error, delay = data.draw(ERRORS), data.draw(st.one_of(st.none(), DURATIONS))
            self._retry(h, error, delay)
        elif op == "fail":
            self._fail_op(h, data.draw(ERRORS))
        elif op == "release":
            self._release(h, data.draw(st.one_of(st.none(), DURATIONS)))
        else:
            self._heartbeat(h, data.draw(EXTENDS))

    def _queue_step(self, q: int, data: st.DataObject) -> None:
        """An op on a queue by job id (a held, known, foreign, gone or never-issued id), or a sweep."""
        op = data.draw(st.sampled_from(["get_job", "sweep_expired", "cancel", "ack_batch"]))
        if op == "get_job":
            self._get_job(q, data.draw(PICK))
        elif op == "cancel":
            self._cancel(q, data.draw(PICK))
        elif op == "ack_batch":
            self._ack_batch(q, data.draw(st.lists(PICK, max_size=5)))
        else:
            self._sweep_expired(q)

    def _clock_step(self, data: st.DataObject) -> None:
        """Advance the clock by some seconds, or to a deadline and probe it there."""
        if data.draw(st.booleans()):
            probe = data.draw(st.sampled_from([None, "sweep", "claim", "handle", "reclaim"]))
            kind = data.draw(st.sampled_from(["expiry", "lease", "ready", "expiry", "lease", "retention"]))
            k = data.draw(st.one_of(st.just(0), st.integers(0, 7)))
            nudge_ms = data.draw(st.sampled_from([0, 0, -1, 1]))
            if probe == "reclaim":
                self._advance_to_reclaim(k, nudge_ms)
                self._handle_step(1, data.draw(self._handle_ops()), data)
                return
            self._advance_to_deadline(kind, k, nudge_ms, probe)
            if probe == "handle":  # the newest live handle, at the instant
                self._handle_step(0, data.draw(self._handle_ops()), data)
        else:
            self._advance(data.draw(ADVANCES))

    def teardown(self) -> None:
        """Compare every job once more (unless a step already failed), then close the program's own store."""
        try:
            if not self.failed:
                self._check_all()
        finally:
            if self.own_store:
                self._run(self.store.close())
