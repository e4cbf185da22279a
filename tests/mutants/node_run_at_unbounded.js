'use strict';
// Mutant of the Node.js engine: run_at is taken as sent, so an instant before year 1 or after 9999 UTC is
// stored (E9, DEC-huge-values). Started by tests/mutants/node_run_at_unbounded.toml.
const validate = require('../../engines_under_test/node_kit/src/validate');
const { main } = require('../../engines_under_test/alkstore_node/src/main');

validate.instantUs = (arg, text) => BigInt(text);
main({ name: 'mut-node-run-at-unbounded' });
