'use strict';
// Mutant of the Node.js engine: ack() is fenced by the job id, state and lease, not by the claim's token
// (the peers without claim tokens do this), so a worker that overran its lease deletes a job another claim
// now holds. Breaks H5. Started by tests/mutants/node_ack_unfenced.toml.
const storage = require('../../engines_under_test/alkstore_node/src/storage');
const { main } = require('../../engines_under_test/alkstore_node/src/main');

const Original = storage.Storage;
storage.Storage = class extends Original {
  constructor(file) {
    super(file);
    this.ack = this.db.prepare("DELETE FROM jobs WHERE id = @id AND state = 'processing' AND lease_expires_at > @now AND @token = @token");
  }
};
main({ name: 'mut-node-ack-unfenced' });
