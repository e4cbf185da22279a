//! The engine serves the protocol's ops as their one table says: the requests of
//! alkstore_contract/wire/protocol.schema.json, read at test time. Every op there that is not marked
//! `x-only-with` is one this engine answers (sent without its fields, it says what is missing, never
//! that it does not serve the op), and so is one marked with a capability it declares (`release`); one
//! marked with what it does not declare (networked) it refuses. So an op added to the schema fails this
//! test until the engine serves it.

use std::path::PathBuf;

use alkstore_rust::engine::{Engine, CAPABILITIES};
use alkstore_rust::storage::TestFault;
use alkstore_rust::wire::Request;
use serde_json::{Map, Value};

#[test]
fn every_op_of_the_table_is_served_unless_it_needs_what_the_engine_does_not_declare() {
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../alkstore_contract/wire/protocol.schema.json");
    let text = std::fs::read_to_string(&path).expect("protocol.schema.json is readable");
    let schema: Value = serde_json::from_str(&text).expect("protocol.schema.json is JSON");
    let requests = schema["$defs"]["requests"].as_object().expect("the table of requests");
    assert!(requests.contains_key("enqueue") && requests.contains_key("server_address"));

    let mut engine = Engine::new(TestFault::None);
    let no_fields = Map::new();
    for (op, rule) in requests {
        let answer = engine.handle(&Request::new(op, &no_fields));
        if op == "create_location" {
            let location = answer.as_ref().expect("a location").clone();
            let fields = [("location".to_owned(), location)].into_iter().collect();
            engine.handle(&Request::new("drop_location", &fields)).expect("dropped");
            continue;
        }
        let refused = matches!(&answer, Err(fault) if fault.message.contains("does not serve"));
        let needs = rule.get("x-only-with").and_then(Value::as_str);
        let undeclared = matches!(needs, Some(needs) if !CAPABILITIES.contains(&needs));
        assert_eq!(refused, undeclared, "{op}: {answer:?}");
    }
}
