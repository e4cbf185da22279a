//! E8, DEC-payload-json: a payload is JSON text that every engine stores and reads back equal.
//!
//! The engine stores the text it was sent, never a parsed value (an int of 4,300 digits, `-0.0` and
//! `5e-324` read back equal only as text), so the check reads the text without building a value:
//! one JSON value, nesting at most 500 levels, integers of at most 4,300 digits, no number that
//! overflows a double. Escapes are kept as they are, lone surrogates included (the suite writes
//! payloads ASCII-escaped, so a string holding NUL or a lone surrogate survives every engine).

pub const MAX_PAYLOAD_DEPTH: usize = 500;
pub const MAX_PAYLOAD_INT_DIGITS: usize = 4300;

/// `Ok` when `text` is a payload every engine can store, else why not (the message's rule).
pub fn check(text: &str) -> Result<(), String> {
    let mut reader = Reader {
        bytes: text.as_bytes(),
        at: 0,
    };
    reader.value(0)?;
    reader.space();
    if reader.at != reader.bytes.len() {
        return Err(reader.unexpected());
    }
    Ok(())
}

struct Reader<'a> {
    bytes: &'a [u8],
    at: usize,
}

impl Reader<'_> {
    fn peek(&self) -> Option<u8> {
        self.bytes.get(self.at).copied()
    }

    fn space(&mut self) {
        while matches!(self.peek(), Some(b' ' | b'\t' | b'\n' | b'\r')) {
            self.at += 1;
        }
    }

    fn unexpected(&self) -> String {
        match self.peek() {
            Some(byte) => format!("is not JSON text (unexpected {:?} at offset {})", byte as char, self.at),
            None => "is not JSON text (it ends early)".into(),
        }
    }

    fn eat(&mut self, byte: u8) -> Result<(), String> {
        if self.peek() != Some(byte) {
            return Err(self.unexpected());
        }
        self.at += 1;
        Ok(())
    }

    /// One value at nesting `depth` (the top level is 0): a value deeper than 500 is refused.
    fn value(&mut self, depth: usize) -> Result<(), String> {
        if depth > MAX_PAYLOAD_DEPTH {
            return Err(format!("is nested deeper than {MAX_PAYLOAD_DEPTH} levels"));
        }
        self.space();
        match self.peek() {
            Some(b'{') => self.items(b'}', depth, true),
            Some(b'[') => self.items(b']', depth, false),
            Some(b'"') => self.string(),
            Some(b't') => self.word("true"),
            Some(b'f') => self.word("false"),
            Some(b'n') => self.word("null"),
            Some(b'-' | b'0'..=b'9') => self.number(),
            _ => Err(self.unexpected()),
        }
    }

    /// The items of an array, or the `"key": value` members of an object, up to `close`.
    fn items(&mut self, close: u8, depth: usize, keyed: bool) -> Result<(), String> {
        self.at += 1;
        self.space();
        if self.peek() == Some(close) {
            self.at += 1;
            return Ok(());
        }
        loop {
            if keyed {
                self.space();
                self.string()?;
                self.space();
                self.eat(b':')?;
            }
            self.value(depth + 1)?;
            self.space();
            match self.peek() {
                Some(b',') => self.at += 1,
                Some(byte) if byte == close => {
                    self.at += 1;
                    return Ok(());
                }
                _ => return Err(self.unexpected()),
            }
        }
    }

    fn word(&mut self, word: &str) -> Result<(), String> {
        if !self.bytes[self.at..].starts_with(word.as_bytes()) {
            return Err(self.unexpected());
        }
        self.at += word.len();
        Ok(())
    }

    fn string(&mut self) -> Result<(), String> {
        self.eat(b'"')?;
        loop {
            match self.peek() {
                Some(b'"') => {
                    self.at += 1;
                    return Ok(());
                }
                Some(b'\\') => {
                    self.at += 1;
                    match self.peek() {
                        Some(b'"' | b'\\' | b'/' | b'b' | b'f' | b'n' | b'r' | b't') => self.at += 1,
                        Some(b'u') => {
                            let hex = self.bytes.get(self.at + 1..self.at + 5).unwrap_or_default();
                            if hex.len() != 4 || !hex.iter().all(u8::is_ascii_hexdigit) {
                                return Err(self.unexpected());
                            }
                            self.at += 5;
                        }
                        _ => return Err(self.unexpected()),
                    }
                }
                Some(0x00..=0x1f) | None => return Err(self.unexpected()),
                Some(_) => self.at += 1,
            }
        }
    }

    fn number(&mut self) -> Result<(), String> {
        let start = self.at;
        if self.peek() == Some(b'-') {
            self.at += 1;
        }
        let digits = self.digits()?;
        if digits > 1 && self.bytes[self.at - digits] == b'0' {
            return Err("is not JSON text (a number has a leading zero)".into());
        }
        let mut integer = true;
        if self.peek() == Some(b'.') {
            self.at += 1;
            self.digits()?;
            integer = false;
        }
        if matches!(self.peek(), Some(b'e' | b'E')) {
            self.at += 1;
            if matches!(self.peek(), Some(b'+' | b'-')) {
                self.at += 1;
            }
            self.digits()?;
            integer = false;
        }
        if integer && digits > MAX_PAYLOAD_INT_DIGITS {
            return Err(format!(
                "holds an int of {digits} digits; an int has at most {MAX_PAYLOAD_INT_DIGITS} digits, Python's \
                 int/str conversion limit"
            ));
        }
        let text = std::str::from_utf8(&self.bytes[start..self.at]).unwrap_or_default();
        if !integer && !text.parse::<f64>().map_or(false, f64::is_finite) {
            return Err(format!(
                "holds {text}, beyond a double's range (NaN and infinity are not JSON values)"
            ));
        }
        Ok(())
    }

    /// One or more digits; how many.
    fn digits(&mut self) -> Result<usize, String> {
        let start = self.at;
        while matches!(self.peek(), Some(b'0'..=b'9')) {
            self.at += 1;
        }
        if self.at == start {
            return Err(self.unexpected());
        }
        Ok(self.at - start)
    }
}
