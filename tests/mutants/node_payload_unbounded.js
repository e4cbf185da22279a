'use strict';
// Mutant of the Node.js engine: no payload check (E8, DEC-payload-json), so a payload nested 501 levels or
// holding an int of 4301 digits is stored as the suite sent it. Started by tests/mutants/node_payload_unbounded.toml.
const validate = require('../../engines_under_test/node_kit/src/validate');
const { main } = require('../../engines_under_test/alkstore_node/src/main');

validate.payloadText = (arg, text) => text;
main({ name: 'mut-node-payload-unbounded' });
