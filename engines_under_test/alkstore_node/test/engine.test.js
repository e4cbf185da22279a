'use strict';
// Unit tests of the Node.js engine, against the contract's literals (alkstore_contract/wire/literals.json,
// the file the suite's own tests hold to the contract's text). The suite certifies the engine; these say
// where a failure is when one of its rules breaks, without starting the suite.
const test = require('node:test');
const assert = require('node:assert/strict');
const fs = require('node:fs');
const { Front, reply, validate, wireOps } = require('alkstore-node-kit');
const storage = require('../src/storage');
const { adapter } = require('../src/engine');

const { LITERALS, secondsToUs } = validate;

const OPTS = { visibility_timeout_s: 10, max_attempts: 2, backoff_base_s: 5, dead_letter_retention_s: null };
const NO_OPTIONS = { delay_s: null, run_at: null, expires_s: null, max_attempts: null, priority: '0' };
const T0 = 1893456000000000n;

async function fixture(t) {
  const location = storage.createLocation();
  const engine = new Front(adapter());
  const store = await engine.openStore({ location, clock: 'injected', seed: 7 });
  const queue = engine.queue({ store, name: 'q', opts: OPTS });
  t.after(async () => {
    await engine.closeAll();
    storage.dropLocation(location);
  });
  const at = (us) => ({ queue, now: String(us) });
  const enqueue = async (us, options = NO_OPTIONS) =>
    (await engine.enqueueMany({ ...at(us), type: 'enqueue', options }, ['{"n":1}']))[0];
  const claim = async (us) => (await engine.claim({ ...at(us), type: 'claim_one', worker_id: 'w' }, 1))[0] ?? null;
  return { engine, location, store, queue, at, enqueue, claim };
}

test('D1 and R4: fail() without an error and retry() on the last attempt store the literal strings', async (t) => {
  const f = await fixture(t);
  const id = await f.enqueue(T0);
  const first = await f.claim(T0);
  assert.equal(await f.engine.retry({ type: 'retry', handle: first.handle, now: String(T0), error: null, delay_s: 0 }), true);
  const second = await f.claim(T0);
  assert.equal(await f.engine.retry({ type: 'retry', handle: second.handle, now: String(T0), error: null, delay_s: 0 }), true);
  const dead = await f.engine.getJob({ ...f.at(T0), job_id: id });
  assert.equal(dead.state, 'dead');
  assert.equal(dead.last_error, LITERALS.last_error.max_attempts_exceeded);
  const other = await f.enqueue(T0);
  const held = await f.claim(T0);
  assert.equal(await f.engine.fail({ type: 'fail', handle: held.handle, now: String(T0), error: null }), true);
  assert.equal((await f.engine.getJob({ ...f.at(T0), job_id: other })).last_error, LITERALS.last_error.failed);
});

test('X2 and X3: a sweep moves an expired job to dead with the literal string, and purges it after its retention', async (t) => {
  const f = await fixture(t);
  const kept = f.engine.queue({ store: f.store, name: 'kept', opts: { ...OPTS, dead_letter_retention_s: 2.5e-6 } });
  const id = await f.enqueue(T0, { ...NO_OPTIONS, expires_s: 1 });
  const late = T0 + 1000000n;
  const other = (await f.engine.enqueueMany({ queue: kept, now: String(T0), type: 'enqueue', options: { ...NO_OPTIONS, expires_s: 1 } }, ['{}']))[0];
  assert.equal(await f.engine.sweepExpired({ ...f.at(late), type: 'sweep_expired' }), 1);
  assert.equal((await f.engine.getJob({ ...f.at(T0), job_id: id })).last_error, LITERALS.last_error.expired);
  assert.equal(await f.engine.sweepExpired({ queue: kept, now: String(late), type: 'sweep_expired' }), 1);
  // 2.5 µs of retention is 2 µs, as timedelta(seconds=2.5e-6) rounds: purged at died_at + 2 µs, kept at + 1 µs.
  await f.engine.sweepExpired({ queue: kept, now: String(late + 1n), type: 'sweep_expired' });
  assert.notEqual(await f.engine.getJob({ queue: kept, now: String(late), job_id: other }), null);
  await f.engine.sweepExpired({ queue: kept, now: String(late + 2n), type: 'sweep_expired' });
  assert.equal(await f.engine.getJob({ queue: kept, now: String(late), job_id: other }), null);
});

test('H1 and H5: a handle op fails at the deadline and after a reclaim; the new claim succeeds', async (t) => {
  const f = await fixture(t);
  await f.enqueue(T0);
  const old = await f.claim(T0);
  const deadline = BigInt(old.job.lease_expires_at);
  assert.equal(deadline, T0 + 10000000n);
  const fresh = await f.claim(deadline);
  assert.ok(fresh !== null);
  assert.equal(await f.engine.ack({ type: 'ack', handle: old.handle, now: String(deadline) }), false);
  assert.equal(await f.engine.ack({ type: 'ack', handle: fresh.handle, now: String(deadline) }), true);
});

test('bounds: the literal limits of names, priorities and max_attempts', async (t) => {
  const f = await fixture(t);
  const { bounds } = LITERALS;
  const store = await f.engine.openStore({ location: f.location, clock: 'system', seed: null });
  assert.ok(f.engine.queue({ store, name: 'q'.repeat(bounds.max_queue_name_length), opts: OPTS }));
  assert.throws(() => f.engine.queue({ store, name: 'q'.repeat(bounds.max_queue_name_length + 1), opts: OPTS }), {
    className: 'InvalidName',
  });
  assert.throws(() => f.engine.queue({ store, name: `${bounds.reserved_prefix}x`, opts: OPTS }), { className: 'InvalidName' });
  assert.ok(await f.enqueue(T0, { ...NO_OPTIONS, priority: bounds.priority_max }));
  await assert.rejects(f.enqueue(T0, { ...NO_OPTIONS, priority: String(BigInt(bounds.priority_max) + 1n) }), {
    className: 'InvalidArgument',
    message: /^priority=9223372036854775808: /,
  });
  await assert.rejects(f.enqueue(T0, { ...NO_OPTIONS, max_attempts: bounds.max_attempts_max + 1 }), { className: 'InvalidArgument' });
  await assert.rejects(f.enqueue(T0, { ...NO_OPTIONS, delay_s: bounds.max_duration_s * 2 }), {
    className: 'InvalidArgument',
    message: /^delay=/,
  });
});

test('protocol: a contract error is an error reply of its class; an unknown store is an EngineError with its stack', async () => {
  const table = new Front(adapter()).handlers();
  const hello = await reply({ id: 0, type: 'hello', versions: [1] }, table);
  assert.equal(hello.result.version, 1);
  assert.equal(hello.result.engine.name, 'node-sqlite');
  assert.equal('emulates' in hello.result, false, 'the engine decides every clause itself');
  assert.deepEqual((await reply({ id: 1, type: 'hello', versions: [2] }, table)).error.class, 'EngineError');
  const unknown = await reply({ id: 2, type: 'close_store', store: 'nope' }, table);
  assert.equal(unknown.error.class, 'EngineError');
  assert.match(unknown.error.stack, /front\.js/);
});

test('durations: whole microseconds as Python\'s timedelta(seconds=...) gives them, ties half to even', () => {
  // Worked out with CPython: timedelta(seconds=s) / timedelta(microseconds=1).
  const cases = [
    [5e-7, 0n],
    [2.5e-6, 2n],
    [4.5e-6, 4n],
    [1.0000005, 1000001n],
    [0.1, 100000n],
    [1e-6, 1n],
    [3155760000, 3155760000000000n],
  ];
  for (const [seconds, us] of cases) assert.equal(secondsToUs(seconds), us, `${seconds} s`);
});

test('layout: a new location is laid out as reference_engine/alkstore_sqlite/layout.sql says', (t) => {
  const Database = require('better-sqlite3');
  const layoutOf = (db) => ({
    version: db.pragma('user_version', { simple: true }),
    objects: db
      .prepare('SELECT type, name, sql FROM sqlite_master WHERE sql IS NOT NULL ORDER BY type, name')
      .all()
      .map(({ type, name, sql }) => [type, name, sql.replace(/\s+/g, ' ').trim()]),
  });
  const described = new Database(':memory:');
  described.exec(fs.readFileSync(storage.LAYOUT_PATH, 'utf8'));
  const location = storage.createLocation();
  const written = new Database(location, { readonly: true });
  t.after(() => {
    written.close();
    described.close();
    storage.dropLocation(location);
  });
  const expected = layoutOf(described);
  assert.ok(expected.objects.some(([, name]) => name === 'jobs_dead_purge'));
  assert.deepEqual(layoutOf(written), expected);
});

test('wire ops: the engine answers every op of the schema\'s table that every engine or its declarations serve, and refuses the others', async (t) => {
  t.mock.method(process.stderr, 'write', () => true); // each op is sent without its fields: its stack is no news
  const declared = adapter().capabilities;
  const table = new Front(adapter()).handlers();
  for (const [name, op] of wireOps()) {
    const answer = await reply({ id: 1, type: name }, table);
    if (name === 'create_location') storage.dropLocation(answer.result);
    const unknown = answer.type === 'error' && answer.error.message === `unknown request type ${JSON.stringify(name)}`;
    const served = op.onlyWith === null || declared.includes(op.onlyWith);
    assert.equal(unknown, !served, `${name}: ${JSON.stringify(answer.error?.message ?? answer.result)}`);
  }
});
