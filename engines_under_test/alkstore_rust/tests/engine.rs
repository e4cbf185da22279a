//! The engine's ops, driven as the suite drives them: JSON requests in, results or errors out, on a
//! real SQLite file, with the suite's instant carried by each op. These pin what the wire adds
//! (ids, encodings, the order of checks) and the fence; the contract itself is certified by the suite
//! (`pytest --alkstore-engine=engines_under_test/alkstore_rust/alkstore-engine.toml`). If one fails,
//! check the clause its message names in docs/contract.md.

use alkstore_rust::engine::Engine;
use alkstore_rust::storage::TestFault;
use alkstore_rust::time::duration_us;
use alkstore_rust::wire::{Class, Fault, Request};
use serde_json::{json, Value};

const T0: i64 = 1_893_456_000_000_000; // 2030-01-01T00:00:00Z
const SECOND: i64 = 1_000_000;

struct Session {
    engine: Engine,
    location: String,
}

impl Session {
    fn new(fault: TestFault) -> Session {
        let mut engine = Engine::new(fault);
        let location = call(&mut engine, "create_location", json!({})).expect("a location");
        Session {
            engine,
            location: location.as_str().expect("a path").to_owned(),
        }
    }

    fn call(&mut self, op: &str, fields: Value) -> Result<Value, Fault> {
        call(&mut self.engine, op, fields)
    }

    fn ok(&mut self, op: &str, fields: Value) -> Value {
        self.call(op, fields.clone())
            .unwrap_or_else(|f| panic!("{op} {fields}: {f:?}"))
    }

    /// An injected-clock store and a queue on it whose leases last `lease_s`.
    fn queue(&mut self, lease_s: f64) -> (String, String) {
        let location = self.location.clone();
        let store = self.ok(
            "open_store",
            json!({"location": location, "clock": "injected", "seed": 1}),
        );
        let opts = json!({"visibility_timeout_s": lease_s, "max_attempts": 2, "backoff_base_s": 5.0,
                          "dead_letter_retention_s": null});
        let queue = self.ok("queue", json!({"store": store, "name": "q", "opts": opts}));
        (string(&store), string(&queue))
    }

    fn enqueue(&mut self, queue: &str, now: i64) -> Value {
        let options =
            json!({"delay_s": null, "run_at": null, "expires_s": null, "max_attempts": null, "priority": "0"});
        self.ok(
            "enqueue",
            json!({"queue": queue, "now": now.to_string(), "payload": "{\"n\":1}", "options": options}),
        )
    }

    /// One claim at `now`: its handle id and job snapshot.
    fn claim(&mut self, queue: &str, now: i64, worker: &str) -> (String, Value) {
        let claimed = self.ok(
            "claim_one",
            json!({"queue": queue, "now": now.to_string(), "worker_id": worker}),
        );
        (string(&claimed["handle"]), claimed["job"].clone())
    }

    fn ack(&mut self, handle: &str, now: i64) -> Result<Value, Fault> {
        self.call("ack", json!({"handle": handle, "now": now.to_string()}))
    }

    /// The start of every fence test: one job, enqueued at `T0` on a queue whose leases last 10 s,
    /// claimed at `T0` by `w1`.
    fn one_claim(&mut self) -> OneClaim {
        let (store, queue) = self.queue(10.0);
        let id = self.enqueue(&queue, T0);
        let (handle, _) = self.claim(&queue, T0, "w1");
        OneClaim {
            store,
            queue,
            id,
            handle,
        }
    }
}

/// What `Session::one_claim` made: the store, the queue, the job's id and the claim's handle.
struct OneClaim {
    store: String,
    queue: String,
    id: Value,
    handle: String,
}

impl Drop for Session {
    fn drop(&mut self) {
        let location = self.location.clone();
        let _ = self.call("drop_location", json!({ "location": location }));
    }
}

fn call(engine: &mut Engine, op: &str, fields: Value) -> Result<Value, Fault> {
    engine.handle(&Request::new(op, fields.as_object().expect("an object")))
}

fn string(value: &Value) -> String {
    value
        .as_str()
        .unwrap_or_else(|| panic!("{value} is not a string"))
        .to_owned()
}

/// E4, C3, H2, B3: enqueue → claim → ack, the exchange docs/certify-your-engine.md shows; the oracle agrees.
#[test]
fn enqueue_claim_ack() {
    let mut s = Session::new(TestFault::None);
    let (_, queue) = s.queue(30.0);
    let id = s.enqueue(&queue, T0);
    let location = s.location.clone();
    assert_eq!(
        s.ok("count_stored_jobs", json!({ "location": location })),
        json!(1),
        "the oracle"
    );
    let (handle, job) = s.claim(&queue, T0 + SECOND, "w1");
    assert_eq!(job["id"], id, "C3: the job enqueued");
    assert_eq!(job["payload"], "{\"n\":1}", "E8: the payload's text, as sent");
    assert_eq!(job["state"], "processing");
    assert_eq!(job["attempts"], 1);
    assert_eq!(job["run_at"], T0.to_string(), "E4: ready at enqueued_at");
    assert_eq!(
        job["lease_expires_at"],
        (T0 + 31 * SECOND).to_string(),
        "C3: now + visibility timeout"
    );
    assert_eq!(
        job["visibility_timeout_s"],
        json!(30.0),
        "E1: the stamp, a number of seconds"
    );
    assert_eq!(s.ack(&handle, T0 + 2 * SECOND), Ok(json!(true)), "H2");
    let gone = s.ok("get_job", json!({"queue": queue, "now": T0.to_string(), "job_id": id}));
    assert_eq!(gone, Value::Null, "H2: an acked job is deleted");
    assert_eq!(
        s.ok("count_stored_jobs", json!({ "location": location })),
        json!(0),
        "the oracle"
    );
}

/// H1: a handle op succeeds while `now < lease_expires_at`, and not at the deadline itself.
#[test]
fn handle_ops_end_at_the_deadline() {
    let mut s = Session::new(TestFault::None);
    let OneClaim { handle, .. } = s.one_claim();
    let beat = json!({"handle": handle, "now": (T0 + 10 * SECOND - 1).to_string(), "extend_s": null});
    assert_eq!(
        s.call("heartbeat", beat),
        Ok(json!(true)),
        "H1: 1 µs before the deadline"
    );
    let at_deadline = T0 + 10 * SECOND - 1 + 10 * SECOND;
    assert_eq!(
        s.ack(&handle, at_deadline),
        Ok(json!(false)),
        "H1, H3: at the (reset) deadline"
    );
}

/// H5: after a lapse and a reclaim, the old handle's ack is False and the new holder's is True.
#[test]
fn old_handle_is_fenced_out() {
    let mut s = Session::new(TestFault::None);
    let OneClaim { queue, handle: old, .. } = s.one_claim();
    let (new, job) = s.claim(&queue, T0 + 10 * SECOND, "w1");
    assert_eq!(job["attempts"], 2, "C3: a reclaim consumes an attempt");
    assert_eq!(
        s.ack(&old, T0 + 11 * SECOND),
        Ok(json!(false)),
        "H5: the old claim, same worker id"
    );
    assert_eq!(s.ack(&new, T0 + 11 * SECOND), Ok(json!(true)), "H5: the new claim");
}

/// The test-only faults break what they say (tests/mutants/ relies on them): each makes one of the
/// two tests above pass where it must fail.
#[test]
fn test_only_faults_break_the_fence() {
    let mut s = Session::new(TestFault::FenceByJobId);
    let OneClaim { queue, handle: old, .. } = s.one_claim();
    s.claim(&queue, T0 + 10 * SECOND, "w2");
    assert_eq!(
        s.ack(&old, T0 + 11 * SECOND),
        Ok(json!(true)),
        "fence_by_job_id breaks H5"
    );

    let mut s = Session::new(TestFault::LeaseDeadlineInclusive);
    let OneClaim { handle, .. } = s.one_claim();
    assert_eq!(
        s.ack(&handle, T0 + 10 * SECOND),
        Ok(json!(true)),
        "lease_deadline_inclusive breaks H1"
    );
}

/// DEC-order-of-checks: closed store → spent handle → arguments → spend; a bad argument spends nothing.
#[test]
fn order_of_checks() {
    let mut s = Session::new(TestFault::None);
    let OneClaim { store, handle, .. } = s.one_claim();
    let bad = s.call(
        "retry",
        json!({"handle": handle, "now": T0.to_string(), "error": null, "delay_s": -1}),
    );
    let bad = bad.expect_err("E9: a negative delay");
    assert_eq!(
        (bad.class, bad.message.as_str()),
        (Class::InvalidArgument, "delay=-1: a duration must not be negative")
    );
    assert_eq!(
        s.ack(&handle, T0 + 1),
        Ok(json!(true)),
        "E9: the refused retry left the handle unspent"
    );
    assert_eq!(
        s.ack(&handle, T0 + 2).map_err(|f| f.class),
        Err(Class::HandleSpent),
        "H4"
    );
    s.ok("close_store", json!({ "store": store }));
    assert_eq!(
        s.ack(&handle, T0 + 3).map_err(|f| f.class),
        Err(Class::StoreClosed),
        "S3 before H4"
    );
    assert_eq!(
        s.ok("close_store", json!({ "store": store })),
        Value::Null,
        "S3: close is idempotent"
    );
}

/// R1, R4, DEC-retry-keeps-error: a retry keeps the last error when given none; the last attempt's
/// retry dead-letters with "max attempts exceeded".
#[test]
fn retry_then_dead_letter() {
    let mut s = Session::new(TestFault::None);
    let OneClaim {
        queue,
        id,
        handle: first,
        ..
    } = s.one_claim();
    let retry = json!({"handle": first, "now": T0.to_string(), "error": "boom", "delay_s": 0});
    assert_eq!(s.call("retry", retry), Ok(json!(true)), "R3: a delay of 0 is ready now");
    let (second, job) = s.claim(&queue, T0, "w1");
    assert_eq!(job["last_error"], "boom", "R1");
    let retry = json!({"handle": second, "now": T0.to_string(), "error": null, "delay_s": null});
    assert_eq!(s.call("retry", retry), Ok(json!(true)), "R4: the last attempt");
    let dead = s.ok("get_job", json!({"queue": queue, "now": T0.to_string(), "job_id": id}));
    assert_eq!(
        (dead["state"].clone(), dead["last_error"].clone()),
        (json!("dead"), json!("max attempts exceeded"))
    );
    assert_eq!(dead["died_at"], T0.to_string(), "D1: died at the op's now");
    assert_eq!(dead["lease_expires_at"], Value::Null, "DEC-unclaimed-fields");
}

/// DEC-precision: a duration becomes whole microseconds exactly as Python's `timedelta(seconds=d)`
/// rounds (the values are Python 3.11's), so `now + d` here is the instant the suite expects.
#[test]
fn durations_round_as_python_timedelta() {
    let python = [
        (0.1, 100_000),
        (1e-6, 1),
        (2.5e-6, 2),
        (3.5e-6, 4),
        (5e-7, 0),
        (1.5e-6, 2),
        (1.0000005, 1_000_001),
        (2.0000005, 2_000_001),
        (0.3, 300_000),
        (1.0 / 3.0, 333_333),
        (123_456.789_012_5, 123_456_789_012),
        (1e-7, 0),
        (3_155_760_000.0, 3_155_760_000_000_000),
    ];
    for (seconds, us) in python {
        assert_eq!(duration_us(seconds), us, "timedelta(seconds={seconds:?})");
    }
}
