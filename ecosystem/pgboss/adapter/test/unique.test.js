'use strict';
// The pg-boss adapter's unique keys (K1-K4) on a real server: singletonKey on a `stately` queue. Skipped when no
// Postgres server answers at $ALKSTORE_PG_DSN; the suite certifies the adapter itself.
const test = require('node:test');
const assert = require('node:assert/strict');
const { jobOptions } = require('alkstore-node-kit');
const { adapter } = require('../src/main');

/** One job as node_kit's front hands it to a driver: the queue's defaults, no delay, no expiry. */
const ONE = {
  payloads: ['{"n":1}'],
  ...jobOptions(
    { delay_s: null, expires_s: null, max_attempts: null, priority: 0, run_at: null },
    { visibility_timeout_s: 30, max_attempts: 3, backoff_base_s: 5, dead_letter_retention_s: null },
  ),
};

test('K1 K2: a waiting holder answers a second send; once fetched (active) its key is free for a created job', async (t) => {
  assert.ok(adapter.capabilities.includes('unique_keys'));
  assert.ok(!adapter.capabilities.includes('release'));
  if ((await adapter.unavailableReason()) !== null) return t.skip('no Postgres server answers at $ALKSTORE_PG_DSN');
  const where = await adapter.createLocation();
  const driver = await adapter.openDriver(where);
  t.after(async () => {
    await driver.close();
    await adapter.dropLocation(where);
  });
  const first = await driver.insertUnique('q', 'k', ONE);
  assert.equal(first.created, true);
  assert.deepEqual(await driver.insertUnique('q', 'k', { ...ONE, payloads: ['{"n":2}'] }), { id: first.id, created: false });
  assert.equal(await adapter.countStoredJobs(where), 1);
  const [claimed] = await driver.claim('q', 'w', 1);
  assert.equal(claimed.id, first.id);
  const third = await driver.insertUnique('q', 'k', ONE);
  assert.equal(third.created, true, "a stately queue holds one job per state: the matrix's K1");
});
