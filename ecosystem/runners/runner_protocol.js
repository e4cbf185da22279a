'use strict';
// The runner protocol's side of every Node runner (docs/runtime-faults.md), as alkstore_faults/runner_cli.py and
// alkstore_faults/handler.py are the Python runners': the ledger's records, the jobs file, the handler's run around
// a real timer, and the three subcommands. A runner (ecosystem/runners/<library>/runner.js) keeps what differs
// between libraries (its description, its client's enqueue, its worker) and hands them to serve(), so a fix to the
// protocol's side reaches every Node runner at once. It needs nothing but Node itself: each runner's npm packages
// are its library's only.
const fs = require('node:fs');

const USAGE = 'describe, enqueue JOBS_FILE or worker';

// One ledger record: start, end (with ok) or ack (with accepted); one appendFileSync of one line, so the records of
// the processes of one worker interleave whole.
function record(ev, job, attempt, { ok, accepted } = {}) {
  const line = {
    ev, job, worker: process.env.ALKSTORE_FAULTS_WORKER, pid: process.pid, attempt,
    mono: Number(process.hrtime.bigint()) / 1e9, // CLOCK_MONOTONIC on Linux, the clock of every other ledger
    wall: Date.now() / 1000,
  };
  if (ev === 'end') line.ok = ok;
  if (ev === 'ack') line.accepted = accepted;
  fs.appendFileSync(process.env.ALKSTORE_FAULTS_LEDGER, JSON.stringify(line) + '\n');
}

// A job's handler: start, a real sleep of its duration (a killed or paused process stops in it), end; then the
// library's ordinary failure (a thrown Error) when the job was told to fail.
async function perform(job, attempt) {
  record('start', job.id, attempt);
  await new Promise((resolve) => setTimeout(resolve, job.duration_s * 1000));
  record('end', job.id, attempt, { ok: !job.fail });
  if (job.fail) throw new Error(`job ${job.id} was told to fail`);
}

// The jobs of an enqueue call: one JSON object a line (id, duration_s, fail).
function readJobs(path) {
  return fs.readFileSync(path, 'utf8').split('\n').filter((line) => line.trim()).map((line) => JSON.parse(line));
}

function failed(what) {
  return (error) => {
    process.stderr.write(`${what} failed: ${error.stack || error}\n`);
    process.exit(1);
  };
}

// Runs the subcommand in argv (default: this process's arguments): describe prints describe() as one line of JSON;
// enqueue JOBS_FILE awaits enqueue(jobs); worker awaits worker(), which starts one worker in the foreground until
// SIGTERM. A rejection of either ends the process with status 1 and the error on stderr; anything else is refused
// with status 2 and the usage.
function serve({ describe, enqueue, worker }, argv = process.argv.slice(2)) {
  const [command, argument] = argv;
  if (command === 'describe' && argv.length === 1) {
    process.stdout.write(JSON.stringify(describe()) + '\n');
  } else if (command === 'enqueue' && argv.length === 2) {
    Promise.resolve().then(() => enqueue(readJobs(argument))).catch(failed('enqueue'));
  } else if (command === 'worker' && argv.length === 1) {
    Promise.resolve().then(worker).catch(failed('worker'));
  } else {
    process.stderr.write(`unknown command ${JSON.stringify(argv.join(' '))}: ${USAGE}\n`);
    process.exitCode = 2;
  }
}

module.exports = { USAGE, perform, readJobs, record, serve };
