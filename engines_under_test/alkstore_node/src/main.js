#!/usr/bin/env node
'use strict';
// The wire protocol's testee (docs/wire-protocol.md): the Node kit's front and loop (alkstore-node-kit)
// serving this engine's adapter (engine.js) on stdin/stdout. better-sqlite3 is synchronous, so each op
// reaches storage before the next request is read, in order.

const { Front, reply, serveAdapter } = require('alkstore-node-kit');
const { adapter } = require('./engine');

/** Serve the engine; `name` lets a broken variant of this engine (tests/mutants/) call itself by its own name. */
function main({ name } = {}) {
  serveAdapter(adapter(name));
}

/**
 * The engine's table of request handlers (type -> handler, each answering with a promise), for code that
 * drives the engine in-process or wraps its loop (tests/wire_testees/, benchmarks/): `reply` answers one
 * request from it.
 */
function handlers(name) {
  return new Front(adapter(name)).handlers();
}

if (require.main === module) main();

module.exports = { main, handlers, reply };
