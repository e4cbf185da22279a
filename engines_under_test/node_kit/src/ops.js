'use strict';
// Part of the Node kit (engines_under_test/node_kit): the protocol's operations, read from their one table, the
// requests of alkstore_contract/wire/protocol.schema.json (the file the suite judges messages by). The
// front's handler table and every Node engine's are held to it by their tests, so an op added to the
// schema fails `node --test` until the kit and the engines serve it. An op marked `x-only-with` is served
// only by an engine whose handshake declares that (`networked`, `networked.server_crash_hook`).

const fs = require('node:fs');
const path = require('node:path');

const SCHEMA_PATH = path.join(__dirname, '..', '..', '..', 'alkstore_contract', 'wire', 'protocol.schema.json');
const ENVELOPE = new Set(['id', 'type']);

/** Every op by request type: its fields besides id and type, and what an engine declares to serve it (null: every engine). */
function wireOps() {
  const schema = JSON.parse(fs.readFileSync(SCHEMA_PATH, 'utf8'));
  const ops = new Map();
  for (const [name, rule] of Object.entries(schema.$defs.requests)) {
    const fields = Object.keys(rule.properties).filter((field) => !ENVELOPE.has(field));
    ops.set(name, { fields, onlyWith: rule['x-only-with'] ?? null });
  }
  return ops;
}

/** The ops every engine serves, whatever it declares. */
function coreOps() {
  return [...wireOps()].filter(([, op]) => op.onlyWith === null).map(([name]) => name);
}

module.exports = { SCHEMA_PATH, wireOps, coreOps };
