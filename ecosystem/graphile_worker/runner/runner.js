'use strict';
// The graphile-worker runner of alkstore's runtime-faults mode (docs/runtime-faults.md): describe, enqueue
// JOBS_FILE, worker, inspect JOBS_FILE (protocol 2). The worker is graphile-worker's own run() with a task list,
// one job at a time, in its own Node process, handling SIGTERM itself (a graceful shutdown) as its docs run it. graphile-worker has no lease shorter
// than its job lock: a job locked by a worker that died is handed to no other worker until the lock is 4 hours
// old, and the runner never calls WorkerUtils.forceUnlockWorkers (documented for workers that are no longer
// running, which a library cannot know of a worker that merely went silent). So the faults that need a worker to
// outlive its lease (pause, slow_handler) cannot happen within a run and are not taken, and a kill -9's job is not
// recovered within the run but 4 hours later: the library's documented recovery rule, quoted below. The client installs graphile-worker's
// schema (WorkerUtils.migrate) before it enqueues; the handler writes the ledger around a real timer
// (../runner_protocol.js). The runner adds no unhandledRejection handler of its own: a completion that still meets
// a database that is down after graphile-worker's retries rejects unhandled (dist/sql/completeJobs.js,
// batchCompleteJobs) and Node's default ends the worker process, as a user's worker would end. inspect reads each
// job's row in the graphile_worker.jobs view by the id addJob returned (kept in ALKSTORE_FAULTS_STATE): no row is
// absent (completing a job deletes it), attempts at max_attempts a failed one, locked_at a job held by locked_by
// until the lock is 4 hours old.
const fs = require('node:fs');
const path = require('node:path');
const { makeWorkerUtils, run } = require('graphile-worker');
const { perform, serve } = require('../../kit/runner_protocol');

const TASK = 'run_job';
const LOCK_S = 4 * 60 * 60;
const DOCS = 'https://worker.graphile.org/docs/library/run';
const QUEUE_DOCS = 'https://worker.graphile.org/docs/library/queue';
const INDEX_TYPES = 'node_modules/graphile-worker/dist/index.d.ts (graphile-worker 0.17.3)';
const INTERFACE_TYPES = 'node_modules/graphile-worker/dist/interfaces.d.ts (graphile-worker 0.17.3)';
const LOCK_QUOTE = 'a catastrophic failure (e.g. worker crash or kill) may result in the jobs being executed again ' +
  'once they expire (after 4 hours by default).';
const LOCK_DOC = `${INDEX_TYPES}: preset worker.completeJobBatchDelay`;
const IDS = () => path.join(process.env.ALKSTORE_FAULTS_STATE, 'graphile_worker_ids.json');

function describe() {
  return {
    library: 'graphile-worker',
    version: `graphile-worker ${require('graphile-worker/package.json').version}`,
    settings: [
      { name: 'run({ concurrency })', value: 1, doc: DOCS },
      { name: 'run({ taskList })', value: `{ ${TASK} }`, doc: DOCS },
      { name: 'run({ noHandleSignals })', value: false, doc: DOCS },
      { name: 'WorkerUtils.migrate() before addJob', value: 'the client', doc: QUEUE_DOCS },
      {
        // "Only use this if the workers in question are no longer running": a library cannot know that of a worker
        // that merely went silent, so a production deployment cannot call it on its own.
        name: 'WorkerUtils.forceUnlockWorkers(workerIds)',
        value: 'not called',
        doc: `${INTERFACE_TYPES}: WorkerUtils.forceUnlockWorkers`,
      },
    ],
    lease_s: LOCK_S, // the truth, not a shortened one: so the runner takes neither pause nor slow_handler
    // The documented rule (4 hours, recovery_rules) is longer than a run: the harness waits its normal window and
    // the checker reports the lock's expiry read by inspect.
    recovery_window_s: 15,
    faults: ['kill9', 'startup', 'broker_restart', 'net_cut'],
    promises: [],
    inspect_doc: `${INTERFACE_TYPES}: DbJob (the rows of the graphile_worker.jobs view), WorkerUtils.completeJobs`,
    policies: [],
    recovery_rules: [
      {
        state: 'running',
        after_s: LOCK_S,
        rule: 'a job locked by a worker that died is run again once its lock expires, 4 hours after locked_at',
        quote: LOCK_QUOTE,
        doc: LOCK_DOC,
      },
    ],
    caveats: [],
  };
}

async function enqueue(jobs) {
  const utils = await makeWorkerUtils({ connectionString: process.env.ALKSTORE_FAULTS_BROKER });
  try {
    await utils.migrate(); // graphile-worker's schema on the throwaway cluster, before any worker
    const ids = {};
    for (const job of jobs) {
      ids[job.id] = (await utils.addJob(TASK, job)).id;
    }
    fs.writeFileSync(IDS(), JSON.stringify(ids));
  } finally {
    await utils.release();
  }
}

// One job's state from its row of the graphile_worker.jobs view (null: no row).
function stateOf(row, now) {
  const state = { state: 'queued', library_state: null, reason: null, until: null, held_by: null, attempts: null };
  // Completing a job deletes it (WorkerUtils.completeJobs), so no row is what a completed job and a job the library
  // dropped have in common: absent, as the protocol has a library that deletes a job when it completes say.
  if (!row) return { ...state, state: 'absent', library_state: 'no row' };
  Object.assign(state, { attempts: row.attempts, reason: row.last_error });
  const runAt = row.run_at.getTime() / 1000;
  if (row.locked_at) {
    return { ...state, state: 'running', library_state: 'locked', until: row.locked_at.getTime() / 1000 + LOCK_S,
      held_by: row.locked_by };
  }
  if (row.attempts >= row.max_attempts) return { ...state, state: 'failed', library_state: 'permanently failed' };
  if (runAt > now) return { ...state, state: 'scheduled', library_state: 'waiting for run_at', until: runAt };
  return { ...state, library_state: row.attempts > 0 ? 'failed, to retry' : 'available' };
}

async function inspect(jobs) {
  const ids = JSON.parse(fs.readFileSync(IDS(), 'utf8'));
  const utils = await makeWorkerUtils({ connectionString: process.env.ALKSTORE_FAULTS_BROKER });
  try {
    const { rows } = await utils.withPgClient((client) => client.query(
      'select id::text, run_at, attempts, max_attempts, last_error, locked_at, locked_by from graphile_worker.jobs ' +
        'where id = any($1::bigint[])',
      [Object.values(ids)],
    ));
    const byId = new Map(rows.map((row) => [row.id, row]));
    const now = Date.now() / 1000;
    return jobs.map((job) => ({ job: job.id, ...stateOf(byId.get(String(ids[job.id])), now) }));
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

serve({ describe, enqueue, worker, inspect });
