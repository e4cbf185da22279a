'use strict';
// Part of the graphile-worker adapter (ecosystem/graphile_worker/adapter): where a location lives. A location is a
// Postgres schema of its own on the server of $ALKSTORE_PG_DSN, holding graphile-worker's tables as its own
// runMigrations makes them, plus the adapter's one table (claims: graphile's lock holder -> the contract's
// worker id). The location string is JSON ({dsn, schema}) so every process of a run reaches the same place.

const crypto = require('node:crypto');
const { Client } = require('pg');
const { runMigrations } = require('graphile-worker');
const { silentLogger } = require('./logging');

const DEFAULT_DSN = 'postgresql://postgres@127.0.0.1:5432/postgres';
const CLAIMS = 'alkstore_claims';

function serverDsn() {
  return process.env.ALKSTORE_PG_DSN || DEFAULT_DSN;
}

function quote(identifier) {
  return `"${identifier.replace(/"/g, '""')}"`;
}

/** Run `body(client)` on a bare connection (no pool, no graphile code), then close it. */
async function withClient(dsn, body) {
  const client = new Client({ connectionString: dsn, connectionTimeoutMillis: 5000 });
  await client.connect();
  try {
    return await body(client);
  } finally {
    await client.end();
  }
}

/** null when the server answers, else why the adapter cannot run here. */
async function unavailableReason() {
  try {
    await withClient(serverDsn(), (client) => client.query('select 1'));
    return null;
  } catch (error) {
    return `the Postgres server did not answer: ${error.message} (set $ALKSTORE_PG_DSN)`;
  }
}

async function serverVersion() {
  return withClient(serverDsn(), async (client) => `PostgreSQL ${(await client.query('show server_version')).rows[0].server_version}`);
}

/** A fresh schema with graphile-worker's tables (runMigrations) and the adapter's claims table. */
async function createLocation() {
  const dsn = serverDsn();
  const schema = `alk_gw_${crypto.randomBytes(8).toString('hex')}`;
  await runMigrations({ connectionString: dsn, schema, logger: silentLogger });
  await withClient(dsn, (client) =>
    client.query(`create table ${quote(schema)}.${CLAIMS} (pool_id text primary key, worker_id text not null)`),
  );
  return JSON.stringify({ dsn, schema });
}

async function dropLocation(location) {
  const { dsn, schema } = JSON.parse(location);
  await withClient(dsn, async (client) => {
    await client.query("set lock_timeout = '30s'");
    await client.query(`drop schema if exists ${quote(schema)} cascade`);
  });
}

/** The oracle: rows of graphile-worker's own jobs table (a completion deletes its row), over a bare connection. */
async function countStoredJobs(location) {
  const { dsn, schema } = JSON.parse(location);
  return withClient(dsn, async (client) => Number((await client.query(`select count(*) as n from ${quote(schema)}._private_jobs`)).rows[0].n));
}

module.exports = { CLAIMS, quote, unavailableReason, serverVersion, createLocation, dropLocation, countStoredJobs };
