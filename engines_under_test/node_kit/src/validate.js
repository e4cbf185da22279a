'use strict';
// Part of the Node kit (engines_under_test/node_kit): the input rules of the contract (S1, C6, E7, E9, D1, H3,
// DEC-bounds), judged alike by the Node engine and every Node ecosystem adapter.
// Each message names the argument, shows the value as Python's repr would (the suite's rows look for it)
// and states the rule. The bounds come from the contract's literals, the file the suite reads too.

const path = require('node:path');
const fs = require('node:fs');
const { ContractError, invalidName, invalidArgument } = require('./errors');

const LITERALS_PATH = path.join(__dirname, '..', '..', '..', 'alkstore_contract', 'wire', 'literals.json');
const LITERALS = JSON.parse(fs.readFileSync(LITERALS_PATH, 'utf8'));
const BOUNDS = LITERALS.bounds;
const PRIORITY_MIN = BigInt(BOUNDS.priority_min);
const PRIORITY_MAX = BigInt(BOUNDS.priority_max);
const MAX_SHOWN = 80;

function pyString(text) {
  const quote = text.includes("'") && !text.includes('"') ? '"' : "'";
  let out = quote;
  for (const ch of text) {
    const code = ch.codePointAt(0);
    if (ch === '\\') out += '\\\\';
    else if (ch === quote) out += '\\' + quote;
    else if (ch === '\n') out += '\\n';
    else if (ch === '\r') out += '\\r';
    else if (ch === '\t') out += '\\t';
    else if (code < 0x20 || (code >= 0x7f && code < 0xa0)) out += '\\x' + code.toString(16).padStart(2, '0');
    else out += ch;
  }
  return out + quote;
}

/** A short description of a value, as Python's describe_value shows it (repr, cut to 80 characters). */
function describe(value) {
  let text;
  if (typeof value === 'string') text = pyString(value);
  else if (typeof value === 'number') text = Number.isFinite(value) ? String(value) : String(value).replace('Infinity', 'inf');
  else if (typeof value === 'bigint') text = value.toString();
  else if (typeof value === 'boolean') text = value ? 'True' : 'False';
  else if (value === null || value === undefined) text = 'None';
  else text = JSON.stringify(value);
  return text.length <= MAX_SHOWN ? text : text.slice(0, MAX_SHOWN - 3) + '...';
}

function hasControl(text) {
  for (const ch of text) {
    const code = ch.codePointAt(0);
    if (code < 0x20 || (code >= 0x7f && code < 0xa0)) return ch;
  }
  return null;
}

function queueName(name) {
  if (name.length === 0) throw invalidName("name='': a queue name must not be empty");
  const length = [...name].length;
  if (length > BOUNDS.max_queue_name_length) {
    throw invalidName(`name=${describe(name)}: a queue name has at most ${BOUNDS.max_queue_name_length} characters, got ${length}`);
  }
  if (name.startsWith(BOUNDS.reserved_prefix)) {
    throw invalidName(`name=${describe(name)}: the prefix '${BOUNDS.reserved_prefix}' is reserved`);
  }
  const control = hasControl(name);
  if (control !== null) {
    throw invalidName(`name=${describe(name)}: a queue name must not contain control characters (${pyString(control)})`);
  }
  return name;
}

function workerId(id) {
  if (id.length === 0) throw invalidName("worker_id='': a worker id must be a non-empty str");
  if (id.includes('\u0000')) throw invalidName(`worker_id=${describe(id)}: a worker id must not contain NUL characters ('\\x00')`);
  return id;
}

/** K4: a unique key is 1 to 200 characters (code points, as Python counts them), without NUL. */
function uniqueKey(key) {
  const length = [...key].length;
  if (length === 0) throw invalidArgument("unique_key='': a unique key must be a non-empty str");
  if (length > 200) {
    throw invalidArgument(`unique_key=${describe(key)}: a unique key is at most 200 characters (this one has ${length})`);
  }
  if (key.includes('\u0000')) {
    throw invalidArgument(`unique_key=${describe(key)}: a unique key must not contain NUL characters ('\\x00')`);
  }
  return key;
}

function errorText(error) {
  if (error !== null && error.includes('\u0000')) {
    throw invalidArgument(`error=${describe(error)}: must not contain NUL characters ('\\x00')`);
  }
  return error;
}

/** A duration in seconds as whole microseconds (BigInt), or null; `positive` for a lease (at least 1 µs). */
function durationUs(arg, seconds, { positive = false } = {}) {
  if (seconds === null) return null;
  if (!Number.isFinite(seconds) && seconds > 0) {
    throw invalidArgument(`${arg}=${describe(seconds)}: a duration must be at most ${BOUNDS.max_duration_s.toFixed(0)} s (100 years)`);
  }
  if (positive && seconds < BOUNDS.min_positive_duration_s) {
    throw invalidArgument(
      `${arg}=${describe(seconds)}: must be greater than 0 seconds, and at least 1 microsecond ` +
        `(${BOUNDS.min_positive_duration_s} s), so the lease it sets does not end at once`,
    );
  }
  if (seconds < 0) throw invalidArgument(`${arg}=${describe(seconds)}: a duration must not be negative`);
  if (seconds > BOUNDS.max_duration_s) {
    throw invalidArgument(`${arg}=${describe(seconds)}: a duration must be at most ${BOUNDS.max_duration_s.toFixed(0)} s (100 years)`);
  }
  return secondsToUs(seconds);
}

/**
 * Seconds (finite, >= 0) as whole microseconds, as BigInt, by the steps of CPython's
 * `timedelta(seconds=s)`: the whole seconds exactly, the fraction scaled by 1e6 in double arithmetic,
 * its whole part kept, and what is left rounded half to even on the total. `Math.round(s * 1e6)`
 * rounds ties up instead (2.5e-6 s would be 3 µs, where the suite's instants say 2).
 */
function secondsToUs(seconds) {
  const wholeS = Math.trunc(seconds);
  const scaled = (seconds - wholeS) * 1e6;
  const wholeUs = Math.trunc(scaled);
  const leftover = scaled - wholeUs;
  const us = BigInt(wholeS) * 1000000n + BigInt(wholeUs);
  if (leftover === 0.5) return us + (us & 1n);
  return leftover > 0.5 ? us + 1n : us;
}

function maxAttempts(value) {
  if (value === null) return null;
  if (!Number.isInteger(value)) throw invalidArgument(`max_attempts=${describe(value)}: must be an int`);
  if (value < BOUNDS.max_attempts_min || value > BOUNDS.max_attempts_max) {
    throw invalidArgument(`max_attempts=${describe(value)}: must be between ${BOUNDS.max_attempts_min} and ${BOUNDS.max_attempts_max}`);
  }
  return value;
}

function priority(text) {
  const value = BigInt(text);
  if (value < PRIORITY_MIN || value > PRIORITY_MAX) {
    const shown = text.length <= 78 ? text : `<${text.startsWith('-') ? 'negative ' : ''}int of ${text.replace('-', '').length} digits>`;
    throw invalidArgument(`priority=${shown}: must be between ${PRIORITY_MIN} and ${PRIORITY_MAX}`);
  }
  return value;
}

/** S2: a queue's options as the suite sends them, each named by its QueueOpts field. */
function queueOpts(opts) {
  durationUs('visibility_timeout_s', opts.visibility_timeout_s, { positive: true });
  if (opts.max_attempts === null) throw invalidArgument('max_attempts=None: must be an int');
  maxAttempts(opts.max_attempts);
  durationUs('backoff_base_s', opts.backoff_base_s);
  durationUs('dead_letter_retention_s', opts.dead_letter_retention_s);
  return opts;
}

const INSTANT_MIN_US = -62135596800000000n;
const INSTANT_MAX_US = 253402300799999999n;

/** E9 (DEC-huge-values): an instant (epoch microseconds, as a decimal string) within Python's datetime range, years 1 to 9999 UTC. */
function instantUs(arg, text) {
  const us = BigInt(text);
  if (us < INSTANT_MIN_US || us > INSTANT_MAX_US) {
    throw invalidArgument(`${arg}=${text} µs since the epoch: an instant must lie within years 1 to 9999 UTC`);
  }
  return us;
}

const MAX_PAYLOAD_DEPTH = BOUNDS.max_payload_depth;
const MAX_PAYLOAD_INT_DIGITS = BOUNDS.max_payload_int_digits;

/**
 * E8 (DEC-payload-json): a payload's JSON text nests no value deeper than 500 levels (the top-level value
 * is level 0, a value inside an array or object one level deeper than it) and holds no int of more than
 * 4300 digits (sign not counted; a number with a fraction or an exponent is a float). A scan of the text,
 * not a parse: JSON.parse would read such an int as a rounded double.
 */
function payloadText(arg, text) {
  const containers = [];
  let expectKey = false;
  for (let i = 0; i < text.length; i += 1) {
    const ch = text[i];
    if (ch === ' ' || ch === '\t' || ch === '\n' || ch === '\r' || ch === ',' || ch === ':' || ch === ']' || ch === '}') {
      if (ch === ']' || ch === '}') containers.pop();
      expectKey = ch === ',' && containers[containers.length - 1] === '{';
      continue;
    }
    const key = ch === '"' && expectKey;
    expectKey = false;
    if (!key && containers.length > MAX_PAYLOAD_DEPTH) {
      throw new ContractError('PayloadError', `${arg}: nested deeper than ${MAX_PAYLOAD_DEPTH} levels`);
    }
    if (ch === '[' || ch === '{') {
      containers.push(ch);
      expectKey = ch === '{';
    } else if (ch === '"') {
      for (i += 1; text[i] !== '"'; i += 1) if (text[i] === '\\') i += 1;
    } else if (ch === '-' || (ch >= '0' && ch <= '9')) {
      let end = i + 1;
      while (end < text.length && /[0-9.eE+-]/.test(text[end])) end += 1;
      const number = text.slice(i, end);
      const digits = number.replace('-', '').length;
      if (!/[.eE]/.test(number) && digits > MAX_PAYLOAD_INT_DIGITS) {
        throw new ContractError(
          'PayloadError',
          `${arg}=<${number.startsWith('-') ? 'negative ' : ''}int of ${digits} digits>: an int has at most ${MAX_PAYLOAD_INT_DIGITS} digits`,
        );
      }
      i = end - 1;
    } else {
      while (i + 1 < text.length && /[a-z]/.test(text[i + 1])) i += 1;
    }
  }
  return text;
}

module.exports = {
  LITERALS,
  describe,
  pyString,
  queueName,
  workerId,
  uniqueKey,
  errorText,
  durationUs,
  secondsToUs,
  maxAttempts,
  priority,
  queueOpts,
  payloadText,
  instantUs,
};
