//! The engine's ops called in-process, without the wire: the baseline of benchmarks/wire_rust.py.
//!
//! `cargo run --release --offline --example inprocess -- N RUNS` prints one JSON object,
//! `{op: [µs per call, …]}` over RUNS runs of N calls each, each call the same request the suite
//! would send, handed to `Engine::handle` directly (no pipe, no Python, no JSON text).

use std::time::Instant;

use alkstore_rust::engine::Engine;
use alkstore_rust::storage::TestFault;
use alkstore_rust::wire::Request;
use serde_json::{json, Value};

const OPS: [&str; 5] = ["enqueue", "get_job", "claim_one", "heartbeat", "ack"];

fn call(engine: &mut Engine, op: &str, fields: &Value) -> Value {
    let fields = fields.as_object().expect("an object");
    engine
        .handle(&Request::new(op, fields))
        .unwrap_or_else(|f| panic!("{op}: {f:?}"))
}

fn main() {
    let args: Vec<usize> = std::env::args()
        .skip(1)
        .map(|a| a.parse().expect("N and RUNS"))
        .collect();
    let (n, runs) = (args[0], args[1]);
    let mut results: Vec<Vec<f64>> = vec![Vec::new(); OPS.len()];
    let opts = json!({"visibility_timeout_s": 300.0, "max_attempts": 3, "backoff_base_s": 5.0,
                      "dead_letter_retention_s": null});
    let options = json!({"delay_s": null, "run_at": null, "expires_s": null, "max_attempts": null, "priority": "0"});
    for _ in 0..runs {
        let mut engine = Engine::new(TestFault::None);
        let location = call(&mut engine, "create_location", &json!({}));
        let store = call(
            &mut engine,
            "open_store",
            &json!({"location": location, "clock": "system", "seed": 1}),
        );
        let queue = call(
            &mut engine,
            "queue",
            &json!({"store": store, "name": "bench", "opts": opts}),
        );
        let mut outputs: Vec<Value> = Vec::new();
        for (slot, op) in OPS.iter().enumerate() {
            let requests: Vec<Value> = (0..n)
                .map(|i| match *op {
                    "enqueue" => json!({"queue": queue, "payload": "{\"n\":1}", "options": options}),
                    "get_job" => json!({"queue": queue, "job_id": outputs[i]}),
                    "claim_one" => json!({"queue": queue, "worker_id": "w"}),
                    "heartbeat" => json!({"handle": outputs[i], "extend_s": null}),
                    _ => json!({"handle": outputs[i]}),
                })
                .collect();
            let started = Instant::now();
            let answers: Vec<Value> = requests.iter().map(|r| call(&mut engine, op, r)).collect();
            results[slot].push(started.elapsed().as_secs_f64() * 1e6 / n as f64);
            match *op {
                "enqueue" => outputs = answers,
                "claim_one" => outputs = answers.iter().map(|c| c["handle"].clone()).collect(),
                _ => {}
            }
        }
        call(&mut engine, "close_store", &json!({ "store": store }));
        call(&mut engine, "drop_location", &json!({ "location": location }));
    }
    let by_op: serde_json::Map<String, Value> = OPS
        .iter()
        .zip(results)
        .map(|(op, times)| ((*op).to_owned(), json!(times)))
        .collect();
    println!("{}", Value::Object(by_op));
}
