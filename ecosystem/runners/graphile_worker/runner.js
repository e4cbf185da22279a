'use strict';
// The graphile-worker runner of alkstore's runtime-faults mode (docs/runtime-faults.md): describe, enqueue
// JOBS_FILE, worker. The worker is graphile-worker's own run() with a task list, one job at a time, in its own Node
// process, handling SIGTERM itself (a graceful shutdown) as its docs run it. graphile-worker has no lease shorter
// than its job lock: a job locked by a worker that died is handed to no other worker until the lock is 4 hours
// old, and the runner never calls WorkerUtils.forceUnlockWorkers (documented for workers that are no longer
// running, which a library cannot know of a worker that merely went silent). So the faults that need a worker to
// outlive its lease (pause, slow_handler) cannot happen within a run and are not taken, and a kill -9's job is not
// recovered within the run: the library's documented caveat, quoted below. The client installs graphile-worker's
// schema (WorkerUtils.migrate) before it enqueues; the handler writes the ledger around a real timer
// (../runner_protocol.js). The runner adds no unhandledRejection handler of its own: a completion that still meets
// a database that is down after graphile-worker's retries rejects unhandled (dist/sql/completeJobs.js,
// batchCompleteJobs) and Node's default ends the worker process, as a user's worker would end.
const { makeWorkerUtils, run } = require('graphile-worker');
const { perform, serve } = require('../runner_protocol');

const TASK = 'run_job';
const LOCK_S = 4 * 60 * 60;
const DOCS = 'https://worker.graphile.org/docs/library/run';
const QUEUE_DOCS = 'https://worker.graphile.org/docs/library/queue';
const INDEX_TYPES = 'node_modules/graphile-worker/dist/index.d.ts (graphile-worker 0.17.3)';
const INTERFACE_TYPES = 'node_modules/graphile-worker/dist/interfaces.d.ts (graphile-worker 0.17.3)';

function describe() {
  return {
    library: 'graphile-worker',
    version: `graphile-worker ${require('graphile-worker/package.json').version}`,
    settings: [
      { name: 'run({ concurrency })', value: 1, doc: DOCS },
      { name: 'run({ taskList })', value: `{ ${TASK} }`, doc: DOCS },
      { name: 'run({ noHandleSignals })', value: false, doc: DOCS },
      { name: 'WorkerUtils.migrate() before addJob', value: 'the client', doc: QUEUE_DOCS },
    ],
    lease_s: LOCK_S, // the truth, not a shortened one: so the runner takes neither pause nor slow_handler
    recovery_window_s: 15,
    faults: ['kill9', 'broker_restart', 'net_cut'],
    promises: [],
    caveats: [
      {
        outcome: 'lost',
        faults: ['kill9'],
        quote: 'a catastrophic failure (e.g. worker crash or kill) may result in the jobs being executed again ' +
          'once they expire (after 4 hours by default).',
        doc: `${INDEX_TYPES}: preset worker.completeJobBatchDelay`,
      },
      {
        outcome: 'lost',
        faults: ['kill9'],
        quote: 'Forcefully unlocks jobs for the given workers, leaving others unaffected. Only use this if the ' +
          'workers in question are no longer running (crashed, were terminated, are permanently unreachable, etc).',
        doc: `${INTERFACE_TYPES}: WorkerUtils.forceUnlockWorkers (not called by this runner)`,
      },
    ],
  };
}

async function enqueue(jobs) {
  const utils = await makeWorkerUtils({ connectionString: process.env.ALKSTORE_FAULTS_BROKER });
  try {
    await utils.migrate(); // graphile-worker's schema on the throwaway cluster, before any worker
    for (const job of jobs) {
      await utils.addJob(TASK, job);
    }
  } finally {
    await utils.release();
  }
}

async function worker() {
  const runner = await run({
    connectionString: process.env.ALKSTORE_FAULTS_BROKER,
    concurrency: 1,
    noHandleSignals: false,
    taskList: {
      [TASK]: (payload, helpers) => perform(payload, helpers.job.attempts),
    },
  });
  await runner.promise;
}

serve({ describe, enqueue, worker });
