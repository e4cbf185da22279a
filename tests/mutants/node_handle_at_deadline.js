'use strict';
// Mutant of the Node.js engine: ack() still succeeds at exactly lease_expires_at (>= in the fence), where the
// lease has ended. Breaks H1 at its boundary. Started by tests/mutants/node_handle_at_deadline.toml.
const storage = require('../../engines_under_test/alkstore_node/src/storage');
const { main } = require('../../engines_under_test/alkstore_node/src/main');

const Original = storage.Storage;
storage.Storage = class extends Original {
  constructor(file) {
    super(file);
    this.ack = this.db.prepare("DELETE FROM jobs WHERE id = @id AND state = 'processing' AND token = @token AND lease_expires_at >= @now");
  }
};
main({ name: 'mut-node-handle-at-deadline' });
