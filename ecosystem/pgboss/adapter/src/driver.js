'use strict';
// Part of the pg-boss adapter (ecosystem/pgboss/adapter): the Node kit's storage driver over one PgBoss
// instance, each step one call of pg-boss's public API (engines_under_test/node_kit/src/front.js says what a driver
// is). What pg-boss has no call for is left to fail, and the adapter's expected-failures.txt says why:
// - no per-claim token: complete() and fail() act by job id on any active job (H1, H5);
// - no heartbeat: a lease is started_on + expireInSeconds, and nothing moves it (H3);
// - no delay on a retry: fail() waits pg-boss's own retryDelay/retryBackoff (R1, R2, R5), and fail()
//   retries while retries remain, so a job cannot be failed for good at once (D1);
// - unique keys are singletonKey on a `stately` queue (insertUnique), which holds a key per state, not through
//   a claim; pg-boss has no release (fail() counts a retry), and its `db` option's caller's transaction cannot
//   travel over the wire protocol;
// - a lapsed lease is reclaimable only once pg-boss's maintenance (supervise, each second here, or
//   sweep_expired) has failed it by timeout back to retry.
// pg-boss reads time from the server (now()) only, so the store is never opened with the suite's clock.

const crypto = require('node:crypto');
const { runAtFrom } = require('alkstore-node-kit');
const { jobData, isoUs, snapshot } = require('./rows');

const DEADLOCK = '40P01';
/** The adapter's own table: job id -> the worker id of its latest claim (C3's claimed_by; pg-boss records none). */
const CLAIMANTS = 'alkstore_claimants';
const CREATE_ATTEMPTS = 5;
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/** A job id as pg-boss's are (uuid text), or null: an id of another kind names no job of pg-boss's. */
function ownId(jobId) {
  return typeof jobId === 'string' && UUID.test(jobId) ? jobId : null;
}

class PgBossDriver {
  constructor(boss, db, schema) {
    this.boss = boss;
    this.db = db;
    this.schema = schema;
    this.queues = new Set();
  }

  /**
   * pg-boss needs a queue created before it takes jobs (createQueue is idempotent: ON CONFLICT DO NOTHING), so
   * the first call on a queue, in any store, decides its policy: `standard` (pg-boss's default), or `stately`
   * when that call is an enqueue_unique (a singletonKey dedupes only on a policy queue).
   */
  async ensureQueue(queue, policy = 'standard') {
    if (this.queues.has(queue)) return;
    for (let attempt = 1; ; attempt++) {
      try {
        await this.boss.createQueue(queue, { policy });
        break;
      } catch (error) {
        // Two processes creating one queue at once can deadlock on the partition it attaches: try again.
        if (error.code !== DEADLOCK || attempt === CREATE_ATTEMPTS) throw error;
      }
    }
    this.queues.add(queue);
  }

  /** The retention from start_after that ends at the contract's expiry, now + expires (E5). */
  async retentionS(jobs) {
    const now = await this.serverNowUs();
    const start = runAtFrom(jobs, now);
    return Number(now + jobs.expiresUs - start) / 1e6;
  }

  /** The server's now, for keepUntil: pg-boss's own instants are all the server's now(). */
  async serverNowUs() {
    const { rows } = await this.db.executeSql("SELECT (extract(epoch FROM now()) * 1000000)::bigint::text AS us");
    return BigInt(rows[0].us);
  }

  /**
   * pg-boss's options for the contract's: retryLimit counts retries (max_attempts - 1); retryDelay and
   * expireInSeconds are whole seconds, at least 1 (pg-boss's integer columns and its attorney's floor), so
   * the backoff base is rounded and the visibility timeout rounded up to what pg-boss takes.
   */
  baseOptions(jobs) {
    const options = {
      priority: Number(jobs.priority),
      retryLimit: jobs.maxAttempts - 1,
      retryDelay: Math.max(1, Math.round(jobs.backoffBaseS)),
      retryBackoff: true,
      expireInSeconds: Math.max(1, Math.ceil(jobs.visibilityTimeoutS)),
    };
    if (jobs.delayUs !== null) options.startAfter = Number(jobs.delayUs) / 1e6;
    else if (jobs.runAtUs !== null) options.startAfter = isoUs(jobs.runAtUs);
    return options;
  }

  async insert(queue, jobs) {
    await this.ensureQueue(queue);
    const options = this.baseOptions(jobs);
    if (jobs.payloads.length === 1) {
      // send()'s expiry of a job not yet started is its retention, counted from start_after.
      if (jobs.expiresUs !== null) options.retentionSeconds = await this.retentionS(jobs);
      const id = await this.boss.send(queue, jobData(jobs.payloads[0], jobs), options);
      if (id === null) throw new Error('pg-boss send() stored nothing (returned null)');
      return [id];
    }
    // insert() is one statement for the whole list (E11), but returns no ids: give each job its id, as
    // pg-boss's own ids are (random uuids); insert() takes the retention as an instant (keepUntil).
    if (jobs.expiresUs !== null) options.keepUntil = isoUs((await this.serverNowUs()) + jobs.expiresUs);
    const rows = jobs.payloads.map((payload) => ({ id: crypto.randomUUID(), name: queue, data: jobData(payload, jobs), ...options }));
    await this.boss.insert(rows);
    return rows.map((row) => row.id);
  }

  /**
   * K1-K4 through pg-boss's singletonKey on a `stately` queue, whose unique index admits one job per key and
   * state (created, retry, active): send() stores nothing and returns null while a created job holds the key,
   * and the holder is then read from pg-boss's table. It may leave `created` between the two: send again.
   */
  async insertUnique(queue, key, jobs) {
    await this.ensureQueue(queue, 'stately');
    const options = { ...this.baseOptions(jobs), singletonKey: key };
    if (jobs.expiresUs !== null) options.retentionSeconds = await this.retentionS(jobs);
    for (;;) {
      const id = await this.boss.send(queue, jobData(jobs.payloads[0], jobs), options);
      if (id !== null) return { id, created: true };
      const { rows } = await this.db.executeSql(
        `SELECT id FROM ${this.schema}.job WHERE name = $1 AND singleton_key = $2 AND state = 'created'`,
        [queue, key],
      );
      if (rows.length > 0) return { id: rows[0].id, created: false };
    }
  }

  async claim(queue, workerId, n) {
    await this.ensureQueue(queue);
    const rows = await this.boss.fetch(queue, { batchSize: n, includeMetadata: true });
    if (rows.length > 0) {
      await this.db.executeSql(
        `INSERT INTO ${this.schema}.${CLAIMANTS} (job_id, worker_id) SELECT UNNEST($1::uuid[]), $2 ` +
          'ON CONFLICT (job_id) DO UPDATE SET worker_id = EXCLUDED.worker_id',
        [rows.map((row) => row.id), workerId],
      );
    }
    return rows.map((row) => snapshot(row, queue, workerId));
  }

  async claimant(id) {
    const { rows } = await this.db.executeSql(`SELECT worker_id FROM ${this.schema}.${CLAIMANTS} WHERE job_id = $1`, [id]);
    return rows.length === 1 ? rows[0].worker_id : null;
  }

  async complete(queue, ids) {
    const own = ids.map(ownId).filter((id) => id !== null);
    if (own.length === 0) return 0;
    return (await this.boss.complete(queue, own)).affected;
  }

  async ack(queue, id) {
    return (await this.complete(queue, [id])) === 1;
  }

  async ackBatch(queue, ids) {
    return this.complete(queue, ids);
  }

  /** fail(): back to retry while retries remain, else failed; pg-boss picks the delay and keeps `output`. */
  async fail(queue, id, lastError) {
    const own = ownId(id);
    if (own === null) return false;
    const output = lastError === null ? null : { message: lastError };
    return (await this.boss.fail(queue, own, output)).affected === 1;
  }

  async retry(queue, id, token, now, delayS, lastError) {
    return this.fail(queue, id, lastError);
  }

  async deadLetter(queue, id, token, now, lastError) {
    return this.fail(queue, id, lastError);
  }

  /** pg-boss 10 has no heartbeat: a lease is started_on + expireInSeconds and no call extends it. */
  async heartbeat() {
    return false;
  }

  async getRow(queue, id) {
    const own = ownId(id);
    if (own === null) return null;
    await this.ensureQueue(queue);
    return this.boss.getJobById(queue, own);
  }

  /** B2 deletes in any state; a completed (acked) or cancelled row is already gone for the contract. */
  async cancel(queue, id) {
    const row = await this.getRow(queue, id);
    if (row === null || snapshot(row, queue) === null) return false;
    return (await this.boss.deleteJob(queue, row.id)).affected === 1;
  }

  async get(queue, id) {
    const row = await this.getRow(queue, id);
    return row === null ? null : snapshot(row, queue, await this.claimant(row.id));
  }

  /** pg-boss's maintenance (expire, archive, drop), on demand; how many of the queue's jobs it left failed anew. */
  async sweep(queue) {
    const failed = async () => {
      const { rows } = await this.db.executeSql(`SELECT count(*)::int AS n FROM ${this.schema}.job WHERE name = $1 AND state = 'failed'`, [queue]);
      return rows[0].n;
    };
    const before = await failed();
    await this.boss.maintain();
    return Math.max(0, (await failed()) - before);
  }

  async close() {
    await this.boss.stop({ graceful: false, wait: true, close: true });
  }
}

module.exports = { PgBossDriver, ownId, CLAIMANTS };
