#!/usr/bin/env node
'use strict';
// graphile-worker 0.17.3 as its users run it: what its own recovery does for a job whose worker died. Nothing of
// alkstore: graphile-worker's public API (run, makeWorkerUtils, its `jobs` view), pg and Node only.
//
//   node ecosystem/graphile_worker/adapter/reproduce.js [DSN]      (DSN defaults to $ALKSTORE_PG_DSN)
//
// graphile-worker makes its tables in a schema of its own (its `schema` option), dropped at the end. Worker A
// (a separate OS process running `run()`) starts a job and is killed (SIGKILL); worker B (another process)
// runs beside it for 10 s. graphile-worker hands a locked job to no other worker before its lock is 4 hours
// old (its documented expiry: "executed again once they expire (after 4 hours by default)"), so B does not
// take it and the job stays locked by A's pool: late recovery by graphile-worker's own rule, which the
// contract's lease makes stricter. Releasing the lock earlier takes WorkerUtils.forceUnlockWorkers, which
// graphile-worker reserves for workers that are no longer running; the adapter never calls it.
//
// Prints `SAW:` lines and REPRODUCED / NOT REPRODUCED; exit 0 when the job stayed locked and untaken, 1 when
// not (an upgrade changed the rule), 2 when it could not run. Every process it starts is killed on the way out.

const crypto = require('node:crypto');
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const { spawn } = require('node:child_process');
const { Client } = require('pg');
const { Logger, makeWorkerUtils, run } = require('graphile-worker');

const TASK = 'repro';
const WATCH_MS = 10000;
const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));
const silent = new Logger(() => () => {});

function log(file, line) {
  fs.appendFileSync(file, `${(Date.now() / 1000).toFixed(3)} ${process.pid} ${line}\n`);
}

/** A graphile-worker process: `run()` with one task that logs its start and then runs for a minute. */
async function worker(dsn, schema, file) {
  await run({
    connectionString: dsn,
    schema,
    concurrency: 1,
    pollInterval: 200,
    noHandleSignals: true,
    logger: silent,
    taskList: {
      [TASK]: async (payload, helpers) => {
        log(file, `start ${helpers.job.id}`);
        await sleep(60000);
      },
    },
  });
}

function starts(file, job) {
  if (!fs.existsSync(file)) return [];
  return fs
    .readFileSync(file, 'utf8')
    .split('\n')
    .filter((line) => line.endsWith(` start ${job}`))
    .map((line) => Number(line.split(' ')[1]));
}

async function main(argv) {
  if (argv[0] === '--worker') {
    await worker(argv[1], argv[2], argv[3]);
    return null;
  }
  const dsn = argv[0] || process.env.ALKSTORE_PG_DSN || 'postgresql://postgres@127.0.0.1:5432/postgres';
  const schema = `graphile_repro_${crypto.randomBytes(4).toString('hex')}`;
  const file = path.join(os.tmpdir(), `graphile-repro-${process.pid}.log`);
  const utils = await makeWorkerUtils({ connectionString: dsn, schema, logger: silent });
  const procs = [];
  const start = () => {
    const child = spawn(process.execPath, [__filename, '--worker', dsn, schema, file], { stdio: 'ignore', detached: true });
    procs.push(child);
    return child;
  };
  const client = new Client({ connectionString: dsn });
  await client.connect();
  let shown = false;
  try {
    await utils.migrate();
    const a = start();
    const job = await utils.addJob(TASK, {});
    const deadline = Date.now() + 30000;
    while (!starts(file, job.id).includes(a.pid) && Date.now() < deadline) await sleep(50);
    if (!starts(file, job.id).includes(a.pid)) {
      process.stdout.write(`SAW: worker A never started job ${job.id}\n`);
    } else {
      process.kill(-a.pid, 'SIGKILL');
      const b = start();
      await sleep(WATCH_MS);
      const others = starts(file, job.id).filter((pid) => pid !== a.pid);
      const { rows } = await client.query(
        `select locked_by, locked_at is not null as locked, extract(epoch from now() - locked_at)::int as held_s
           from "${schema}".jobs where id = $1`,
        [job.id],
      );
      const row = rows[0];
      process.stdout.write(
        `SAW: worker A (pid ${a.pid}) started job ${job.id} and was killed (SIGKILL); worker B (pid ${b.pid}) ran ` +
          `beside it for ${WATCH_MS / 1000} s and took it: ${others.length > 0}; the job then: ` +
          (row ? `locked ${row.locked} by ${row.locked_by} for ${row.held_s} s` : 'gone') +
          ' (graphile-worker releases a lock when it is 4 hours old)\n',
      );
      shown = others.length === 0 && row !== undefined && row.locked;
    }
  } finally {
    for (const child of procs) {
      try {
        process.kill(-child.pid, 'SIGKILL');
      } catch {
        // already gone
      }
    }
    await utils.release();
    await client.query(`drop schema if exists "${schema}" cascade`);
    await client.end();
    fs.rmSync(file, { force: true });
  }
  process.stdout.write(`${shown ? 'REPRODUCED' : 'NOT REPRODUCED'}: dead worker's job waits for the 4-hour lock expiry\n`);
  return shown ? 0 : 1;
}

if (require.main === module) {
  main(process.argv.slice(2)).then(
    (code) => {
      if (code !== null) process.exit(code);
    },
    (error) => {
      process.stderr.write(`reproduce.js could not run: ${error.stack}\n`);
      process.exit(2);
    },
  );
}
