'use strict';
// Part of the graphile-worker adapter (ecosystem/graphile_worker/adapter): node_kit's storage driver over
// graphile-worker's public API, one store's worth (docs/ecosystem.md says which verdicts follow from it).
//
// graphile-worker (0.17.3) keeps a job as a row of `_private_jobs`: task_id (the task identifier), payload
// (json), priority (smallint, lower runs first), run_at, attempts (counted at each fetch), max_attempts
// (smallint), last_error, locked_at/locked_by (the fetching pool's id; a lock older than 4 hours is released),
// updated_at. A job whose attempts reached max_attempts and that nobody holds is permanently failed. The map:
//
// - a queue is a task identifier (graphile's queue_name serialises its jobs, one at a time, so it is not a
//   partition); the payload text and the contract's stamps travel in graphile's payload;
// - insert is WorkerUtils.addJobs (one statement: all or nothing), priority negated, runAt a JS Date;
// - insertUnique (K1-K4) is WorkerUtils.addJob with the key as its jobKey, in graphile's default mode 'replace';
// - claim runs graphile's runTaskListOnce once per job, held in the task function (held.js). It releases no
//   lock: graphile-worker's docs reserve WorkerUtils.forceUnlockWorkers for workers that are no longer running,
//   and the library's own recovery of a lock is its 4-hour expiry, so a job whose contract lease lapsed is not
//   handed out again before then (C1 fails on the library's documented rule, never on a construct of ours);
// - ack returns from the handler (graphile completes by id), retry throws (graphile fails the job: error text,
//   unlock, its own backoff) and then WorkerUtils.rescheduleJobs sets the contract's delay; dead-lettering
//   throws and then WorkerUtils.permanentlyFailJobs marks the job failed (graphile has no in-handler fail);
// - heartbeat has no counterpart (graphile has no per-job heartbeat or lease): it extends nothing;
// - ack_batch and cancel are WorkerUtils.completeJobs, which deletes only jobs nobody holds;
// - sweep: graphile has no expiry, no dead-letter retention and no sweep to run;
// - a snapshot reads the row (graphile's `jobs` view leaves out the payload) at graphile's server clock.
// The claim token is not stored or checked: graphile completes a job by its id.

const { Pool } = require('pg');
const { makeWorkerUtils } = require('graphile-worker');
const { runAtFrom, validate } = require('alkstore-node-kit');
const { CLAIMS, quote } = require('./location');
const { claimOptions, takeOne, queueTasks } = require('./held');
const { stderrLogger } = require('./logging');

const MS_US = 1000n;

/** Microseconds as a JS Date: graphile-worker takes runAt as a Date, which holds milliseconds. */
function dateOf(us) {
  return new Date(Number(us / MS_US));
}

/** An instant in µs cut to the millisecond, the resolution this adapter declares (runAt travels as a Date). */
function wireInstant(us) {
  return us === null ? null : ((BigInt(us) / MS_US) * MS_US).toString();
}

/** A job id as the suite sent it, as graphile's ids are (positive integers); null: no job of ours has it. */
function ownId(jobId) {
  return typeof jobId === 'number' && Number.isSafeInteger(jobId) && jobId > 0 ? jobId : null;
}

const US = (column) => `(extract(epoch from ${column}) * 1000000)::bigint::text`;

class GraphileDriver {
  constructor(location, pool, utils, claimClient) {
    this.schema = location.schema;
    this.pool = pool;
    this.utils = utils;
    this.claimClient = claimClient;
    this.claims = new Map();
    this.queues = new Map();
    this.held = new Map();
    const s = quote(this.schema);
    this.jobs = `${s}._private_jobs j join ${s}._private_tasks t on t.id = j.task_id`;
    this.claimsTable = `${s}.${CLAIMS}`;
  }

  static async open(location) {
    const parsed = JSON.parse(location);
    const pool = new Pool({ connectionString: parsed.dsn, max: 4, connectionTimeoutMillis: 5000 });
    pool.on('error', (error) => process.stderr.write(`an idle Postgres connection failed: ${error.message}\n`));
    try {
      const utils = await makeWorkerUtils({ pgPool: pool, schema: parsed.schema, logger: stderrLogger });
      const claimClient = await pool.connect();
      return new GraphileDriver(parsed, pool, utils, claimClient);
    } catch (error) {
      await pool.end();
      throw error;
    }
  }

  async query(text, values = []) {
    return (await this.pool.query(text, values)).rows;
  }

  /** The server's now in µs: graphile reads time from the server (now()), so the adapter reads the same clock. */
  async serverNowUs() {
    return BigInt((await this.query(`select ${US('now()')} as now`))[0].now);
  }

  /** The stamps and ready time of `jobs`, from one read of graphile's clock (the server's now()). */
  async newJobs(jobs) {
    const nowUs = (await this.serverNowUs() / MS_US) * MS_US;
    const stamps = {
      visibility_timeout_s: jobs.visibilityTimeoutS,
      backoff_base_s: jobs.backoffBaseS,
      dead_letter_retention_s: jobs.deadLetterRetentionS,
      enqueued_at: nowUs.toString(),
      expires_at: jobs.expiresUs === null ? null : (nowUs + jobs.expiresUs).toString(),
    };
    // graphile runs the lowest priority first; the contract the highest. The decimal text keeps a 64-bit
    // value exact on its way to Postgres, which refuses one beyond graphile's smallint column itself.
    const spec = { runAt: dateOf(runAtFrom(jobs, nowUs)), maxAttempts: jobs.maxAttempts, priority: (-jobs.priority).toString() };
    return { stamps, spec };
  }

  async insert(queue, jobs) {
    const { stamps, spec } = await this.newJobs(jobs);
    const added = await this.utils.addJobs(jobs.payloads.map((text) => ({ identifier: queue, payload: { payload: text, alkstore: stamps }, ...spec })));
    return added.map((job) => Number(job.id));
  }

  /**
   * K1-K4 through graphile's jobKey in its default mode ('replace'): add_job inserts the job, or updates the
   * unlocked job holding the key (its revision counts the updates: 0 is a job this call made), or, when the job
   * holding the key is locked, clears that job's key and inserts a new one.
   */
  async insertUnique(queue, key, jobs) {
    const { stamps, spec } = await this.newJobs(jobs);
    const job = await this.utils.addJob(queue, { payload: jobs.payloads[0], alkstore: stamps }, { ...spec, jobKey: key });
    return { id: Number(job.id), created: Number(job.revision) === 0 };
  }

  queueRunner(queue) {
    let runner = this.queues.get(queue);
    if (runner === undefined) {
      runner = { options: claimOptions(this.schema, stderrLogger), tasks: queueTasks(queue, this.claims) };
      this.queues.set(queue, runner);
    }
    return runner;
  }

  async claim(queue, workerId, n, token) {
    const { options, tasks } = this.queueRunner(queue);
    const taken = [];
    for (let i = 0; i < n; i++) {
      const one = await takeOne(options, tasks, this.claimClient, this.claims);
      if (one === null) break;
      await this.query(`insert into ${this.claimsTable} (pool_id, worker_id) values ($1, $2)`, [one.job.locked_by, workerId]);
      this.held.set(`${token}:${one.job.id}`, one.claim);
      taken.push(await this.get(queue, Number(one.job.id)));
    }
    return taken;
  }

  heldClaim(id, token) {
    const key = `${token}:${id}`;
    const claim = this.held.get(key);
    this.held.delete(key);
    return claim;
  }

  async ack(queue, id, token) {
    const claim = this.heldClaim(id, token);
    if (claim === undefined) return false;
    await claim.decide('ack');
    return true;
  }

  async retry(queue, id, token, now, delayS, lastError) {
    const claim = this.heldClaim(id, token);
    if (claim === undefined) return false;
    await claim.decide('retry', lastError ?? (await this.lastError(id)) ?? '');
    // The op's one clock read, once graphile has released the job: its ready time counts from then.
    const nowUs = await this.serverNowUs();
    await this.utils.rescheduleJobs([String(id)], { runAt: dateOf(nowUs + validate.secondsToUs(delayS)) });
    return true;
  }

  async deadLetter(queue, id, token, now, lastError) {
    const claim = this.heldClaim(id, token);
    if (claim === undefined) return false;
    await claim.decide('fail', lastError);
    await this.utils.permanentlyFailJobs([String(id)], lastError);
    return true;
  }

  /** graphile-worker has no per-job heartbeat and no lease to extend: nothing is extended. */
  async heartbeat() {
    return false;
  }

  async lastError(id) {
    const rows = await this.query(`select j.last_error from ${this.jobs} where j.id = $1`, [id]);
    return rows.length === 0 ? null : rows[0].last_error;
  }

  /** The ids among `ids` that are jobs of `queue` (S4): graphile's own calls act on ids of any task. */
  async ofQueue(queue, ids) {
    const numbers = ids.map(ownId).filter((id) => id !== null);
    if (numbers.length === 0) return [];
    const rows = await this.query(`select j.id::text as id from ${this.jobs} where t.identifier = $1 and j.id = any($2::bigint[])`, [
      queue,
      numbers,
    ]);
    return rows.map((row) => row.id);
  }

  async ackBatch(queue, ids) {
    const found = await this.ofQueue(queue, ids);
    return found.length === 0 ? 0 : (await this.utils.completeJobs(found)).length;
  }

  async cancel(queue, id) {
    const found = await this.ofQueue(queue, [id]);
    return found.length === 1 && (await this.utils.completeJobs(found)).length === 1;
  }

  async get(queue, id) {
    const number = ownId(id);
    if (number === null) return null;
    const rows = await this.query(
      `select j.id::text as id, t.identifier as queue, j.payload->>'payload' as payload, j.payload->'alkstore' as stamps,
              (-j.priority)::text as priority, j.attempts, j.max_attempts, j.last_error,
              ${US('j.run_at')} as run_at, ${US('j.locked_at')} as locked_at, ${US('j.updated_at')} as updated_at,
              c.worker_id
         from ${this.jobs} left join ${this.claimsTable} c on c.pool_id = j.locked_by
        where t.identifier = $1 and j.id = $2`,
      [queue, number],
    );
    return rows.length === 0 ? null : snapshot(rows[0]);
  }

  async sweep() {
    return 0;
  }

  async close() {
    this.claimClient.release(true);
    await this.utils.release();
    await this.pool.end();
  }
}

/** The wire's snapshot of one row: processing while locked, dead once attempts are spent and nobody holds it. */
function snapshot(row) {
  const { stamps } = row;
  const processing = row.locked_at !== null;
  const dead = !processing && row.attempts >= row.max_attempts;
  const lease = processing ? BigInt(row.locked_at) + validate.secondsToUs(stamps.visibility_timeout_s) : null;
  return {
    id: Number(row.id),
    queue: row.queue,
    payload: row.payload,
    state: processing ? 'processing' : dead ? 'dead' : 'ready',
    priority: row.priority,
    attempts: row.attempts,
    max_attempts: row.max_attempts,
    run_at: wireInstant(row.run_at),
    expires_at: wireInstant(stamps.expires_at),
    enqueued_at: wireInstant(stamps.enqueued_at),
    lease_expires_at: wireInstant(lease),
    claimed_by: processing ? row.worker_id : null,
    visibility_timeout_s: stamps.visibility_timeout_s,
    backoff_base_s: stamps.backoff_base_s,
    dead_letter_retention_s: stamps.dead_letter_retention_s,
    last_error: row.last_error,
    died_at: dead ? wireInstant(row.updated_at) : null,
  };
}

module.exports = { GraphileDriver, snapshot, wireInstant };
