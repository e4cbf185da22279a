'use strict';
// Part of the Node kit (engines_under_test/node_kit): the retry curve of contract R2 and its seeded jitter (R5),
// drawn the same way by the Node engine and every Node ecosystem adapter (an adapter over a library that
// takes whatever delay it is given declares R2 and R5 emulated: this file, not the library, draws them).

const crypto = require('node:crypto');
const { LITERALS } = require('./validate');

const BACKOFF_CAP_S = LITERALS.backoff_cap_s;
const MAX_EXPONENT = 64;

/** A seeded generator of floats in [0, 1) (mulberry32): each store owns one, so a run replays (R5). */
function seededRandom(seed) {
  let state = (seed === null ? crypto.randomInt(2 ** 32) : Number(BigInt.asUintN(32, BigInt(seed)))) >>> 0;
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** R2: equal-jitter exponential backoff after `attempts` attempts on `base` s, capped at one hour. */
function backoffDelayS(attempts, base, random) {
  const exponent = Math.min(Math.max(attempts, 1) - 1, MAX_EXPONENT);
  const cap = Math.min(base * 2 ** exponent, BACKOFF_CAP_S);
  return cap / 2 + random() * (cap / 2);
}

module.exports = { seededRandom, backoffDelayS };
