'use strict';
// Part of the graphile-worker adapter (ecosystem/graphile_worker/adapter): one claim as graphile-worker runs it.
// graphile-worker is a handler-model library: a worker fetches a job, calls the task function, and completes
// the job when the function returns or fails it when it throws. A claim here is one run of the library's
// runTaskListOnce (a one-time pool of one worker) whose task function hands the job out and then waits, held
// inside the handler, until the handle's ack, retry or fail decides how it ends. Deciding also asks the pool
// for its graceful shutdown, so the worker takes no second job; the pool's promise settles once the library
// has written the outcome (its completion and failure batches are flushed on shutdown).

const { runTaskListOnce } = require('graphile-worker');

/** A promise with its resolve function outside it. */
function deferred() {
  let resolve;
  const promise = new Promise((done) => {
    resolve = done;
  });
  return { promise, resolve };
}

/**
 * The library-side options of one store's claims on one queue: one object, so graphile-worker compiles it and
 * looks up the queue's task id once (it caches both per options object). Completion and failure go through
 * the library's batchers (delay 0), which its shutdown waits for.
 */
function claimOptions(schema, logger) {
  return {
    schema,
    logger,
    noHandleSignals: true,
    preset: { worker: { completeJobBatchDelay: 0, failJobBatchDelay: 0 } },
  };
}

class HeldClaim {
  constructor() {
    this.started = deferred();
    this.decision = deferred();
    this.pool = null;
    this.finished = null;
  }

  /** The task function's body: hand the job out, wait for the decision, then return (ack) or throw (retry, fail). */
  async run(job) {
    this.started.resolve(job);
    const { kind, message } = await this.decision.promise;
    this.pool.gracefulShutdown(`alkstore: the handle decided ${kind}`);
    if (kind !== 'ack') throw new Error(message);
  }

  /** End the claim as `kind` ('ack' returns from the handler; 'retry' and 'fail' throw `message`); resolves once written. */
  async decide(kind, message = null) {
    this.decision.resolve({ kind, message });
    await this.finished;
  }
}

/**
 * Take one job of `queue` through the library (runTaskListOnce on `client`): the job row as graphile-worker
 * handed it to the task function and the held claim, or null when the worker found nothing to run.
 * `tasks` is the queue's task list, whose function routes a job to the claim of the pool that locked it.
 */
async function takeOne(options, tasks, client, claims) {
  const claim = new HeldClaim();
  claim.pool = runTaskListOnce(options, tasks, client);
  claims.set(claim.pool.id, claim);
  claim.finished = claim.pool.promise.finally(() => claims.delete(claim.pool.id));
  const job = await Promise.race([claim.started.promise, claim.finished.then(() => null)]);
  return job === null ? null : { job, claim };
}

/** The task list of one queue: the queue's name is the task identifier; each job goes to its pool's claim. */
function queueTasks(queue, claims) {
  return {
    [queue]: async (payload, helpers) => {
      const claim = claims.get(helpers.job.locked_by);
      if (claim === undefined) throw new Error(`no claim of this store holds pool ${helpers.job.locked_by}`);
      await claim.run(helpers.job);
    },
  };
}

module.exports = { HeldClaim, claimOptions, takeOne, queueTasks };
