//! Parsers for the two known-answer formats of `testdata/kat/` (described in
//! `testdata/kat/README.md`):
//!
//! * **`kat-v1`** (`ciphers/`): a `# kat-v1` line, `# key: value` header lines, then records of
//!   `NAME = value` lines separated by blank lines. Byte strings are hex, a few fields are
//!   decimal numbers or text (`ID`, `RESULT`).
//! * **`genkat`** (`aead/`, the CAESAR format): records of `Count`, `Key`, `Nonce` (or `IV`),
//!   `PT`, `AD`, `CT` lines separated by blank lines; `CT` is ciphertext ‖ tag.
//!
//! The parsers are strict: a line without `=`, bad or odd-length hex, a duplicated or unknown
//! field, a missing `genkat` field, a record count that disagrees with the header, or a file
//! without records is a [`ParseError`] naming the line. Nothing is skipped silently.

use std::fmt;

/// A parse failure, with the 1-based line it was found on (0: the file as a whole).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ParseError {
    /// 1-based line number; 0 when the error concerns the whole file.
    pub line: usize,
    /// What is wrong.
    pub msg: String,
}

impl ParseError {
    fn new(line: usize, msg: impl Into<String>) -> ParseError {
        ParseError {
            line,
            msg: msg.into(),
        }
    }
}

impl fmt::Display for ParseError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.line == 0 {
            f.write_str(&self.msg)
        } else {
            write!(f, "line {}: {}", self.line, self.msg)
        }
    }
}

impl std::error::Error for ParseError {}

/// A parsed known-answer file.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum KatFile {
    /// A `kat-v1` file (`testdata/kat/ciphers/`).
    KatV1(KatV1File),
    /// A CAESAR `genkat` file (`testdata/kat/aead/`).
    Genkat(Vec<GenkatRecord>),
}

/// Parses a known-answer file, recognising the format from its first line (`# kat-v1`, or a
/// `genkat` field such as `Count = 1`, possibly after `#` comment lines).
pub fn parse(text: &str) -> Result<KatFile, ParseError> {
    let first = text.lines().enumerate().find(|(_, l)| !l.trim().is_empty());
    match first {
        None => Err(ParseError::new(0, "empty file: no records")),
        Some((_, l)) if l.trim_end() == "# kat-v1" => parse_kat_v1(text).map(KatFile::KatV1),
        // A genkat file may open with `#` comment lines (the McOE-G and COBRA-R files say
        // where they come from): genkat when the first other line is a `Count` field.
        Some((_, l))
            if l.starts_with('#')
                && text
                    .lines()
                    .map(str::trim)
                    .find(|l| !l.is_empty() && !l.starts_with('#'))
                    .is_some_and(|l| l.starts_with("Count")) =>
        {
            parse_genkat(text).map(KatFile::Genkat)
        }
        Some((_, l)) if l.starts_with('#') => Err(ParseError::new(
            0,
            format!(
                "unknown format: the first line is {:?}, expected \"# kat-v1\"",
                l.trim_end()
            ),
        )),
        Some(_) => parse_genkat(text).map(KatFile::Genkat),
    }
}

// ---------------------------------------------------------------------------------------------
// kat-v1

/// A field value of a `kat-v1` record.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Value {
    /// A byte string (hex in the file; `COUNT`/`FRESH` are 4 bytes, most significant first).
    Bytes(Vec<u8>),
    /// A decimal number (`LENGTH`, `ITERATIONS`, `KEYLEN`, `TAGLEN`, `TAGBITS`, `BEARER`,
    /// `DIRECTION`).
    Number(u64),
    /// Free text (`ID`, and `RESULT` after validation).
    Text(String),
}

/// What a `kat-v1` record's `RESULT` field says (Wycheproof convention).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Expectation {
    /// `valid` (also the default without a `RESULT` field): every operation must succeed and
    /// give the listed values.
    Valid,
    /// `invalid`: the record must be rejected.
    Invalid,
    /// `acceptable`: an implementation may accept (with the listed values) or reject it.
    Acceptable,
}

/// A parsed `kat-v1` file: header entries and records, in file order.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct KatV1File {
    /// `# key: value` header lines (continuation lines appended to the previous value).
    pub header: Vec<(String, String)>,
    /// The records (at least one).
    pub records: Vec<KatV1Record>,
}

impl KatV1File {
    /// The value of header entry `key`, if present.
    pub fn header(&self, key: &str) -> Option<&str> {
        self.header
            .iter()
            .find(|(k, _)| k == key)
            .map(|(_, v)| v.as_str())
    }
}

/// One `kat-v1` record: its fields in file order (names are unique within a record).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct KatV1Record {
    /// 1-based line of the record's first field.
    pub line: usize,
    /// `(NAME, value)` pairs in file order.
    pub fields: Vec<(String, Value)>,
}

impl KatV1Record {
    /// The value of field `name`.
    pub fn get(&self, name: &str) -> Option<&Value> {
        self.fields.iter().find(|(n, _)| n == name).map(|(_, v)| v)
    }

    /// The bytes of field `name`, if present and a byte string.
    pub fn bytes(&self, name: &str) -> Option<&[u8]> {
        match self.get(name) {
            Some(Value::Bytes(b)) => Some(b),
            _ => None,
        }
    }

    /// The text of field `name`, if present and text.
    pub fn text(&self, name: &str) -> Option<&str> {
        match self.get(name) {
            Some(Value::Text(t)) => Some(t),
            _ => None,
        }
    }

    /// The field names, in file order.
    pub fn names(&self) -> impl Iterator<Item = &str> {
        self.fields.iter().map(|(n, _)| n.as_str())
    }

    /// What the record's `RESULT` says; [`Expectation::Valid`] without one.
    pub fn expectation(&self) -> Expectation {
        match self.text("RESULT") {
            Some("invalid") => Expectation::Invalid,
            Some("acceptable") => Expectation::Acceptable,
            _ => Expectation::Valid,
        }
    }

    /// A short name for messages: the `ID` if the record has one, else its line.
    pub fn label(&self) -> String {
        match self.text("ID") {
            Some(id) => format!("{id:?} (line {})", self.line),
            None => format!("record at line {}", self.line),
        }
    }
}

/// How a `kat-v1` field's value is written.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Kind {
    Hex,
    /// Hex of exactly this many bytes.
    HexFixed(usize),
    Decimal,
    Text,
    Result,
}

/// The fields `testdata/kat/README.md` defines, and how each is written.
fn kat_v1_kind(name: &str) -> Option<Kind> {
    Some(match name {
        "ID" => Kind::Text,
        "RESULT" => Kind::Result,
        "LENGTH" | "ITERATIONS" | "KEYLEN" | "TAGLEN" | "TAGBITS" | "BEARER" | "DIRECTION" => {
            Kind::Decimal
        }
        "COUNT" | "FRESH" => Kind::HexFixed(4),
        "KEY" | "PT" | "CT" | "CT_X100" | "CT_X1000" | "IV" | "CTR" | "NONCE" | "AAD" | "TAG"
        | "MSG" | "MAC" | "OUTPUT" => Kind::Hex,
        _ => return None,
    })
}

/// Parses a `kat-v1` file.
pub fn parse_kat_v1(text: &str) -> Result<KatV1File, ParseError> {
    let mut lines = text.lines().enumerate().map(|(i, l)| (i + 1, l));
    // The magic line (after any leading blank lines).
    loop {
        match lines.next() {
            None => return Err(ParseError::new(0, "empty file: no records")),
            Some((_, l)) if l.trim().is_empty() => continue,
            Some((_, l)) if l.trim_end() == "# kat-v1" => break,
            Some((n, l)) => {
                return Err(ParseError::new(
                    n,
                    format!("expected \"# kat-v1\", found {:?}", l.trim_end()),
                ))
            }
        }
    }

    let mut header: Vec<(String, String)> = Vec::new();
    let mut records: Vec<KatV1Record> = Vec::new();
    let mut current: Option<KatV1Record> = None;
    let mut in_header = true;
    for (n, raw) in lines {
        let line = raw.trim_end();
        if let Some(comment) = line.strip_prefix('#') {
            if in_header {
                add_header_line(&mut header, comment);
            }
            // Comments after the header are ignored (they carry no data).
            continue;
        }
        if line.trim().is_empty() {
            if let Some(r) = current.take() {
                records.push(r);
            }
            continue;
        }
        in_header = false;
        let (name, value) = split_field(n, line)?;
        let kind = kat_v1_kind(name)
            .ok_or_else(|| ParseError::new(n, format!("unknown field {name:?}")))?;
        let value = parse_kat_v1_value(n, name, kind, value)?;
        let rec = current.get_or_insert_with(|| KatV1Record {
            line: n,
            fields: Vec::new(),
        });
        if rec.get(name).is_some() {
            return Err(ParseError::new(
                n,
                format!(
                    "duplicate field {name} in the record starting at line {}",
                    rec.line
                ),
            ));
        }
        rec.fields.push((name.to_string(), value));
    }
    if let Some(r) = current.take() {
        records.push(r);
    }

    let file = KatV1File { header, records };
    check_kat_v1_header(&file)?;
    Ok(file)
}

/// Adds one header line (without its `#`) to `header`: `key: value`, or a continuation of the
/// previous value.
fn add_header_line(header: &mut Vec<(String, String)>, comment: &str) {
    let body = comment.strip_prefix(' ').unwrap_or(comment);
    let entry = body.split_once(':').filter(|(k, _)| {
        k.starts_with(|c: char| c.is_ascii_lowercase())
            && k.chars().all(|c| {
                c.is_ascii_lowercase() || c.is_ascii_digit() || c == ' ' || c == '_' || c == '-'
            })
    });
    match entry {
        Some((k, v)) => header.push((k.to_string(), v.trim().to_string())),
        None => {
            if let Some((_, v)) = header.last_mut() {
                v.push('\n');
                v.push_str(body.trim_end());
            }
        }
    }
}

/// The header's `records` count and `fields` list, when present, must agree with the records.
fn check_kat_v1_header(file: &KatV1File) -> Result<(), ParseError> {
    if file.records.is_empty() {
        return Err(ParseError::new(0, "no records (header only)"));
    }
    if let Some(count) = file.header("records") {
        let want: usize = count.parse().map_err(|_| {
            ParseError::new(0, format!("header 'records: {count}' is not a number"))
        })?;
        if want != file.records.len() {
            return Err(ParseError::new(
                0,
                format!(
                    "the header says {want} records, the file has {}",
                    file.records.len()
                ),
            ));
        }
    }
    if let Some(fields) = file.header("fields") {
        let declared: Vec<&str> = fields.split_whitespace().collect();
        for r in &file.records {
            if let Some(name) = r.names().find(|n| !declared.contains(n)) {
                return Err(ParseError::new(
                    r.line,
                    format!("field {name} is not in the header's 'fields: {fields}'"),
                ));
            }
        }
    }
    Ok(())
}

fn parse_kat_v1_value(n: usize, name: &str, kind: Kind, value: &str) -> Result<Value, ParseError> {
    match kind {
        Kind::Text => Ok(Value::Text(value.to_string())),
        Kind::Result => match value {
            "valid" | "invalid" | "acceptable" => Ok(Value::Text(value.to_string())),
            _ => Err(ParseError::new(
                n,
                format!("RESULT must be valid, invalid or acceptable, not {value:?}"),
            )),
        },
        Kind::Decimal => value
            .parse()
            .map(Value::Number)
            .map_err(|_| ParseError::new(n, format!("{name}: {value:?} is not a decimal number"))),
        Kind::Hex => decode_hex(n, name, value).map(Value::Bytes),
        Kind::HexFixed(len) => {
            let b = decode_hex(n, name, value)?;
            if b.len() != len {
                return Err(ParseError::new(
                    n,
                    format!(
                        "{name}: expected {} hex digits, found {}",
                        2 * len,
                        value.len()
                    ),
                ));
            }
            Ok(Value::Bytes(b))
        }
    }
}

// ---------------------------------------------------------------------------------------------
// genkat

/// One record of a CAESAR `genkat` file.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct GenkatRecord {
    /// 1-based line of the record's first field.
    pub line: usize,
    /// `Count`.
    pub count: u64,
    /// `Key`.
    pub key: Vec<u8>,
    /// `Nonce` (also accepted as `IV`).
    pub nonce: Vec<u8>,
    /// `PT`: the plaintext.
    pub pt: Vec<u8>,
    /// `AD`: the associated data.
    pub ad: Vec<u8>,
    /// `CT`: what `crypto_aead_encrypt` outputs, ciphertext followed by the tag.
    pub ct: Vec<u8>,
}

impl GenkatRecord {
    /// A short name for messages.
    pub fn label(&self) -> String {
        format!("Count = {} (line {})", self.count, self.line)
    }
}

/// The fields of a genkat record, as read so far.
#[derive(Default)]
struct GenkatPartial {
    line: usize,
    count: Option<u64>,
    key: Option<Vec<u8>>,
    nonce: Option<Vec<u8>>,
    pt: Option<Vec<u8>>,
    ad: Option<Vec<u8>>,
    ct: Option<Vec<u8>>,
}

impl GenkatPartial {
    fn finish(self) -> Result<GenkatRecord, ParseError> {
        let line = self.line;
        let missing = |f: &str| ParseError::new(line, format!("record without a {f} field"));
        Ok(GenkatRecord {
            line,
            count: self.count.ok_or_else(|| missing("Count"))?,
            key: self.key.ok_or_else(|| missing("Key"))?,
            nonce: self.nonce.ok_or_else(|| missing("Nonce"))?,
            pt: self.pt.ok_or_else(|| missing("PT"))?,
            ad: self.ad.ok_or_else(|| missing("AD"))?,
            ct: self.ct.ok_or_else(|| missing("CT"))?,
        })
    }
}

/// Parses a CAESAR `genkat` file.
pub fn parse_genkat(text: &str) -> Result<Vec<GenkatRecord>, ParseError> {
    let mut records = Vec::new();
    let mut current: Option<GenkatPartial> = None;
    for (i, raw) in text.lines().enumerate() {
        let n = i + 1;
        let line = raw.trim_end();
        if line.trim().is_empty() {
            if let Some(r) = current.take() {
                records.push(r.finish()?);
            }
            continue;
        }
        if line.starts_with('#') {
            continue; // a comment line
        }
        let (name, value) = split_field(n, line)?;
        let rec = current.get_or_insert_with(|| GenkatPartial {
            line: n,
            ..GenkatPartial::default()
        });
        let dup = || {
            ParseError::new(
                n,
                format!(
                    "duplicate field {name} in the record starting at line {}",
                    rec.line
                ),
            )
        };
        let slot = match name {
            "Count" => {
                if rec.count.is_some() {
                    return Err(dup());
                }
                let c = value.parse().map_err(|_| {
                    ParseError::new(n, format!("Count: {value:?} is not a decimal number"))
                })?;
                rec.count = Some(c);
                continue;
            }
            "Key" => &mut rec.key,
            "Nonce" | "IV" => &mut rec.nonce,
            "PT" => &mut rec.pt,
            "AD" => &mut rec.ad,
            "CT" => &mut rec.ct,
            _ => {
                return Err(ParseError::new(
                    n,
                    format!("unknown field {name:?} (genkat has Count, Key, Nonce, PT, AD, CT)"),
                ))
            }
        };
        if slot.is_some() {
            return Err(ParseError::new(n, format!("duplicate field {name}")));
        }
        *slot = Some(decode_hex(n, name, value)?);
    }
    if let Some(r) = current.take() {
        records.push(r.finish()?);
    }
    if records.is_empty() {
        return Err(ParseError::new(0, "no records"));
    }
    Ok(records)
}

// ---------------------------------------------------------------------------------------------
// shared

/// Splits `NAME = value` at the first `=`; the name must be a single word.
fn split_field(n: usize, line: &str) -> Result<(&str, &str), ParseError> {
    let (name, value) = line
        .split_once('=')
        .ok_or_else(|| ParseError::new(n, format!("expected NAME = value, found {line:?}")))?;
    let name = name.trim();
    if name.is_empty() || !name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_') {
        return Err(ParseError::new(
            n,
            format!("bad field name {name:?} in {line:?}"),
        ));
    }
    Ok((name, value.trim()))
}

/// Decodes a hex byte string (upper or lower case; empty allowed).
fn decode_hex(n: usize, name: &str, value: &str) -> Result<Vec<u8>, ParseError> {
    if !value.len().is_multiple_of(2) {
        return Err(ParseError::new(
            n,
            format!("{name}: odd number of hex digits ({})", value.len()),
        ));
    }
    hex::decode(value).map_err(|e| ParseError::new(n, format!("{name}: bad hex: {e}")))
}

#[cfg(test)]
mod tests {
    use super::*;

    const KAT: &str = "# kat-v1
# title: test
# operation: first line
#   second line
# fields: ID KEY IV PT CT RESULT
# records: 2

ID = one = 1
KEY = 000102
IV =
PT = AABB
CT = ccdd

ID = two
KEY = 00
PT = 01
CT = 02
RESULT = invalid
";

    fn err_of(r: Result<impl fmt::Debug, ParseError>) -> ParseError {
        match r {
            Ok(v) => panic!("expected an error, parsed {v:?}"),
            Err(e) => e,
        }
    }

    fn kat_v1(text: &str) -> KatV1File {
        match parse(text) {
            Ok(KatFile::KatV1(f)) => f,
            other => panic!("not a kat-v1 file: {other:?}"),
        }
    }

    #[test]
    fn kat_v1_records_and_header() {
        let f = kat_v1(KAT);
        assert_eq!(f.header("title"), Some("test"));
        assert_eq!(f.header("operation"), Some("first line\n  second line"));
        assert_eq!(f.records.len(), 2);
        let r = &f.records[0];
        assert_eq!(r.line, 8);
        assert_eq!(r.text("ID"), Some("one = 1"));
        assert_eq!(r.bytes("KEY"), Some(&[0u8, 1, 2][..]));
        assert_eq!(r.bytes("IV"), Some(&[][..]));
        assert_eq!(r.bytes("PT"), Some(&[0xaa, 0xbb][..]));
        assert_eq!(
            r.names().collect::<Vec<_>>(),
            ["ID", "KEY", "IV", "PT", "CT"]
        );
        assert_eq!(r.expectation(), Expectation::Valid);
        assert_eq!(f.records[1].expectation(), Expectation::Invalid);
        assert_eq!(f.records[1].line, 14);
    }

    #[test]
    fn kat_v1_numbers_and_fixed_hex() {
        let f = kat_v1("# kat-v1\n\nID = x\nCOUNT = 72a4f20f\nLENGTH = 798\n");
        let r = &f.records[0];
        assert_eq!(r.bytes("COUNT"), Some(&[0x72, 0xa4, 0xf2, 0x0f][..]));
        assert_eq!(r.get("LENGTH"), Some(&Value::Number(798)));
        let e = err_of(parse("# kat-v1\n\nCOUNT = 72a4f2\n"));
        assert!(e.msg.contains("8 hex digits"), "{e}");
        let e = err_of(parse("# kat-v1\n\nLENGTH = 0x10\n"));
        assert!(e.msg.contains("decimal"), "{e}");
    }

    #[test]
    fn kat_v1_malformed() {
        let e = err_of(parse("# kat-v1\n\nKEY 00\n"));
        assert_eq!(e.line, 3);
        assert!(e.msg.contains("NAME = value"), "{e}");

        let e = err_of(parse("# kat-v1\n\nKEY = 0g\n"));
        assert_eq!(e.line, 3);
        assert!(e.msg.contains("bad hex"), "{e}");

        let e = err_of(parse("# kat-v1\n\nKEY = 000\n"));
        assert!(e.msg.contains("odd number"), "{e}");

        let e = err_of(parse("# kat-v1\n\nKEY = 00\nPT = 01\nKEY = 02\n"));
        assert_eq!(e.line, 5);
        assert!(e.msg.contains("duplicate field KEY"), "{e}");

        // The same name in two records is fine.
        assert_eq!(
            kat_v1("# kat-v1\n\nKEY = 00\n\nKEY = 01\n").records.len(),
            2
        );

        let e = err_of(parse("# kat-v1\n\nFOO = 00\n"));
        assert!(e.msg.contains("unknown field"), "{e}");

        let e = err_of(parse("# kat-v1\n\nRESULT = maybe\n"));
        assert!(e.msg.contains("RESULT"), "{e}");

        let e = err_of(parse("# kat-v1\n\n = 00\n"));
        assert!(e.msg.contains("field name"), "{e}");
    }

    #[test]
    fn kat_v1_header_only_and_counts() {
        let e = err_of(parse("# kat-v1\n# title: nothing\n# records: 0\n\n"));
        assert!(e.msg.contains("no records"), "{e}");
        let e = err_of(parse("# kat-v1\n"));
        assert!(e.msg.contains("no records"), "{e}");
        let e = err_of(parse(&KAT.replace("records: 2", "records: 3")));
        assert!(e.msg.contains("says 3 records"), "{e}");
        let e = err_of(parse(&KAT.replace(
            "fields: ID KEY IV PT CT RESULT",
            "fields: ID KEY PT CT RESULT",
        )));
        assert!(e.msg.contains("field IV"), "{e}");
        assert_eq!(e.line, 8);
    }

    #[test]
    fn unknown_format() {
        let e = err_of(parse("# kat-v2\n\nKEY = 00\n"));
        assert!(e.msg.contains("unknown format"), "{e}");
        let e = err_of(parse(""));
        assert!(e.msg.contains("no records"), "{e}");
        let e = err_of(parse("\n \n"));
        assert!(e.msg.contains("no records"), "{e}");
    }

    const GENKAT: &str = "Count = 1
Key = 000102030405060708090A0B0C0D0E0F
Nonce = 000102030405060708090A0B
PT = 
AD = 
CT = F780C1B3403B81E4A8BF86F3FD9DBACC

Count = 2
Key = 000102030405060708090A0B0C0D0E0F
IV = 0001
PT = 00
AD = 0001
CT = AABB0011
";

    fn genkat(text: &str) -> Vec<GenkatRecord> {
        match parse(text) {
            Ok(KatFile::Genkat(r)) => r,
            other => panic!("not a genkat file: {other:?}"),
        }
    }

    #[test]
    fn genkat_records() {
        let r = genkat(GENKAT);
        assert_eq!(r.len(), 2);
        assert_eq!(r[0].count, 1);
        assert_eq!(r[0].line, 1);
        assert_eq!(r[0].key, (0..16).collect::<Vec<u8>>());
        assert_eq!(r[0].nonce, (0..12).collect::<Vec<u8>>());
        assert!(r[0].pt.is_empty() && r[0].ad.is_empty());
        assert_eq!(r[0].ct.len(), 16);
        assert_eq!(r[1].line, 8);
        assert_eq!(r[1].nonce, [0, 1]);
        assert_eq!(r[1].pt, [0]);
        assert_eq!(r[1].ad, [0, 1]);
        assert_eq!(r[1].ct, [0xaa, 0xbb, 0x00, 0x11]);
        // CRLF line ends and trailing blank lines are fine.
        assert_eq!(genkat(&GENKAT.replace('\n', "\r\n")), r);
        assert_eq!(genkat(&format!("{GENKAT}\n\n")), r);
    }

    #[test]
    fn genkat_malformed() {
        let e = err_of(parse(&GENKAT.replace("AD = 0001", "AD 0001")));
        assert_eq!(e.line, 12);
        assert!(e.msg.contains("NAME = value"), "{e}");

        let e = err_of(parse(&GENKAT.replace("CT = AABB0011", "CT = AABB00XY")));
        assert_eq!(e.line, 13);
        assert!(e.msg.contains("bad hex"), "{e}");

        let e = err_of(parse(&GENKAT.replace("CT = AABB0011", "CT = AABB001")));
        assert!(e.msg.contains("odd number"), "{e}");

        let e = err_of(parse(
            &GENKAT.replace("IV = 0001", "IV = 0001\nNonce = 0001"),
        ));
        assert!(e.msg.contains("duplicate field Nonce"), "{e}");

        let e = err_of(parse(&GENKAT.replace("Count = 2", "Count = 2\nCount = 3")));
        assert!(e.msg.contains("duplicate field Count"), "{e}");

        let e = err_of(parse(&GENKAT.replace("AD = 0001\n", "")));
        assert_eq!(e.line, 8);
        assert!(e.msg.contains("AD"), "{e}");

        let e = err_of(parse(&GENKAT.replace("Count = 2", "Count = two")));
        assert!(e.msg.contains("decimal"), "{e}");

        let e = err_of(parse(&GENKAT.replace("PT = 00", "TAG = 00")));
        assert!(e.msg.contains("unknown field"), "{e}");
    }

    #[test]
    fn real_files_parse() {
        let dir = concat!(env!("CARGO_MANIFEST_DIR"), "/../testdata/kat");
        let text = std::fs::read_to_string(format!("{dir}/aead/aes128-gcm-n12-t16.txt"))
            .expect("testdata present");
        let r = genkat(&text);
        assert_eq!(r.len(), 1089);
        assert_eq!(r[1088].pt.len(), 32);
        assert_eq!(r[1088].ad.len(), 32);
        assert_eq!(r[1088].ct.len(), 48);
        for name in [
            "gcm_spec_testcases",
            "rfc7253_ocb_iterative",
            "sp800_38a_ctr",
            "rfc4493_cmac",
        ] {
            let text = std::fs::read_to_string(format!("{dir}/ciphers/aes/{name}.kat"))
                .expect("testdata present");
            let f = kat_v1(&text);
            assert!(!f.records.is_empty());
        }
    }
}
