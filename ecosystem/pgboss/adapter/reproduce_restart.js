#!/usr/bin/env node
'use strict';
// pg-boss 10.4.2 across a database restart, as its users run it: worker processes calling work(), one
// supervising instance running maintenance every second; nothing of alkstore (pg-boss, pg, Node and the
// Postgres server's own binaries).
//
//   node ecosystem/pgboss/adapter/reproduce_restart.js
//
// It never touches a server of yours: it makes a throwaway cluster (initdb in a temporary directory, the
// server on a free loopback port; run as root, the cluster runs as the `postgres` user, since initdb and
// postgres refuse root), and removes it at the end. Binaries: $PG_BINDIR, else `pg_config --bindir`, else
// the newest /usr/lib/postgresql/*/bin.
// - restart: two work() workers run 2 s handlers (expireInSeconds 3, retryLimit 2, retryDelay 0, as the
//   runtime-faults runner sets them); while a handler runs, the server is killed (SIGKILL to its process group)
//   and started again on its data 3 s later. The handler ends while the server is down; its complete() fails,
//   the worker exits on the unhandled rejection and is started again (as a supervisor would); pg-boss expires
//   the job and runs it again: a handler ran to its end twice for one job (docs/runtime-faults.md, pgboss under
//   `broker_restart`; pg-boss's README: "exactly-once delivery").
// Prints one `SAW:` line and REPRODUCED / NOT REPRODUCED; exit 0 when it showed that, 1 when not, 2 when it
// could not run. Every process it starts is killed on the way out.

const fs = require('node:fs');
const net = require('node:net');
const os = require('node:os');
const path = require('node:path');
const { execFileSync, spawn } = require('node:child_process');
const pg = require('pg');
const PgBoss = require('pg-boss');
// What both pg-boss reproductions share: the queue, the event log (one line per handler start and end, from every
// process) and the work() worker process, which is reproduce_workers.js run with --work.
const { QUEUE, events, killAll, runMain, sleep } = require('./reproduce_workers.js');

const WORKER = path.join(__dirname, 'reproduce_workers.js');
const SCHEMA = 'pgboss'; // pg-boss's default schema, the supervising instance's on this cluster
const HANDLER_MS = 2000;
const DOWN_MS = 3000;
const JOBS = 6;
const WAIT_MS = 60000;

function bindir() {
  if (process.env.PG_BINDIR) return process.env.PG_BINDIR;
  try {
    return execFileSync('pg_config', ['--bindir'], { encoding: 'utf8' }).trim();
  } catch {
    const root = '/usr/lib/postgresql';
    const versions = fs.readdirSync(root).sort((a, b) => Number(b) - Number(a));
    return path.join(root, versions[0], 'bin');
  }
}

function freePort() {
  return new Promise((resolve, reject) => {
    const server = net.createServer();
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address();
      server.close(() => resolve(port));
    });
    server.on('error', reject);
  });
}

/** A throwaway cluster: start() and crash() (SIGKILL to the server's process group, no shutdown). */
class Cluster {
  constructor(bin, dir, port) {
    Object.assign(this, { bin, dir, port, server: null });
    this.asRoot = process.getuid && process.getuid() === 0;
  }

  run(program, args, options = {}) {
    const argv = this.asRoot ? ['-u', 'postgres', '--', path.join(this.bin, program), ...args] : args;
    return [this.asRoot ? 'runuser' : path.join(this.bin, program), argv, options];
  }

  init() {
    if (this.asRoot) execFileSync('chown', ['postgres', path.dirname(this.dir)]);
    const [cmd, argv] = this.run('initdb', ['-D', this.dir, '--no-sync', '-A', 'trust', '-U', 'postgres']);
    execFileSync(cmd, argv, { stdio: 'ignore' });
  }

  async start() {
    const args = ['-D', this.dir, '-p', String(this.port), '-k', this.dir, '-c', 'listen_addresses=127.0.0.1'];
    const [cmd, argv] = this.run('postgres', args);
    this.server = spawn(cmd, argv, { stdio: 'ignore', detached: true });
    const deadline = Date.now() + WAIT_MS;
    while (Date.now() < deadline) {
      const client = new pg.Client({ connectionString: this.dsn });
      try {
        await client.connect();
        await client.end();
        return;
      } catch {
        await sleep(200);
      }
    }
    throw new Error('the throwaway Postgres server did not start');
  }

  crash() {
    try {
      process.kill(-this.server.pid, 'SIGKILL');
    } catch {
      // already gone
    }
  }

  get dsn() {
    return `postgresql://postgres@127.0.0.1:${this.port}/postgres`;
  }
}

async function scenario(cluster, file, procs) {
  const start = () => {
    const args = [WORKER, '--work', String(HANDLER_MS), cluster.dsn, SCHEMA, file];
    const child = spawn(process.execPath, args, { stdio: 'ignore', detached: true });
    procs.push(child);
    return child;
  };
  let stopping = false;
  const supervise = () => {
    const child = start();
    child.on('exit', () => {
      if (!stopping) setTimeout(supervise, 500);
    });
  };
  const boss = new PgBoss({ connectionString: cluster.dsn, maintenanceIntervalSeconds: 1, schedule: false, max: 2 });
  boss.on('error', () => {});
  await boss.start();
  await boss.createQueue(QUEUE);
  const ids = [];
  for (let i = 0; i < JOBS; i += 1) {
    ids.push(await boss.send(QUEUE, { i }, { expireInSeconds: 3, retryLimit: 2, retryDelay: 0 }));
  }
  supervise();
  supervise();
  const deadline = Date.now() + WAIT_MS;
  let running = null;
  while (running === null && Date.now() < deadline) {
    const seen = events(file);
    running = seen.find((e) => e.what === 'start' && !seen.some((f) => f.what === 'end' && f.job === e.job));
    if (running === undefined) running = null;
    await sleep(100);
  }
  await boss.stop({ graceful: false, wait: true, close: true });
  cluster.crash();
  const crashed = Date.now() / 1000;
  await sleep(DOWN_MS);
  await cluster.start();
  const restarted = Date.now() / 1000;
  const after = new PgBoss({ connectionString: cluster.dsn, maintenanceIntervalSeconds: 1, schedule: false, max: 2 });
  after.on('error', () => {});
  await after.start();
  const states = async () => Promise.all(ids.map(async (id) => (await after.getJobById(QUEUE, id))?.state));
  while (Date.now() < deadline && !(await states()).every((s) => s === 'completed')) await sleep(500);
  const final = await states();
  stopping = true;
  await after.stop({ graceful: false, wait: true, close: true });
  const ends = events(file).filter((e) => e.what === 'end');
  const twice = ids.filter((id) => ends.filter((e) => e.job === id).length > 1);
  const cut = running && ends.find((e) => e.job === running.job && e.at > crashed && e.at < restarted);
  process.stdout.write(
    `SAW: ${JOBS} jobs, two work() workers (handler ${HANDLER_MS / 1000} s, expireInSeconds 3); the server was ` +
      `killed while job ${running?.job} ran and restarted ${DOWN_MS / 1000} s later; ` +
      (cut ? "that handler ended while the server was down; " : '') +
      `handlers that ran to their end twice for one job: ${twice.length} (${twice.join(', ') || 'none'}); ` +
      `final states: ${final.join(', ')}\n`,
  );
  return twice.length > 0;
}

async function main() {
  const top = fs.mkdtempSync(path.join(os.tmpdir(), 'pgboss-restart-'));
  fs.chmodSync(top, 0o755);
  const cluster = new Cluster(bindir(), path.join(top, 'data'), await freePort());
  const file = path.join(top, 'events.log');
  fs.writeFileSync(file, '');
  fs.chmodSync(file, 0o666);
  const procs = [];
  let shown = false;
  try {
    cluster.init();
    await cluster.start();
    shown = await scenario(cluster, file, procs);
  } finally {
    killAll(procs);
    cluster.crash();
    fs.rmSync(top, { recursive: true, force: true });
  }
  process.stdout.write(`${shown ? 'REPRODUCED' : 'NOT REPRODUCED'}: restart\n`);
  return shown ? 0 : 1;
}

if (require.main === module) runMain(main, 'reproduce_restart.js');
