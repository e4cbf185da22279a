#!/usr/bin/env node
'use strict';
// Part of the pg-boss adapter (ecosystem/alkstore_pgboss): pg-boss's safety differences shown with pg-boss
// alone (its public API and Postgres; no adapter code, no suite), as docs/ecosystem.md describes them.
//
// `node reproduce.js [DSN]` (DSN defaults to $ALKSTORE_PG_DSN, else postgresql://postgres@127.0.0.1:5432/postgres)
// makes a schema of its own per scenario, prints one REPRODUCED or NOT REPRODUCED line each, and drops
// the schema. Exit code 0 when every scenario showed the behaviour, 1 when one did not (a pg-boss upgrade
// changed it), 2 when it could not run.
//
// Every job is sent with expireInSeconds 1 (pg-boss's smallest lease), retryLimit 1, retryDelay 0 and no
// backoff, so the only waits are the lease's and nothing else of pg-boss's decides when a job comes back.
// - lapsed, not reclaimable (C1): a fetched job whose lease lapsed is not fetched again until pg-boss's
//   maintenance fails it by timeout (fetchNextJob takes `state < 'active'` only);
// - late complete (H1): complete() succeeds on a job whose lease lapsed (completeJobs checks id and
//   state = 'active', never started_on + expire_in), and fail() succeeds on a job no claim holds
//   (failJobsById takes `state < 'completed'`: created and retry too);
// - stale worker completes (H5; pg-boss issue #555 on github.com/timgit/pg-boss): A's lease lapses,
//   maintenance hands the job back, B fetches it, and A's complete() completes B's claim: pg-boss
//   records no claim to check.

const crypto = require('node:crypto');
const pg = require('pg');
const PgBoss = require('pg-boss');

const QUEUE = 'repro';
const LEASE_S = 1;
const PAST_LEASE_MS = 1600;
const JOB = { expireInSeconds: LEASE_S, retryLimit: 1, retryDelay: 0, retryBackoff: false };

const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

/** A PgBoss on a fresh schema (its own migration), maintenance off so the scenario runs it when it says. */
async function withBoss(dsn, scenario) {
  const schema = `alk_pgb_repro_${crypto.randomBytes(4).toString('hex')}`;
  const boss = new PgBoss({ connectionString: dsn, schema, supervise: false, schedule: false, max: 2 });
  boss.on('error', (error) => process.stderr.write(`pg-boss: ${error.stack}\n`));
  await boss.start();
  await boss.createQueue(QUEUE);
  try {
    return await scenario(boss);
  } finally {
    await boss.stop({ graceful: false, wait: true, close: true });
    const client = new pg.Client({ connectionString: dsn });
    await client.connect();
    await client.query(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`);
    await client.end();
  }
}

async function lapsedNotReclaimable(boss) {
  const id = await boss.send(QUEUE, { n: 1 }, JOB);
  const [held] = await boss.fetch(QUEUE);
  await sleep(PAST_LEASE_MS);
  const beforeMaintenance = await boss.fetch(QUEUE);
  await boss.maintain();
  const afterMaintenance = await boss.fetch(QUEUE);
  const shown = held?.id === id && beforeMaintenance.length === 0 && afterMaintenance[0]?.id === id;
  return [
    shown,
    `job ${id}'s lease of ${LEASE_S} s lapsed; fetch() before maintenance handed out ${beforeMaintenance.length} job(s), ` +
      `after maintain() ${afterMaintenance.length}`,
  ];
}

async function lateComplete(boss) {
  const late = await boss.send(QUEUE, { n: 1 }, JOB);
  await boss.fetch(QUEUE);
  await sleep(PAST_LEASE_MS);
  const completed = (await boss.complete(QUEUE, late)).affected;
  const unclaimed = await boss.send(QUEUE, { n: 2 }, JOB);
  const failed = (await boss.fail(QUEUE, unclaimed, { message: 'never fetched' })).affected;
  const state = (await boss.getJobById(QUEUE, unclaimed)).state;
  return [
    completed === 1 && failed === 1,
    `complete() on a job ${PAST_LEASE_MS} ms into a ${LEASE_S} s lease affected ${completed}; ` +
      `fail() on a job never fetched affected ${failed} (now ${state})`,
  ];
}

async function staleWorkerCompletes(boss) {
  const id = await boss.send(QUEUE, { n: 1 }, JOB);
  const [heldByA] = await boss.fetch(QUEUE);
  await sleep(PAST_LEASE_MS);
  await boss.maintain();
  const [heldByB] = await boss.fetch(QUEUE);
  const byA = (await boss.complete(QUEUE, id, { by: 'A' })).affected;
  const byB = (await boss.complete(QUEUE, id, { by: 'B' })).affected;
  const job = await boss.getJobById(QUEUE, id);
  const shown = heldByA?.id === id && heldByB?.id === id && byA === 1 && byB === 0 && job.state === 'completed';
  return [
    shown,
    `B fetched job ${id} again: ${heldByB?.id === id}; A's complete() affected ${byA}, then B's ${byB}; ` +
      `the job is ${job.state} with A's output ${JSON.stringify(job.output)} while B runs it`,
  ];
}

const SCENARIOS = [
  ['lapsed, not reclaimable (C1)', lapsedNotReclaimable],
  ['late complete (H1)', lateComplete],
  ['stale worker completes (H5)', staleWorkerCompletes],
];

async function main(argv) {
  const dsn = argv[0] || process.env.ALKSTORE_PG_DSN || 'postgresql://postgres@127.0.0.1:5432/postgres';
  let all = true;
  for (const [name, scenario] of SCENARIOS) {
    const [shown, what] = await withBoss(dsn, scenario);
    all &&= shown;
    process.stdout.write(`${shown ? 'REPRODUCED' : 'NOT REPRODUCED'}: ${name}: ${what}\n`);
  }
  return all ? 0 : 1;
}

if (require.main === module) {
  main(process.argv.slice(2)).then(
    (code) => process.exit(code),
    (error) => {
      process.stderr.write(`reproduce.js could not run: ${error.stack}\n`);
      process.exit(2);
    },
  );
}
