'use strict';
// The runner protocol's side of every Node runner (docs/runtime-faults.md), as alkstore_faults/runner_cli.py and
// alkstore_faults/handler.py are the Python runners': the ledger's records, the jobs file, the handler's run around
// a real timer, and the four subcommands (inspect: protocol 2). A runner (ecosystem/<library>/runner/runner.js) keeps what differs
// between libraries (its description, its client's enqueue, its worker) and hands them to serve(), so a fix to the
// protocol's side reaches every Node runner at once. It needs nothing but Node itself: each runner's npm packages
// are its library's only.
const fs = require('node:fs');

const USAGE = 'describe, enqueue JOBS_FILE, worker or inspect JOBS_FILE';

// One ledger record: start, end (with ok), ack (with accepted) or cancelled (with by and reason: the library or its
// worker cancelled the run, written instead of end); one appendFileSync of one line, so the records of the processes
// of one worker interleave whole.
function record(ev, job, attempt, { ok, accepted, by, reason } = {}) {
  const line = {
    ev, job, worker: process.env.ALKSTORE_FAULTS_WORKER, pid: process.pid, attempt,
    mono: Number(process.hrtime.bigint()) / 1e9, // CLOCK_MONOTONIC on Linux, the clock of every other ledger
    wall: Date.now() / 1000,
  };
  if (ev === 'end') line.ok = ok;
  if (ev === 'ack') line.accepted = accepted;
  if (ev === 'cancelled') Object.assign(line, { by, reason });
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

// The one line for a package that is not installed (require() of it failed), or null for any other error: a runner
// without its library fails at describe naming what to install, not with a stack trace at every fault.
function missingPackage(error) {
  if (!error || error.code !== 'MODULE_NOT_FOUND') return null;
  const match = /Cannot find module '([^']+)'/.exec(String(error.message));
  if (!match || match[1].startsWith('.') || match[1].startsWith('/')) return null;
  const name = match[1].startsWith('@') ? match[1].split('/').slice(0, 2).join('/') : match[1].split('/')[0];
  return `runner needs the npm package '${name}', which is not installed: install it (npm install ${name})`;
}

function failed(what) {
  return (error) => {
    process.stderr.write(`${missingPackage(error) || `${what} failed: ${error.stack || error}`}\n`);
    process.exit(1);
  };
}

// Runs the subcommand in argv (default: this process's arguments): describe prints describe() as one line of JSON;
// enqueue JOBS_FILE awaits enqueue(jobs); worker awaits worker(), which starts one worker in the foreground until
// SIGTERM; inspect JOBS_FILE (protocol 2) awaits inspect(jobs) and prints each state it returns as one line of JSON.
// A throw or rejection of any ends the process with status 1 and the error on stderr (one line naming the package
// when one is not installed); anything else, and inspect of a runner that gave none, is refused with status 2 and
// the usage.
function serve({ describe, enqueue, worker, inspect = null }, argv = process.argv.slice(2)) {
  const [command, argument] = argv;
  if (command === 'describe' && argv.length === 1) {
    Promise.resolve().then(() => process.stdout.write(JSON.stringify(describe()) + '\n')).catch(failed('describe'));
  } else if (command === 'enqueue' && argv.length === 2) {
    Promise.resolve().then(() => enqueue(readJobs(argument))).catch(failed('enqueue'));
  } else if (command === 'worker' && argv.length === 1) {
    Promise.resolve().then(worker).catch(failed('worker'));
  } else if (command === 'inspect' && argv.length === 2 && inspect) {
    Promise.resolve()
      .then(() => inspect(readJobs(argument)))
      .then((states) => process.stdout.write(states.map((state) => JSON.stringify(state) + '\n').join('')))
      .catch(failed('inspect'));
  } else {
    const missing = command === 'inspect' ? ' (this runner has no inspect: protocol 1)' : '';
    process.stderr.write(`unknown command ${JSON.stringify(argv.join(' '))}${missing}: ${USAGE}\n`);
    process.exitCode = 2;
  }
}

module.exports = { USAGE, missingPackage, perform, readJobs, record, serve };
