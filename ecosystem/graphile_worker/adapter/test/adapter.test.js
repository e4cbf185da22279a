'use strict';
// Part of the graphile-worker adapter (ecosystem/graphile_worker/adapter): its unit tests. The suite certifies the
// adapter; these say where a failure is when its mapping breaks, without starting the suite. The Postgres
// tests run on $ALKSTORE_PG_DSN and are skipped when no server answers.
const test = require('node:test');
const assert = require('node:assert/strict');
const location = require('../src/location');
const { GraphileDriver, snapshot, wireInstant } = require('../src/driver');
const { adapter } = require('../src/adapter');

const ROW = {
  id: '7',
  queue: 'q',
  payload: '{"n":1}',
  stamps: { visibility_timeout_s: 1.5, backoff_base_s: 5, dead_letter_retention_s: null, enqueued_at: '1000000', expires_at: null },
  priority: '3',
  attempts: 1,
  max_attempts: 2,
  last_error: null,
  run_at: '1000000',
  locked_at: '2000123',
  updated_at: '1000000',
  worker_id: 'w',
};
const JOBS = {
  payloads: ['{"n":1}', '[2]'],
  priority: 4n,
  delayUs: null,
  runAtUs: null,
  expiresUs: null,
  maxAttempts: 3,
  visibilityTimeoutS: 30,
  backoffBaseS: 5,
  deadLetterRetentionS: null,
};

test('T1: instants are cut to the declared millisecond', () => {
  assert.equal(adapter.timeResolutionUs, 1000);
  assert.equal(wireInstant('1893456000123456'), '1893456000123000');
  assert.equal(wireInstant(null), null);
});

test('C3: a locked row is processing, its lease locked_at + the visibility timeout, its claimant the worker id', () => {
  const job = snapshot(ROW);
  assert.equal(job.state, 'processing');
  assert.equal(job.lease_expires_at, '3500000');
  assert.equal(job.claimed_by, 'w');
  assert.equal(job.died_at, null);
});

test('D2: an unlocked row with its attempts spent is dead, with no lease and no claimant', () => {
  const job = snapshot({ ...ROW, locked_at: null, attempts: 2, updated_at: '4000000' });
  assert.equal(job.state, 'dead');
  assert.equal(job.lease_expires_at, null);
  assert.equal(job.claimed_by, null);
  assert.equal(job.died_at, '4000000');
  assert.equal(snapshot({ ...ROW, locked_at: null }).state, 'ready');
});

test('C3 H1 H5: the lease is declared the adapter\'s; C1 is graphile\'s own 4-hour rule, not emulated', () => {
  assert.deepEqual(Object.keys(adapter.emulates).sort(), ['C3', 'H1', 'H4', 'H5', 'R2', 'R5']);
});

async function serverAnswers() {
  return (await location.unavailableReason()) === null;
}

test('E7 C3 H2 B2: through graphile-worker, a job is added, claimed held in its handler, and acked', async (t) => {
  if (!(await serverAnswers())) return t.skip('no Postgres server answers at $ALKSTORE_PG_DSN');
  const where = await location.createLocation();
  const driver = await GraphileDriver.open(where);
  t.after(async () => {
    await driver.close();
    await location.dropLocation(where);
  });
  const [low] = await driver.insert('q', { ...JOBS, priority: 0n, payloads: ['{"n":1}'] });
  const [high] = await driver.insert('q', JOBS);
  assert.equal(await location.countStoredJobs(where), 3);
  const [first] = await driver.claim('q', 'w1', 1, 'token-1');
  assert.equal(first.id, high, 'priority 4 runs before priority 0 (graphile: the lowest number first)');
  assert.equal(first.priority, '4');
  assert.equal(first.claimed_by, 'w1');
  assert.equal(first.attempts, 1);
  assert.equal(await driver.cancel('q', high), false, 'completeJobs leaves a held job alone');
  assert.equal(await driver.ack('q', high, 'token-1'), true);
  assert.equal(await driver.get('q', high), null);
  assert.equal(await driver.cancel('q', low), true);
  assert.equal(await location.countStoredJobs(where), 1);
  const rest = await driver.claim('q', 'w2', 5, 'token-2');
  assert.equal(rest.length, 1);
  assert.deepEqual(await driver.claim('q', 'w3', 1, 'token-3'), []);
});

test('unavailable_reason: without its npm packages the adapter says why it cannot run, and what to run', () => {
  const stub = require('../src/adapter').notInstalled('graphile-worker');
  assert.match(stub.unavailableReason(), /^npm package graphile-worker is not installed: run npm ci in .*graphile_worker\/adapter \(pins graphile-worker 0\.17\.3\)$/);
  assert.deepEqual(stub.emulates, adapter.emulates);
});
