'use strict';
// Mutant of the Node.js engine: a queue's options are taken as sent (no S2 check), so a visibility timeout
// of 0, max_attempts 0 or a negative backoff base become a queue's stamps. Started by
// tests/mutants/node_queue_opts_unchecked.toml.
const validate = require('../../engines_under_test/node_kit/src/validate');
const { main } = require('../../engines_under_test/alkstore_node/src/main');

validate.queueOpts = (opts) => opts;
main({ name: 'mut-node-queue-opts-unchecked' });
