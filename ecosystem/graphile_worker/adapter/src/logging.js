'use strict';
// Part of the graphile-worker adapter (ecosystem/graphile_worker/adapter): graphile-worker's log, sent to stderr.
// Its default logger writes to the console's stdout, which carries the wire protocol only; warnings and
// errors go to stderr, where the suite shows them beside a failing clause, and the rest is dropped; so is
// graphile's "Failed task" error, which every retry and fail of a handle logs (the adapter's own decision).

const { Logger } = require('graphile-worker');

const SHOWN = new Set(['error', 'warning']);

const stderrLogger = new Logger((scope) => (level, message) => {
  if (SHOWN.has(level) && !message.startsWith('Failed task ')) process.stderr.write(`[graphile-worker ${scope.label ?? 'core'}] ${level}: ${message}\n`);
});

const silentLogger = new Logger(() => () => {});

module.exports = { stderrLogger, silentLogger };
