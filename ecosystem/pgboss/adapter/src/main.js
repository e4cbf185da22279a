#!/usr/bin/env node
'use strict';
// Part of the pg-boss adapter (ecosystem/pgboss/adapter): pg-boss (pinned in package.json) under the
// contract, through the wire protocol, on the Node kit's front (engines_under_test/node_kit). A location is a
// Postgres schema of its own on $ALKSTORE_PG_DSN's server, holding pg-boss's tables as its own migration
// makes them; count_stored_jobs reads pg-boss's job table directly. `emulates` names what the kit decides
// that pg-boss does not; every other verdict is pg-boss's own behaviour.

const crypto = require('node:crypto');
const pg = require('pg');
const PgBoss = require('pg-boss');
const { serveAdapter } = require('alkstore-node-kit');
const { PgBossDriver, CLAIMANTS } = require('./driver');
const pkg = require('../package.json');

const PINNED = pkg.dependencies['pg-boss'];
const DEFAULT_DSN = 'postgresql://postgres@127.0.0.1:5432/postgres';
const TIMESTAMPTZ_OID = 1184;
/** The contract's live states: completed (acked) and cancelled rows stay in pg-boss's table, but are gone. */
const STORED_STATES = "('created', 'retry', 'active', 'failed')";
const EMULATES = {
  C3: 'claimed_by: pg-boss records no claimant; the adapter writes the worker id of each fetch to a table of its own (alkstore_claimants) and reads it back',
  C6: 'claimed_by as given: read back from the adapter\'s own claimant table, as for C3',
  H4: 'one-shot handles: the Node kit refuses a second ack/retry/fail on a handle before it reaches pg-boss, whose complete()/fail() take any job id any number of times',
};

// Timestamps as Postgres's text: pg's Date keeps milliseconds only, the contract's instants microseconds.
pg.types.setTypeParser(TIMESTAMPTZ_OID, (text) => text);

const dsn = () => process.env.ALKSTORE_PG_DSN || DEFAULT_DSN;
const quote = (name) => `"${name.replaceAll('"', '""')}"`;

async function withClient(connectionString, use) {
  const client = new pg.Client({ connectionString, connectionTimeoutMillis: 5000 });
  await client.connect();
  try {
    return await use(client);
  } finally {
    await client.end();
  }
}

function newBoss(location, options) {
  const boss = new PgBoss({ connectionString: location.dsn, schema: location.schema, schedule: false, ...options });
  boss.on('error', (error) => process.stderr.write(`pg-boss: ${error.stack}\n`));
  return boss;
}

const adapter = {
  name: 'pg-boss',
  version: `pg-boss ${require('pg-boss/package.json').version}`,
  capabilities: ['durable', 'multi_process', 'shared_location', 'unique_keys'],
  emulates: EMULATES,
  timeResolutionUs: 1,

  storage: () => withClient(dsn(), async (client) => `PostgreSQL ${(await client.query('SHOW server_version')).rows[0].server_version}`),

  async unavailableReason() {
    const found = require('pg-boss/package.json').version;
    if (found !== PINNED) return `pg-boss ${found} is installed; this adapter and its expected failures are for ${PINNED} (npm ci)`;
    try {
      await withClient(dsn(), (client) => client.query('SELECT 1'));
    } catch (error) {
      return `the Postgres server did not answer: ${error.message} (set $ALKSTORE_PG_DSN)`;
    }
    return null;
  },

  /** A fresh schema holding pg-boss's tables, made by pg-boss's own start() (its migration), and the claimant table. */
  async createLocation() {
    const location = { dsn: dsn(), schema: `alk_pgb_${crypto.randomBytes(8).toString('hex')}` };
    const boss = newBoss(location, { supervise: false, migrate: true, max: 1 });
    await boss.start();
    await boss.stop({ graceful: false, wait: true });
    const claimants = `CREATE TABLE ${quote(location.schema)}.${CLAIMANTS} (job_id uuid PRIMARY KEY, worker_id text NOT NULL)`;
    await withClient(location.dsn, (client) => client.query(claimants));
    return JSON.stringify(location);
  },

  async dropLocation(text) {
    const location = JSON.parse(text);
    await withClient(location.dsn, (client) => client.query(`DROP SCHEMA IF EXISTS ${quote(location.schema)} CASCADE`));
  },

  /** The oracle: pg-boss's job rows in a live state, read over a bare connection. */
  async countStoredJobs(text) {
    const location = JSON.parse(text);
    const sql = `SELECT count(*)::int AS n FROM ${quote(location.schema)}.job WHERE state IN ${STORED_STATES}`;
    return withClient(location.dsn, async (client) => (await client.query(sql)).rows[0].n);
  },

  /**
   * One PgBoss per store, its maintenance on its own schedule (supervise, each second: pg-boss's
   * smallest interval), as a deployment runs it; cron scheduling off (the contract has none).
   */
  async openDriver(text) {
    const location = JSON.parse(text);
    const boss = newBoss(location, { supervise: true, maintenanceIntervalSeconds: 1, migrate: false, max: 4 });
    await boss.start();
    return new PgBossDriver(boss, boss.getDb(), quote(location.schema));
  },
};

if (require.main === module) serveAdapter(adapter);

module.exports = { adapter, EMULATES };
