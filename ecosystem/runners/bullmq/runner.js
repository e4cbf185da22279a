'use strict';
// The BullMQ runner of alkstore's runtime-faults mode (docs/runtime-faults.md): describe, enqueue JOBS_FILE,
// worker. The worker is one BullMQ Worker in its own Node process, as BullMQ's guide runs workers, with a 5 s
// lock (default 30 s) renewed by the worker, and a stalled-job check every 2 s (default 30 s), so a dead
// worker's job is found within seconds; its handler writes the ledger around a real timer (../runner_protocol.js).
// After a run ends ok, BullMQ's moveToCompleted either succeeds (the worker emits 'completed') or is refused
// because the job's lock is no longer this run's token (it throws "Missing lock for job ID" or "Lock mismatch for
// job ID", which the worker emits as 'error'; node_modules/bullmq/dist/cjs/classes/worker.js, handleCompleted and
// retryIfFailed): the runner writes the ledger's ack record from those two events.
const { Queue, Worker } = require('bullmq');
const IORedis = require('ioredis');
const { perform, record, serve } = require('../runner_protocol');

const LOCK_MS = 5000;
const STALLED_MS = 2000;
const STALLED = 'https://docs.bullmq.io/guide/workers/stalled-jobs';
const OPTIONS = 'https://api.docs.bullmq.io/interfaces/v5.WorkerOptions.html';

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
    faults: ['kill9', 'pause', 'broker_restart_aof', 'broker_restart_volatile', 'net_cut', 'slow_handler'],
    promises: [
      {
        outcome: 'lost',
        faults: ['kill9'],
        max: 0,
        quote: 'A stalled job is moved back to the waiting status and will be processed again by another worker, ' +
          'or if it has reached its maximum number of stalls, it will be moved to the failed set.',
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

serve({ describe, enqueue, worker });
