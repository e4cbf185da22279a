'use strict';
// Unit tests of the Node kit's raw-input rules (validate.js): the payload bounds (E8, counted as the suite
// counts them), a queue's options (S2) and the instant range (E9), which the suite sends to wire engines as
// they are (docs/wire-protocol.md, "Argument checks").
const test = require('node:test');
const assert = require('node:assert/strict');
const validate = require('../src/validate');

const refusal = (fn) => {
  try {
    fn();
  } catch (error) {
    return `${error.className}: ${error.message}`;
  }
  return null;
};

const nested = (levels, inner, wrap) => {
  let text = inner;
  for (let i = 0; i < levels; i += 1) text = wrap(text);
  return text;
};

test('a payload nests 500 levels, not 501; an empty container is a value at its own level', () => {
  assert.equal(refusal(() => validate.payloadText('payload', nested(500, '0', (t) => `[${t}]`))), null);
  assert.match(refusal(() => validate.payloadText('payload', nested(501, '0', (t) => `[${t}]`))), /^PayloadError: payload: nested deeper than 500/);
  assert.equal(refusal(() => validate.payloadText('payload', nested(500, '"leaf"', (t) => `{"d":${t}}`))), null);
  assert.match(refusal(() => validate.payloadText('payload', nested(501, '"leaf"', (t) => `{"d":${t}}`))), /nested deeper/);
  assert.equal(refusal(() => validate.payloadText('payload', nested(500, '[]', (t) => `[${t}]`))), null);
  assert.equal(refusal(() => validate.payloadText('payload', '{"[[[":"]]]\\"[","k":[1,{"a":null}]}')), null);
});

test('an int has at most 4300 digits, sign not counted; a float is not an int', () => {
  assert.equal(refusal(() => validate.payloadText('payload', '-' + '9'.repeat(4300))), null);
  assert.match(refusal(() => validate.payloadText('payload', '1' + '0'.repeat(4300))), /int of 4301 digits>: an int has at most 4300 digits/);
  assert.match(refusal(() => validate.payloadText('payload', `{"n":-1${'0'.repeat(4300)}}`)), /negative int of 4301 digits/);
  assert.equal(refusal(() => validate.payloadText('payload', `1${'0'.repeat(4300)}.5`)), null);
});

test("a queue's options are refused by field, with the value as Python shows it", () => {
  const opts = { visibility_timeout_s: 300, max_attempts: 3, backoff_base_s: 5, dead_letter_retention_s: null };
  assert.equal(refusal(() => validate.queueOpts(opts)), null);
  assert.match(refusal(() => validate.queueOpts({ ...opts, visibility_timeout_s: 0 })), /^InvalidArgument: visibility_timeout_s=0: /);
  assert.match(refusal(() => validate.queueOpts({ ...opts, max_attempts: 2 ** 31 })), /max_attempts=2147483648/);
  assert.match(refusal(() => validate.queueOpts({ ...opts, backoff_base_s: -1 })), /backoff_base_s=-1: a duration must not be negative/);
  assert.match(refusal(() => validate.queueOpts({ ...opts, dead_letter_retention_s: -1 })), /dead_letter_retention_s=-1/);
  assert.match(refusal(() => validate.queueOpts({ ...opts, max_attempts: true })), /max_attempts=True/);
});

test('an instant lies within years 1 to 9999 UTC', () => {
  assert.equal(validate.instantUs('run_at', '-62135596800000000'), -62135596800000000n);
  assert.equal(validate.instantUs('run_at', '253402300799999999'), 253402300799999999n);
  assert.match(refusal(() => validate.instantUs('run_at', '-62135596800000001')), /^InvalidArgument: run_at=-62135596800000001/);
  assert.match(refusal(() => validate.instantUs('run_at', '253402300800000000')), /within years 1 to 9999 UTC/);
});
