'use strict';
// The Node.js engine's ops called in-process, without the wire: the baseline of benchmarks/wire_protocol.py.
// Prints one JSON object: {op: [µs per call, ...]} over `runs` runs of `n` calls each.
const { performance } = require('node:perf_hooks');
const storage = require('../engines_under_test/alkstore_node/src/storage');
const { handlers } = require('../engines_under_test/alkstore_node/src/main');

const [n, runs] = process.argv.slice(2).map(Number);
const OPTS = { visibility_timeout_s: 300, max_attempts: 3, backoff_base_s: 5, dead_letter_retention_s: null };
const OPTIONS = { delay_s: null, run_at: null, expires_s: null, max_attempts: null, priority: '0' };
const results = { enqueue: [], get_job: [], claim_one: [], heartbeat: [], ack: [] };

async function main() {
  for (let run = 0; run < runs; run++) {
    const location = storage.createLocation();
    const engine = handlers('node-sqlite');
    const store = await engine.open_store({ location, clock: 'system', seed: 1 });
    const queue = engine.queue({ store, name: 'bench', opts: OPTS });
    const timed = async (op, body) => {
      const started = performance.now();
      const out = [];
      for (let i = 0; i < n; i++) out.push(await body(i));
      results[op].push(((performance.now() - started) * 1000) / n);
      return out;
    };
    const ids = await timed('enqueue', () => engine.enqueue({ type: 'enqueue', queue, payload: '{"n":1}', options: OPTIONS }));
    await timed('get_job', (i) => engine.get_job({ type: 'get_job', queue, job_id: ids[i] }));
    const handles = await timed('claim_one', async () => (await engine.claim_one({ type: 'claim_one', queue, worker_id: 'w' })).handle);
    await timed('heartbeat', (i) => engine.heartbeat({ type: 'heartbeat', handle: handles[i], extend_s: null }));
    await timed('ack', (i) => engine.ack({ type: 'ack', handle: handles[i] }));
    await engine.close_store({ store });
    storage.dropLocation(location);
  }
  process.stdout.write(JSON.stringify(results) + '\n');
}

main();
