'use strict';
// One SQLite database per location, one connection per store (so several stores on one location, in one
// process or many, share one state through SQLite's locking: P1, P2). WAL and synchronous=NORMAL, as the
// reference engine (DEC-sqlite-synchronous): a commit survives kill -9 of the process (P3). The file's layout
// is the project's one (layout.sql, below); every integer is read as a BigInt.

const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const Database = require('better-sqlite3');

/** The project's one SQLite layout (reference_engine/alkstore_sqlite/layout.sql), run as it is on a new file. */
const LAYOUT_PATH = path.join(__dirname, '..', '..', '..', 'reference_engine', 'alkstore_sqlite', 'layout.sql');
const LAYOUT = fs.readFileSync(LAYOUT_PATH, 'utf8');

const JOB_COLUMNS =
  'id, queue, payload, state, priority, attempts, max_attempts, run_at, expires_at, enqueued_at, ' +
  'lease_expires_at, claimed_by, visibility_timeout_s, backoff_base_s, dead_letter_retention_s, last_error, died_at';

const CLAIMABLE =
  "queue = @queue AND ((state = 'ready' AND run_at <= @now) OR " +
  "(state = 'processing' AND lease_expires_at <= @now AND attempts < max_attempts)) " +
  'AND (expires_at IS NULL OR expires_at > @now)';
const HELD = "id = @id AND state = 'processing' AND token = @token AND lease_expires_at > @now";
const RELEASED = 'lease_expires_at = NULL, claimed_by = NULL, token = NULL';

function openDatabase(file) {
  const db = new Database(file, { timeout: 30000 });
  db.defaultSafeIntegers(true);
  db.pragma('journal_mode = WAL');
  db.pragma('synchronous = NORMAL');
  // Laid out once, under the write lock (BEGIN IMMEDIATE): two processes opening one new file at once
  // create it once, the second finding the layout in place.
  db.transaction(() => {
    if (Number(db.pragma('user_version', { simple: true })) === 0) db.exec(LAYOUT);
  }).immediate();
  return db;
}

/** The statements of one store's connection, prepared once. */
class Storage {
  constructor(file) {
    this.db = openDatabase(file);
    const db = this.db;
    this.insert = db.prepare(
      'INSERT INTO jobs (queue, payload, state, priority, attempts, max_attempts, run_at, expires_at, enqueued_at, ' +
        'visibility_timeout_s, visibility_timeout_us, backoff_base_s, dead_letter_retention_s, dead_letter_retention_us) ' +
        "VALUES (@queue, @payload, 'ready', @priority, 0, @max_attempts, @run_at, @expires_at, @now, @vt, @vt_us, @base, " +
        '@retention, @retention_us)',
    );
    this.insertUnique = db.prepare(
      'INSERT INTO jobs (queue, payload, state, priority, attempts, max_attempts, run_at, expires_at, enqueued_at, ' +
        'visibility_timeout_s, visibility_timeout_us, backoff_base_s, dead_letter_retention_s, dead_letter_retention_us, ' +
        "unique_key) VALUES (@queue, @payload, 'ready', @priority, 0, @max_attempts, @run_at, @expires_at, @now, @vt, " +
        '@vt_us, @base, @retention, @retention_us, @unique_key) ' +
        "ON CONFLICT (queue, unique_key) WHERE unique_key IS NOT NULL AND state <> 'dead' DO NOTHING RETURNING id",
    );
    this.keyHolder = db.prepare("SELECT id FROM jobs WHERE queue = @queue AND unique_key = @unique_key AND state <> 'dead'");
    this.claim = db.prepare(
      `UPDATE jobs SET state = 'processing', claimed_by = @worker, attempts = attempts + 1, ` +
        'lease_expires_at = @now + visibility_timeout_us, token = @token ' +
        `WHERE id IN (SELECT id FROM jobs WHERE ${CLAIMABLE} ORDER BY priority DESC, run_at, id LIMIT @n) ` +
        `RETURNING ${JOB_COLUMNS}`,
    );
    this.get = db.prepare(`SELECT ${JOB_COLUMNS} FROM jobs WHERE queue = @queue AND id = @id`);
    this.ack = db.prepare(`DELETE FROM jobs WHERE ${HELD}`);
    this.requeue = db.prepare(
      `UPDATE jobs SET state = 'ready', run_at = @run_at, last_error = coalesce(@error, last_error), ${RELEASED} WHERE ${HELD}`,
    );
    this.giveBack = db.prepare(
      `UPDATE jobs SET state = 'ready', run_at = @run_at, attempts = attempts - 1, ${RELEASED} WHERE ${HELD}`,
    );
    this.bury = db.prepare(`UPDATE jobs SET state = 'dead', last_error = @error, died_at = @now, ${RELEASED} WHERE ${HELD}`);
    this.heartbeat = db.prepare(`UPDATE jobs SET lease_expires_at = @now + @lease_us WHERE ${HELD}`);
    this.ackHeld = db.prepare(
      "DELETE FROM jobs WHERE queue = @queue AND id = @id AND state = 'processing' AND lease_expires_at > @now",
    );
    this.cancel = db.prepare('DELETE FROM jobs WHERE queue = @queue AND id = @id');
    this.purge = db.prepare(
      "DELETE FROM jobs WHERE queue = @queue AND state = 'dead' AND dead_letter_retention_us IS NOT NULL " +
        'AND died_at + dead_letter_retention_us <= @now',
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

module.exports = { LAYOUT_PATH, Storage, createLocation, dropLocation, countStoredJobs, sqliteVersion };
