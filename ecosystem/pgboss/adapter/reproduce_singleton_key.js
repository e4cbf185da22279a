#!/usr/bin/env node
'use strict';
// pg-boss 10.4.2's singletonKey on a `stately` queue, as its docs describe the policy. Nothing of alkstore:
// pg-boss's public API (createQueue, send, fetch), pg and Node only.
//
//   node ecosystem/pgboss/adapter/reproduce_singleton_key.js [DSN]      (DSN defaults to $ALKSTORE_PG_DSN)
//
// pg-boss makes its tables in a schema of its own (its `schema` option), dropped at the end.
// - `one job per state`: on a queue made with policy 'stately' ("Only allows 1 job per state, queued and/or
//   active"), send() with singletonKey 'report-42' stores a job and a second send() with the key returns null
//   while the job is queued (created); once fetch() has made it active, a third send() with the key stores a
//   new created job: two jobs of the key are unfinished at once (the matrix's K1, which holds a key until its
//   job is finished).
// - `standard queue`: on pg-boss's default queue policy, two send() calls with one singletonKey store two jobs:
//   the key dedupes only on a policy queue (or with a singletonSeconds slot).
//
// Prints `SAW:` lines and REPRODUCED / NOT REPRODUCED per scenario; exit 0 when both showed what
// docs/ecosystem.md says, 1 when not (an upgrade changed the policy), 2 when it could not run.

const crypto = require('node:crypto');
const { Client } = require('pg');
const PgBoss = require('pg-boss');

const KEY = 'report-42';
const say = (line) => process.stdout.write(`${line}\n`);

async function oneJobPerState(boss) {
  await boss.createQueue('stately-repro', { policy: 'stately' });
  const first = await boss.send('stately-repro', { n: 1 }, { singletonKey: KEY });
  const second = await boss.send('stately-repro', { n: 2 }, { singletonKey: KEY });
  const [fetched] = await boss.fetch('stately-repro');
  const third = await boss.send('stately-repro', { n: 3 }, { singletonKey: KEY });
  say(
    `SAW: send gave ${first}; a second send with its key, while it was queued, gave ${second}; fetch took ` +
      `${fetched ? fetched.id : null}; a third send with the key, while it was active, gave ${third}`,
  );
  return first !== null && second === null && fetched !== undefined && fetched.id === first && third !== null && third !== first;
}

async function standardQueue(boss) {
  await boss.createQueue('standard-repro');
  const first = await boss.send('standard-repro', { n: 1 }, { singletonKey: KEY });
  const second = await boss.send('standard-repro', { n: 2 }, { singletonKey: KEY });
  say(`SAW: on a standard queue, two sends with one singletonKey gave ${first} and ${second}`);
  return first !== null && second !== null && first !== second;
}

async function main(argv) {
  const dsn = argv[0] || process.env.ALKSTORE_PG_DSN || 'postgresql://postgres@127.0.0.1:5432/postgres';
  const schema = `pgboss_repro_${crypto.randomBytes(4).toString('hex')}`;
  const boss = new PgBoss({ connectionString: dsn, schema, supervise: false, schedule: false, max: 2 });
  boss.on('error', (error) => process.stderr.write(`pg-boss: ${error.stack}\n`));
  const results = [];
  await boss.start();
  try {
    results.push(['one job per state', await oneJobPerState(boss)]);
    results.push(['standard queue', await standardQueue(boss)]);
  } finally {
    await boss.stop({ graceful: false, wait: true, close: true });
    const client = new Client({ connectionString: dsn });
    await client.connect();
    await client.query(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`);
    await client.end();
  }
  for (const [name, shown] of results) say(`${shown ? 'REPRODUCED' : 'NOT REPRODUCED'}: ${name}`);
  return results.every(([, shown]) => shown) ? 0 : 1;
}

if (require.main === module) {
  main(process.argv.slice(2)).then(
    (code) => process.exit(code),
    (error) => {
      process.stderr.write(`reproduce_singleton_key.js could not run: ${error.stack}\n`);
      process.exit(2);
    },
  );
}
