'use strict';
// Part of the Node kit (engines_under_test/node_kit): the contract's public surface written once over an adapter's
// storage driver, as alkstore_contract.kit.front is for Python engines. Every op follows one order
// (DEC-order-of-checks): refuse a closed store (S3) -> refuse a spent handle (H4) -> validate every
// argument, so bad input stores nothing -> spend the handle -> the op's one clock read -> one driver call.
// What it decides for every adapter (the input rules, one-shot handles, the backoff draw and its seed,
// C2's order of a batch) is emulation of those clauses when the library under the driver does not do
// them itself: an adapter names them in its `emulates`.
//
// An adapter is an object with:
//   name, version                    the engine block of the handshake
//   capabilities, emulates           the handshake's lists (emulates: clause id -> one line why)
//   timeResolutionUs                 1, 1000 or 1000000
//   storage()                        what it stores into (a string, for the report)
//   unavailableReason()              null, or why it cannot run here
//   createLocation(), dropLocation(location), countStoredJobs(location)   (the last one is the oracle)
//   openDriver(location, { injected })    a driver for one store (below)
//   extraHandlers                    optional: more request types (type -> handler), e.g. networked ones
// Each may return a value or a promise. A driver has the methods of alkstore_contract.kit.driver's
// StorageDriver, each receiving `now` (a BigInt of microseconds on an injected store, else null):
//   insert(queue, jobs, now) -> ids            claim(queue, workerId, n, token, now) -> snapshots
//   ack(queue, id, token, now) -> bool         retry(queue, id, token, now, delayS, lastError) -> bool
//   deadLetter(queue, id, token, now, lastError) -> bool
//   heartbeat(queue, id, token, now, leaseS) -> bool
//   release(queue, id, token, now, delayS) -> bool   only an adapter declaring the `release` capability (L1-L4)
//   insertUnique(queue, key, jobs, now) -> {id, created}   only an adapter declaring `unique_keys` (K1-K4)
//   ackBatch(queue, ids, now) -> count         cancel(queue, id) -> bool      get(queue, id) -> snapshot|null
//   sweep(queue, now, expiredError, exhaustedError) -> count                  close()
// Snapshots are in the wire's form (docs/wire-protocol.md, "Encodings"); ids are whatever the library
// hands out, and a driver treats an id of another kind as "not found", never as an error.

const crypto = require('node:crypto');
const validate = require('./validate');
const { seededRandom, backoffDelayS } = require('./backoff');
const { storeClosed, handleSpent } = require('./errors');
const { serve } = require('./protocol');

const PROTOCOL_VERSION = 1;
const LAST_ERROR = validate.LITERALS.last_error;

/** contract C2's order on wire snapshots: priority descending, run_at ascending, id ascending. */
function c2Order(a, b) {
  const pa = BigInt(a.priority);
  const pb = BigInt(b.priority);
  if (pa !== pb) return pa > pb ? -1 : 1;
  const ra = BigInt(a.run_at);
  const rb = BigInt(b.run_at);
  if (ra !== rb) return ra < rb ? -1 : 1;
  if (a.id === b.id) return 0;
  return a.id < b.id ? -1 : 1;
}

/**
 * An enqueue's options checked (E7-E10, in the contract's order of checks) and resolved against its
 * queue's (E6): what every engine and driver stores beside each payload, durations in microseconds.
 */
function jobOptions(options, queueOpts) {
  const delayUs = validate.durationUs('delay', options.delay_s);
  const expiresUs = validate.durationUs('expires', options.expires_s);
  const maxAttempts = validate.maxAttempts(options.max_attempts);
  const priority = validate.priority(options.priority);
  return {
    priority,
    delayUs,
    runAtUs: options.run_at === null ? null : validate.instantUs('run_at', options.run_at),
    expiresUs,
    maxAttempts: maxAttempts ?? queueOpts.max_attempts,
    visibilityTimeoutS: queueOpts.visibility_timeout_s,
    backoffBaseS: queueOpts.backoff_base_s,
    deadLetterRetentionS: queueOpts.dead_letter_retention_s,
  };
}

/** When a new job is due: after `delayUs`, at `runAtUs`, or now (E2-E4); `nowUs` the op's instant. */
function runAtFrom(jobs, nowUs) {
  if (jobs.delayUs !== null) return nowUs + jobs.delayUs;
  return jobs.runAtUs ?? nowUs;
}

/** R1-R4 from the claim's snapshot: dead with its error once attempts are spent, else the delay to wait. */
function decideRetry(job, error, delayS, random) {
  if (job.attempts >= job.max_attempts) return { dead: true, lastError: error ?? LAST_ERROR.max_attempts_exceeded };
  return { dead: false, delayS: delayS ?? backoffDelayS(job.attempts, job.backoff_base_s, random), lastError: error };
}

/** The ids of an ack_batch, duplicates dropped (B1), an int and a str of the same text kept apart. */
function uniqueIds(ids) {
  const seen = new Map();
  for (const id of ids) seen.set(`${typeof id}:${id}`, id);
  return [...seen.values()];
}

/** The process's tables of stores, queues and handles, keyed by the ids the wire carries ("s1", "q4", "h17"). */
class Tables {
  constructor() {
    this.stores = new Map();
    this.queues = new Map();
    this.handles = new Map();
    this.nextId = 1;
  }

  id(prefix) {
    return `${prefix}${this.nextId++}`;
  }

  lookup(table, key, what) {
    const found = table.get(key);
    if (found === undefined) throw new Error(`no ${what} ${JSON.stringify(key)} in this process`);
    return found;
  }

  /** S3: every op on a closed store (or a queue or handle of one) is refused. */
  checkOpen(store, op) {
    if (store.closed) throw storeClosed(`${op}: the store is closed; open a new one to go on (S3)`);
  }

  /** A queue of an open store, its name checked (S1), under a new wire id. */
  queue({ store, name, opts }) {
    const found = this.lookup(this.stores, store, 'store');
    this.checkOpen(found, 'queue()');
    const id = this.id('q');
    this.queues.set(id, { store: found, name: validate.queueName(name), opts: validate.queueOpts(opts) });
    return id;
  }

  queueOf(request) {
    const queue = this.lookup(this.queues, request.queue, 'queue');
    this.checkOpen(queue.store, `${request.type}()`);
    return queue;
  }
}

class Front extends Tables {
  constructor(adapter) {
    super();
    this.adapter = adapter;
  }

  async hello(request) {
    if (!request.versions.includes(PROTOCOL_VERSION)) {
      throw new Error(`this engine speaks protocol versions [${PROTOCOL_VERSION}], not ${JSON.stringify(request.versions)}`);
    }
    const { adapter } = this;
    const result = {
      version: PROTOCOL_VERSION,
      engine: { name: adapter.name, version: adapter.version, language: `javascript (node ${process.versions.node})` },
      capabilities: adapter.capabilities,
      time_resolution_us: adapter.timeResolutionUs,
      storage: await adapter.storage(),
    };
    if (Object.keys(adapter.emulates).length > 0) result.emulates = adapter.emulates;
    return result;
  }

  async openStore({ location, clock, seed }) {
    const injected = clock === 'injected';
    const driver = await this.adapter.openDriver(location, { injected });
    const id = this.id('s');
    this.stores.set(id, { driver, injected, random: seededRandom(seed), closed: false });
    return id;
  }

  async closeStore({ store }) {
    const found = this.lookup(this.stores, store, 'store');
    if (!found.closed) {
      found.closed = true;
      await found.driver.close();
    }
    return null;
  }

  /** Every open store's driver closed: the protocol loop calls it when stdin ends. */
  async closeAll() {
    await Promise.allSettled([...this.stores.keys()].map((store) => this.closeStore({ store })));
  }

  /** The op's one clock read: the suite's instant on an injected store, null where the driver keeps time. */
  now(store, request) {
    if (!store.injected) return null;
    if (request.now === undefined) throw new Error(`${request.type}: a store opened with the injected clock needs now`);
    return BigInt(request.now);
  }

  async enqueueMany(request, payloads) {
    const queue = this.queueOf(request);
    const options = jobOptions(request.options, queue.opts);
    payloads.forEach((payload) => validate.payloadText('payload', payload));
    if (payloads.length === 0) return [];
    return queue.store.driver.insert(queue.name, { payloads, ...options }, this.now(queue.store, request));
  }

  /** K1-K4: one job holding `unique_key`, unless an unfinished job of the queue holds it. */
  async enqueueUnique(request) {
    const queue = this.queueOf(request);
    const key = validate.uniqueKey(request.unique_key);
    const options = jobOptions(request.options, queue.opts);
    validate.payloadText('payload', request.payload);
    const jobs = { payloads: [request.payload], ...options };
    return queue.store.driver.insertUnique(queue.name, key, jobs, this.now(queue.store, request));
  }

  async claim(request, n) {
    const queue = this.queueOf(request);
    const worker = validate.workerId(request.worker_id);
    if (n <= 0) return [];
    // One token per claim call, from the OS's randomness, never the store's seeded generator: two stores
    // opened with one seed must not mint the same token. Fencing is on id and token together.
    const token = crypto.randomUUID();
    const jobs = await queue.store.driver.claim(queue.name, worker, Math.min(n, Number.MAX_SAFE_INTEGER), token, this.now(queue.store, request));
    jobs.sort(c2Order);
    return jobs.map((job) => {
      const handle = this.id('h');
      this.handles.set(handle, { store: queue.store, queue: queue.name, job, token, spentBy: null });
      return { handle, job };
    });
  }

  async ackBatch(request) {
    const queue = this.queueOf(request);
    const ids = uniqueIds(request.ids);
    if (ids.length === 0) return 0;
    return queue.store.driver.ackBatch(queue.name, ids, this.now(queue.store, request));
  }

  async cancel(request) {
    const queue = this.queueOf(request);
    return queue.store.driver.cancel(queue.name, request.job_id);
  }

  async getJob(request) {
    const queue = this.queueOf(request);
    return queue.store.driver.get(queue.name, request.job_id);
  }

  async sweepExpired(request) {
    const queue = this.queueOf(request);
    const now = this.now(queue.store, request);
    return queue.store.driver.sweep(queue.name, now, LAST_ERROR.expired, LAST_ERROR.max_attempts_exceeded);
  }

  /** The handle of a handle op, checked in DEC-order-of-checks up to (not including) the arguments. */
  handleOf(request) {
    const handle = this.lookup(this.handles, request.handle, 'handle');
    this.checkOpen(handle.store, `${request.type}()`);
    if (handle.spentBy !== null) {
      throw handleSpent(
        `${request.type}() on job ${handle.job.id}: this handle's ${handle.spentBy}() already returned; ` +
          'ack, retry, fail and release are one-shot and any later op on the handle is refused (H4, L4)',
      );
    }
    return handle;
  }

  async ack(request) {
    const handle = this.handleOf(request);
    handle.spentBy = 'ack';
    const now = this.now(handle.store, request);
    return handle.store.driver.ack(handle.queue, handle.job.id, handle.token, now);
  }

  async retry(request) {
    const handle = this.handleOf(request);
    const error = validate.errorText(request.error);
    validate.durationUs('delay', request.delay_s);
    handle.spentBy = 'retry';
    const decision = decideRetry(handle.job, error, request.delay_s, handle.store.random);
    const now = this.now(handle.store, request);
    const { driver } = handle.store;
    if (decision.dead) return driver.deadLetter(handle.queue, handle.job.id, handle.token, now, decision.lastError);
    return driver.retry(handle.queue, handle.job.id, handle.token, now, decision.delayS, decision.lastError);
  }

  async fail(request) {
    const handle = this.handleOf(request);
    const error = validate.errorText(request.error);
    handle.spentBy = 'fail';
    const now = this.now(handle.store, request);
    return handle.store.driver.deadLetter(handle.queue, handle.job.id, handle.token, now, error ?? LAST_ERROR.failed);
  }

  async heartbeat(request) {
    const handle = this.handleOf(request);
    validate.durationUs('extend', request.extend_s, { positive: true });
    const leaseS = request.extend_s ?? handle.job.visibility_timeout_s;
    const now = this.now(handle.store, request);
    return handle.store.driver.heartbeat(handle.queue, handle.job.id, handle.token, now, leaseS);
  }

  /** L1-L4: the job back to ready at now + delay with the claim's attempt given back; one-shot like ack. */
  async release(request) {
    const handle = this.handleOf(request);
    validate.durationUs('delay', request.delay_s);
    handle.spentBy = 'release';
    const now = this.now(handle.store, request);
    return handle.store.driver.release(handle.queue, handle.job.id, handle.token, now, request.delay_s ?? 0);
  }

  /** The protocol's request types (docs/wire-protocol.md, "Messages") mapped to this front and its adapter. */
  handlers() {
    const { adapter } = this;
    return {
      hello: (r) => this.hello(r),
      unavailable_reason: () => adapter.unavailableReason(),
      create_location: () => adapter.createLocation(),
      drop_location: async ({ location }) => (await adapter.dropLocation(location), null),
      count_stored_jobs: ({ location }) => adapter.countStoredJobs(location),
      open_store: (r) => this.openStore(r),
      close_store: (r) => this.closeStore(r),
      queue: (r) => this.queue(r),
      enqueue: async (r) => (await this.enqueueMany(r, [r.payload]))[0],
      enqueue_many: (r) => this.enqueueMany(r, r.payloads),
      claim_one: async (r) => (await this.claim(r, 1))[0] ?? null,
      claim_batch: (r) => this.claim(r, r.n),
      ack_batch: (r) => this.ackBatch(r),
      cancel: (r) => this.cancel(r),
      get_job: (r) => this.getJob(r),
      sweep_expired: (r) => this.sweepExpired(r),
      ack: (r) => this.ack(r),
      retry: (r) => this.retry(r),
      fail: (r) => this.fail(r),
      heartbeat: (r) => this.heartbeat(r),
      ...(adapter.capabilities.includes('release') ? { release: (r) => this.release(r) } : {}),
      ...(adapter.capabilities.includes('unique_keys') ? { enqueue_unique: (r) => this.enqueueUnique(r) } : {}),
      ...(adapter.extraHandlers ?? {}),
    };
  }
}

/** Serve `adapter` through the wire until stdin closes, then close every store it opened. */
function serveAdapter(adapter) {
  const front = new Front(adapter);
  serve(front.handlers(), { onClose: () => front.closeAll() });
}

module.exports = { Front, serveAdapter, jobOptions, c2Order, runAtFrom, decideRetry, uniqueIds, PROTOCOL_VERSION };
