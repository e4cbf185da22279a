'use strict';
// Mutant of the Node.js engine: a group commit. Every statement runs inside one open transaction that a
// timer commits every 5 ms (and close() commits what is pending), so each write is answered before it is
// committed. Within the process nothing looks wrong (the connection reads its own writes; the engine's
// own transactions nest as savepoints); a kill -9 right after an answer loses the write. Breaks P3.
// Started by tests/mutants/node_group_commit.toml.
const storage = require('../../engines_under_test/alkstore_node/src/storage');
const { main } = require('../../engines_under_test/alkstore_node/src/main');

const GROUP_COMMIT_MS = 5;
const Original = storage.Storage;
storage.Storage = class extends Original {
  constructor(file) {
    super(file);
    this.db.exec('BEGIN');
    this.timer = setInterval(() => {
      this.db.exec('COMMIT');
      this.db.exec('BEGIN');
    }, GROUP_COMMIT_MS);
  }

  close() {
    clearInterval(this.timer);
    this.db.exec('COMMIT');
    super.close();
  }
};
main({ name: 'mut-node-group-commit' });
