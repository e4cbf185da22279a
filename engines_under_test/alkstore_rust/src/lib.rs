//! An alkstore engine in Rust: jobs in an SQLite file, served over the wire protocol.
//!
//! The suite (docs/wire-protocol.md) starts this program and drives it with one JSON request a line
//! on stdin; it answers one JSON reply a line on stdout and logs on stderr. Each module has one job:
//!
//! - [`wire`]: reading a request's fields and writing replies and errors (the protocol's encodings);
//! - [`rules`]: the contract's argument checks (S1, S2, C6, E9, DEC-bounds, DEC-worker-text);
//! - [`payload`]: the check that a payload is JSON text every engine can read back (E8);
//! - [`time`]: instants, durations and the one clock read of an op (T1, T2);
//! - [`backoff`]: the retry curve and the store's seeded jitter (R2, R5);
//! - [`storage`]: the SQLite file and the statements that change it (the only code that stores);
//! - [`engine`]: stores, queues and handles, and the order of checks of every op (DEC-order-of-checks).
//!
//! `main.rs` is the loop that reads requests and writes replies, in order.

pub mod backoff;
pub mod engine;
pub mod payload;
pub mod rules;
pub mod storage;
pub mod time;
pub mod wire;
