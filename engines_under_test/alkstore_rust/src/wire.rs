//! The protocol's side of every op: a request's fields, the replies, and the error classes.
//!
//! A request is one JSON object; its fields are read here with the encodings of docs/wire-protocol.md
//! ("Encodings"). A field that is missing or of the wrong JSON type is the suite's mistake, not the
//! caller's bad input, so it is an `EngineError` naming the field; the contract's own checks of a
//! value (its range, its rules) are in `rules`.

use serde_json::{json, Map, Value};

/// The protocol version this engine speaks (the handshake chooses it from the suite's offer).
pub const PROTOCOL_VERSION: u64 = 1;

/// The error classes of docs/wire-protocol.md ("Errors"); the suite raises the contract's class of that name.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Class {
    InvalidName,
    InvalidArgument,
    PayloadError,
    StoreClosed,
    HandleSpent,
    StoreUnavailable,
    EngineError,
}

impl Class {
    pub fn name(self) -> &'static str {
        match self {
            Class::InvalidName => "InvalidName",
            Class::InvalidArgument => "InvalidArgument",
            Class::PayloadError => "PayloadError",
            Class::StoreClosed => "StoreClosed",
            Class::HandleSpent => "HandleSpent",
            Class::StoreUnavailable => "StoreUnavailable",
            Class::EngineError => "EngineError",
        }
    }
}

/// Why an op did not return a result: the class the caller sees and a message naming what was wrong.
#[derive(Debug, PartialEq, Eq)]
pub struct Fault {
    pub class: Class,
    pub message: String,
}

impl Fault {
    pub fn new(class: Class, message: impl Into<String>) -> Fault {
        Fault {
            class,
            message: message.into(),
        }
    }

    pub fn invalid_name(message: impl Into<String>) -> Fault {
        Fault::new(Class::InvalidName, message)
    }

    pub fn invalid_argument(message: impl Into<String>) -> Fault {
        Fault::new(Class::InvalidArgument, message)
    }

    pub fn engine(message: impl Into<String>) -> Fault {
        Fault::new(Class::EngineError, message)
    }
}

/// A request: its id, its type and its fields.
pub struct Request<'a> {
    pub op: &'a str,
    fields: &'a Map<String, Value>,
}

impl<'a> Request<'a> {
    pub fn new(op: &'a str, fields: &'a Map<String, Value>) -> Request<'a> {
        Request { op, fields }
    }

    /// The field `name`, or an `EngineError` saying the request lacks it.
    pub fn value(&self, name: &str) -> Result<&'a Value, Fault> {
        self.fields
            .get(name)
            .ok_or_else(|| Fault::engine(format!("request {:?} has no field {name:?}", self.op)))
    }

    /// The field `name`, `None` when it is absent.
    pub fn optional(&self, name: &str) -> Option<&'a Value> {
        self.fields.get(name)
    }

    /// The string field `name`.
    pub fn text(&self, name: &str) -> Result<&'a str, Fault> {
        self.value(name)?
            .as_str()
            .ok_or_else(|| self.mistyped(name, "a string"))
    }

    /// The field `name`, a string or `null`.
    pub fn optional_text(&self, name: &str) -> Result<Option<&'a str>, Fault> {
        match self.value(name)? {
            Value::Null => Ok(None),
            Value::String(text) => Ok(Some(text)),
            _ => Err(self.mistyped(name, "a string or null")),
        }
    }

    /// The array field `name`.
    pub fn array(&self, name: &str) -> Result<&'a Vec<Value>, Fault> {
        self.value(name)?
            .as_array()
            .ok_or_else(|| self.mistyped(name, "an array"))
    }

    /// The object field `name`, as a request of its own (queue opts, enqueue options).
    pub fn object(&self, name: &str) -> Result<Request<'a>, Fault> {
        let fields = self
            .value(name)?
            .as_object()
            .ok_or_else(|| self.mistyped(name, "an object"))?;
        Ok(Request { op: self.op, fields })
    }

    pub fn mistyped(&self, name: &str, kind: &str) -> Fault {
        Fault::engine(format!("request {:?}: field {name:?} must be {kind}", self.op))
    }
}

/// The reply of a request that succeeded.
pub fn ok_reply(id: u64, result: Value) -> Value {
    json!({"in_reply_to": id, "type": "ok", "result": result})
}

/// The reply of a request that failed. It carries no `stack`: a panic's place and stack go to stderr
/// (the default panic hook; the manifest sets `RUST_BACKTRACE=1`), whose tail the suite shows.
pub fn error_reply(id: u64, fault: &Fault) -> Value {
    json!({"in_reply_to": id, "type": "error", "error": {"class": fault.class.name(), "message": fault.message}})
}

/// A JSON number of seconds, the shortest text that reads back as the same double (the protocol's durations).
pub fn seconds(value: f64) -> Value {
    serde_json::Number::from_f64(value).map_or(Value::Null, Value::Number)
}

/// An instant (µs since the epoch) as the protocol writes it: a decimal string, exact over `datetime`'s range.
pub fn instant(us: i64) -> Value {
    Value::String(us.to_string())
}

/// An optional instant: `null` or a decimal string.
pub fn optional_instant(us: Option<i64>) -> Value {
    us.map_or(Value::Null, instant)
}
