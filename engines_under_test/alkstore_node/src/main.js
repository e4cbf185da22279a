#!/usr/bin/env node
'use strict';
// The wire protocol's testee (docs/wire-protocol.md): the Node kit's front and loop (alkstore-node-kit)
// serving this engine's adapter (engine.js) on stdin/stdout. better-sqlite3 is synchronous, so each op
// reaches storage before the next request is read, in order.

const { serveAdapter } = require('alkstore-node-kit');
const { adapter } = require('./engine');

/** Serve the engine; `name` lets a broken variant of this engine (tests/mutants/) call itself by its own name. */
function main({ name } = {}) {
  serveAdapter(adapter(name));
}

if (require.main === module) main();

module.exports = { main };
