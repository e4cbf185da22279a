'use strict';
// Part of the graphile-worker adapter (ecosystem/graphile_worker/adapter): the adapter node_kit's front serves.
// `emulates` says what the adapter (or the kit under it) had to build because graphile-worker has no place
// for it; every other verdict is graphile-worker's own behaviour (docs/ecosystem.md). Without its npm
// packages (no `npm ci` yet) the adapter still answers the handshake and says why it cannot run, as the
// Python adapters do for a library that is not installed, instead of crashing at its first require.

const path = require('node:path');
const pkg = require('../package.json');

const PINNED = pkg.dependencies['graphile-worker'];
const PACKAGES = Object.keys(pkg.dependencies);

const EMULATES = {
  C3:
    "claimed_by and the lease: graphile-worker records its pool's random id and locks for 4 hours; the adapter keeps " +
    'the worker id in a table of its own and shows the lease as locked_at + the visibility timeout',
  H1:
    "the lease deadline this judges is the adapter's (locked_at + the job's visibility timeout, see C3): graphile-worker's " +
    'own lock lasts 4 hours, and until then its holder is the only worker that can have the job, so a late ack is ' +
    "graphile's documented behaviour, not a lapse",
  H5:
    'a reclaim before the lock is 4 hours old: graphile-worker hands a locked job to no other worker before then, and ' +
    'the adapter forces no unlock (WorkerUtils.forceUnlockWorkers is documented for workers that are no longer running)',
  H4: "one-shot handles: node_kit's front refuses a second op on a handle before it reaches the library",
  R2:
    "the backoff formula: node_kit draws the contract's equal-jitter delay and the adapter sets it with rescheduleJobs; " +
    "graphile-worker's own delay is exp(min(attempts, 10)) s without jitter",
  R5: "the jitter's spread and its seed: node_kit draws it, not the library",
};

/** The first of the adapter's npm packages that cannot be found, or null. */
function missingPackage() {
  for (const name of PACKAGES) {
    try {
      require.resolve(name);
    } catch {
      return name;
    }
  }
  return null;
}

const BASE = {
  name: 'graphile-worker',
  // unique_keys: graphile's jobKey. No release (graphile has no call that hands a locked job back), and the
  // wire protocol carries no caller's transaction for add_job in SQL (docs/ecosystem.md).
  capabilities: ['durable', 'multi_process', 'shared_location', 'unique_keys'],
  emulates: EMULATES,
  timeResolutionUs: 1000,
};

function notInstalled(missing) {
  return {
    ...BASE,
    version: 'graphile-worker not installed',
    storage: () => 'Postgres (graphile-worker not installed)',
    unavailableReason: () => `npm package ${missing} is not installed: run npm ci in ${path.dirname(__dirname)} (pins graphile-worker ${PINNED})`,
  };
}

function installed() {
  const location = require('./location');
  const { GraphileDriver } = require('./driver');
  const version = require('graphile-worker/package.json').version;
  return {
    ...BASE,
    version: `graphile-worker ${version}`,
    storage: async () => `${await location.serverVersion()} (graphile-worker ${version}, pg ${require('pg/package.json').version})`,
    unavailableReason: async () => {
      if (version !== PINNED) return `graphile-worker ${version} is installed; this adapter and its expected failures are for ${PINNED}`;
      return location.unavailableReason();
    },
    createLocation: location.createLocation,
    dropLocation: location.dropLocation,
    countStoredJobs: location.countStoredJobs,
    openDriver: (where) => GraphileDriver.open(where),
  };
}

const missing = missingPackage();
const adapter = missing === null ? installed() : notInstalled(missing);

module.exports = { adapter, EMULATES, PINNED, notInstalled };
