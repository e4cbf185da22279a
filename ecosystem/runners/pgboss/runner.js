'use strict';
// The pg-boss runner of alkstore's runtime-faults mode (docs/runtime-faults.md): describe, enqueue JOBS_FILE,
// worker. The worker is one PgBoss instance in its own Node process calling boss.work(queue, handler), as pg-boss's
// README runs workers, one job per fetch. pg-boss has no heartbeat: an active job whose expireInSeconds has passed
// is failed by the maintenance of any instance (every second here; default 120 s) and, with retries left, fetched
// again; the worker itself also gives up on a handler that outlives the expiration (its promise is raced against
// a timer) and fails the job, while the handler's own promise keeps running. The queue is created by the client,
// with its expiration and retry policy, before any worker starts; the handler writes the ledger around a real
// timer (../runner_protocol.js). The runner adds no unhandledRejection handler of its own: work() calls complete()
// without awaiting it (pg-boss 10.4.2 src/manager.js), so a completion that meets a database that is down rejects
// unhandled and Node's default ends the worker process, as a user's worker would end.
const PgBoss = require('pg-boss');
const { perform, serve } = require('../runner_protocol');

const EXPIRE_S = 3;
const MAINTENANCE_S = 1;
const POLLING_S = 0.5;
const RETRY_LIMIT = 2;
const README = 'node_modules/pg-boss/README.md (https://github.com/timgit/pg-boss/blob/10.4.2/README.md)';
const TYPES = 'node_modules/pg-boss/types.d.ts (https://github.com/timgit/pg-boss/blob/10.4.2/types.d.ts)';

function describe() {
  return {
    library: 'pg-boss',
    version: `pg-boss ${require('pg-boss/package.json').version}`,
    settings: [
      { name: 'createQueue(name, { expireInSeconds })', value: EXPIRE_S, doc: `${TYPES}: ExpirationOptions` },
      { name: 'createQueue(name, { retryLimit })', value: RETRY_LIMIT, doc: `${TYPES}: RetryOptions` },
      { name: 'createQueue(name, { retryDelay, retryBackoff })', value: '0, false', doc: `${TYPES}: RetryOptions` },
      { name: 'new PgBoss({ maintenanceIntervalSeconds })', value: MAINTENANCE_S, doc: `${TYPES}: MaintenanceOptions` },
      { name: 'new PgBoss({ supervise })', value: true, doc: `${TYPES}: MaintenanceOptions` },
      { name: 'boss.work(name, { batchSize })', value: 1, doc: `${TYPES}: JobPollingOptions` },
      { name: 'boss.work(name, { pollingIntervalSeconds })', value: POLLING_S, doc: `${TYPES}: JobPollingOptions` },
    ],
    lease_s: EXPIRE_S + MAINTENANCE_S,
    recovery_window_s: 15,
    faults: ['kill9', 'pause', 'broker_restart', 'net_cut', 'slow_handler'],
    promises: [
      {
        outcome: 'twice',
        faults: ['*'],
        max: 0,
        quote: 'pg-boss relies on SKIP LOCKED, a feature built specifically for message queues to resolve record ' +
          'locking challenges inherent with relational databases. This provides exactly-once delivery and the ' +
          'safety of guaranteed atomic commits to asynchronous job processing.',
        doc: README,
      },
    ],
    caveats: [],
  };
}

function boss() {
  const instance = new PgBoss({ connectionString: process.env.ALKSTORE_FAULTS_BROKER, maintenanceIntervalSeconds: MAINTENANCE_S, supervise: true });
  instance.on('error', (error) => process.stderr.write(`pg-boss error: ${error.message || error}\n`));
  return instance;
}

async function enqueue(jobs) {
  const client = boss();
  await client.start(); // installs pg-boss's schema on the throwaway cluster, before any worker
  const queue = process.env.ALKSTORE_FAULTS_QUEUE;
  await client.createQueue(queue, { expireInSeconds: EXPIRE_S, retryLimit: RETRY_LIMIT, retryDelay: 0, retryBackoff: false });
  for (const job of jobs) {
    await client.send(queue, job);
  }
  await client.stop({ graceful: false, wait: true });
}

async function worker() {
  const instance = boss();
  await instance.start();
  await instance.work(
    process.env.ALKSTORE_FAULTS_QUEUE,
    { batchSize: 1, pollingIntervalSeconds: POLLING_S, includeMetadata: true },
    async ([job]) => {
      await perform(job.data, job.retryCount + 1);
      return { id: job.data.id };
    },
  );
  process.on('SIGTERM', () => instance.stop({ wait: true, timeout: 3000 }).then(() => process.exit(0)));
}

serve({ describe, enqueue, worker });
