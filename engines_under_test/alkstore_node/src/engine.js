'use strict';
// The contract's surface on this process's tables of stores, queues and handles (docs/contract.md).
// Each op follows DEC-order-of-checks: closed store, spent handle, arguments, spend the handle, the one
// clock read, then storage. A store opened with the suite's clock takes `now` from each op (T2) and
// never reads a clock of its own.

const crypto = require('node:crypto');
const { performance } = require('node:perf_hooks');
const storage = require('./storage');
const validate = require('../../../ecosystem/node_kit/src/validate');
const { handleSpent } = require('../../../ecosystem/node_kit/src/errors');
const { seededRandom, backoffDelayS } = require('../../../ecosystem/node_kit/src/backoff');
const { Tables, jobOptions, runAtFrom } = require('../../../ecosystem/node_kit/src/front');

const LAST_ERROR = validate.LITERALS.last_error;

/** The wall clock in microseconds (Date.now() has milliseconds only; the performance clock adds the rest). */
function systemNowUs() {
  return BigInt(Math.round((performance.timeOrigin + performance.now()) * 1000));
}

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

function c2Order(a, b) {
  if (a.priority !== b.priority) return a.priority > b.priority ? -1 : 1;
  if (a.run_at !== b.run_at) return a.run_at < b.run_at ? -1 : 1;
  return a.id < b.id ? -1 : 1;
}

/** A job id as the suite sent it, as this engine's ids are (integers); null: no job of ours has it (DEC-id-kind). */
function ownId(jobId) {
  return typeof jobId === 'number' && Number.isSafeInteger(jobId) && jobId > 0 ? BigInt(jobId) : null;
}

class Engine extends Tables {

  openStore({ location, clock, seed }) {
    const id = this.id('s');
    this.stores.set(id, {
      id,
      storage: new storage.Storage(location),
      injected: clock === 'injected',
      random: seededRandom(seed),
      closed: false,
    });
    return id;
  }

  closeStore({ store }) {
    const found = this.lookup(this.stores, store, 'store');
    if (!found.closed) {
      found.closed = true;
      found.storage.close();
    }
    return null;
  }

  /** The op's one clock read: the suite's instant on an injected store, else the wall clock. */
  now(store, request) {
    if (store.injected) {
      if (request.now === undefined) throw new Error(`${request.type}: a store opened with the injected clock needs now`);
      return BigInt(request.now);
    }
    return systemNowUs();
  }

  enqueueMany(request, payloads) {
    const queue = this.queueOf(request);
    const options = jobOptions(request.options, queue.opts);
    payloads.forEach((payload) => validate.payloadText('payload', payload));
    if (payloads.length === 0) return [];
    const now = this.now(queue.store, request);
    const row = {
      queue: queue.name,
      priority: options.priority,
      max_attempts: options.maxAttempts,
      run_at: runAtFrom(options, now),
      expires_at: options.expiresUs === null ? null : now + options.expiresUs,
      now,
      vt: options.visibilityTimeoutS,
      base: options.backoffBaseS,
      retention: options.deadLetterRetentionS,
    };
    const { storage: db } = queue.store;
    return db.write(() => payloads.map((payload) => Number(db.insert.run({ ...row, payload }).lastInsertRowid)));
  }

  enqueue(request) {
    return this.enqueueMany(request, [request.payload])[0];
  }

  claim(request, n) {
    const queue = this.queueOf(request);
    const worker = validate.workerId(request.worker_id);
    if (n <= 0) return [];
    const now = this.now(queue.store, request);
    const token = crypto.randomUUID();
    const rows = queue.store.storage.write(() =>
      queue.store.storage.claim.all({ queue: queue.name, now, worker, token, n: BigInt(Math.min(n, 2 ** 53)) }),
    );
    rows.sort(c2Order);
    return rows.map((row) => {
      const handle = this.id('h');
      this.handles.set(handle, { store: queue.store, id: row.id, token: row.claim_token, spentBy: null });
      return { handle, job: snapshot(row) };
    });
  }

  claimOne(request) {
    return this.claim(request, 1)[0] ?? null;
  }

  claimBatch(request) {
    return this.claim(request, request.n);
  }

  ackBatch(request) {
    const queue = this.queueOf(request);
    const ids = [...new Set(request.ids.map(ownId).filter((id) => id !== null))];
    if (ids.length === 0) return 0;
    const now = this.now(queue.store, request);
    const { storage: db } = queue.store;
    return db.write(() => ids.reduce((count, id) => count + db.ackHeld.run({ queue: queue.name, id, now }).changes, 0));
  }

  cancel(request) {
    const queue = this.queueOf(request);
    const id = ownId(request.job_id);
    if (id === null) return false;
    return queue.store.storage.cancel.run({ queue: queue.name, id }).changes === 1;
  }

  getJob(request) {
    const queue = this.queueOf(request);
    const id = ownId(request.job_id);
    const row = id === null ? undefined : queue.store.storage.get.get({ queue: queue.name, id });
    return row === undefined ? null : snapshot(row);
  }

  sweepExpired(request) {
    const queue = this.queueOf(request);
    const now = this.now(queue.store, request);
    const { storage: db } = queue.store;
    const args = { queue: queue.name, now, expired: LAST_ERROR.expired, exhausted: LAST_ERROR.max_attempts_exceeded };
    return db.write(() => {
      db.purge.run({ queue: queue.name, now });
      return db.expire.run(args).changes + db.exhaust.run(args).changes;
    });
  }

  /** The handle of a handle op, checked in DEC-order-of-checks up to (not including) the arguments. */
  handleOf(request) {
    const handle = this.lookup(this.handles, request.handle, 'handle');
    this.checkOpen(handle.store, `${request.type}()`);
    if (handle.spentBy !== null) {
      throw handleSpent(
        `${request.type}() on job ${handle.id}: this handle's ${handle.spentBy}() already returned; ` +
          'ack, retry and fail are one-shot and any later op on the handle is refused (H4)',
      );
    }
    return handle;
  }

  fence(handle, now) {
    return { id: handle.id, token: handle.token, now };
  }

  ack(request) {
    const handle = this.handleOf(request);
    handle.spentBy = 'ack';
    const now = this.now(handle.store, request);
    return handle.store.storage.ack.run(this.fence(handle, now)).changes === 1;
  }

  retry(request) {
    const handle = this.handleOf(request);
    const error = validate.errorText(request.error);
    const delay = validate.durationUs('delay', request.delay_s);
    handle.spentBy = 'retry';
    const now = this.now(handle.store, request);
    const { storage: db, random } = handle.store;
    const fence = this.fence(handle, now);
    return db.write(() => {
      const held = db.held.get(fence);
      if (held === undefined) return false;
      if (held.attempts >= held.max_attempts) {
        return db.bury.run({ ...fence, error: error ?? LAST_ERROR.max_attempts_exceeded }).changes === 1;
      }
      const delayUs = delay ?? validate.secondsToUs(backoffDelayS(Number(held.attempts), held.backoff_base_s, random));
      return db.requeue.run({ ...fence, error, run_at: now + delayUs }).changes === 1;
    });
  }

  fail(request) {
    const handle = this.handleOf(request);
    const error = validate.errorText(request.error);
    handle.spentBy = 'fail';
    const now = this.now(handle.store, request);
    return handle.store.storage.bury.run({ ...this.fence(handle, now), error: error ?? LAST_ERROR.failed }).changes === 1;
  }

  heartbeat(request) {
    const handle = this.handleOf(request);
    const extend = validate.durationUs('extend', request.extend_s, { positive: true });
    const now = this.now(handle.store, request);
    return handle.store.storage.heartbeat.run({ ...this.fence(handle, now), extend_us: extend }).changes === 1;
  }
}

module.exports = { Engine, snapshot };
