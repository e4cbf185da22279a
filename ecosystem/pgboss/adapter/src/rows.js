'use strict';
// Part of the pg-boss adapter (ecosystem/pgboss/adapter): how a pg-boss job row reads as a contract job
// snapshot (docs/wire-protocol.md, "Encodings"), and how a contract job rides in pg-boss's `data`.
//
// pg-boss 10 keeps a job as a row of <schema>.job: state created|retry|active|completed|cancelled|failed,
// priority (integer), start_after, started_on, retry_count, retry_limit, expire_in, created_on,
// completed_on, keep_until, output, data (jsonb). The contract's states map as created/retry -> ready,
// active -> processing, failed -> dead; completed (acked) and cancelled rows are gone for the contract.
// The payload rides in `data` as its JSON text, so the caller's text comes back exactly (jsonb would
// renumber 1.0 and reorder keys), beside the stamps pg-boss has no column for.

const STATES = { created: 'ready', retry: 'ready', active: 'processing', failed: 'dead' };

/** The `data` a contract job is sent with: its payload text and the stamps pg-boss has no column for. */
function jobData(payload, jobs) {
  return {
    payload,
    stamps: {
      visibility_timeout_s: jobs.visibilityTimeoutS,
      backoff_base_s: jobs.backoffBaseS,
      dead_letter_retention_s: jobs.deadLetterRetentionS,
      expires: jobs.expiresUs !== null,
    },
  };
}

/**
 * A timestamptz as Postgres writes it in text ("2026-12-02 00:15:13.123456+00") as microseconds since the
 * epoch, a decimal string. The adapter reads timestamps as text (pg's Date keeps milliseconds only).
 */
function instantUs(text) {
  if (text === null || text === undefined) return null;
  const match = /^(\d{4,}-\d\d-\d\d) (\d\d:\d\d:\d\d)(?:\.(\d{1,6}))?([+-]\d\d)(?::?(\d\d))?(?::?(\d\d))?$/.exec(text);
  if (match === null) throw new Error(`a timestamp pg-boss's table holds that this adapter cannot read: ${text}`);
  const [, date, time, fraction = '', hours, minutes = '00', seconds = '00'] = match;
  const wholeMs = Date.parse(`${date}T${time}${hours}:${minutes}`);
  const offsetS = Number(seconds) * (hours.startsWith('-') ? -1 : 1);
  return (BigInt(wholeMs / 1000 - offsetS) * 1000000n + BigInt(fraction.padEnd(6, '0'))).toString();
}

/** An instant (microseconds, BigInt) as the ISO text pg-boss's startAfter/keepUntil take, to the microsecond. */
function isoUs(us) {
  const seconds = us / 1000000n;
  const micros = us % 1000000n;
  const base = new Date(Number(seconds) * 1000).toISOString().slice(0, 19);
  return `${base}.${micros.toString().padStart(6, '0')}Z`;
}

/**
 * The contract snapshot of a pg-boss row (getJobById or fetch with includeMetadata), or null when it is gone;
 * `claimant` is the worker id the adapter's own table holds for it (pg-boss records none).
 */
function snapshot(row, queue, claimant = null) {
  const state = STATES[row.state];
  if (state === undefined) return null;
  const { payload, stamps } = row.data;
  const started = row.startedOn !== null;
  const leaseUs = state === 'processing' ? BigInt(instantUs(row.startedOn)) + BigInt(Math.round(Number(row.expireInSeconds) * 1e6)) : null;
  const output = row.output;
  return {
    id: row.id,
    queue,
    payload,
    state,
    priority: String(row.priority),
    attempts: started ? row.retryCount + 1 : 0,
    max_attempts: row.retryLimit + 1,
    run_at: instantUs(row.startAfter),
    expires_at: stamps.expires ? instantUs(row.keepUntil) : null,
    enqueued_at: instantUs(row.createdOn),
    lease_expires_at: leaseUs === null ? null : leaseUs.toString(),
    claimed_by: state === 'processing' ? claimant : null,
    visibility_timeout_s: stamps.visibility_timeout_s,
    backoff_base_s: stamps.backoff_base_s,
    dead_letter_retention_s: stamps.dead_letter_retention_s,
    last_error: output !== null && typeof output === 'object' && typeof output.message === 'string' ? output.message : null,
    died_at: state === 'dead' ? instantUs(row.completedOn) : null,
  };
}

module.exports = { jobData, instantUs, isoUs, snapshot, STATES };
