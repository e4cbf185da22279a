'use strict';
// Part of the graphile-worker adapter (ecosystem/alkstore_graphile): the adapter node_kit's front serves.
// `emulates` says what the adapter (or the kit under it) had to build because graphile-worker has no place
// for it; every other verdict is graphile-worker's own behaviour (docs/ecosystem.md).

const location = require('./location');
const { GraphileDriver } = require('./driver');
const pkg = require('../package.json');

const PINNED = pkg.dependencies['graphile-worker'];

const EMULATES = {
  C1:
    'reclaiming a lapsed lease: graphile-worker releases a lock only after 4 hours; before every claim the adapter ' +
    "releases the locks older than the job's visibility timeout with the library's forceUnlockWorkers",
  C3:
    "claimed_by and the lease: graphile-worker records its pool's random id and locks for 4 hours; the adapter keeps " +
    'the worker id in a table of its own and shows the lease as locked_at + the visibility timeout',
  H4: "one-shot handles: node_kit's front refuses a second op on a handle before it reaches the library",
  R2:
    "the backoff formula: node_kit draws the contract's equal-jitter delay and the adapter sets it with rescheduleJobs; " +
    "graphile-worker's own delay is exp(min(attempts, 10)) s without jitter",
  R5: "the jitter's spread and its seed: node_kit draws it, not the library",
};

function installedVersion() {
  return require('graphile-worker/package.json').version;
}

const adapter = {
  name: 'graphile-worker',
  version: `graphile-worker ${installedVersion()}`,
  capabilities: ['durable', 'multi_process', 'shared_location'],
  emulates: EMULATES,
  timeResolutionUs: 1000,
  storage: async () => `${await location.serverVersion()} (graphile-worker ${installedVersion()}, pg ${require('pg/package.json').version})`,
  unavailableReason: async () => {
    if (installedVersion() !== PINNED) {
      return `graphile-worker ${installedVersion()} is installed; this adapter and its expected failures are for ${PINNED}`;
    }
    return location.unavailableReason();
  },
  createLocation: location.createLocation,
  dropLocation: location.dropLocation,
  countStoredJobs: location.countStoredJobs,
  openDriver: (where) => GraphileDriver.open(where),
};

module.exports = { adapter, EMULATES, PINNED };
