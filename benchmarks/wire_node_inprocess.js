'use strict';
// The Node.js engine's ops called in-process, without the wire: the baseline of benchmarks/wire_protocol.py.
// Prints one JSON object: {op: [µs per call, ...]} over `runs` runs of `n` calls each.
const { performance } = require('node:perf_hooks');
const storage = require('../engines_under_test/alkstore_node/src/storage');
const { Engine } = require('../engines_under_test/alkstore_node/src/engine');

const [n, runs] = process.argv.slice(2).map(Number);
const OPTS = { visibility_timeout_s: 300, max_attempts: 3, backoff_base_s: 5, dead_letter_retention_s: null };
const OPTIONS = { delay_s: null, run_at: null, expires_s: null, max_attempts: null, priority: '0' };
const results = { enqueue: [], get_job: [], claim_one: [], heartbeat: [], ack: [] };

for (let run = 0; run < runs; run++) {
  const location = storage.createLocation();
  const engine = new Engine();
  const store = engine.openStore({ location, clock: 'system', seed: 1 });
  const queue = engine.queue({ store, name: 'bench', opts: OPTS });
  const timed = (op, body) => {
    const started = performance.now();
    const out = [];
    for (let i = 0; i < n; i++) out.push(body(i));
    results[op].push(((performance.now() - started) * 1000) / n);
    return out;
  };
  const ids = timed('enqueue', () => engine.enqueue({ type: 'enqueue', queue, payload: '{"n":1}', options: OPTIONS }));
  timed('get_job', (i) => engine.getJob({ type: 'get_job', queue, job_id: ids[i] }));
  const handles = timed('claim_one', () => engine.claimOne({ type: 'claim_one', queue, worker_id: 'w' }).handle);
  timed('heartbeat', (i) => engine.heartbeat({ type: 'heartbeat', handle: handles[i], extend_s: null }));
  timed('ack', (i) => engine.ack({ type: 'ack', handle: handles[i] }));
  engine.closeStore({ store });
  storage.dropLocation(location);
}
process.stdout.write(JSON.stringify(results) + '\n');
