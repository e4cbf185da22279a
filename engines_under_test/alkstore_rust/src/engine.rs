//! Stores, queues and handles, and every op in the contract's order of checks.
//!
//! Each op runs DEC-order-of-checks: refuse a closed store (S3) → refuse a spent handle (H4) → check
//! every argument, so bad input stores nothing → spend the handle (ack, retry, fail) → read the
//! clock once (T1: the request's `now` on an injected store, T2) → one step of `storage`.
//!
//! Stores, queues and handles are this process's own tables, named by ids it chooses (`s1`, `q2`,
//! `h3`); the suite sends the ids back. A handle names one claim of one job: the claim's token, which
//! every handle statement is fenced on, and the snapshot retry decides from.

use std::collections::HashMap;

use serde_json::{json, Value};

use crate::backoff::{backoff_delay_s, os_random, Rng};
use crate::payload;
use crate::rules;
use crate::storage::{self, Db, NewJobs, TestFault};
use crate::time::{self, add_seconds, Clock};
use crate::wire::{Class, Fault, Request, PROTOCOL_VERSION};

pub const ENGINE_NAME: &str = "rust-sqlite";
pub const LAST_ERROR_MAX_ATTEMPTS: &str = "max attempts exceeded";
pub const LAST_ERROR_FAILED: &str = "failed";
pub const LAST_ERROR_EXPIRED: &str = "expired";

/// The capabilities this engine declares (docs/capabilities.md): it keeps each one.
pub const CAPABILITIES: [&str; 6] = [
    "durable",
    "injectable_clock",
    "multi_process",
    "release",
    "shared_location",
    "unique_keys",
];

struct Store {
    /// `None` once closed (S3): the connection is released, the store's ids stay known.
    db: Option<Db>,
    clock: Clock,
    rng: Rng,
}

struct QueueRef {
    store: String,
    name: String,
    opts: QueueOpts,
}

/// A queue's stamps (E1), checked as S2 demands.
#[derive(Clone, Copy)]
struct QueueOpts {
    visibility_timeout_s: f64,
    max_attempts: i64,
    backoff_base_s: f64,
    retention_s: Option<f64>,
}

/// One claim: what its ops are fenced on and decide from (the job's stamps cannot change while it holds).
struct Handle {
    store: String,
    job_id: i64,
    attempts: i64,
    max_attempts: i64,
    backoff_base_s: f64,
    visibility_timeout_s: f64,
    token: String,
    /// H4: set just before the storage step of `ack`, `retry` or `fail`.
    spent: bool,
}

/// One engine process's state: every store it opened, every queue and handle it handed out.
pub struct Engine {
    fault: TestFault,
    stores: HashMap<String, Store>,
    queues: HashMap<String, QueueRef>,
    handles: HashMap<String, Handle>,
    next_id: u64,
    /// Half of every claim token: random per process, so tokens of two processes never meet.
    nonce: u64,
}

impl Engine {
    pub fn new(fault: TestFault) -> Engine {
        Engine {
            fault,
            stores: HashMap::new(),
            queues: HashMap::new(),
            handles: HashMap::new(),
            next_id: 0,
            nonce: os_random(),
        }
    }

    fn fresh_id(&mut self, prefix: &str) -> String {
        self.next_id += 1;
        format!("{prefix}{}", self.next_id)
    }

    /// Run one request; its result, or why not.
    pub fn handle(&mut self, request: &Request<'_>) -> Result<Value, Fault> {
        match request.op {
            "hello" => hello(request, self.fault),
            "unavailable_reason" => Ok(Value::Null),
            "create_location" => self.create_location(),
            "drop_location" => drop_location(request.text("location")?),
            "count_stored_jobs" => storage::count_jobs(request.text("location")?)
                .map(Value::from)
                .map_err(storage::fault),
            "open_store" => self.open_store(request),
            "close_store" => self.close_store(request),
            "queue" => self.queue(request),
            "enqueue" => self.enqueue(request, false),
            "enqueue_many" => self.enqueue(request, true),
            "enqueue_unique" => self.enqueue(request, false),
            "claim_one" => self.claim(request, false),
            "claim_batch" => self.claim(request, true),
            "ack_batch" => self.ack_batch(request),
            "cancel" => self.cancel(request),
            "get_job" => self.get_job(request),
            "sweep_expired" => self.sweep(request),
            "ack" | "retry" | "fail" | "heartbeat" | "release" => self.handle_op(request),
            other => Err(Fault::engine(format!(
                "this engine does not serve {other:?} (it does not declare what the op needs: it is not networked)"
            ))),
        }
    }

    /// A fresh directory for one SQLite file (created by the first store opened there): a new name per call,
    /// never one that exists, so a location starts empty.
    fn create_location(&mut self) -> Result<Value, Fault> {
        let serial = self.fresh_id("l");
        let name = format!("alkstore-rust-{}-{:x}-{serial}", std::process::id(), self.nonce);
        let dir = std::env::temp_dir().join(name);
        std::fs::create_dir(&dir).map_err(|e| Fault::engine(format!("cannot create {}: {e}", dir.display())))?;
        Ok(Value::String(dir.join("jobs.sqlite3").to_string_lossy().into_owned()))
    }

    fn open_store(&mut self, request: &Request<'_>) -> Result<Value, Fault> {
        let location = request.text("location")?;
        let clock = match request.text("clock")? {
            "system" => Clock::System,
            "injected" => Clock::Injected,
            other => {
                return Err(Fault::engine(format!(
                    "open_store: clock {other:?} is neither 'system' nor 'injected'"
                )))
            }
        };
        let seed = match request.value("seed")? {
            Value::Null => None,
            Value::Number(n) => Some(n.to_string()),
            _ => return Err(request.mistyped("seed", "an integer or null")),
        };
        let db = Db::open(location, self.fault).map_err(storage::fault)?;
        let id = self.fresh_id("s");
        self.stores.insert(
            id.clone(),
            Store {
                db: Some(db),
                clock,
                rng: Rng::new(seed.as_deref()),
            },
        );
        Ok(Value::String(id))
    }

    fn close_store(&mut self, request: &Request<'_>) -> Result<Value, Fault> {
        let id = request.text("store")?;
        let store = self.stores.get_mut(id).ok_or_else(|| unknown("store", id))?;
        store.db = None;
        Ok(Value::Null)
    }

    /// S3: the store `id` while it is open, else `StoreClosed` naming the op.
    fn open(&mut self, id: &str, op: &str) -> Result<&mut Store, Fault> {
        let store = self.stores.get_mut(id).ok_or_else(|| unknown("store", id))?;
        if store.db.is_none() {
            return Err(Fault::new(Class::StoreClosed, format!("{op}() on a closed store")));
        }
        Ok(store)
    }

    fn queue(&mut self, request: &Request<'_>) -> Result<Value, Fault> {
        let store = request.text("store")?.to_owned();
        self.open(&store, "queue")?;
        let name = rules::queue_name(request.text("name")?)?.to_owned();
        let opts = queue_opts(&request.object("opts")?)?;
        let id = self.fresh_id("q");
        self.queues.insert(id.clone(), QueueRef { store, name, opts });
        Ok(Value::String(id))
    }

    /// The queue a request names, its store checked open (S3): the store's key, the queue's name and stamps.
    fn queue_of(&mut self, request: &Request<'_>) -> Result<(String, String, QueueOpts), Fault> {
        let id = request.text("queue")?;
        let queue = self.queues.get(id).ok_or_else(|| unknown("queue", id))?;
        let found = (queue.store.clone(), queue.name.clone(), queue.opts);
        self.open(&found.0, request.op)?;
        Ok(found)
    }

    /// T1, T2: the op's one clock read, the request's `now` when the suite owns the store's time.
    fn now(&mut self, store: &str, request: &Request<'_>) -> Result<(i64, &mut Store), Fault> {
        let store = self.stores.get_mut(store).ok_or_else(|| unknown("store", store))?;
        let now = match store.clock {
            Clock::System => time::system_now_us(),
            Clock::Injected => match request.optional("now") {
                Some(Value::String(text)) => rules::instant("now", text)?,
                _ => {
                    return Err(Fault::engine(format!(
                        "{}: a store opened 'injected' needs the op's now",
                        request.op
                    )))
                }
            },
        };
        Ok((now, store))
    }

    /// `enqueue`, `enqueue_many` and `enqueue_unique` (E1–E11, K1–K4), in the order of checks.
    fn enqueue(&mut self, request: &Request<'_>, many: bool) -> Result<Value, Fault> {
        let (store, queue, opts) = self.queue_of(request)?;
        let key = if request.op == "enqueue_unique" {
            Some(rules::unique_key(request.text("unique_key")?)?)
        } else {
            None
        };
        let texts: Vec<&str> = if many {
            let payloads = request.array("payloads")?;
            payloads
                .iter()
                .map(|p| {
                    p.as_str()
                        .ok_or_else(|| request.mistyped("payloads", "an array of strings"))
                })
                .collect::<Result<_, _>>()?
        } else {
            vec![request.text("payload")?]
        };
        for (index, text) in texts.iter().enumerate() {
            payload::check(text).map_err(|rule| {
                let at = if many {
                    format!("payloads[{index}]")
                } else {
                    "payload".into()
                };
                Fault::new(Class::PayloadError, format!("{at} {rule}"))
            })?;
        }
        let options = request.object("options")?;
        let delay_s = rules::optional_duration("delay", options.value("delay_s")?, false)?;
        let run_at = options
            .optional_text("run_at")?
            .map(|t| rules::instant("run_at", t))
            .transpose()?;
        let expires_s = rules::optional_duration("expires", options.value("expires_s")?, false)?;
        let max_attempts = match options.value("max_attempts")? {
            Value::Null => opts.max_attempts,
            value => rules::max_attempts("max_attempts", value)?,
        };
        let priority = rules::priority(options.text("priority")?)?;
        if texts.is_empty() {
            return Ok(json!([]));
        }
        let jobs = NewJobs {
            payloads: &texts,
            priority,
            max_attempts,
            run_at: if delay_s.is_some() { None } else { run_at },
            delay_s: delay_s.unwrap_or(0.0),
            expires_s,
            visibility_timeout_s: opts.visibility_timeout_s,
            backoff_base_s: opts.backoff_base_s,
            retention_s: opts.retention_s,
        };
        let (now, store) = self.now(&store, request)?;
        if let Some(key) = key {
            let (id, created) = db(store)
                .insert_unique(&queue, key, &jobs, now)
                .map_err(storage::fault)?;
            return Ok(json!({ "id": id, "created": created }));
        }
        let ids = db(store).insert(&queue, &jobs, now).map_err(storage::fault)?;
        Ok(if many { json!(ids) } else { json!(ids[0]) })
    }

    fn claim(&mut self, request: &Request<'_>, batch: bool) -> Result<Value, Fault> {
        let (store_id, queue, _) = self.queue_of(request)?;
        let worker = rules::worker_id(request.text("worker_id")?)?;
        let n = if batch {
            rules::batch_size(request.value("n")?)?
        } else {
            1
        };
        if n <= 0 {
            return Ok(json!([]));
        }
        self.next_id += 1;
        let token = format!("{:016x}-{}", self.nonce, self.next_id);
        let (now, store) = self.now(&store_id, request)?;
        let jobs = db(store)
            .claim(&queue, worker, n, &token, now)
            .map_err(storage::fault)?;
        let mut claimed = Vec::with_capacity(jobs.len());
        for job in jobs {
            let handle = self.fresh_id("h");
            claimed.push(json!({"handle": handle, "job": job.to_json()}));
            let held = Handle {
                store: store_id.clone(),
                job_id: job.id,
                attempts: job.attempts,
                max_attempts: job.max_attempts,
                backoff_base_s: job.backoff_base_s,
                visibility_timeout_s: job.visibility_timeout_s,
                token: token.clone(),
                spent: false,
            };
            self.handles.insert(handle, held);
        }
        Ok(if batch {
            Value::Array(claimed)
        } else {
            claimed.pop().unwrap_or(Value::Null)
        })
    }

    fn ack_batch(&mut self, request: &Request<'_>) -> Result<Value, Fault> {
        let (store, queue, _) = self.queue_of(request)?;
        let mut ids = Vec::new();
        for value in request.array("ids")? {
            if let Some(id) = rules::job_id(value)? {
                if !ids.contains(&id) {
                    ids.push(id);
                }
            }
        }
        if ids.is_empty() {
            return Ok(json!(0));
        }
        let (now, store) = self.now(&store, request)?;
        db(store)
            .ack_batch(&queue, &ids, now)
            .map(Value::from)
            .map_err(storage::fault)
    }

    /// The storage, the queue's name and the job id of an op on one job by its id (`cancel`, `get_job`);
    /// `None` for an id of a kind no job has here (a `str`, a number no `i64` holds): not found, not an error.
    fn job_of(&mut self, request: &Request<'_>) -> Result<Option<(&mut Db, String, i64)>, Fault> {
        let (store, queue, _) = self.queue_of(request)?;
        Ok(rules::job_id(request.value("job_id")?)?
            .map(|id| (db(self.stores.get_mut(&store).expect("checked open")), queue, id)))
    }

    fn cancel(&mut self, request: &Request<'_>) -> Result<Value, Fault> {
        match self.job_of(request)? {
            Some((db, queue, id)) => db.cancel(&queue, id).map(Value::from).map_err(storage::fault),
            None => Ok(json!(false)),
        }
    }

    fn get_job(&mut self, request: &Request<'_>) -> Result<Value, Fault> {
        match self.job_of(request)? {
            Some((db, queue, id)) => {
                let job = db.get(&queue, id).map_err(storage::fault)?;
                Ok(job.map_or(Value::Null, |job| job.to_json()))
            }
            None => Ok(Value::Null),
        }
    }

    fn sweep(&mut self, request: &Request<'_>) -> Result<Value, Fault> {
        let (store, queue, _) = self.queue_of(request)?;
        let (now, store) = self.now(&store, request)?;
        db(store)
            .sweep(&queue, now, LAST_ERROR_EXPIRED, LAST_ERROR_MAX_ATTEMPTS)
            .map(Value::from)
            .map_err(storage::fault)
    }

    /// `ack`, `retry`, `fail`, `heartbeat`, `release`: H1–H5, R1–R4, D1, L1–L4, in the order of checks.
    fn handle_op(&mut self, request: &Request<'_>) -> Result<Value, Fault> {
        let op = request.op;
        let id = request.text("handle")?;
        let store = self.handles.get(id).ok_or_else(|| unknown("handle", id))?.store.clone();
        self.open(&store, op)?;
        let handle = &self.handles[id];
        if handle.spent {
            return Err(Fault::new(
                Class::HandleSpent,
                format!(
                    "{op}() on a handle already spent by ack, retry, fail or release (job {})",
                    handle.job_id
                ),
            ));
        }
        let (job_id, attempts, max_attempts) = (handle.job_id, handle.attempts, handle.max_attempts);
        let (backoff_base_s, visibility_timeout_s) = (handle.backoff_base_s, handle.visibility_timeout_s);
        let token = handle.token.clone();
        let outcome = match op {
            "ack" => Outcome::Ack,
            "fail" => {
                let error = rules::error_text(request.optional_text("error")?)?;
                Outcome::Dead(error.unwrap_or(LAST_ERROR_FAILED).to_owned())
            }
            "retry" => {
                let error = rules::error_text(request.optional_text("error")?)?.map(str::to_owned);
                let delay_s = rules::optional_duration("delay", request.value("delay_s")?, false)?;
                let rng = &mut self.stores.get_mut(&store).expect("checked open").rng;
                if attempts >= max_attempts {
                    Outcome::Dead(error.unwrap_or_else(|| LAST_ERROR_MAX_ATTEMPTS.to_owned()))
                } else {
                    let delay = delay_s.unwrap_or_else(|| backoff_delay_s(attempts, backoff_base_s, rng));
                    Outcome::Ready(delay, error)
                }
            }
            "release" => {
                let delay_s = rules::optional_duration("delay", request.value("delay_s")?, false)?;
                Outcome::Release(delay_s.unwrap_or(0.0))
            }
            _ => {
                let extend_s = rules::optional_duration("extend", request.value("extend_s")?, true)?;
                Outcome::Lease(extend_s.unwrap_or(visibility_timeout_s))
            }
        };
        if !matches!(outcome, Outcome::Lease(_)) {
            self.handles.get_mut(id).expect("looked up above").spent = true;
        }
        let (now, store) = self.now(&store, request)?;
        let db = db(store);
        let changed = match outcome {
            Outcome::Ack => db.ack(job_id, &token, now),
            Outcome::Dead(error) => db.dead_letter(job_id, &token, now, &error),
            Outcome::Ready(delay, error) => db.retry(job_id, &token, now, add_seconds(now, delay), error.as_deref()),
            Outcome::Lease(lease_s) => db.heartbeat(job_id, &token, now, add_seconds(now, lease_s)),
            Outcome::Release(delay) => db.release(job_id, &token, now, add_seconds(now, delay)),
        };
        changed.map(Value::from).map_err(storage::fault)
    }
}

/// What a valid handle op does to the job, decided before the one clock read.
enum Outcome {
    Ack,
    Dead(String),
    Ready(f64, Option<String>),
    Lease(f64),
    /// L2: ready again after the delay, the claim's attempt given back.
    Release(f64),
}

fn db(store: &mut Store) -> &mut Db {
    store
        .db
        .as_mut()
        .expect("an op reaches storage only on an open store (checked first, S3)")
}

fn unknown(kind: &str, id: &str) -> Fault {
    Fault::engine(format!("no {kind} {id:?} in this engine process"))
}

/// The handshake: the version chosen, who the engine is, what it declares. A test-only fault shows in the
/// engine's name (`rust-sqlite-mutant-fence-by-job-id`), so no report can pass a broken variant off as the engine.
fn hello(request: &Request<'_>, fault: TestFault) -> Result<Value, Fault> {
    let offered = request.array("versions")?;
    if !offered.iter().any(|v| v.as_u64() == Some(PROTOCOL_VERSION)) {
        return Err(Fault::engine(format!(
            "this engine speaks protocol version {PROTOCOL_VERSION}; the suite offered {}",
            Value::Array(offered.clone())
        )));
    }
    Ok(json!({
        "version": PROTOCOL_VERSION,
        "engine": {
            "name": fault.label().map_or_else(|| ENGINE_NAME.to_owned(), |f| format!("{ENGINE_NAME}-mutant-{f}")),
            "version": env!("CARGO_PKG_VERSION"),
            "language": format!("rust (rustc {})", env!("ALKSTORE_RUSTC_VERSION")),
        },
        "capabilities": CAPABILITIES,
        "time_resolution_us": 1,
        "storage": format!("SQLite {} (rusqlite 0.28, the system's libsqlite3)", rusqlite::version()),
    }))
}

/// Delete a location this engine created: its file, the file's WAL and shared memory, then its directory.
fn drop_location(location: &str) -> Result<Value, Fault> {
    for suffix in ["", "-wal", "-shm", "-journal"] {
        let path = format!("{location}{suffix}");
        match std::fs::remove_file(&path) {
            Err(e) if e.kind() != std::io::ErrorKind::NotFound => {
                return Err(Fault::engine(format!("cannot remove {path}: {e}")));
            }
            _ => {}
        }
    }
    if let Some(dir) = std::path::Path::new(location).parent() {
        let _ = std::fs::remove_dir(dir); // only when empty: never more than this engine made
    }
    Ok(Value::Null)
}

/// S2: the queue's stamps, each within the contract's bounds, named by its `QueueOpts` field.
fn queue_opts(opts: &Request<'_>) -> Result<QueueOpts, Fault> {
    Ok(QueueOpts {
        visibility_timeout_s: rules::duration("visibility_timeout_s", opts.value("visibility_timeout_s")?, true)?,
        max_attempts: rules::max_attempts("max_attempts", opts.value("max_attempts")?)?,
        backoff_base_s: rules::duration("backoff_base_s", opts.value("backoff_base_s")?, false)?,
        retention_s: rules::optional_duration(
            "dead_letter_retention_s",
            opts.value("dead_letter_retention_s")?,
            false,
        )?,
    })
}
