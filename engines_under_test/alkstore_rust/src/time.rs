//! Instants, durations and the one clock read of an op (T1, T2, DEC-precision).
//!
//! Instants are `i64` microseconds since 1970-01-01T00:00:00Z, as the protocol sends them and as
//! the SQLite file keeps them: exact both ways. A duration is added to an instant as whole
//! microseconds, rounded exactly as Python's `datetime + timedelta(seconds=d)` rounds, so a ready
//! time or a lease this engine computes equals the one the suite expects, to the microsecond.

use std::time::{SystemTime, UNIX_EPOCH};

/// Where a store's ops read their instant (docs/wire-protocol.md, "Time").
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Clock {
    /// The host's clock, read once per op.
    System,
    /// The suite's: every op carries `now`, and the engine reads no clock of its own (T2).
    Injected,
}

/// The host clock's instant, in microseconds since the epoch.
pub fn system_now_us() -> i64 {
    let elapsed = SystemTime::now().duration_since(UNIX_EPOCH).unwrap_or_default();
    i64::try_from(elapsed.as_micros()).unwrap_or(i64::MAX)
}

/// `seconds` (finite, ≥ 0, at most 100 years: checked by `rules::duration`) as whole microseconds.
///
/// CPython's `timedelta(seconds=s)` keeps the whole seconds exactly, scales the fraction by 10⁶ in
/// double arithmetic, keeps that product's whole part, and rounds what is left half to even on the
/// total. This does the same steps, so `now + duration_us(d)` is Python's `now + timedelta(seconds=d)`.
pub fn duration_us(seconds: f64) -> i64 {
    let whole_s = seconds.trunc();
    let scaled = (seconds - whole_s) * 1e6;
    let whole_us = scaled.trunc();
    let leftover = scaled - whole_us;
    let us = whole_s as i64 * 1_000_000 + whole_us as i64;
    if leftover == 0.5 {
        us + (us & 1)
    } else {
        us + leftover.round() as i64
    }
}

/// `instant + seconds`, saturating instead of overflowing (only reachable with instants past year 9999).
pub fn add_seconds(instant_us: i64, seconds: f64) -> i64 {
    instant_us.saturating_add(duration_us(seconds))
}
