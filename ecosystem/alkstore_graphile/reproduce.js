#!/usr/bin/env node
'use strict';
// Part of the graphile-worker adapter (ecosystem/alkstore_graphile): graphile-worker's safety failure shown
// with the library alone, no adapter code: only graphile-worker's public API (runMigrations, makeWorkerUtils,
// runTaskListOnce, forceUnlockWorkers) and Postgres.
//
//   node ecosystem/alkstore_graphile/reproduce.js [DSN]      (DSN defaults to $ALKSTORE_PG_DSN)
//
// Each scenario makes a schema of its own, prints REPRODUCED or NOT REPRODUCED, and drops the schema. The
// exit code is 0 when every scenario showed the behaviour docs/ecosystem.md describes, 1 the day one does not
// (a graphile-worker upgrade changed it).
//
// Both scenarios are "a job completed by two claims": worker A runs a job; its lock is released while A still
// runs it; worker B takes the job and runs it; A returns (success) and graphile-worker completes the job by id
// alone (`delete from _private_jobs where id = $1`, dist/sql/completeJobs.js), so the job B is running is
// deleted under it, and B's success completes it a second time. What releases A's lock:
//   - lock timeout: the library's own 4-hour lock expiry (resetLockedAt, run by every runTaskListOnce and
//     periodically by run()). Waiting 4 hours is replaced by moving A's locked_at 4 hours back, which is what
//     4 hours of A's handler running would leave in the row;
//   - forceUnlockWorkers: WorkerUtils' documented recovery for a worker believed dead.
// A failure (throw) is fenced by the lock holder (`where id = ... and locked_by = $1`, dist/sql/failJobs.js);
// the completion is not.

const { Client } = require('pg');
const { Logger, makeWorkerUtils, runMigrations, runTaskListOnce } = require('graphile-worker');

const DSN = process.argv[2] ?? process.env.ALKSTORE_PG_DSN ?? 'postgresql://postgres@127.0.0.1:5432/postgres';
const TASK = 'repro';
const SETTLE_MS = 5000;
const silent = new Logger(() => () => {});

/** A promise with its resolve function outside it. */
function deferred() {
  let resolve;
  const promise = new Promise((done) => {
    resolve = done;
  });
  return { promise, resolve };
}

/**
 * A one-job worker (runTaskListOnce, its own client) whose task signals when it starts and returns (success)
 * when `finish` is called; `finished` resolves once the pool has shut down.
 */
async function startWorker(schema) {
  const client = new Client({ connectionString: DSN });
  await client.connect();
  const started = deferred();
  const release = deferred();
  const pool = runTaskListOnce(
    { schema, logger: silent, noHandleSignals: true },
    {
      [TASK]: async (payload, helpers) => {
        started.resolve(helpers.job.id);
        await release.promise;
      },
    },
    client,
  );
  const finished = pool.promise.finally(() => client.end());
  return { pool, started: started.promise, finish: release.resolve, finished };
}

async function jobGone(admin, schema, id) {
  const deadline = Date.now() + SETTLE_MS;
  for (;;) {
    const { rows } = await admin.query(`select 1 from "${schema}"._private_jobs where id = $1`, [id]);
    if (rows.length === 0) return true;
    if (Date.now() > deadline) return false;
    await new Promise((done) => setTimeout(done, 50));
  }
}

/** One scenario: A takes the job, `unlock` releases A's lock, B takes it, A finishes; what happened to B's job. */
async function staleWorkerCompletes(label, unlock) {
  const schema = `alk_gw_repro_${Math.random().toString(16).slice(2, 10)}`;
  const admin = new Client({ connectionString: DSN });
  await admin.connect();
  const utils = await makeWorkerUtils({ connectionString: DSN, schema, logger: silent });
  try {
    await runMigrations({ connectionString: DSN, schema, logger: silent });
    const job = await utils.addJob(TASK, { n: 1 });
    const a = await startWorker(schema);
    const heldByA = await a.started;
    await unlock({ admin, schema, utils, a, jobId: job.id });
    const b = await startWorker(schema);
    const heldByB = await Promise.race([b.started, b.finished.then(() => null)]);
    if (heldByB === null) return [false, `${label}: B found no job to take after A's lock was released`];
    a.finish();
    await a.finished;
    const goneWhileBRuns = await jobGone(admin, schema, job.id);
    b.finish();
    await b.finished;
    const shown = String(heldByA) === String(job.id) && String(heldByB) === String(job.id) && goneWhileBRuns;
    return [
      shown,
      `${label}: A and B both ran job ${job.id}; after A returned, the job ` +
        `${goneWhileBRuns ? 'was deleted while B still ran it' : 'was still there'}, and B then completed it too`,
    ];
  } finally {
    await utils.release();
    await admin.query(`drop schema if exists "${schema}" cascade`);
    await admin.end();
  }
}

const SCENARIOS = [
  [
    'lock timeout',
    ({ admin, schema, jobId }) =>
      admin.query(`update "${schema}"._private_jobs set locked_at = locked_at - interval '4 hours 1 minute' where id = $1`, [jobId]),
  ],
  ['forceUnlockWorkers', ({ utils, a }) => utils.forceUnlockWorkers([a.pool.id])],
];

async function main() {
  let all = true;
  for (const [label, unlock] of SCENARIOS) {
    const [shown, what] = await staleWorkerCompletes(label, unlock);
    all &&= shown;
    process.stdout.write(`${shown ? 'REPRODUCED' : 'NOT REPRODUCED'}: stale worker completes (${what})\n`);
  }
  return all ? 0 : 1;
}

main().then(
  (code) => process.exit(code),
  (error) => {
    process.stderr.write(`${error.stack}\n`);
    process.exit(2);
  },
);
