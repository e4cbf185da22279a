'use strict';
// One SQLite database per location, one connection per store (so several stores on one location, in one
// process or many, share one state through SQLite's locking: P1, P2). WAL and synchronous=NORMAL, as the
// reference engine (DEC-sqlite-synchronous): a commit survives kill -9 of the process (P3).
// Every instant is an INTEGER of microseconds since the epoch; every integer is read as a BigInt.

const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const Database = require('better-sqlite3');

const SCHEMA = `
CREATE TABLE IF NOT EXISTS jobs (
  id INTEGER PRIMARY KEY AUTOINCREMENT,
  queue TEXT NOT NULL,
  payload TEXT NOT NULL,
  state TEXT NOT NULL,
  priority INTEGER NOT NULL,
  attempts INTEGER NOT NULL,
  max_attempts INTEGER NOT NULL,
  run_at INTEGER NOT NULL,
  expires_at INTEGER,
  enqueued_at INTEGER NOT NULL,
  lease_expires_at INTEGER,
  claimed_by TEXT,
  claim_token TEXT,
  visibility_timeout_s REAL NOT NULL,
  backoff_base_s REAL NOT NULL,
  dead_letter_retention_s REAL,
  last_error TEXT,
  died_at INTEGER
);
CREATE INDEX IF NOT EXISTS jobs_claim ON jobs (queue, state, priority DESC, run_at, id);
`;

const JOB_COLUMNS =
  'id, queue, payload, state, priority, attempts, max_attempts, run_at, expires_at, enqueued_at, ' +
  'lease_expires_at, claimed_by, visibility_timeout_s, backoff_base_s, dead_letter_retention_s, last_error, died_at';

const CLAIMABLE =
  "queue = @queue AND ((state = 'ready' AND run_at <= @now) OR " +
  "(state = 'processing' AND lease_expires_at <= @now AND attempts < max_attempts)) " +
  'AND (expires_at IS NULL OR expires_at > @now)';
const HELD = "id = @id AND state = 'processing' AND claim_token = @token AND lease_expires_at > @now";
const LEASE_US = 'CAST(round(visibility_timeout_s * 1000000.0) AS INTEGER)';
const RELEASED = 'lease_expires_at = NULL, claimed_by = NULL, claim_token = NULL';

function openDatabase(file) {
  const db = new Database(file, { timeout: 30000 });
  db.defaultSafeIntegers(true);
  db.pragma('journal_mode = WAL');
  db.pragma('synchronous = NORMAL');
  db.exec(SCHEMA);
  return db;
}

/** The statements of one store's connection, prepared once. */
class Storage {
  constructor(file) {
    this.db = openDatabase(file);
    const db = this.db;
    this.insert = db.prepare(
      'INSERT INTO jobs (queue, payload, state, priority, attempts, max_attempts, run_at, expires_at, enqueued_at, ' +
        'visibility_timeout_s, backoff_base_s, dead_letter_retention_s) VALUES ' +
        "(@queue, @payload, 'ready', @priority, 0, @max_attempts, @run_at, @expires_at, @now, @vt, @base, @retention)",
    );
    this.claim = db.prepare(
      `UPDATE jobs SET state = 'processing', claimed_by = @worker, attempts = attempts + 1, ` +
        `lease_expires_at = @now + ${LEASE_US}, claim_token = @token || '-' || id ` +
        `WHERE id IN (SELECT id FROM jobs WHERE ${CLAIMABLE} ORDER BY priority DESC, run_at, id LIMIT @n) ` +
        `RETURNING ${JOB_COLUMNS}, claim_token`,
    );
    this.get = db.prepare(`SELECT ${JOB_COLUMNS} FROM jobs WHERE queue = @queue AND id = @id`);
    this.held = db.prepare(`SELECT attempts, max_attempts, backoff_base_s FROM jobs WHERE ${HELD}`);
    this.ack = db.prepare(`DELETE FROM jobs WHERE ${HELD}`);
    this.requeue = db.prepare(
      `UPDATE jobs SET state = 'ready', run_at = @run_at, last_error = coalesce(@error, last_error), ${RELEASED} WHERE ${HELD}`,
    );
    this.bury = db.prepare(`UPDATE jobs SET state = 'dead', last_error = @error, died_at = @now, ${RELEASED} WHERE ${HELD}`);
    this.heartbeat = db.prepare(
      `UPDATE jobs SET lease_expires_at = @now + coalesce(@extend_us, ${LEASE_US}) WHERE ${HELD}`,
    );
    this.ackHeld = db.prepare(
      "DELETE FROM jobs WHERE queue = @queue AND id = @id AND state = 'processing' AND lease_expires_at > @now",
    );
    this.cancel = db.prepare('DELETE FROM jobs WHERE queue = @queue AND id = @id');
    this.purge = db.prepare(
      "DELETE FROM jobs WHERE queue = @queue AND state = 'dead' AND dead_letter_retention_s IS NOT NULL " +
        'AND died_at + CAST(round(dead_letter_retention_s * 1000000.0) AS INTEGER) <= @now',
    );
    this.expire = db.prepare(
      `UPDATE jobs SET state = 'dead', last_error = @expired, died_at = @now, ${RELEASED} ` +
        "WHERE queue = @queue AND state IN ('ready', 'processing') AND expires_at <= @now",
    );
    this.exhaust = db.prepare(
      `UPDATE jobs SET state = 'dead', last_error = @exhausted, died_at = @now, ${RELEASED} ` +
        "WHERE queue = @queue AND state = 'processing' AND lease_expires_at <= @now AND attempts >= max_attempts",
    );
  }

  /** `fn` in one write transaction, taken at its start (BEGIN IMMEDIATE: no lock upgrade to fail midway). */
  write(fn) {
    return this.db.transaction(fn).immediate();
  }

  close() {
    this.db.close();
  }
}

function createLocation() {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'alkstore-node-'));
  const file = path.join(dir, 'jobs.db');
  openDatabase(file).close();
  return file;
}

function dropLocation(file) {
  fs.rmSync(path.dirname(file), { recursive: true, force: true });
}

/** The oracle (count_stored_jobs): a fresh read-only connection, none of the ops' statements. */
function countStoredJobs(file) {
  const db = new Database(file, { readonly: true, fileMustExist: true, timeout: 30000 });
  try {
    return Number(db.prepare('SELECT count(*) AS n FROM jobs').pluck().safeIntegers(true).get());
  } finally {
    db.close();
  }
}

function sqliteVersion() {
  const db = new Database(':memory:');
  try {
    return db.prepare('SELECT sqlite_version()').pluck().get();
  } finally {
    db.close();
  }
}

module.exports = { Storage, createLocation, dropLocation, countStoredJobs, sqliteVersion };
