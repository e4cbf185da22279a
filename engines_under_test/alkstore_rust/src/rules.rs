//! The contract's argument checks (S1, S2, C6, E9, DEC-bounds, DEC-worker-text), each before any I/O.
//!
//! Every refusal names the argument by its surface name, shows the value as the suite sent it and
//! states the rule (`delay=-1: a duration must not be negative`), as the Python engines' messages do.
//! The bounds are the contract's literals; `tests/literals.rs` holds them to
//! alkstore_contract/wire/literals.json, the file the suite and every engine's tests read.

use serde_json::Value;

use crate::wire::Fault;

pub const MAX_QUEUE_NAME_LENGTH: usize = 200;
pub const RESERVED_PREFIX: &str = "__";
/// 100 years of 365.25 days: keeps `now + d` inside `datetime`'s range.
pub const MAX_DURATION_S: f64 = 100.0 * 365.25 * 24.0 * 3600.0;
/// A lease (visibility timeout, heartbeat `extend`) lasts at least 1 µs, the precision instants are kept at.
pub const MIN_POSITIVE_DURATION_S: f64 = 1e-6;
pub const MAX_ATTEMPTS_MIN: i64 = 1;
pub const MAX_ATTEMPTS_MAX: i64 = 2_147_483_647;
/// The longest a shown value gets in a message before it is cut.
const MAX_SHOWN: usize = 80;

/// `text` as a message shows it: quoted and escaped like Python's `repr`, cut to 80 characters.
pub fn show_text(text: &str) -> String {
    let mut shown = String::from("'");
    for ch in text.chars() {
        match ch {
            '\'' => shown.push_str("\\'"),
            '\\' => shown.push_str("\\\\"),
            '\n' => shown.push_str("\\n"),
            '\r' => shown.push_str("\\r"),
            '\t' => shown.push_str("\\t"),
            c if c.is_control() => shown.push_str(&format!("\\x{:02x}", c as u32)),
            c => shown.push(c),
        }
    }
    shown.push('\'');
    cut(shown)
}

/// A number as the suite sent it (its JSON text); an integer too long to show is described by its digits.
pub fn show_number(text: &str) -> String {
    let digits = text.trim_start_matches('-');
    if text.len() > MAX_SHOWN && digits.bytes().all(|b| b.is_ascii_digit()) {
        let sign = if text.starts_with('-') { "negative " } else { "" };
        return format!("<{sign}int of {} digits>", digits.len());
    }
    cut(text.to_owned())
}

fn cut(shown: String) -> String {
    if shown.chars().count() <= MAX_SHOWN {
        return shown;
    }
    let mut kept: String = shown.chars().take(MAX_SHOWN - 3).collect();
    kept.push_str("...");
    kept
}

fn show_value(value: &Value) -> String {
    match value {
        Value::Number(n) => show_number(&n.to_string()),
        Value::String(s) => show_text(s),
        other => cut(other.to_string()),
    }
}

/// Whether `text` is a JSON integer (no fraction, no exponent), of any length.
fn is_integer_text(text: &str) -> bool {
    let digits = text.strip_prefix('-').unwrap_or(text);
    !digits.is_empty() && digits.bytes().all(|b| b.is_ascii_digit())
}

/// The JSON text of `value` when it is an integer (of any length), else `None`.
fn integer_text(value: &Value) -> Option<String> {
    match value {
        Value::Number(n) => Some(n.to_string()).filter(|t| is_integer_text(t)),
        _ => None,
    }
}

/// S1: a non-empty name of at most 200 characters, no control character (Unicode Cc), not starting `__`.
pub fn queue_name(name: &str) -> Result<&str, Fault> {
    let refuse = |rule: String| Err(Fault::invalid_name(format!("name={}: {rule}", show_text(name))));
    let length = name.chars().count();
    if name.is_empty() {
        return refuse("a queue name must not be empty".into());
    }
    if length > MAX_QUEUE_NAME_LENGTH {
        return refuse(format!(
            "a queue name has at most {MAX_QUEUE_NAME_LENGTH} characters, got {length}"
        ));
    }
    if name.starts_with(RESERVED_PREFIX) {
        return refuse(format!("the prefix '{RESERVED_PREFIX}' is reserved"));
    }
    if let Some(ch) = name.chars().find(|c| c.is_control()) {
        return refuse(format!(
            "a queue name must not contain control characters ({})",
            show_text(&ch.to_string())
        ));
    }
    Ok(name)
}

/// C6, DEC-worker-text: a non-empty worker id without NUL (Postgres `text` cannot hold NUL).
pub fn worker_id(worker: &str) -> Result<&str, Fault> {
    if worker.is_empty() {
        return Err(Fault::invalid_name("worker_id='': a worker id must be a non-empty str"));
    }
    if worker.contains('\0') {
        return Err(Fault::invalid_name(format!(
            "worker_id={}: a worker id must not contain NUL characters ('\\x00')",
            show_text(worker)
        )));
    }
    Ok(worker)
}

/// D1, DEC-worker-text: the `error` of retry/fail is `None` or text without NUL; `""` is an error given.
/// K4: a unique key is 1 to 200 characters (code points, as Python counts them), without NUL.
pub fn unique_key(key: &str) -> Result<&str, Fault> {
    let length = key.chars().count();
    if length == 0 {
        return Err(Fault::invalid_argument(
            "unique_key='': a unique key must be a non-empty str",
        ));
    }
    if length > 200 {
        return Err(Fault::invalid_argument(format!(
            "unique_key={}: a unique key is at most 200 characters (this one has {length})",
            show_text(key)
        )));
    }
    if key.contains('\0') {
        return Err(Fault::invalid_argument(format!(
            "unique_key={}: a unique key must not contain NUL characters ('\\x00')",
            show_text(key)
        )));
    }
    Ok(key)
}

pub fn error_text(error: Option<&str>) -> Result<Option<&str>, Fault> {
    match error {
        Some(text) if text.contains('\0') => Err(Fault::invalid_argument(format!(
            "error={}: must not contain NUL characters ('\\x00')",
            show_text(text)
        ))),
        other => Ok(other),
    }
}

/// DEC-bounds, E9: a duration in seconds, finite, 0 … 100 years; with `positive` (a lease) at least 1 µs.
///
/// The checks run in the order of the Python engines' `duration_seconds`, so a value breaking two rules
/// gets the same message from every engine.
pub fn duration(arg: &str, value: &Value, positive: bool) -> Result<f64, Fault> {
    let refuse = |rule: &str| Err(Fault::invalid_argument(format!("{arg}={}: {rule}", show_value(value))));
    let number = match value {
        Value::Number(number) => number,
        _ => return refuse("a duration must be int or float seconds, or a timedelta"),
    };
    let text = number.to_string();
    let seconds = text.parse::<f64>().unwrap_or(f64::NAN);
    let too_long = format!("a duration must be at most {MAX_DURATION_S:.0} s (100 years)");
    if !seconds.is_finite() {
        // An integer beyond a double's range (10**400): judged as the integer it is, not as infinity.
        return match (is_integer_text(&text), text.starts_with('-')) {
            (true, true) => refuse("a duration must not be negative"),
            (true, false) => refuse(&too_long),
            _ => refuse("a duration must be finite"),
        };
    }
    if positive && seconds < MIN_POSITIVE_DURATION_S {
        return refuse(&format!(
            "must be greater than 0 seconds, and at least 1 microsecond ({MIN_POSITIVE_DURATION_S:e} s), \
             so the lease it sets does not end at once"
        ));
    }
    if seconds < 0.0 {
        return refuse("a duration must not be negative");
    }
    if seconds > MAX_DURATION_S {
        return refuse(&too_long);
    }
    Ok(seconds)
}

/// `null`, or a duration as `duration` checks it.
pub fn optional_duration(arg: &str, value: &Value, positive: bool) -> Result<Option<f64>, Fault> {
    match value {
        Value::Null => Ok(None),
        other => duration(arg, other, positive).map(Some),
    }
}

/// DEC-bounds: `max_attempts` is an int in 1 … 2³¹−1.
pub fn max_attempts(arg: &str, value: &Value) -> Result<i64, Fault> {
    let refuse = |rule: String| Err(Fault::invalid_argument(format!("{arg}={}: {rule}", show_value(value))));
    let text = match integer_text(value) {
        Some(text) => text,
        None => return refuse("must be an int".into()),
    };
    match text.parse::<i64>() {
        Ok(n) if (MAX_ATTEMPTS_MIN..=MAX_ATTEMPTS_MAX).contains(&n) => Ok(n),
        _ => refuse(format!("must be between {MAX_ATTEMPTS_MIN} and {MAX_ATTEMPTS_MAX}")),
    }
}

/// E7, DEC-bounds: a priority (a decimal string on the wire) fits a signed 64-bit integer.
pub fn priority(text: &str) -> Result<i64, Fault> {
    let refuse = |rule: String| {
        Err(Fault::invalid_argument(format!(
            "priority={}: {rule}",
            show_number(text)
        )))
    };
    if !is_integer_text(text) {
        return refuse("must be an int".into());
    }
    text.parse::<i64>()
        .or_else(|_| refuse(format!("must be between {} and {}", i64::MIN, i64::MAX)))
}

/// C5: the `n` of claim_batch, clamped to what a 64-bit `LIMIT` takes; `n <= 0` claims nothing.
pub fn batch_size(value: &Value) -> Result<i64, Fault> {
    let text = integer_text(value)
        .ok_or_else(|| Fault::invalid_argument(format!("n={}: the batch size must be an int", show_value(value))))?;
    Ok(text
        .parse::<i64>()
        .unwrap_or(if text.starts_with('-') { 0 } else { i64::MAX }))
}

/// A job id as the suite sends it back: the engine's ids are 64-bit integers, so any other id is not found
/// (DEC-id-kind) and reads as `None`.
pub fn job_id(value: &Value) -> Result<Option<i64>, Fault> {
    match value {
        Value::Number(n) => Ok(n.to_string().parse::<i64>().ok()),
        Value::String(_) => Ok(None),
        other => Err(Fault::invalid_argument(format!(
            "job_id={}: a job id is an int or a str, as enqueue returned it",
            show_value(other)
        ))),
    }
}

/// The instants Python's `datetime` holds, years 1 to 9999 UTC, in microseconds since the epoch.
const INSTANT_MIN_US: i64 = -62_135_596_800_000_000;
const INSTANT_MAX_US: i64 = 253_402_300_799_999_999;

/// An instant (`run_at`) as the suite encodes it: microseconds since the epoch, as a decimal string, within
/// years 1 to 9999 UTC (E9, DEC-huge-values: the suite sends one past either end for the engine to refuse).
pub fn instant(arg: &str, text: &str) -> Result<i64, Fault> {
    let us = text.parse::<i64>().map_err(|_| {
        Fault::invalid_argument(format!(
            "{arg}={}: an instant is a decimal string of microseconds since 1970-01-01T00:00:00Z",
            show_text(text)
        ))
    })?;
    if !(INSTANT_MIN_US..=INSTANT_MAX_US).contains(&us) {
        return Err(Fault::invalid_argument(format!(
            "{arg}={} µs since the epoch: an instant must lie within years 1 to 9999 UTC",
            show_text(text)
        )));
    }
    Ok(us)
}
