'use strict';
// A test fixture, not an engine: the Node.js engine, misbehaving on one op as ALKSTORE_MISBEHAVE says, so the
// suite's tests can show that each misbehaviour of docs/wire-protocol.md ends in a verdict, never a hang.
//   ALKSTORE_MISBEHAVE     crash | hang | garbage | unknown_id | schema | no_version | linger
//                          (linger: serves every op, and outlives its stdin as an engine busy with an op would)
//   ALKSTORE_MISBEHAVE_OP  the request type it misbehaves on (default claim_one)
const readline = require('node:readline');
const { handlers, reply } = require('../../engines_under_test/alkstore_node/src/main');

const mode = process.env.ALKSTORE_MISBEHAVE;
const target = process.env.ALKSTORE_MISBEHAVE_OP || 'claim_one';
const table = handlers('misbehaving');
if (mode === 'linger') setInterval(() => {}, 1000);
const send = (message) => process.stdout.write(JSON.stringify(message) + '\n');
/** The engine's own answer to `request` (its handlers answer with promises). */
const answer = (request) => Promise.resolve(reply(request, table));

readline.createInterface({ input: process.stdin }).on('line', (line) => {
  const request = JSON.parse(line);
  if (mode === 'no_version' && request.type === 'hello') {
    send({ in_reply_to: request.id, type: 'error', error: { class: 'EngineError', message: 'this engine speaks protocol versions [7]' } });
    return;
  }
  if (request.type !== target) {
    answer(request).then(send);
    return;
  }
  process.stderr.write(`misbehaving (${mode}) on ${request.type} #${request.id}\n`);
  if (mode === 'crash') process.exit(3);
  if (mode === 'hang') return;
  if (mode === 'garbage') process.stdout.write('ready!\n');
  if (mode === 'unknown_id') answer(request).then((message) => send({ ...message, in_reply_to: request.id + 1000 }));
  if (mode === 'schema') send({ in_reply_to: request.id, type: 'ok', result: { handle: 7 } });
});
