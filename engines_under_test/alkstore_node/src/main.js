#!/usr/bin/env node
'use strict';
// The wire protocol's testee loop (docs/wire-protocol.md): one JSON request a line on stdin, one reply a
// line on stdout, nothing else on stdout; the log goes to stderr (the loop is the Node kit's,
// ecosystem/node_kit/src/protocol.js). better-sqlite3 is synchronous, so each request is answered before
// the next is read, in order (the protocol allows any order).

const storage = require('./storage');
const { Engine } = require('./engine');
const { reply, serve } = require('../../../ecosystem/node_kit/src/protocol');
const pkg = require('../package.json');

const PROTOCOL_VERSION = 1;
const CAPABILITIES = ['durable', 'injectable_clock', 'multi_process', 'shared_location'];

/** The handshake; `name` lets a broken variant of this engine (tests/mutants/) call itself by its own name. */
function hello(request, name = 'node-sqlite') {
  if (!request.versions.includes(PROTOCOL_VERSION)) {
    throw new Error(`this engine speaks protocol versions [${PROTOCOL_VERSION}], not ${JSON.stringify(request.versions)}`);
  }
  const betterSqlite = require('better-sqlite3/package.json').version;
  return {
    version: PROTOCOL_VERSION,
    engine: { name, version: pkg.version, language: `javascript (node ${process.versions.node})` },
    capabilities: CAPABILITIES,
    time_resolution_us: 1,
    storage: `SQLite ${storage.sqliteVersion()} (better-sqlite3 ${betterSqlite})`,
  };
}

function handlers(engine, name) {
  return {
    hello: (r) => hello(r, name),
    unavailable_reason: () => null,
    create_location: () => storage.createLocation(),
    drop_location: ({ location }) => (storage.dropLocation(location), null),
    count_stored_jobs: ({ location }) => storage.countStoredJobs(location),
    open_store: (r) => engine.openStore(r),
    close_store: (r) => engine.closeStore(r),
    queue: (r) => engine.queue(r),
    enqueue: (r) => engine.enqueue(r),
    enqueue_many: (r) => engine.enqueueMany(r, r.payloads),
    claim_one: (r) => engine.claimOne(r),
    claim_batch: (r) => engine.claimBatch(r),
    ack_batch: (r) => engine.ackBatch(r),
    cancel: (r) => engine.cancel(r),
    get_job: (r) => engine.getJob(r),
    sweep_expired: (r) => engine.sweepExpired(r),
    ack: (r) => engine.ack(r),
    retry: (r) => engine.retry(r),
    fail: (r) => engine.fail(r),
    heartbeat: (r) => engine.heartbeat(r),
  };
}

function main({ name } = {}) {
  serve(handlers(new Engine(), name));
}

if (require.main === module) main();

module.exports = { main, reply, handlers, hello };
