'use strict';
// The Node engine as an adapter of the Node kit's front (alkstore-node-kit, engines_under_test/node_kit): the front
// keeps the contract's surface (stores, queues, one-shot handles, DEC-order-of-checks, the retry decision,
// C2's order of a batch); this file is the storage driver under it, over better-sqlite3 (storage.js), and
// the handshake's facts. A store opened with the suite's clock takes `now` from each op (T2) and never reads
// a clock of its own; on the system clock the driver reads the wall clock once per op.

const { performance } = require('node:perf_hooks');
const { runAtFrom, validate } = require('alkstore-node-kit');
const storage = require('./storage');
const pkg = require('../package.json');

const CAPABILITIES = ['durable', 'injectable_clock', 'multi_process', 'release', 'shared_location', 'unique_keys'];

/** The wall clock in microseconds (Date.now() has milliseconds only; the performance clock adds the rest). */
function systemNowUs() {
  return BigInt(Math.round((performance.timeOrigin + performance.now()) * 1000));
}

/** A row as the wire's job snapshot (docs/wire-protocol.md, "Encodings"). */
function snapshot(row) {
  const instant = (value) => (value === null ? null : value.toString());
  return {
    id: Number(row.id),
    queue: row.queue,
    payload: row.payload,
    state: row.state,
    priority: row.priority.toString(),
    attempts: Number(row.attempts),
    max_attempts: Number(row.max_attempts),
    run_at: instant(row.run_at),
    expires_at: instant(row.expires_at),
    enqueued_at: instant(row.enqueued_at),
    lease_expires_at: instant(row.lease_expires_at),
    claimed_by: row.claimed_by,
    visibility_timeout_s: row.visibility_timeout_s,
    backoff_base_s: row.backoff_base_s,
    dead_letter_retention_s: row.dead_letter_retention_s,
    last_error: row.last_error,
    died_at: instant(row.died_at),
  };
}

/** A job id as the suite sent it, as this engine's ids are (integers); null: no job of ours has it (DEC-id-kind). */
function ownId(jobId) {
  return typeof jobId === 'number' && Number.isSafeInteger(jobId) && jobId > 0 ? BigInt(jobId) : null;
}

/** Seconds as the whole microseconds the layout stores beside them (null stays null). */
function stampUs(seconds) {
  return seconds === null ? null : validate.secondsToUs(seconds);
}

/** One store's driver (node_kit's front.js says what a driver is): one connection, its prepared statements. */
class SqliteDriver {
  constructor(location) {
    this.db = new storage.Storage(location);
  }

  insert(queue, jobs, now) {
    const row = this.insertRow(queue, jobs, now);
    const { db } = this;
    return db.write(() => jobs.payloads.map((payload) => Number(db.insert.run({ ...row, payload }).lastInsertRowid)));
  }

  /** K1-K3: the partial unique index jobs_unique_key decides; on a conflict, the holder (one write transaction). */
  insertUnique(queue, key, jobs, now) {
    const row = { ...this.insertRow(queue, jobs, now), payload: jobs.payloads[0], unique_key: key };
    const { db } = this;
    return db.write(() => {
      const stored = db.insertUnique.get(row);
      if (stored !== undefined) return { id: Number(stored.id), created: true };
      return { id: Number(db.keyHolder.get({ queue, unique_key: key }).id), created: false };
    });
  }

  /** The named parameters every job of one insert shares: all but its payload. */
  insertRow(queue, jobs, now) {
    const at = now ?? systemNowUs();
    return {
      queue,
      priority: jobs.priority,
      max_attempts: jobs.maxAttempts,
      run_at: runAtFrom(jobs, at),
      expires_at: jobs.expiresUs === null ? null : at + jobs.expiresUs,
      now: at,
      vt: jobs.visibilityTimeoutS,
      vt_us: stampUs(jobs.visibilityTimeoutS),
      base: jobs.backoffBaseS,
      retention: jobs.deadLetterRetentionS,
      retention_us: stampUs(jobs.deadLetterRetentionS),
    };
  }

  claim(queue, worker, n, token, now) {
    const args = { queue, now: now ?? systemNowUs(), worker, token, n: BigInt(n) };
    return this.db.write(() => this.db.claim.all(args)).map(snapshot);
  }

  ack(queue, id, token, now) {
    return this.db.ack.run({ id, token, now: now ?? systemNowUs() }).changes === 1;
  }

  retry(queue, id, token, now, delayS, lastError) {
    const at = now ?? systemNowUs();
    const runAt = at + validate.secondsToUs(delayS);
    return this.db.requeue.run({ id, token, now: at, error: lastError, run_at: runAt }).changes === 1;
  }

  release(queue, id, token, now, delayS) {
    const at = now ?? systemNowUs();
    const runAt = at + validate.secondsToUs(delayS);
    return this.db.giveBack.run({ id, token, now: at, run_at: runAt }).changes === 1;
  }

  deadLetter(queue, id, token, now, lastError) {
    return this.db.bury.run({ id, token, now: now ?? systemNowUs(), error: lastError }).changes === 1;
  }

  heartbeat(queue, id, token, now, leaseS) {
    const args = { id, token, now: now ?? systemNowUs(), lease_us: validate.secondsToUs(leaseS) };
    return this.db.heartbeat.run(args).changes === 1;
  }

  ackBatch(queue, ids, now) {
    const own = [...new Set(ids.map(ownId).filter((id) => id !== null))];
    if (own.length === 0) return 0;
    const at = now ?? systemNowUs();
    const { db } = this;
    return db.write(() => own.reduce((count, id) => count + db.ackHeld.run({ queue, id, now: at }).changes, 0));
  }

  cancel(queue, jobId) {
    const id = ownId(jobId);
    return id !== null && this.db.cancel.run({ queue, id }).changes === 1;
  }

  get(queue, jobId) {
    const id = ownId(jobId);
    const row = id === null ? undefined : this.db.get.get({ queue, id });
    return row === undefined ? null : snapshot(row);
  }

  sweep(queue, now, expired, exhausted) {
    const args = { queue, now: now ?? systemNowUs(), expired, exhausted };
    const { db } = this;
    return db.write(() => {
      db.purge.run({ queue, now: args.now });
      return db.expire.run(args).changes + db.exhaust.run(args).changes;
    });
  }

  close() {
    this.db.close();
  }
}

/** The adapter the front serves; `name` lets a broken variant of this engine (tests/mutants/) call itself by its own name. */
function adapter(name = 'node-sqlite') {
  return {
    name,
    version: pkg.version,
    capabilities: CAPABILITIES,
    emulates: {},
    timeResolutionUs: 1,
    storage: () => `SQLite ${storage.sqliteVersion()} (better-sqlite3 ${require('better-sqlite3/package.json').version})`,
    unavailableReason: () => null,
    createLocation: () => storage.createLocation(),
    dropLocation: (location) => storage.dropLocation(location),
    countStoredJobs: (location) => storage.countStoredJobs(location),
    openDriver: (location) => new SqliteDriver(location),
  };
}

module.exports = { adapter, SqliteDriver, snapshot };
