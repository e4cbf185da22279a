'use strict';
// Part of the Node kit (engines_under_test/node_kit): the wire protocol's testee loop (docs/wire-protocol.md).
// One JSON request a line on stdin, one reply a line on stdout, nothing else on stdout; the log goes to
// stderr. A handler may answer at once or with a promise (a library's calls are async): each reply is
// written when its request settles, carrying the request's id, so replies may go out of order, as the
// protocol allows; a synchronous handler's replies keep the order of the requests.

const readline = require('node:readline');
const { ContractError } = require('./errors');

function ok(request, result) {
  return { in_reply_to: request.id, type: 'ok', result: result === undefined ? null : result };
}

/** A contract error goes by its class; anything else is EngineError with the stack, logged to stderr. */
function failed(request, error) {
  if (error instanceof ContractError) {
    return { in_reply_to: request.id, type: 'error', error: { class: error.className, message: error.message } };
  }
  const stack = error instanceof Error ? String(error.stack) : String(error);
  process.stderr.write(`${request.type} #${request.id} failed: ${stack}\n`);
  const message = error instanceof Error ? String(error.message) : String(error);
  return { in_reply_to: request.id, type: 'error', error: { class: 'EngineError', message, stack } };
}

/** The reply to `request` from `table` (type -> handler): the reply itself, or a promise of it for an async handler. */
function reply(request, table) {
  const handler = table[request.type];
  let result;
  try {
    if (handler === undefined) throw new Error(`unknown request type ${JSON.stringify(request.type)}`);
    result = handler(request);
  } catch (error) {
    return failed(request, error);
  }
  if (result !== null && typeof result === 'object' && typeof result.then === 'function') {
    return result.then(
      (value) => ok(request, value),
      (error) => failed(request, error),
    );
  }
  return ok(request, result);
}

/**
 * Serve `table` on stdin/stdout until stdin closes, then let the requests in flight answer and call
 * `onClose` (release pools, connections) before exiting: a process holding a pool would not exit alone.
 */
function serve(table, { onClose = async () => {} } = {}) {
  const inFlight = new Set();
  const write = (message) => process.stdout.write(JSON.stringify(message) + '\n');
  const lines = readline.createInterface({ input: process.stdin, crlfDelay: Infinity });
  lines.on('line', (line) => {
    const answer = reply(JSON.parse(line), table);
    if (typeof answer.then !== 'function') {
      write(answer);
      return;
    }
    const pending = answer.then(write);
    inFlight.add(pending);
    pending.finally(() => inFlight.delete(pending));
  });
  lines.on('close', async () => {
    await Promise.allSettled([...inFlight]);
    try {
      await onClose();
    } finally {
      process.exit(0);
    }
  });
}

module.exports = { reply, serve };
