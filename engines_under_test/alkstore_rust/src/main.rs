//! The testee: read one request a line on stdin, answer each in order on stdout, log on stderr.
//!
//! stdout carries the protocol only (docs/wire-protocol.md, "Framing"): every other word this
//! program writes goes to stderr. Requests are answered one at a time, in the order they came, which
//! the protocol allows; a reply is flushed as soon as no further request is already waiting, so a
//! burst of requests costs one write. A panic inside an op is that op's `EngineError`, not the end
//! of the process. The program exits when the suite closes stdin.

use std::io::{self, BufRead, BufReader, BufWriter, Write};
use std::panic::{self, AssertUnwindSafe};

use alkstore_rust::engine::Engine;
use alkstore_rust::storage::TestFault;
use alkstore_rust::wire::{error_reply, ok_reply, Fault, Request};
use serde_json::Value;

/// The environment variable that selects a test-only fault (tests/mutants/); never set it otherwise.
const MUTANT_VAR: &str = "ALKSTORE_RUST_MUTANT";

fn test_fault() -> Result<TestFault, String> {
    match std::env::var(MUTANT_VAR) {
        Err(_) => Ok(TestFault::None),
        Ok(name) => TestFault::named(&name).ok_or_else(|| {
            format!("{MUTANT_VAR}={name:?} names no fault (fence_by_job_id, lease_deadline_inclusive); unset it")
        }),
    }
}

/// One request line's reply, or `None` for a line that names no request to answer (logged instead).
fn answer(engine: &mut Engine, line: &[u8]) -> Option<Value> {
    let message: Value = match serde_json::from_slice(line) {
        Ok(message) => message,
        Err(e) => {
            let line = String::from_utf8_lossy(line);
            eprintln!("alkstore-rust: a line that is not JSON ({e}): {line:.200}");
            return None;
        }
    };
    let (id, op, fields) = match (
        message.get("id").and_then(Value::as_u64),
        message.get("type").and_then(Value::as_str),
        message.as_object(),
    ) {
        (Some(id), Some(op), Some(fields)) => (id, op, fields),
        _ => {
            eprintln!("alkstore-rust: a message without an integer id and a type: {message:.200}");
            return None;
        }
    };
    let request = Request::new(op, fields);
    let outcome = panic::catch_unwind(AssertUnwindSafe(|| engine.handle(&request)));
    Some(match outcome {
        Ok(Ok(result)) => ok_reply(id, result),
        Ok(Err(fault)) => error_reply(id, &fault),
        Err(panic) => {
            let text = panic
                .downcast_ref::<String>()
                .cloned()
                .or_else(|| panic.downcast_ref::<&str>().map(|s| (*s).to_owned()))
                .unwrap_or_else(|| "a panic without a message".into());
            // The panic hook has written the panic's place (and, with RUST_BACKTRACE=1, its stack) to
            // stderr, which the suite shows beside the failure.
            error_reply(
                id,
                &Fault::engine(format!("{op} panicked: {text} (see the engine's stderr)")),
            )
        }
    })
}

fn main() {
    let fault = match test_fault() {
        Ok(fault) => fault,
        Err(problem) => {
            eprintln!("alkstore-rust: {problem}");
            std::process::exit(2);
        }
    };
    if fault != TestFault::None {
        eprintln!(
            "alkstore-rust: TEST-ONLY FAULT {fault:?} ({MUTANT_VAR}): this engine breaks the contract on purpose"
        );
    }
    eprintln!(
        "alkstore-rust {} on SQLite {}, pid {}",
        env!("CARGO_PKG_VERSION"),
        rusqlite::version(),
        std::process::id()
    );
    let mut engine = Engine::new(fault);
    // A reader of our own (not stdin's lock) shows what it holds, so replies flush only when no request waits.
    let mut input = BufReader::with_capacity(1 << 16, io::stdin().lock());
    let mut output = BufWriter::new(io::stdout().lock());
    let mut line = Vec::new();
    loop {
        line.clear();
        match input.read_until(b'\n', &mut line) {
            Ok(0) => break,
            Ok(_) => {}
            Err(e) => {
                eprintln!("alkstore-rust: cannot read stdin: {e}");
                break;
            }
        }
        if let Some(reply) = answer(&mut engine, &line) {
            let written = serde_json::to_writer(&mut output, &reply)
                .map_err(io::Error::from)
                .and_then(|()| output.write_all(b"\n"));
            if let Err(e) = written {
                eprintln!("alkstore-rust: cannot write stdout: {e}");
                break;
            }
        }
        if !input.buffer().contains(&b'\n') && output.flush().is_err() {
            break;
        }
    }
}
