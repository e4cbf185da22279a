'use strict';
// Unit tests of the Node kit against the contract's literals (alkstore_contract/wire/literals.json) and a
// recording driver: they say where a failure is when one of the front's rules breaks, without the suite.
const test = require('node:test');
const assert = require('node:assert/strict');
const { Front, c2Order, runAtFrom, decideRetry, uniqueIds } = require('../src/front');
const { reply } = require('../src/protocol');
const { backoffDelayS, seededRandom } = require('../src/backoff');
const { LITERALS } = require('../src/validate');
const { coreOps, wireOps } = require('../src/ops');

const OPTS = { visibility_timeout_s: 10, max_attempts: 2, backoff_base_s: 5, dead_letter_retention_s: null };
const NO_OPTIONS = { delay_s: null, run_at: null, expires_s: null, max_attempts: null, priority: '0' };

function job(id, priority, runAt, attempts = 1) {
  return { id, priority: String(priority), run_at: String(runAt), attempts, max_attempts: 2, backoff_base_s: 5, visibility_timeout_s: 10 };
}

/** A driver that records every call and answers from `answers` (method -> value). */
function recordingDriver(answers = {}) {
  const calls = [];
  const driver = new Proxy(
    {},
    {
      // Not a thenable: `await openDriver()` must yield the driver itself.
      get: (_, method) =>
        method === 'then'
          ? undefined
          : async (...args) => {
              calls.push([method, ...args]);
              return answers[method];
            },
    },
  );
  return { driver, calls };
}

function fixture(answers) {
  const { driver, calls } = recordingDriver(answers);
  const adapter = {
    name: 'kit-test',
    version: '0',
    capabilities: [],
    emulates: { H4: 'one-shot handles: the kit' },
    timeResolutionUs: 1000,
    storage: () => 'nothing',
    openDriver: () => driver,
  };
  const front = new Front(adapter);
  const table = front.handlers();
  return { front, table, calls };
}

async function openQueue(table, clock = 'injected') {
  const store = await table.open_store({ location: 'x', clock, seed: 1 });
  const queue = table.queue({ store, name: 'q', opts: OPTS });
  return { store, queue };
}

test('R2: every backoff draw lies in the literal range of its (base, attempts) row', () => {
  const random = seededRandom(1);
  for (const [base, attempts, low, high] of LITERALS.r2_range_s) {
    for (let i = 0; i < 20; i++) {
      const delay = backoffDelayS(attempts, base, random);
      assert.ok(delay >= low && delay <= high, `base ${base} attempts ${attempts}: ${delay} outside [${low}, ${high}]`);
    }
  }
});

test('R5: one seed draws the same delays, another seed other ones', () => {
  const draws = (r) => Array.from({ length: 5 }, () => r());
  assert.deepEqual(draws(seededRandom(42)), draws(seededRandom(42)));
  assert.notDeepEqual(draws(seededRandom(42)), draws(seededRandom(43)));
});

test('C2: a batch sorts by priority descending, run_at ascending, id ascending', () => {
  const jobs = [job(3, 0, 5), job(2, 0, 5), job(1, 0, 9), job(4, 7, 99)];
  assert.deepEqual(jobs.sort(c2Order).map((j) => j.id), [4, 2, 3, 1]);
});

test('E2-E4: a delay counts from now, a run_at stands, neither is now', () => {
  assert.equal(runAtFrom({ delayUs: 5n, runAtUs: null }, 10n), 15n);
  assert.equal(runAtFrom({ delayUs: null, runAtUs: 3n }, 10n), 3n);
  assert.equal(runAtFrom({ delayUs: null, runAtUs: null }, 10n), 10n);
});

test('R4 and R1: the last attempt goes dead with the literal error, an earlier one waits on the curve', () => {
  assert.deepEqual(decideRetry(job(1, 0, 0, 2), null, null, seededRandom(1)), { dead: true, lastError: LITERALS.last_error.max_attempts_exceeded });
  const early = decideRetry(job(1, 0, 0, 1), 'boom', null, seededRandom(1));
  assert.equal(early.dead, false);
  assert.ok(early.delayS >= 2.5 && early.delayS <= 5);
  assert.equal(decideRetry(job(1, 0, 0, 1), null, 0.5, seededRandom(1)).delayS, 0.5);
});

test('B1: duplicate ids are dropped, an int and a str of one text kept apart', () => {
  assert.deepEqual(uniqueIds([1, 1, '1', 'a', 'a']), [1, '1', 'a']);
});

test('H4 and D1: a handle is one-shot, and fail() without an error stores the literal string', async () => {
  const { table, calls } = fixture({ claim: [job(9, 0, 0)], deadLetter: true });
  const { queue } = await openQueue(table);
  const claimed = await table.claim_one({ queue, now: '5', worker_id: 'w' });
  assert.equal(await table.fail({ handle: claimed.handle, now: '6', error: null, type: 'fail' }), true);
  assert.deepEqual(calls.at(-1).slice(0, 6), ['deadLetter', 'q', 9, calls.at(-1)[3], 6n, LITERALS.last_error.failed]);
  const again = await reply({ id: 1, type: 'ack', handle: claimed.handle, now: '7' }, table);
  assert.equal(again.error.class, 'HandleSpent');
});

test('DEC-order-of-checks: bad input on a live handle stores nothing and leaves the handle unspent', async () => {
  const { table, calls } = fixture({ claim: [job(9, 0, 0)], ack: true });
  const { queue } = await openQueue(table);
  const claimed = await table.claim_one({ queue, now: '5', worker_id: 'w' });
  const bad = await reply({ id: 1, type: 'retry', handle: claimed.handle, now: '6', error: null, delay_s: -1 }, table);
  assert.equal(bad.error.class, 'InvalidArgument');
  assert.match(bad.error.message, /^delay=-1: /);
  assert.equal(calls.filter(([method]) => method === 'retry').length, 0);
  assert.equal(await table.ack({ handle: claimed.handle, now: '7' }), true);
});

test('S3: an op on a closed store is refused before its arguments are read', async () => {
  const { table, calls } = fixture();
  const { store, queue } = await openQueue(table);
  await table.close_store({ store });
  const refused = await reply({ id: 1, type: 'enqueue', queue, now: '1', payload: '1', options: { ...NO_OPTIONS, delay_s: -1 } }, table);
  assert.equal(refused.error.class, 'StoreClosed');
  assert.deepEqual(calls.map(([method]) => method), ['close']);
});

test('T2: a system-clock store hands the driver no instant; an injected one the suite\'s', async () => {
  const { table, calls } = fixture({ insert: [1] });
  const system = await openQueue(table, 'system');
  const injected = await openQueue(table, 'injected');
  await table.enqueue({ queue: system.queue, payload: '1', options: NO_OPTIONS });
  await table.enqueue({ queue: injected.queue, now: '42', payload: '1', options: NO_OPTIONS });
  assert.deepEqual(calls.map((call) => call[3]), [null, 42n]);
});

test('handshake: the emulated clauses ride in the hello; an unknown version is refused', async () => {
  const { table } = fixture();
  const hello = await reply({ id: 0, type: 'hello', versions: [1] }, table);
  assert.deepEqual(hello.result.emulates, { H4: 'one-shot handles: the kit' });
  assert.equal(hello.result.time_resolution_us, 1000);
  const refused = await reply({ id: 1, type: 'hello', versions: [2] }, table);
  assert.equal(refused.error.class, 'EngineError');
});

test('protocol: an async handler\'s reply carries its request id; a sync one answers at once', async () => {
  const table = { slow: () => new Promise((resolve) => setTimeout(() => resolve('late'), 5)), fast: () => 'now' };
  const slow = reply({ id: 1, type: 'slow' }, table);
  const fast = reply({ id: 2, type: 'fast' }, table);
  assert.deepEqual(fast, { in_reply_to: 2, type: 'ok', result: 'now' });
  assert.deepEqual(await slow, { in_reply_to: 1, type: 'ok', result: 'late' });
  const unknown = reply({ id: 3, type: 'nope' }, table);
  assert.equal(unknown.error.class, 'EngineError');
});

test('wire ops: the front serves every op of the schema\'s table that every engine serves, and no other', () => {
  const { table } = fixture();
  assert.deepEqual(Object.keys(table).sort(), coreOps().sort());
  const optional = [...wireOps()].filter(([, op]) => op.onlyWith !== null).map(([name]) => name);
  assert.ok(optional.includes('server_address'), 'the table marks the networked ops');
  assert.deepEqual(wireOps().get('enqueue').fields, ['queue', 'now', 'payload', 'options']);
});
