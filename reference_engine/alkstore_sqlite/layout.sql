-- The layout of an alkstore SQLite file, as it is today: one description that every SQLite engine of the
-- project lays out a new file by. The reference engine (schema.py) runs it statement by statement; the
-- Node engine (engines_under_test/alkstore_node/src/storage.js) runs it as it is; the Rust engine
-- (engines_under_test/alkstore_rust/src/storage.rs) compiles it in. Each engine's tests hold a file it
-- wrote to this one. A file of an older layout reaches it through the reference engine's MIGRATIONS
-- (schema.py), which tests/test_sqlite_layout.py holds to it too: change the layout here and add a
-- migration step, together, and raise user_version.
--
-- Instants are INTEGER microseconds since the epoch. The two durations SQL adds to an instant, the
-- visibility timeout (a claim's lease) and the dead-letter retention (the sweep's purge), are kept twice:
-- REAL seconds, which read back exactly as given, and INTEGER microseconds rounded once as Python's
-- timedelta(seconds=...) rounds, so `now + stamp` is the same instant in every engine. `id` is
-- AUTOINCREMENT: ids grow in enqueue order (C2's last key) and are never reused.
-- An engine runs it on a new file only (user_version 0), in one write transaction.
-- `unique_key` (layout 3, contract K1–K4) is written where ALTER TABLE ADD COLUMN leaves it in an older
-- file, so a migrated file and a new one keep the same text.
CREATE TABLE IF NOT EXISTS jobs (
    id                       INTEGER PRIMARY KEY AUTOINCREMENT,
    queue                    TEXT    NOT NULL,
    payload                  TEXT    NOT NULL,
    state                    TEXT    NOT NULL CHECK (state IN ('ready', 'processing', 'dead')),
    priority                 INTEGER NOT NULL,
    attempts                 INTEGER NOT NULL DEFAULT 0,
    max_attempts             INTEGER NOT NULL,
    run_at                   INTEGER NOT NULL,
    expires_at               INTEGER,
    enqueued_at              INTEGER NOT NULL,
    lease_expires_at         INTEGER,
    claimed_by               TEXT,
    token                    TEXT,
    visibility_timeout_s     REAL    NOT NULL,
    visibility_timeout_us    INTEGER NOT NULL,
    backoff_base_s           REAL    NOT NULL,
    dead_letter_retention_s  REAL,
    dead_letter_retention_us INTEGER,
    last_error               TEXT,
    died_at                  INTEGER
, unique_key TEXT);
-- The claim path for ready jobs: equality on (queue, state), then already in C2 order.
CREATE INDEX IF NOT EXISTS jobs_claim ON jobs (queue, state, priority DESC, run_at, id);
-- The sweep's purge of dead jobs past retention, a range scan: SQLite uses an expression or partial
-- index only for the very same terms, so the purge says `died_at + dead_letter_retention_us` word for word.
CREATE INDEX IF NOT EXISTS jobs_dead_purge ON jobs (queue, died_at + dead_letter_retention_us)
    WHERE state = 'dead' AND dead_letter_retention_us IS NOT NULL;
-- The sweep's expiry, over live jobs that can expire.
CREATE INDEX IF NOT EXISTS jobs_live_expiry ON jobs (queue, expires_at)
    WHERE expires_at IS NOT NULL AND state IN ('ready', 'processing');
-- Leases, only where there are any: reclaims and the sweep's exhausted jobs.
CREATE INDEX IF NOT EXISTS jobs_processing_lease ON jobs (queue, lease_expires_at) WHERE state = 'processing';
-- Contract K1: one unfinished job per key and queue; a dead job holds none, and an acked or cancelled one
-- is gone. An enqueue_unique's INSERT names this index in its ON CONFLICT, so concurrent ones store one job.
CREATE UNIQUE INDEX IF NOT EXISTS jobs_unique_key ON jobs (queue, unique_key)
    WHERE unique_key IS NOT NULL AND state <> 'dead';
PRAGMA user_version = 3;
