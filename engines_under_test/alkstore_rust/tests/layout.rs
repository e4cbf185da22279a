//! The file this engine writes is laid out as reference_engine/alkstore_sqlite/layout.sql says: the
//! project's one description of an alkstore SQLite file, which the Python reference engine reaches by
//! its migrations and the Node engine runs as it is. Read from the file at test time (not the copy the
//! engine compiled in), a file the engine created is compared with one the layout wrote: each table and
//! index as SQLite keeps it (its CREATE text, spaces collapsed) and `user_version`.

use std::path::PathBuf;

use alkstore_rust::engine::Engine;
use alkstore_rust::storage::TestFault;
use alkstore_rust::wire::Request;
use rusqlite::Connection;
use serde_json::{json, Value};

fn call(engine: &mut Engine, op: &str, fields: Value) -> Value {
    engine
        .handle(&Request::new(op, fields.as_object().expect("an object")))
        .unwrap_or_else(|f| panic!("{op}: {f:?}"))
}

/// `user_version` and every (type, name, CREATE text) of the schema, in name order.
fn layout_of(conn: &Connection) -> (i64, Vec<(String, String, String)>) {
    let version = conn
        .query_row("PRAGMA user_version", [], |row| row.get(0))
        .expect("user_version");
    let mut statement = conn
        .prepare("SELECT type, name, sql FROM sqlite_master WHERE sql IS NOT NULL ORDER BY type, name")
        .expect("sqlite_master");
    let objects = statement
        .query_map([], |row| {
            let sql: String = row.get(2)?;
            Ok((
                row.get(0)?,
                row.get(1)?,
                sql.split_whitespace().collect::<Vec<_>>().join(" "),
            ))
        })
        .expect("rows")
        .collect::<rusqlite::Result<Vec<_>>>()
        .expect("objects");
    (version, objects)
}

#[test]
fn a_new_file_is_laid_out_as_layout_sql_says() {
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../reference_engine/alkstore_sqlite/layout.sql");
    let text = std::fs::read_to_string(&path).expect("layout.sql is readable");
    let described = Connection::open_in_memory().expect("a memory database");
    described.execute_batch(&text).expect("layout.sql runs");

    let mut engine = Engine::new(TestFault::None);
    let location = call(&mut engine, "create_location", json!({}));
    let store = call(
        &mut engine,
        "open_store",
        json!({"location": location, "clock": "injected", "seed": 1}),
    );
    call(&mut engine, "close_store", json!({ "store": store }));
    let written = Connection::open(location.as_str().expect("a path")).expect("the engine's file opens");
    let found = layout_of(&written);
    drop(written);
    call(&mut engine, "drop_location", json!({ "location": location }));

    let expected = layout_of(&described);
    assert!(expected.1.iter().any(|(_, name, _)| name == "jobs_dead_purge"));
    assert_eq!(found, expected);
}
