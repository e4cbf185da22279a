'use strict';
// The pg-boss runner of alkstore's runtime-faults mode (docs/runtime-faults.md): describe, enqueue JOBS_FILE,
// worker, inspect JOBS_FILE (protocol 2: getJobById by the id send() returned, kept in ALKSTORE_FAULTS_STATE). The worker is one PgBoss instance in its own Node process calling boss.work(queue, handler), as pg-boss's
// README runs workers, one job per fetch. pg-boss has no heartbeat: an active job whose expireInSeconds has passed
// is failed by the maintenance of any instance (every second here; default 120 s) and, with retries left, fetched
// again; the worker itself also gives up on a handler that outlives the expiration (its promise is raced against
// a timer) and fails the job, while the handler's own promise keeps running. The queue is created by the client,
// with its expiration and retry policy, before any worker starts; the handler writes the ledger around a real
// timer (../runner_protocol.js). The runner adds no unhandledRejection handler of its own: work() calls complete()
// without awaiting it (pg-boss 10.4.2 src/manager.js), so a completion that meets a database that is down rejects
// unhandled and Node's default ends the worker process, as a user's worker would end.
const fs = require('node:fs');
const path = require('node:path');
const PgBoss = require('pg-boss');
const { perform, serve } = require('../../kit/runner_protocol');

const EXPIRE_S = 3;
const MAINTENANCE_S = 1;
const POLLING_S = 0.5;
const RETRY_LIMIT = 2;
const README = 'node_modules/pg-boss/README.md (https://github.com/timgit/pg-boss/blob/10.4.2/README.md)';
const TYPES = 'node_modules/pg-boss/types.d.ts (https://github.com/timgit/pg-boss/blob/10.4.2/types.d.ts)';
const DOCS = 'https://github.com/timgit/pg-boss/blob/10.4.2/docs/readme.md';
// The outputs of an expiration: the maintenance's (src/plans.js, failJobsByTimeout) and the worker's own, which
// races the handler against the expiration (src/manager.js, "handler execution exceeded <ms>ms").
const EXPIRED = ['job failed by timeout in active state', 'handler execution exceeded'];
const EXPIRATION_QUOTE = 'How many seconds a job may be in active state before it is failed because of expiration.';
const IDS = () => path.join(process.env.ALKSTORE_FAULTS_STATE, 'pgboss_ids.json');
// getJobById's states (JobWithMetadata.state) other than created, retry and active, which depend on the job's times.
const FINAL = { completed: 'completed', failed: 'failed', cancelled: 'dead' };

function describe() {
  return {
    library: 'pg-boss',
    version: `pg-boss ${require('pg-boss/package.json').version}`,
    settings: [
      { name: 'createQueue(name, { expireInSeconds })', value: EXPIRE_S, doc: `${TYPES}: ExpirationOptions` },
      { name: 'createQueue(name, { retryLimit })', value: RETRY_LIMIT, doc: `${TYPES}: RetryOptions` },
      { name: 'createQueue(name, { retryDelay, retryBackoff })', value: '0, false', doc: `${TYPES}: RetryOptions` },
      { name: 'new PgBoss({ maintenanceIntervalSeconds })', value: MAINTENANCE_S, doc: `${TYPES}: MaintenanceOptions` },
      { name: 'new PgBoss({ supervise })', value: true, doc: `${TYPES}: MaintenanceOptions` },
      { name: 'boss.work(name, { batchSize })', value: 1, doc: `${TYPES}: JobPollingOptions` },
      { name: 'boss.work(name, { pollingIntervalSeconds })', value: POLLING_S, doc: `${TYPES}: JobPollingOptions` },
    ],
    lease_s: EXPIRE_S + MAINTENANCE_S,
    recovery_window_s: 15,
    faults: ['kill9', 'startup', 'pause', 'broker_restart', 'net_cut', 'slow_handler'],
    promises: [
      {
        outcome: 'twice',
        faults: ['*'],
        max: 0,
        quote: 'pg-boss relies on SKIP LOCKED, a feature built specifically for message queues to resolve record ' +
          'locking challenges inherent with relational databases. This provides exactly-once delivery and the ' +
          'safety of guaranteed atomic commits to asynchronous job processing.',
        doc: README,
      },
    ],
    caveats: [],
    inspect_doc: `${DOCS}: getJobById(name, id, options)`,
    policies: EXPIRED.map((reason) => ({
      state: 'failed',
      reason,
      setting: `createQueue(name, { expireInSeconds: ${EXPIRE_S}, retryLimit: ${RETRY_LIMIT} })`,
      quote: EXPIRATION_QUOTE,
      doc: DOCS,
    })),
    recovery_rules: [
      {
        state: 'running',
        after_s: EXPIRE_S + MAINTENANCE_S,
        rule: `an active job ${EXPIRE_S} s old is failed by the maintenance (every ${MAINTENANCE_S} s) and, with ` +
          'retries left, fetched again',
        quote: 'If an unhandled error occurs in a handler, fail() will automatically be called for the jobs, ' +
          'storing the error in the output property, making the job or jobs available for retry.',
        doc: DOCS,
      },
    ],
  };
}

// A worker's or client's instance; inspect's reads only (no maintenance, no schedules, no migration), so that
// reading a job does not expire it.
function boss({ readOnly = false } = {}) {
  const options = readOnly ? { supervise: false, schedule: false, migrate: false } : { supervise: true };
  const instance = new PgBoss({ connectionString: process.env.ALKSTORE_FAULTS_BROKER, maintenanceIntervalSeconds: MAINTENANCE_S, ...options });
  instance.on('error', (error) => process.stderr.write(`pg-boss error: ${error.message || error}\n`));
  return instance;
}

async function enqueue(jobs) {
  const client = boss();
  await client.start(); // installs pg-boss's schema on the throwaway cluster, before any worker
  const queue = process.env.ALKSTORE_FAULTS_QUEUE;
  await client.createQueue(queue, { expireInSeconds: EXPIRE_S, retryLimit: RETRY_LIMIT, retryDelay: 0, retryBackoff: false });
  const ids = {};
  for (const job of jobs) {
    ids[job.id] = await client.send(queue, job);
  }
  fs.writeFileSync(IDS(), JSON.stringify(ids));
  await client.stop({ graceful: false, wait: true });
}

// Seconds of a node-postgres interval ({ hours, minutes, seconds, milliseconds }).
function intervalSeconds(interval) {
  const { hours = 0, minutes = 0, seconds = 0, milliseconds = 0 } = interval || {};
  return hours * 3600 + minutes * 60 + seconds + milliseconds / 1000;
}

// One job's state from getJobById (null: pg-boss holds no such job, in its job table or its archive).
function stateOf(job, now) {
  const state = { state: 'absent', library_state: null, reason: null, until: null, held_by: null, attempts: null };
  if (!job) return state;
  Object.assign(state, { library_state: job.state, attempts: job.retryCount + (job.startedOn ? 1 : 0) });
  const startAfter = job.startAfter.getTime() / 1000;
  if (job.state === 'created' || job.state === 'retry') {
    return startAfter > now ? { ...state, state: 'scheduled', until: startAfter } : { ...state, state: 'queued' };
  }
  if (job.state === 'active') { // expired by the maintenance, then retried (recovery_rules)
    const until = job.startedOn.getTime() / 1000 + intervalSeconds(job.expireIn) + MAINTENANCE_S;
    return { ...state, state: 'running', until };
  }
  if (job.state in FINAL) {
    const reason = job.state === 'completed' ? null : String((job.output && (job.output.value || job.output).message) || job.state);
    return { ...state, state: FINAL[job.state], reason };
  }
  return { ...state, state: 'unknown', reason: `pg-boss state ${job.state} has no protocol state` };
}

async function inspect(jobs) {
  const ids = JSON.parse(fs.readFileSync(IDS(), 'utf8'));
  const client = boss({ readOnly: true });
  await client.start();
  try {
    const queue = process.env.ALKSTORE_FAULTS_QUEUE;
    const now = Date.now() / 1000;
    const states = [];
    for (const job of jobs) {
      const found = await client.getJobById(queue, ids[job.id], { includeArchive: true });
      states.push({ job: job.id, ...stateOf(found, now) });
    }
    return states;
  } finally {
    await client.stop({ graceful: false, wait: true });
  }
}

async function worker() {
  const instance = boss();
  await instance.start();
  await instance.work(
    process.env.ALKSTORE_FAULTS_QUEUE,
    { batchSize: 1, pollingIntervalSeconds: POLLING_S, includeMetadata: true },
    async ([job]) => {
      await perform(job.data, job.retryCount + 1);
      return { id: job.data.id };
    },
  );
  process.on('SIGTERM', () => instance.stop({ wait: true, timeout: 3000 }).then(() => process.exit(0)));
}

serve({ describe, enqueue, worker, inspect });
