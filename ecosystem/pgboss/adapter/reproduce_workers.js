#!/usr/bin/env node
'use strict';
// pg-boss 10.4.2 as its users run it: worker processes with work() or fetch()/complete(), one supervising
// instance running maintenance every second; nothing of alkstore (pg-boss, pg and Node only).
//
//   node ecosystem/pgboss/adapter/reproduce_workers.js [DSN]      (DSN defaults to $ALKSTORE_PG_DSN)
//
// pg-boss makes its tables in a schema of its own (its `schema` option), dropped at the end. Every job is sent
// with expireInSeconds 2, retryLimit 1, retryDelay 0: pg-boss's documented expiry and retry.
// - work() overlap: worker A's handler runs a 6 s job; at expiry pg-boss fails A's run (its handler timeout)
//   and retries the job; a work() worker (B, or A's own next fetch) starts it while A's first handler is still
//   running: the job runs twice at once (pg-boss's README: "Exactly-once job delivery"). A's late return is
//   ignored.
// - fetch()/complete(): worker F fetch()es a job and does not complete it within its 2 s expiry (a stalled
//   worker); maintenance fails it by timeout and worker B's work() starts it; F then completes it: the late
//   complete() succeeds and the job is `completed` while B runs it.
// - kill: worker C's handler starts a job and C is killed (SIGKILL); maintenance fails it by timeout and
//   worker D runs it: the delay from the kill to D's start is printed (late, not lost).
// - pause: worker P's handler (3 s) starts a job and P is stopped (SIGSTOP) for 6 s, past the 2 s expiry;
//   maintenance fails it by timeout and worker Q runs it; P resumes (SIGCONT) and its handler runs to its end:
//   the job ran twice (docs/runtime-faults.md, pgboss under `pause`).
// Prints one `SAW:` line per observation and REPRODUCED / NOT REPRODUCED per scenario; exit 0 when all four
// showed what docs/ecosystem.md says, 1 when one did not, 2 when it could not run. Every process it starts is
// killed on the way out.

const crypto = require('node:crypto');
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const { spawn } = require('node:child_process');
const pg = require('pg');
const PgBoss = require('pg-boss');

const QUEUE = 'repro';
const LONG_MS = 6000;
const SHORT_MS = 1000;
const PAUSED_MS = 3000;
const PAUSE_MS = 6000;
const WAIT_MS = 30000;
const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

function log(file, line) {
  fs.appendFileSync(file, `${(Date.now() / 1000).toFixed(3)} ${process.pid} ${line}\n`);
}

/**
 * A pg-boss worker process. `work` runs a handler of `ms` per job. `fetch` fetches one job and completes it once
 * another worker has started it (a worker that stalled and resumes just after the job was handed on).
 */
async function worker(mode, ms, dsn, schema, file) {
  const boss = new PgBoss({ connectionString: dsn, schema, supervise: false, schedule: false, max: 2 });
  boss.on('error', () => {});
  await boss.start();
  if (mode === 'work') {
    await boss.work(QUEUE, { pollingIntervalSeconds: 0.5 }, async ([job]) => {
      log(file, `start ${job.id}`);
      await sleep(ms);
      log(file, `end ${job.id}`);
    });
    return;
  }
  for (;;) {
    const [job] = await boss.fetch(QUEUE);
    if (job !== undefined) {
      log(file, `start ${job.id}`);
      const deadline = Date.now() + WAIT_MS;
      while (!events(file).some((e) => e.what === 'start' && e.job === job.id && e.pid !== process.pid) && Date.now() < deadline) {
        await sleep(50);
      }
      const { affected } = await boss.complete(QUEUE, job.id);
      log(file, `end ${job.id} ${affected}`);
      return;
    }
    await sleep(200);
  }
}

function events(file) {
  if (!fs.existsSync(file)) return [];
  return fs
    .readFileSync(file, 'utf8')
    .split('\n')
    .filter(Boolean)
    .map((line) => {
      const [at, pid, what, job, extra] = line.split(' ');
      return { at: Number(at), pid: Number(pid), what, job, extra };
    });
}

async function waitFor(file, pid, what, job) {
  const deadline = Date.now() + WAIT_MS;
  while (Date.now() < deadline) {
    const found = events(file).find((e) => e.pid === pid && e.what === what && e.job === job);
    if (found) return found;
    await sleep(50);
  }
  return null;
}

async function scenarios(boss, dsn, schema, file, procs) {
  const start = (mode, ms = 0) => {
    const args = [__filename, `--${mode}`, String(ms), dsn, schema, file];
    const child = spawn(process.execPath, args, { stdio: 'ignore', detached: true });
    procs.push(child);
    return child;
  };
  const signal = (child, name) => {
    try {
      process.kill(-child.pid, name);
    } catch {
      // already gone
    }
  };
  const kill = (child) => signal(child, 'SIGKILL');
  const results = [];
  const opts = { expireInSeconds: 2, retryLimit: 1, retryDelay: 0 };

  const a = start('work', LONG_MS);
  const first = await boss.send(QUEUE, {}, opts);
  const aStart = await waitFor(file, a.pid, 'start', first);
  const b = start('work', SHORT_MS);
  const aEnd = aStart && (await waitFor(file, a.pid, 'end', first));
  await sleep(SHORT_MS + 1000);
  const runs = events(file).filter((e) => e.job === first && e.what === 'start');
  const second_ = runs.find((e) => e !== aStart && e.at > aStart.at);
  const state1 = (await boss.getJobById(QUEUE, first))?.state;
  const overlap = second_ && aEnd ? aEnd.at - second_.at : null;
  process.stdout.write(
    `SAW: work() A (pid ${a.pid}) started job ${first} (a ${LONG_MS / 1000} s handler, expireInSeconds 2); ` +
      (second_
        ? `${second_.pid === a.pid ? 'A itself' : `B (pid ${b.pid})`} started it again ${(second_.at - aStart.at).toFixed(1)} s later`
        : 'no second run started') +
      (overlap !== null ? `, while A's first run went on for ${overlap.toFixed(1)} s more: the job ran twice at once` : '') +
      `; A's late return was ignored and the job is ${state1}\n`,
  );
  results.push(['work() overlap', overlap !== null && overlap > 0]);
  [a, b].forEach(kill);

  const f = start('fetch');
  const second = await boss.send(QUEUE, {}, opts);
  const fStart = await waitFor(file, f.pid, 'start', second);
  const b2 = start('work', SHORT_MS);
  const b2Start = fStart && (await waitFor(file, b2.pid, 'start', second));
  const fEnd = await waitFor(file, f.pid, 'end', second);
  const state2 = (await boss.getJobById(QUEUE, second))?.state;
  const b2End = b2Start && (await waitFor(file, b2.pid, 'end', second));
  const b2Running = fEnd !== null && b2Start !== null && b2End !== null && b2End.at > fEnd.at;
  process.stdout.write(
    `SAW: fetch() F (pid ${f.pid}) took job ${second} (expireInSeconds 2) and did not complete it; ` +
      (b2Start ? `maintenance failed it by timeout and B (pid ${b2.pid}) started it ${(b2Start.at - fStart.at).toFixed(1)} s after F's fetch` : 'B never started it') +
      `; F's complete() then affected ${fEnd?.extra}; the job then: ${state2}; B still running it: ${b2Running}\n`,
  );
  results.push(['fetch()/complete() stale complete', b2Running && fEnd.extra === '1' && state2 === 'completed']);
  [f, b2].forEach(kill);

  const c = start('work', LONG_MS);
  const third = await boss.send(QUEUE, {}, opts);
  const cStart = await waitFor(file, c.pid, 'start', third);
  kill(c);
  const killed = Date.now() / 1000;
  const d = start('work', SHORT_MS);
  const dStart = cStart && (await waitFor(file, d.pid, 'start', third));
  const dEnd = dStart && (await waitFor(file, d.pid, 'end', third));
  await sleep(500);
  const state3 = (await boss.getJobById(QUEUE, third))?.state;
  process.stdout.write(
    `SAW: work() C (pid ${c.pid}) killed (SIGKILL) while running job ${third}; ` +
      (dStart ? `worker D started it ${(dStart.at - killed).toFixed(1)} s after the kill` : 'no worker started it') +
      `; the job then: ${state3}\n`,
  );
  results.push(['kill', dEnd !== null && state3 === 'completed']);
  [d].forEach(kill);

  const p = start('work', PAUSED_MS);
  const fourth = await boss.send(QUEUE, {}, opts);
  const pStart = await waitFor(file, p.pid, 'start', fourth);
  signal(p, 'SIGSTOP');
  const q = start('work', SHORT_MS);
  await sleep(PAUSE_MS);
  signal(p, 'SIGCONT');
  const resumed = Date.now() / 1000;
  const pEnd = pStart && (await waitFor(file, p.pid, 'end', fourth));
  const qStart = events(file).find((e) => e.pid === q.pid && e.what === 'start' && e.job === fourth) || null;
  const qEnd = qStart && (await waitFor(file, q.pid, 'end', fourth));
  process.stdout.write(
    `SAW: work() P (pid ${p.pid}) started job ${fourth} (a ${PAUSED_MS / 1000} s handler, expireInSeconds 2) and was ` +
      `stopped (SIGSTOP) for ${PAUSE_MS / 1000} s; ` +
      (qStart ? `worker Q (pid ${q.pid}) started it ${(qStart.at - pStart.at).toFixed(1)} s after P did, while P was stopped` : 'no worker started it while P was stopped') +
      `; after SIGCONT P's handler ${pEnd ? `ran to its end ${(pEnd.at - resumed).toFixed(1)} s later` : 'did not end'}` +
      `; Q's run ${qEnd ? 'ended' : 'did not end'}: the job ran ${qStart && pEnd ? 'twice' : 'once'}\n`,
  );
  results.push(['pause', pStart !== null && pEnd !== null && qStart !== null && qEnd !== null && qStart.at < resumed]);
  [p, q].forEach(kill);
  return results;
}

async function main(argv) {
  if (argv[0] === '--work' || argv[0] === '--fetch') {
    await worker(argv[0].slice(2), Number(argv[1]), argv[2], argv[3], argv[4]);
    return null;
  }
  const dsn = argv[0] || process.env.ALKSTORE_PG_DSN || 'postgresql://postgres@127.0.0.1:5432/postgres';
  const schema = `pgboss_repro_${crypto.randomBytes(4).toString('hex')}`;
  const file = path.join(os.tmpdir(), `pgboss-repro-${process.pid}.log`);
  const boss = new PgBoss({ connectionString: dsn, schema, maintenanceIntervalSeconds: 1, schedule: false, max: 2 });
  boss.on('error', (error) => process.stderr.write(`pg-boss: ${error.message}\n`));
  const procs = [];
  let results = [];
  try {
    await boss.start();
    await boss.createQueue(QUEUE);
    results = await scenarios(boss, dsn, schema, file, procs);
  } finally {
    killAll(procs);
    await boss.stop({ graceful: false, wait: true, close: true });
    const client = new pg.Client({ connectionString: dsn });
    await client.connect();
    await client.query(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`);
    await client.end();
    fs.rmSync(file, { force: true });
  }
  for (const [name, shown] of results) process.stdout.write(`${shown ? 'REPRODUCED' : 'NOT REPRODUCED'}: ${name}\n`);
  return results.length > 0 && results.every(([, shown]) => shown) ? 0 : 1;
}

/** Kill every process group a reproduction started (each worker is the leader of its own). */
function killAll(procs) {
  for (const child of procs) {
    try {
      process.kill(-child.pid, 'SIGKILL');
    } catch {
      // already gone
    }
  }
}

/** Run a reproduction's main() as a script: its exit code, or 2 with the stack when it could not run. */
function runMain(run, name) {
  run(process.argv.slice(2)).then(
    (code) => {
      if (code !== null) process.exit(code);
    },
    (error) => {
      process.stderr.write(`${name} could not run: ${error.stack}\n`);
      process.exit(2);
    },
  );
}

module.exports = { QUEUE, events, killAll, runMain, sleep };

if (require.main === module) runMain(main, 'reproduce_workers.js');
