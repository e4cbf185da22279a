//! The contract's literal values, read from alkstore_contract/wire/literals.json: the file the suite
//! and every engine's unit tests read, so this engine's constants are held to the contract's text,
//! never to another engine's code. If one of these fails, check the constant it names against
//! docs/contract.md (R2, R4, D1, X2, DEC-bounds, DEC-payload-json) before touching the JSON file.

use std::path::PathBuf;

use alkstore_rust::backoff::{backoff_delay_s, backoff_range_s, Rng, BACKOFF_CAP_S};
use alkstore_rust::engine::{LAST_ERROR_EXPIRED, LAST_ERROR_FAILED, LAST_ERROR_MAX_ATTEMPTS};
use alkstore_rust::payload::{self, MAX_PAYLOAD_DEPTH, MAX_PAYLOAD_INT_DIGITS};
use alkstore_rust::rules;
use alkstore_rust::wire::Class;
use serde_json::{json, Value};

fn literals() -> Value {
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../alkstore_contract/wire/literals.json");
    let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("cannot read {}: {e}", path.display()));
    serde_json::from_str(&text).expect("literals.json is JSON")
}

fn number(value: &Value) -> f64 {
    value.as_f64().unwrap_or_else(|| panic!("{value} is not a number"))
}

fn bound(name: &str) -> Value {
    literals()["bounds"][name].clone()
}

/// R2: every row of the contract's table, `[base, attempts, low, high]`, is this engine's range exactly,
/// and draws land inside it. If this fails, check `backoff_range_s` (the exponent, the 3600 s cap).
#[test]
fn r2_backoff_rows() {
    let literals = literals();
    assert_eq!(
        literals["r2_range_columns"],
        json!(["backoff_base_s", "attempts", "low_s", "high_s"])
    );
    assert_eq!(number(&literals["backoff_cap_s"]), BACKOFF_CAP_S, "R2: the cap");
    let rows = literals["r2_range_s"].as_array().expect("r2_range_s is a list");
    assert!(rows.len() > 50, "R2: the table has its rows");
    let mut rng = Rng::new(Some("7"));
    for row in rows {
        let (base, attempts) = (number(&row[0]), row[1].as_i64().expect("attempts is an int"));
        let expected = (number(&row[2]), number(&row[3]));
        assert_eq!(
            backoff_range_s(attempts, base),
            expected,
            "R2: base {base}, {attempts} attempts"
        );
        for _ in 0..50 {
            let delay = backoff_delay_s(attempts, base, &mut rng);
            assert!(
                expected.0 <= delay && delay <= expected.1,
                "R2: a draw {delay} outside {expected:?}"
            );
        }
    }
}

/// R4, D1, X2: the three `last_error` strings. If this fails, check the constants in engine.rs.
#[test]
fn last_error_strings() {
    let last_error = &literals()["last_error"];
    assert_eq!(last_error["max_attempts_exceeded"], LAST_ERROR_MAX_ATTEMPTS, "R4, X2");
    assert_eq!(last_error["failed"], LAST_ERROR_FAILED, "D1");
    assert_eq!(last_error["expired"], LAST_ERROR_EXPIRED, "X2");
}

/// S1: a name of the longest length is a name; one more character, or the reserved prefix, is not.
#[test]
fn queue_name_bounds() {
    let longest = usize::try_from(bound("max_queue_name_length").as_u64().expect("an int")).expect("fits");
    let prefix = bound("reserved_prefix");
    let prefix = prefix.as_str().expect("a string");
    assert_eq!(
        (longest, prefix),
        (rules::MAX_QUEUE_NAME_LENGTH, rules::RESERVED_PREFIX),
        "S1"
    );
    let name = "📬".repeat(longest);
    assert_eq!(
        rules::queue_name(&name),
        Ok(name.as_str()),
        "S1: {longest} characters (not bytes)"
    );
    let refused = rules::queue_name(&"q".repeat(longest + 1)).expect_err("S1: one too long");
    assert_eq!(refused.class, Class::InvalidName);
    assert!(
        refused.message.starts_with("name="),
        "S1: the message names the argument: {}",
        refused.message
    );
    assert!(
        rules::queue_name(&format!("{prefix}x")).is_err(),
        "S1: the reserved prefix"
    );
    assert!(rules::queue_name("a\u{7f}b").is_err(), "S1: a control character");
}

/// DEC-bounds: durations up to 100 years, leases at least 1 µs, each refusal naming argument and value.
#[test]
fn duration_bounds() {
    let longest = number(&bound("max_duration_s"));
    let shortest_lease = number(&bound("min_positive_duration_s"));
    assert_eq!(
        (longest, shortest_lease),
        (rules::MAX_DURATION_S, rules::MIN_POSITIVE_DURATION_S),
        "DEC-bounds"
    );
    assert_eq!(rules::duration("delay", &json!(longest), false), Ok(longest));
    assert!(
        rules::duration("delay", &json!(f64::from_bits(longest.to_bits() + 1)), false).is_err(),
        "DEC-bounds: past 100 years"
    );
    assert_eq!(
        rules::duration("extend", &json!(shortest_lease), true),
        Ok(shortest_lease)
    );
    assert!(
        rules::duration("extend", &json!(f64::from_bits(shortest_lease.to_bits() - 1)), true).is_err(),
        "DEC-lease-minimum"
    );
    assert_eq!(
        rules::duration("delay", &json!(0), false),
        Ok(0.0),
        "E2: a delay of 0 is ready now"
    );
    let huge: Value = serde_json::from_str(&format!("1{}", "0".repeat(400))).expect("a JSON integer");
    let refused = rules::duration("delay", &huge, false).expect_err("DEC-huge-values");
    assert_eq!(
        refused.message,
        "delay=<int of 401 digits>: a duration must be at most 3155760000 s (100 years)"
    );
    let negative = rules::duration("delay", &json!(-1), false).expect_err("E9");
    assert_eq!(negative.message, "delay=-1: a duration must not be negative");
}

/// DEC-bounds, E7, E6: priority is a signed 64-bit int, max_attempts 1 … 2³¹−1.
#[test]
fn integer_bounds() {
    let (low, high) = (bound("priority_min"), bound("priority_max"));
    let (low, high) = (low.as_str().expect("a string"), high.as_str().expect("a string"));
    assert_eq!(rules::priority(low), Ok(i64::MIN));
    assert_eq!(rules::priority(high), Ok(i64::MAX));
    let beyond = rules::priority("9223372036854775808").expect_err("DEC-bounds: 2**63");
    assert!(
        beyond.message.contains("priority=9223372036854775808"),
        "E9: {}",
        beyond.message
    );
    let (fewest, most) = (bound("max_attempts_min"), bound("max_attempts_max"));
    assert_eq!(
        rules::max_attempts("max_attempts", &fewest),
        Ok(rules::MAX_ATTEMPTS_MIN)
    );
    assert_eq!(rules::max_attempts("max_attempts", &most), Ok(rules::MAX_ATTEMPTS_MAX));
    let above = most.as_i64().expect("an int") + 1;
    assert!(
        rules::max_attempts("max_attempts", &json!(above)).is_err(),
        "DEC-bounds: 2**31"
    );
    assert!(
        rules::max_attempts("max_attempts", &json!(0)).is_err(),
        "E9: max_attempts=0"
    );
}

/// DEC-payload-json: nesting up to 500 levels and ints up to 4300 digits are payloads; one more is not.
#[test]
fn payload_bounds() {
    let depth = usize::try_from(bound("max_payload_depth").as_u64().expect("an int")).expect("fits");
    let digits = usize::try_from(bound("max_payload_int_digits").as_u64().expect("an int")).expect("fits");
    assert_eq!(
        (depth, digits),
        (MAX_PAYLOAD_DEPTH, MAX_PAYLOAD_INT_DIGITS),
        "DEC-payload-json"
    );
    let nested = |levels: usize| format!("{}\"deep\"{}", "[".repeat(levels), "]".repeat(levels));
    assert_eq!(payload::check(&nested(depth)), Ok(()));
    assert!(
        payload::check(&nested(depth + 1)).is_err(),
        "DEC-payload-json: {} levels",
        depth + 1
    );
    assert_eq!(payload::check(&format!("[-{}]", "9".repeat(digits))), Ok(()));
    assert!(payload::check(&format!("{{\"n\":{}}}", "9".repeat(digits + 1))).is_err());
}
