#!/usr/bin/env node
'use strict';
// graphile-worker 0.17.3's jobKey in its default mode, 'replace', as its docs describe it. Nothing of alkstore:
// graphile-worker's public API (makeWorkerUtils, runTaskListOnce), pg and Node only; the jobs are read from its
// _private_jobs table (its `jobs` view leaves the payload out).
//
//   node ecosystem/graphile_worker/adapter/reproduce_job_key.js [DSN]      (DSN defaults to $ALKSTORE_PG_DSN)
//
// graphile-worker makes its tables in a schema of its own (its `schema` option), dropped at the end.
// - `replaces a waiting job`: addJob with jobKey 'report-42' stores a job; a second addJob with the key returns
//   the same job, its payload and priority replaced (TaskSpec.jobKeyMode: "when 'replace' all attributes will be
//   updated"): the matrix's K1 asks that a second enqueue with a held key change nothing.
// - `adds a job beside a locked one`: once a worker has fetched the job (locked), a third addJob with the key
//   clears the locked job's key and adds a new job, so two jobs of the key are unfinished at once.
//
// Prints `SAW:` lines and REPRODUCED / NOT REPRODUCED per scenario; exit 0 when both showed what
// docs/ecosystem.md says, 1 when not (an upgrade changed the mode), 2 when it could not run.

const crypto = require('node:crypto');
const { Client } = require('pg');
const { Logger, makeWorkerUtils, runTaskListOnce } = require('graphile-worker');

const TASK = 'repro';
const KEY = 'report-42';
const silent = new Logger(() => () => {});
const say = (line) => process.stdout.write(`${line}\n`);

async function keyed(client, schema) {
  const { rows } = await client.query(
    `select id::text, key, payload::text, locked_at is not null as locked from "${schema}"._private_jobs order by id`,
  );
  return rows.map((row) => `${row.id}:${row.key ?? 'no key'}:${row.payload}:${row.locked ? 'locked' : 'waiting'}`);
}

async function main(argv) {
  const dsn = argv[0] || process.env.ALKSTORE_PG_DSN || 'postgresql://postgres@127.0.0.1:5432/postgres';
  const schema = `graphile_repro_${crypto.randomBytes(4).toString('hex')}`;
  const utils = await makeWorkerUtils({ connectionString: dsn, schema, logger: silent });
  const client = new Client({ connectionString: dsn });
  await client.connect();
  const results = [];
  let release = () => {};
  let running = null;
  try {
    await utils.migrate();
    const first = await utils.addJob(TASK, { n: 1 }, { jobKey: KEY, priority: 0 });
    const second = await utils.addJob(TASK, { n: 2 }, { jobKey: KEY, priority: 5 });
    say(`SAW: addJob gave job ${first.id}; a second addJob with its key gave job ${second.id} (revision ` +
      `${second.revision}); jobs now: ${(await keyed(client, schema)).join(', ')}`);
    results.push(['replaces a waiting job', second.id === first.id && second.revision === 1]);
    let started;
    const fetched = new Promise((resolve) => {
      started = resolve;
    });
    const done = new Promise((resolve) => {
      release = resolve;
    });
    const workerClient = new Client({ connectionString: dsn });
    await workerClient.connect();
    const tasks = { [TASK]: async () => { started(); await done; } };
    running = runTaskListOnce({ schema, logger: silent }, tasks, workerClient).finally(() => workerClient.end());
    await fetched;
    const third = await utils.addJob(TASK, { n: 3 }, { jobKey: KEY });
    const now = await keyed(client, schema);
    say(`SAW: a worker fetched job ${first.id}; a third addJob with the key gave job ${third.id}; jobs now: ${now.join(', ')}`);
    results.push(['adds a job beside a locked one', third.id !== first.id && now.length === 2]);
  } finally {
    release();
    if (running !== null) await running;
    await utils.release();
    await client.query(`drop schema if exists "${schema}" cascade`);
    await client.end();
  }
  for (const [name, shown] of results) say(`${shown ? 'REPRODUCED' : 'NOT REPRODUCED'}: ${name}`);
  return results.length === 2 && results.every(([, shown]) => shown) ? 0 : 1;
}

if (require.main === module) {
  main(process.argv.slice(2)).then(
    (code) => process.exit(code),
    (error) => {
      process.stderr.write(`reproduce_job_key.js could not run: ${error.stack}\n`);
      process.exit(2);
    },
  );
}
