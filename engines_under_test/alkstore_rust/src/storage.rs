//! The SQLite file: its layout, and every statement that reads or changes a job.
//!
//! The layout is the project's one, reference_engine/alkstore_sqlite/layout.sql, compiled in.
//! One table, `jobs`, holds every job of every queue of a location (an SQLite file). Instants are
//! INTEGER microseconds since the epoch; the two stamps SQL adds to an instant (the visibility
//! timeout, the dead-letter retention) are kept both as REAL seconds, which read back bit for bit,
//! and as INTEGER microseconds rounded once as `time::duration_us` rounds. `id` is `INTEGER PRIMARY
//! KEY AUTOINCREMENT`: ids grow in enqueue order (C2's last key) and are never reused.
//!
//! Atomicity across stores and processes on one file (C4, P1, P2) is SQLite's write lock: each op
//! is one write statement, or one `BEGIN IMMEDIATE` transaction, which holds the lock from its first
//! read to its commit. Fencing (H1–H5): every handle statement's `WHERE` is the whole validity
//! predicate, this claim's token on a `processing` row whose lease is still running at the op's
//! `now`, so the check and the change are one step. WAL with `synchronous=NORMAL`: a commit
//! survives a kill -9 of the process (P3), not a power loss (DEC-sqlite-synchronous).

use std::path::Path;
use std::time::Duration;

use rusqlite::{params, Connection, ErrorCode, OpenFlags, OptionalExtension, Row, ToSql, TransactionBehavior};
use serde_json::{json, Value};

use crate::time::add_seconds;
use crate::wire::{self, Class, Fault};

/// How long a statement waits for another connection's write lock: under the suite's op bound (20 s by
/// default), so contention that long is answered `StoreUnavailable`, not a hang the suite must end.
const BUSY_TIMEOUT: Duration = Duration::from_secs(15);

/// The project's one SQLite layout (reference_engine/alkstore_sqlite/layout.sql), compiled in and run on a
/// new file; tests/layout.rs holds a file this engine lays out to it.
pub const LAYOUT: &str = include_str!("../../../reference_engine/alkstore_sqlite/layout.sql");

const COLUMNS: &str = "id, queue, payload, state, priority, attempts, max_attempts, run_at, expires_at, \
    enqueued_at, lease_expires_at, claimed_by, visibility_timeout_s, backoff_base_s, dead_letter_retention_s, last_error, died_at";

const INSERT: &str = "
INSERT INTO jobs (queue, payload, state, priority, attempts, max_attempts, run_at, expires_at, enqueued_at,
                  visibility_timeout_s, visibility_timeout_us, backoff_base_s, dead_letter_retention_s,
                  dead_letter_retention_us)
VALUES (?1, ?2, 'ready', ?3, 0, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12)";

/// K1, K3: the insert stores nothing while an unfinished job of the queue holds the key (the partial
/// unique index jobs_unique_key of layout.sql decides).
const INSERT_UNIQUE: &str = "
INSERT INTO jobs (queue, payload, state, priority, attempts, max_attempts, run_at, expires_at, enqueued_at,
                  visibility_timeout_s, visibility_timeout_us, backoff_base_s, dead_letter_retention_s,
                  dead_letter_retention_us, unique_key)
VALUES (?1, ?2, 'ready', ?3, 0, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13)
ON CONFLICT (queue, unique_key) WHERE unique_key IS NOT NULL AND state <> 'dead' DO NOTHING";

/// C1–C3 in one statement: the best `n` of the due ready jobs and of the lapsed leases with an attempt
/// left (each an index-served subquery already in C2 order), never an expired one (X1).
const CLAIM: &str = "
WITH ready AS (
    SELECT id, priority, run_at FROM jobs
    WHERE queue = ?1 AND state = 'ready' AND run_at <= ?2 AND (expires_at IS NULL OR expires_at > ?2)
    ORDER BY priority DESC, run_at, id LIMIT ?3
), lapsed AS (
    SELECT id, priority, run_at FROM jobs
    WHERE queue = ?1 AND state = 'processing' AND lease_expires_at <= ?2 AND attempts < max_attempts
      AND (expires_at IS NULL OR expires_at > ?2)
    ORDER BY priority DESC, run_at, id LIMIT ?3
)
UPDATE jobs
SET state = 'processing', attempts = attempts + 1, claimed_by = ?4, token = ?5,
    lease_expires_at = ?2 + visibility_timeout_us
WHERE id IN (SELECT id FROM (SELECT * FROM ready UNION ALL SELECT * FROM lapsed)
             ORDER BY priority DESC, run_at, id LIMIT ?3)
RETURNING ";

/// What moving a job to dead sets besides `last_error`, with `?2` the op's now (R4, D1, X2; DEC-unclaimed-fields).
const DEAD: &str = "state = 'dead', died_at = ?2, lease_expires_at = NULL, claimed_by = NULL, token = NULL";

/// The fence every handle statement ends with (H1): `?1` the job, `?2` the op's now, `?3` the claim's token.
const FENCE: &str = "id = ?1 AND token = ?3 AND state = 'processing' AND lease_expires_at > ?2";

/// A test-only fault (the project's broken-engine mutants, tests/mutants/): each breaks one clause on purpose.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum TestFault {
    /// The engine as it should be.
    #[default]
    None,
    /// Handle ops fenced by job id only, not by the claim's token (breaks H1, H5).
    FenceByJobId,
    /// Handle ops succeed exactly at the lease deadline, `lease_expires_at >= now` (breaks H1, H3).
    LeaseDeadlineInclusive,
}

impl TestFault {
    /// The fault an `ALKSTORE_RUST_MUTANT` value names (its label with `_` for `-`), if any.
    pub fn named(name: &str) -> Option<TestFault> {
        [TestFault::FenceByJobId, TestFault::LeaseDeadlineInclusive]
            .into_iter()
            .find(|fault| fault.label().map(|label| label.replace('-', "_")).as_deref() == Some(name))
    }

    /// The fault as the engine's name shows it; `None` for the engine itself.
    pub fn label(self) -> Option<&'static str> {
        match self {
            TestFault::None => None,
            TestFault::FenceByJobId => Some("fence-by-job-id"),
            TestFault::LeaseDeadlineInclusive => Some("lease-deadline-inclusive"),
        }
    }

    fn fence(self) -> String {
        match self {
            TestFault::None => FENCE.to_owned(),
            TestFault::FenceByJobId => FENCE.replace("token = ?3 AND ", "?3 IS NOT NULL AND "),
            TestFault::LeaseDeadlineInclusive => FENCE.replace("lease_expires_at > ?2", "lease_expires_at >= ?2"),
        }
    }
}

/// What one enqueue call stores, every stamp resolved but `now` (E1–E7, E11).
pub struct NewJobs<'a> {
    pub payloads: &'a [&'a str],
    pub priority: i64,
    pub max_attempts: i64,
    /// The absolute ready time the caller gave (E3), or `None`: ready at `now + delay_s` (E2, E4).
    pub run_at: Option<i64>,
    pub delay_s: f64,
    pub expires_s: Option<f64>,
    pub visibility_timeout_s: f64,
    pub backoff_base_s: f64,
    pub retention_s: Option<f64>,
}

impl NewJobs<'_> {
    /// What every job of one insert stores beside its payload, resolved at `now`.
    fn stamps(&self, now: i64) -> Stamps<'_> {
        Stamps {
            jobs: self,
            now,
            run_at: self.run_at.unwrap_or_else(|| add_seconds(now, self.delay_s)),
            expires_at: self.expires_s.map(|s| add_seconds(now, s)),
            visibility_us: crate::time::duration_us(self.visibility_timeout_s),
            retention_us: self.retention_s.map(crate::time::duration_us),
        }
    }
}

/// The stamps of one insert at its `now`: `?3` … `?12` of `INSERT` and `INSERT_UNIQUE`.
struct Stamps<'a> {
    jobs: &'a NewJobs<'a>,
    now: i64,
    run_at: i64,
    expires_at: Option<i64>,
    visibility_us: i64,
    retention_us: Option<i64>,
}

impl<'a> Stamps<'a> {
    /// `?1` … `?12` of `INSERT` (and of `INSERT_UNIQUE`, whose `?13` the caller pushes) for one payload.
    fn params(&'a self, queue: &'a &'a str, payload: &'a &'a str) -> Vec<&'a dyn ToSql> {
        let jobs = self.jobs;
        vec![
            queue as &dyn ToSql,
            payload,
            &jobs.priority,
            &jobs.max_attempts,
            &self.run_at,
            &self.expires_at,
            &self.now,
            &jobs.visibility_timeout_s,
            &self.visibility_us,
            &jobs.backoff_base_s,
            &jobs.retention_s,
            &self.retention_us,
        ]
    }
}

/// One job as stored: the 17 fields of the contract's `Job`.
#[derive(Clone, Debug, PartialEq)]
pub struct Job {
    pub id: i64,
    pub queue: String,
    pub payload: String,
    pub state: String,
    pub priority: i64,
    pub attempts: i64,
    pub max_attempts: i64,
    pub run_at: i64,
    pub expires_at: Option<i64>,
    pub enqueued_at: i64,
    pub lease_expires_at: Option<i64>,
    pub claimed_by: Option<String>,
    pub visibility_timeout_s: f64,
    pub backoff_base_s: f64,
    pub retention_s: Option<f64>,
    pub last_error: Option<String>,
    pub died_at: Option<i64>,
}

impl Job {
    fn from_row(row: &Row<'_>) -> rusqlite::Result<Job> {
        Ok(Job {
            id: row.get(0)?,
            queue: row.get(1)?,
            payload: row.get(2)?,
            state: row.get(3)?,
            priority: row.get(4)?,
            attempts: row.get(5)?,
            max_attempts: row.get(6)?,
            run_at: row.get(7)?,
            expires_at: row.get(8)?,
            enqueued_at: row.get(9)?,
            lease_expires_at: row.get(10)?,
            claimed_by: row.get(11)?,
            visibility_timeout_s: row.get(12)?,
            backoff_base_s: row.get(13)?,
            retention_s: row.get(14)?,
            last_error: row.get(15)?,
            died_at: row.get(16)?,
        })
    }

    /// The snapshot the protocol sends (a `get_job` result, a claim's `job`).
    pub fn to_json(&self) -> Value {
        json!({
            "id": self.id,
            "queue": self.queue,
            "payload": self.payload,
            "state": self.state,
            "priority": self.priority.to_string(),
            "attempts": self.attempts,
            "max_attempts": self.max_attempts,
            "run_at": wire::instant(self.run_at),
            "expires_at": wire::optional_instant(self.expires_at),
            "enqueued_at": wire::instant(self.enqueued_at),
            "lease_expires_at": wire::optional_instant(self.lease_expires_at),
            "claimed_by": self.claimed_by,
            "visibility_timeout_s": wire::seconds(self.visibility_timeout_s),
            "backoff_base_s": wire::seconds(self.backoff_base_s),
            "dead_letter_retention_s": self.retention_s.map_or(Value::Null, wire::seconds),
            "last_error": self.last_error,
            "died_at": wire::optional_instant(self.died_at),
        })
    }

    /// C2's order: priority descending, ready time ascending, id ascending.
    fn c2_key(&self) -> (std::cmp::Reverse<i64>, i64, i64) {
        (std::cmp::Reverse(self.priority), self.run_at, self.id)
    }
}

/// A storage error as the caller sees it: a lock held past the busy timeout is `StoreUnavailable` (the
/// op did not run, but the caller cannot tell), anything else an `EngineError` with SQLite's message.
pub fn fault(error: rusqlite::Error) -> Fault {
    match error.sqlite_error_code() {
        Some(ErrorCode::DatabaseBusy | ErrorCode::DatabaseLocked) => Fault::new(
            Class::StoreUnavailable,
            format!("the SQLite file stayed locked: {error}"),
        ),
        _ => Fault::engine(format!("SQLite: {error}")),
    }
}

/// One store's connection to its file.
pub struct Db {
    conn: Connection,
    fence: String,
}

impl Db {
    /// Open (and lay out, the first time) the file at `path`.
    ///
    /// The layout is created inside `BEGIN IMMEDIATE`, so two processes opening one new file at once
    /// create it once: the second waits for the lock, then finds the layout in place.
    pub fn open(path: &str, fault: TestFault) -> rusqlite::Result<Db> {
        let mut conn = Connection::open(path)?;
        conn.busy_timeout(BUSY_TIMEOUT)?;
        conn.query_row("PRAGMA journal_mode = WAL", [], |_| Ok(()))?;
        conn.execute_batch("PRAGMA synchronous = NORMAL")?;
        let tx = conn.transaction_with_behavior(TransactionBehavior::Immediate)?;
        let version: i64 = tx.query_row("PRAGMA user_version", [], |row| row.get(0))?;
        if version == 0 {
            tx.execute_batch(LAYOUT)?;
        }
        tx.commit()?;
        Ok(Db {
            conn,
            fence: fault.fence(),
        })
    }

    /// E1–E8, E11: one ready job per payload, all or none; their ids in input order.
    pub fn insert(&mut self, queue: &str, jobs: &NewJobs<'_>, now: i64) -> rusqlite::Result<Vec<i64>> {
        let stamps = jobs.stamps(now);
        let tx = self.conn.transaction_with_behavior(TransactionBehavior::Immediate)?;
        let mut ids = Vec::with_capacity(jobs.payloads.len());
        {
            let mut insert = tx.prepare_cached(INSERT)?;
            for payload in jobs.payloads {
                insert.execute(&*stamps.params(&queue, payload))?;
                ids.push(tx.last_insert_rowid());
            }
        }
        tx.commit()?;
        Ok(ids)
    }

    /// K1–K3: the job holding `key` in `queue` and whether this call stored it, in one write transaction.
    pub fn insert_unique(
        &mut self,
        queue: &str,
        key: &str,
        jobs: &NewJobs<'_>,
        now: i64,
    ) -> rusqlite::Result<(i64, bool)> {
        let stamps = jobs.stamps(now);
        let mut params = stamps.params(&queue, &jobs.payloads[0]);
        params.push(&key);
        let tx = self.conn.transaction_with_behavior(TransactionBehavior::Immediate)?;
        let stored = tx.prepare_cached(INSERT_UNIQUE)?.execute(&*params)?;
        let answer = if stored == 1 {
            (tx.last_insert_rowid(), true)
        } else {
            let holder = tx.query_row(
                "SELECT id FROM jobs WHERE queue = ?1 AND unique_key = ?2 AND state <> 'dead'",
                params![queue, key],
                |row| row.get(0),
            )?;
            (holder, false)
        };
        tx.commit()?;
        Ok(answer)
    }

    /// C1–C5, C7, X1: up to `n` (≥ 1) claimable jobs under the claim `token`, in C2 order.
    pub fn claim(&mut self, queue: &str, worker: &str, n: i64, token: &str, now: i64) -> rusqlite::Result<Vec<Job>> {
        let mut claim = self.conn.prepare_cached(&format!("{CLAIM}{COLUMNS}"))?;
        let mut jobs = claim
            .query_map(params![queue, now, n, worker, token], Job::from_row)?
            .collect::<rusqlite::Result<Vec<Job>>>()?;
        jobs.sort_by_key(Job::c2_key); // RETURNING rows come back in no promised order
        Ok(jobs)
    }

    /// `head` (a `DELETE` or an `UPDATE … SET`, its own values from `?4` on) fenced to this claim; whether it
    /// changed the row.
    fn fenced(&mut self, head: &str, fenced: &[&dyn rusqlite::ToSql]) -> rusqlite::Result<bool> {
        let sql = format!("{head} WHERE {}", self.fence);
        Ok(self.conn.prepare_cached(&sql)?.execute(fenced)? == 1)
    }

    /// H2: delete the job if this claim still holds it.
    pub fn ack(&mut self, job_id: i64, token: &str, now: i64) -> rusqlite::Result<bool> {
        self.fenced("DELETE FROM jobs", params![job_id, now, token])
    }

    /// R1–R3: ready again at `run_at`; `last_error` replaced only when one is given (DEC-retry-keeps-error).
    pub fn retry(
        &mut self,
        job_id: i64,
        token: &str,
        now: i64,
        run_at: i64,
        error: Option<&str>,
    ) -> rusqlite::Result<bool> {
        let head = "UPDATE jobs SET state = 'ready', run_at = ?4, last_error = COALESCE(?5, last_error), \
            lease_expires_at = NULL, claimed_by = NULL, token = NULL";
        self.fenced(head, params![job_id, now, token, run_at, error])
    }

    /// L1–L3: ready again at `run_at` with the claim's attempt given back; `last_error` kept.
    pub fn release(&mut self, job_id: i64, token: &str, now: i64, run_at: i64) -> rusqlite::Result<bool> {
        let head = "UPDATE jobs SET state = 'ready', run_at = ?4, attempts = attempts - 1, \
            lease_expires_at = NULL, claimed_by = NULL, token = NULL";
        self.fenced(head, params![job_id, now, token, run_at])
    }

    /// R4, D1: dead at `now` with `last_error`.
    pub fn dead_letter(&mut self, job_id: i64, token: &str, now: i64, error: &str) -> rusqlite::Result<bool> {
        self.fenced(
            &format!("UPDATE jobs SET last_error = ?4, {DEAD}"),
            params![job_id, now, token, error],
        )
    }

    /// H3: the lease reset to `lease_expires_at` (an absolute reset, never an addition).
    pub fn heartbeat(&mut self, job_id: i64, token: &str, now: i64, lease_expires_at: i64) -> rusqlite::Result<bool> {
        self.fenced(
            "UPDATE jobs SET lease_expires_at = ?4",
            params![job_id, now, token, lease_expires_at],
        )
    }

    /// B1: delete each listed job of `queue` that is processing under a live lease, whoever holds it.
    pub fn ack_batch(&mut self, queue: &str, ids: &[i64], now: i64) -> rusqlite::Result<usize> {
        let tx = self.conn.transaction_with_behavior(TransactionBehavior::Immediate)?;
        let mut deleted = 0;
        {
            let mut delete = tx.prepare_cached(
                "DELETE FROM jobs WHERE id = ?1 AND queue = ?2 AND state = 'processing' AND lease_expires_at > ?3",
            )?;
            for id in ids {
                deleted += delete.execute(params![id, queue, now])?;
            }
        }
        tx.commit()?;
        Ok(deleted)
    }

    /// B2: delete the job of `queue` in any state.
    pub fn cancel(&mut self, queue: &str, job_id: i64) -> rusqlite::Result<bool> {
        let mut cancel = self
            .conn
            .prepare_cached("DELETE FROM jobs WHERE id = ?1 AND queue = ?2")?;
        Ok(cancel.execute(params![job_id, queue])? == 1)
    }

    /// B3: the job of `queue` as stored now.
    pub fn get(&mut self, queue: &str, job_id: i64) -> rusqlite::Result<Option<Job>> {
        let sql = format!("SELECT {COLUMNS} FROM jobs WHERE id = ?1 AND queue = ?2");
        self.conn
            .prepare_cached(&sql)?
            .query_row(params![job_id, queue], Job::from_row)
            .optional()
    }

    /// X2, X3 in DEC-sweep-order: purge dead jobs past retention, then expire, then dead-letter exhausted
    /// leases; how many moved. One `BEGIN IMMEDIATE` transaction, so concurrent sweeps move each job once.
    pub fn sweep(&mut self, queue: &str, now: i64, expired: &str, exhausted: &str) -> rusqlite::Result<usize> {
        let tx = self.conn.transaction_with_behavior(TransactionBehavior::Immediate)?;
        tx.prepare_cached(
            "DELETE FROM jobs WHERE queue = ?1 AND state = 'dead' AND dead_letter_retention_us IS NOT NULL \
             AND died_at + dead_letter_retention_us <= ?2",
        )?
        .execute(params![queue, now])?;
        let expire = format!(
            "UPDATE jobs SET last_error = ?3, {DEAD} \
             WHERE queue = ?1 AND state IN ('ready', 'processing') AND expires_at <= ?2"
        );
        let moved_expired = tx.prepare_cached(&expire)?.execute(params![queue, now, expired])?;
        let exhaust = format!(
            "UPDATE jobs SET last_error = ?3, {DEAD} \
             WHERE queue = ?1 AND state = 'processing' AND lease_expires_at <= ?2 AND attempts >= max_attempts"
        );
        let moved_exhausted = tx.prepare_cached(&exhaust)?.execute(params![queue, now, exhausted])?;
        tx.commit()?;
        Ok(moved_expired + moved_exhausted)
    }
}

/// The oracle (`count_stored_jobs`): how many jobs the file at `path` holds, read by a connection of its
/// own with one `SELECT`, none of the op code above; a file or table not yet created holds none.
pub fn count_jobs(path: &str) -> rusqlite::Result<i64> {
    if !Path::new(path).exists() {
        return Ok(0);
    }
    let conn = Connection::open_with_flags(path, OpenFlags::SQLITE_OPEN_READ_WRITE)?;
    conn.busy_timeout(BUSY_TIMEOUT)?;
    let has_table: bool = conn.query_row(
        "SELECT EXISTS (SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'jobs')",
        [],
        |row| row.get(0),
    )?;
    if !has_table {
        return Ok(0);
    }
    conn.query_row("SELECT count(*) FROM jobs", [], |row| row.get(0))
}
