'use strict';
// Unit tests of the Node.js engine, against the contract's literals (alkstore_contract/wire/literals.json,
// the file the suite's own tests hold to the contract's text). The suite certifies the engine; these say
// where a failure is when one of its rules breaks, without starting the suite.
const test = require('node:test');
const assert = require('node:assert/strict');
const storage = require('../src/storage');
const { Engine } = require('../src/engine');
const { reply, handlers } = require('../src/main');
const { LITERALS, secondsToUs } = require('../../../ecosystem/node_kit/src/validate');

const OPTS = { visibility_timeout_s: 10, max_attempts: 2, backoff_base_s: 5, dead_letter_retention_s: null };
const NO_OPTIONS = { delay_s: null, run_at: null, expires_s: null, max_attempts: null, priority: '0' };
const T0 = 1893456000000000n;

function fixture(t) {
  const location = storage.createLocation();
  const engine = new Engine();
  const store = engine.openStore({ location, clock: 'injected', seed: 7 });
  const queue = engine.queue({ store, name: 'q', opts: OPTS });
  t.after(() => {
    engine.closeStore({ store });
    storage.dropLocation(location);
  });
  const at = (us) => ({ queue, now: String(us) });
  const enqueue = (us, options = NO_OPTIONS) => engine.enqueue({ ...at(us), type: 'enqueue', payload: '{"n":1}', options });
  const claim = (us) => engine.claimOne({ ...at(us), type: 'claim_one', worker_id: 'w' });
  return { engine, location, queue, at, enqueue, claim };
}

test('D1 and R4: fail() without an error and retry() on the last attempt store the literal strings', (t) => {
  const f = fixture(t);
  const id = f.enqueue(T0);
  const first = f.claim(T0);
  assert.equal(f.engine.retry({ type: 'retry', handle: first.handle, now: String(T0), error: null, delay_s: 0 }), true);
  const second = f.claim(T0);
  assert.equal(f.engine.retry({ type: 'retry', handle: second.handle, now: String(T0), error: null, delay_s: 0 }), true);
  const dead = f.engine.getJob({ ...f.at(T0), job_id: id });
  assert.equal(dead.state, 'dead');
  assert.equal(dead.last_error, LITERALS.last_error.max_attempts_exceeded);
  const other = f.enqueue(T0);
  const held = f.claim(T0);
  assert.equal(f.engine.fail({ type: 'fail', handle: held.handle, now: String(T0), error: null }), true);
  assert.equal(f.engine.getJob({ ...f.at(T0), job_id: other }).last_error, LITERALS.last_error.failed);
});

test('X2: a sweep moves an expired job to dead with the literal string', (t) => {
  const f = fixture(t);
  const id = f.enqueue(T0, { ...NO_OPTIONS, expires_s: 1 });
  assert.equal(f.engine.sweepExpired({ ...f.at(T0 + 1000000n), type: 'sweep_expired' }), 1);
  assert.equal(f.engine.getJob({ ...f.at(T0), job_id: id }).last_error, LITERALS.last_error.expired);
});

test('H1 and H5: a handle op fails at the deadline and after a reclaim; the new claim succeeds', (t) => {
  const f = fixture(t);
  f.enqueue(T0);
  const old = f.claim(T0);
  const deadline = BigInt(old.job.lease_expires_at);
  assert.equal(deadline, T0 + 10000000n);
  const fresh = f.claim(deadline);
  assert.ok(fresh !== null);
  assert.equal(f.engine.ack({ type: 'ack', handle: old.handle, now: String(deadline) }), false);
  assert.equal(f.engine.ack({ type: 'ack', handle: fresh.handle, now: String(deadline) }), true);
});

test('bounds: the literal limits of names, priorities and max_attempts', (t) => {
  const f = fixture(t);
  const { bounds } = LITERALS;
  const store = f.engine.openStore({ location: f.location, clock: 'system', seed: null });
  assert.ok(f.engine.queue({ store, name: 'q'.repeat(bounds.max_queue_name_length), opts: OPTS }));
  assert.throws(() => f.engine.queue({ store, name: 'q'.repeat(bounds.max_queue_name_length + 1), opts: OPTS }), {
    className: 'InvalidName',
  });
  assert.throws(() => f.engine.queue({ store, name: `${bounds.reserved_prefix}x`, opts: OPTS }), { className: 'InvalidName' });
  assert.ok(f.enqueue(T0, { ...NO_OPTIONS, priority: bounds.priority_max }));
  assert.throws(() => f.enqueue(T0, { ...NO_OPTIONS, priority: String(BigInt(bounds.priority_max) + 1n) }), {
    className: 'InvalidArgument',
    message: /^priority=9223372036854775808: /,
  });
  assert.throws(() => f.enqueue(T0, { ...NO_OPTIONS, max_attempts: bounds.max_attempts_max + 1 }), { className: 'InvalidArgument' });
  assert.throws(() => f.enqueue(T0, { ...NO_OPTIONS, delay_s: bounds.max_duration_s * 2 }), {
    className: 'InvalidArgument',
    message: /^delay=/,
  });
  f.engine.closeStore({ store });
});

test('protocol: a contract error is an error reply of its class; an unknown store is an EngineError with its stack', () => {
  const table = handlers(new Engine(), 'node-sqlite');
  const hello = reply({ id: 0, type: 'hello', versions: [1] }, table);
  assert.equal(hello.result.version, 1);
  assert.deepEqual(reply({ id: 1, type: 'hello', versions: [2] }, table).error.class, 'EngineError');
  const unknown = reply({ id: 2, type: 'close_store', store: 'nope' }, table);
  assert.equal(unknown.error.class, 'EngineError');
  assert.match(unknown.error.stack, /engine\.js/);
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
