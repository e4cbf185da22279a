'use strict';
// The BullMQ runner of alkstore's runtime-faults mode (docs/runtime-faults.md): describe, enqueue JOBS_FILE,
// worker, inspect JOBS_FILE (protocol 2: Job.fromId and job.getState(), by the job's own id as jobId). The worker is one BullMQ Worker in its own Node process, as BullMQ's guide runs workers, with a 5 s
// lock (default 30 s) renewed by the worker, and a stalled-job check every 2 s (default 30 s), so a dead
// worker's job is found within seconds; its handler writes the ledger around a real timer (../runner_protocol.js).
// After a run ends ok, BullMQ's moveToCompleted either succeeds (the worker emits 'completed') or is refused
// because the job's lock is no longer this run's token (it throws "Missing lock for job ID" or "Lock mismatch for
// job ID", which the worker emits as 'error'; node_modules/bullmq/dist/cjs/classes/worker.js, handleCompleted and
// retryIfFailed): the runner writes the ledger's ack record from those two events.
const { Job, Queue, Worker } = require('bullmq');
const IORedis = require('ioredis');
const { perform, record, serve } = require('../../kit/runner_protocol');

const LOCK_MS = 5000;
const STALLED_MS = 2000;
const STALLED = 'https://docs.bullmq.io/guide/jobs/stalled';
const OPTIONS = 'https://api.docs.bullmq.io/interfaces/v5.WorkerOptions.html';
const JOB_API = 'https://api.docs.bullmq.io/classes/v5.Job.html';
const STALLED_LIMIT = 'job stalled more than allowable limit';
// job.getState()'s words other than active, delayed and unknown.
const STATES = { completed: 'completed', failed: 'failed', waiting: 'queued', prioritized: 'queued', 'waiting-children': 'queued' };

function describe() {
  return {
    library: 'bullmq',
    version: `bullmq ${require('bullmq/package.json').version}, ioredis ${require('ioredis/package.json').version}`,
    settings: [
      { name: 'WorkerOptions.lockDuration', value: LOCK_MS, doc: OPTIONS },
      { name: 'WorkerOptions.stalledInterval', value: STALLED_MS, doc: OPTIONS },
      { name: 'WorkerOptions.maxStalledCount', value: 1, doc: OPTIONS },
      { name: 'WorkerOptions.concurrency', value: 1, doc: OPTIONS },
      { name: 'ioredis maxRetriesPerRequest', value: null, doc: 'https://docs.bullmq.io/guide/connections' },
    ],
    lease_s: (LOCK_MS + STALLED_MS) / 1000,
    recovery_window_s: 20,
    faults: ['kill9', 'startup', 'pause', 'broker_restart_aof', 'broker_restart_volatile', 'net_cut', 'slow_handler'],
    promises: [
      {
        outcome: 'lost',
        faults: ['kill9', 'startup'],
        max: 0,
        quote: 'When a worker is not able to notify the queue that it is still working on a given job, that job is ' +
          'moved back to the waiting list, or to the failed set.',
        doc: STALLED,
      },
      {
        outcome: 'stale',
        faults: ['pause', 'slow_handler'],
        max: 0,
        quote: 'An error that can be thrown by the workers has the following structure: “Missing lock for job 1234. ' +
          'moveToFinished.” This error occurs when a job being processed by a worker unexpectedly loses its “lock.”',
        doc: 'https://docs.bullmq.io/guide/troubleshooting',
      },
    ],
    caveats: [],
    inspect_doc: `${JOB_API}#fromId, #getState`,
    policies: [
      {
        state: 'failed',
        reason: STALLED_LIMIT,
        setting: 'WorkerOptions.maxStalledCount',
        quote: 'If a job stalls more than a predefined limit (see the maxStalledCount option), the job will be failed ' +
          'permanently with the error "job stalled more than allowable limit".',
        doc: STALLED,
      },
    ],
    recovery_rules: [
      {
        state: 'running',
        after_s: (LOCK_MS + 2 * STALLED_MS) / 1000,
        rule: `an active job whose ${LOCK_MS / 1000} s lock lapsed is moved back to wait by the stalled-job check ` +
          `(every ${STALLED_MS / 1000} s)`,
        quote: 'When a worker is not able to notify the queue that it is still working on a given job, that job is ' +
          'moved back to the waiting list, or to the failed set.',
        doc: STALLED,
      },
    ],
  };
}

function connection() {
  return new IORedis(process.env.ALKSTORE_FAULTS_BROKER, { maxRetriesPerRequest: null });
}

async function enqueue(jobs) {
  const redis = connection();
  const queue = new Queue(process.env.ALKSTORE_FAULTS_QUEUE, { connection: redis });
  for (const job of jobs) {
    await queue.add('run', job, { jobId: job.id });
  }
  await queue.close();
  await redis.quit();
}

// One job's state: its getState() word, and for an active job the lapse of its lock (PTTL of its lock key) plus
// two stalled checks (the first marks it, the second moves it back).
async function stateOf(queue, redis, id, now) {
  const job = await Job.fromId(queue, id);
  const state = { state: 'absent', library_state: null, reason: null, until: null, held_by: null, attempts: null };
  if (!job) return state;
  const word = await job.getState();
  Object.assign(state, { library_state: word, attempts: job.attemptsStarted || job.attemptsMade });
  if (word === 'active') {
    const lockMs = Math.max(0, await redis.pttl(`${queue.toKey(id)}:lock`));
    return { ...state, state: 'running', until: now + (lockMs + 2 * STALLED_MS) / 1000, held_by: job.processedBy || null };
  }
  if (word === 'delayed') return { ...state, state: 'scheduled', until: (job.timestamp + job.delay) / 1000 };
  if (word in STATES) {
    return { ...state, state: STATES[word], reason: word === 'failed' ? job.failedReason : null };
  }
  return { ...state, state: word === 'unknown' ? 'absent' : 'unknown', reason: word === 'unknown' ? 'a job hash in none of the queue\'s lists' : `BullMQ state ${word}` };
}

async function inspect(jobs) {
  const redis = connection();
  const queue = new Queue(process.env.ALKSTORE_FAULTS_QUEUE, { connection: redis });
  try {
    const now = Date.now() / 1000;
    const states = [];
    for (const job of jobs) {
      states.push({ job: job.id, ...(await stateOf(queue, redis, job.id, now)) });
    }
    return states;
  } finally {
    await queue.close();
    await redis.quit();
  }
}

// The refusals of a completion, by BullMQ's finishedErrors (classes/finished-errors.js): the lock gone or taken by
// another run's token, the job gone, or the job no longer active.
const REFUSED = /^(?:Missing lock for job|Lock mismatch for job|Missing key for job) (\S+?)\.|^Job (\S+) is not in the \S+ state/;

function worker() {
  const awaiting = new Map(); // job id → attempt of a run in this process that ended ok, its completion unsettled
  const settle = (id, accepted) => {
    if (!awaiting.has(id)) return;
    record('ack', id, awaiting.get(id), { accepted });
    awaiting.delete(id);
  };
  const worker = new Worker(
    process.env.ALKSTORE_FAULTS_QUEUE,
    async (job) => {
      const attempt = job.attemptsMade + 1;
      await perform(job.data, attempt);
      awaiting.set(job.data.id, attempt);
      return job.data.id;
    },
    { connection: connection(), concurrency: 1, lockDuration: LOCK_MS, stalledInterval: STALLED_MS, maxStalledCount: 1 },
  );
  worker.on('completed', (job) => settle(job.data.id, true));
  worker.on('error', (error) => {
    process.stderr.write(`worker error: ${error}\n`);
    const refused = REFUSED.exec(String(error && error.message));
    if (refused) settle(refused[1] || refused[2], false);
  });
  process.on('SIGTERM', () => worker.close().then(() => process.exit(0)));
}

serve({ describe, enqueue, worker, inspect });
