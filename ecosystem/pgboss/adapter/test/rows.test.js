'use strict';
// Unit tests of the pg-boss adapter's row mapping (no server needed): instants to the microsecond, the
// contract's states from pg-boss's, attempts from retry_count. The suite certifies the adapter itself.
const test = require('node:test');
const assert = require('node:assert/strict');
const { instantUs, isoUs, snapshot } = require('../src/rows');

test('T1: a timestamptz reads back to the microsecond, whatever its offset', () => {
  assert.equal(instantUs('1970-01-01 00:00:01.000002+00'), '1000002');
  assert.equal(instantUs('1970-01-01 05:30:01.5+05:30'), '1500000');
  assert.equal(instantUs(null), null);
  assert.throws(() => instantUs('yesterday'));
});

test('E3: an instant goes to pg-boss as ISO text to the microsecond', () => {
  assert.equal(isoUs(1000002n), '1970-01-01T00:00:01.000002Z');
});

test('C3 and D2: an active row is processing with its claimant; completed rows are gone', () => {
  const row = {
    id: 'a',
    state: 'active',
    data: { payload: '{"n":1}', stamps: { visibility_timeout_s: 0.5, backoff_base_s: 1, dead_letter_retention_s: null, expires: false } },
    priority: 0,
    retryCount: 1,
    retryLimit: 2,
    startAfter: '1970-01-01 00:00:01+00',
    startedOn: '1970-01-01 00:00:02+00',
    expireInSeconds: '1',
    createdOn: '1970-01-01 00:00:00+00',
    keepUntil: '1970-01-15 00:00:00+00',
    completedOn: null,
    output: { message: 'boom' },
  };
  const job = snapshot(row, 'q', 'w');
  assert.equal(job.state, 'processing');
  assert.equal(job.attempts, 2);
  assert.equal(job.max_attempts, 3);
  assert.equal(job.claimed_by, 'w');
  assert.equal(job.lease_expires_at, '3000000');
  assert.equal(job.last_error, 'boom');
  assert.equal(job.expires_at, null);
  assert.equal(snapshot({ ...row, state: 'completed' }, 'q'), null);
});
