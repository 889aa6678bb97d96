//! Parsing of the command-line lists: algorithms, operations, lane counts, message lengths,
//! engines (pure code, unit-tested).

use comb::sched::plan::MAX_LANES;
use comb::{Algorithm, Op};

/// Largest message length the bench accepts (a typo like `20480000000` should not allocate).
pub const MAX_MSG_LEN: usize = 64 << 20;

/// `--lanes`: the library's choice (or the tuned value), or explicit lane counts to sweep.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum LaneSpec {
    /// `auto`: the tuned value from the tune file if there is one, else the library default.
    Auto,
    /// Explicit values, in the order given, without duplicates.
    List(Vec<usize>),
}

impl LaneSpec {
    /// Parses `auto`, `N`, `A..B` (inclusive, also `A..=B`) or a comma list of those.
    pub fn parse(s: &str) -> Result<LaneSpec, String> {
        let s = s.trim();
        if s.eq_ignore_ascii_case("auto") {
            return Ok(LaneSpec::Auto);
        }
        let mut out = Vec::new();
        for item in s.split(',') {
            let item = item.trim();
            if item.is_empty() {
                return Err(format!("empty item in lane list {s:?}"));
            }
            let (a, b) = match item.split_once("..") {
                Some((a, b)) => (
                    parse_lane(a)?,
                    parse_lane(b.strip_prefix('=').unwrap_or(b))?,
                ),
                None => {
                    let n = parse_lane(item)?;
                    (n, n)
                }
            };
            if a > b {
                return Err(format!(
                    "lane range {item:?} is empty (write the smaller bound first)"
                ));
            }
            for p in a..=b {
                if !out.contains(&p) {
                    out.push(p);
                }
            }
        }
        Ok(LaneSpec::List(out))
    }
}

fn parse_lane(s: &str) -> Result<usize, String> {
    let n: usize = s.trim().parse().map_err(|_| {
        format!("bad lane count {s:?} (a number 1..={MAX_LANES}, a range A..B, or auto)")
    })?;
    if !(1..=MAX_LANES).contains(&n) {
        return Err(format!("lane count {n} is out of range 1..={MAX_LANES}"));
    }
    Ok(n)
}

/// Parses one message length: bytes, or with a `k`/`K`/`KiB` suffix (× 1024).
pub fn parse_len(s: &str) -> Result<usize, String> {
    let t = s.trim();
    let (digits, mult) =
        if let Some(d) = t.strip_suffix("KiB").or_else(|| t.strip_suffix(['k', 'K'])) {
            (d, 1024)
        } else {
            (t, 1)
        };
    let n: usize = digits
        .trim()
        .parse()
        .map_err(|_| format!("bad message length {s:?} (bytes, e.g. 1500 or 2k)"))?;
    let n = n
        .checked_mul(mult)
        .filter(|&n| n <= MAX_MSG_LEN)
        .ok_or_else(|| format!("message length {s:?} is larger than {MAX_MSG_LEN} bytes"))?;
    Ok(n)
}

/// Parses a comma list of message lengths, e.g. `128,256,2k`.
pub fn parse_lengths(s: &str) -> Result<Vec<usize>, String> {
    let v: Vec<usize> = s.split(',').map(parse_len).collect::<Result<_, _>>()?;
    if v.is_empty() {
        return Err("empty list of lengths".into());
    }
    Ok(v)
}

/// Parses a lengths file: one length per line; blank lines and `#` comments are skipped.
pub fn parse_lengths_file(text: &str) -> Result<Vec<usize>, String> {
    let mut v = Vec::new();
    for (i, line) in text.lines().enumerate() {
        let line = line.split('#').next().unwrap_or("").trim();
        if line.is_empty() {
            continue;
        }
        v.push(parse_len(line).map_err(|e| format!("line {}: {e}", i + 1))?);
    }
    if v.is_empty() {
        return Err("the lengths file has no lengths".into());
    }
    Ok(v)
}

/// Parses `all` or a comma list of algorithm IDs.
pub fn parse_algs(s: &str) -> Result<Vec<Algorithm>, String> {
    if s.trim().eq_ignore_ascii_case("all") {
        return Ok(Algorithm::ALL.to_vec());
    }
    let mut v = Vec::new();
    for id in s.split(',') {
        let id = id.trim();
        let alg = Algorithm::from_id(id).map_err(|_| {
            let known: Vec<&str> = Algorithm::ALL.iter().map(|a| a.id()).collect();
            format!("unknown algorithm {id:?} (known: {})", known.join(", "))
        })?;
        if !v.contains(&alg) {
            v.push(alg);
        }
    }
    Ok(v)
}

/// Parses `encrypt`, `decrypt` or `both`.
pub fn parse_ops(s: &str) -> Result<Vec<Op>, String> {
    match s.trim() {
        "both" => Ok(vec![Op::Encrypt, Op::Decrypt]),
        other => Ok(vec![other.parse::<Op>()?]),
    }
}

/// Parses a comma list of engine names (checked later against the engines of this build).
pub fn parse_engines(s: &str) -> Result<Vec<String>, String> {
    let mut v: Vec<String> = Vec::new();
    for name in s.split(',') {
        let name = name.trim().to_ascii_lowercase();
        if name.is_empty() {
            return Err(format!("empty engine name in {s:?}"));
        }
        if !v.contains(&name) {
            v.push(name);
        }
    }
    Ok(v)
}

/// `alg/op` as used in the tune file and the tables, e.g. `aes-cbc/encrypt`.
pub fn mode_key(alg: Algorithm, op: Op) -> String {
    format!("{}/{}", alg.id(), op)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lanes_auto_single_range_list() {
        assert_eq!(LaneSpec::parse("auto"), Ok(LaneSpec::Auto));
        assert_eq!(LaneSpec::parse(" AUTO "), Ok(LaneSpec::Auto));
        assert_eq!(LaneSpec::parse("8"), Ok(LaneSpec::List(vec![8])));
        assert_eq!(
            LaneSpec::parse("1..4"),
            Ok(LaneSpec::List(vec![1, 2, 3, 4]))
        );
        assert_eq!(LaneSpec::parse("2..=3"), Ok(LaneSpec::List(vec![2, 3])));
        assert_eq!(
            LaneSpec::parse("1..16"),
            Ok(LaneSpec::List((1..=16).collect()))
        );
        assert_eq!(
            LaneSpec::parse("8,1..2,8"),
            Ok(LaneSpec::List(vec![8, 1, 2]))
        );
        assert_eq!(LaneSpec::parse("5..5"), Ok(LaneSpec::List(vec![5])));
    }

    #[test]
    fn lanes_errors() {
        for bad in [
            "", "0", "33", "4..2", "x", "1..", "..3", "1,,2", "-1", "1..40",
        ] {
            assert!(LaneSpec::parse(bad).is_err(), "{bad:?} should be rejected");
        }
    }

    #[test]
    fn lengths() {
        assert_eq!(
            parse_lengths("128,256, 2k,1KiB"),
            Ok(vec![128, 256, 2048, 1024])
        );
        assert_eq!(parse_len("0"), Ok(0));
        assert!(parse_len("abc").is_err());
        assert!(parse_len("-5").is_err());
        assert!(parse_len("99999999999").is_err());
        assert!(parse_lengths("1,,2").is_err());
    }

    #[test]
    fn lengths_file() {
        let text = "# packet sizes\n40\n\n1500  # MTU\n 576 \n";
        assert_eq!(parse_lengths_file(text), Ok(vec![40, 1500, 576]));
        let err = parse_lengths_file("40\nfoo\n").unwrap_err();
        assert!(err.starts_with("line 2:"), "{err}");
        assert!(parse_lengths_file("# nothing\n").is_err());
    }

    #[test]
    fn algs_ops_engines() {
        assert_eq!(parse_algs("all").unwrap().len(), Algorithm::ALL.len());
        assert_eq!(
            parse_algs("aes-cbc,aes-ecb,aes-cbc"),
            Ok(vec![Algorithm::AesCbc, Algorithm::AesEcb])
        );
        assert!(parse_algs("aes-xts").unwrap_err().contains("aes-cbc"));
        assert_eq!(parse_ops("both"), Ok(vec![Op::Encrypt, Op::Decrypt]));
        assert_eq!(parse_ops("decrypt"), Ok(vec![Op::Decrypt]));
        assert!(parse_ops("sign").is_err());
        assert_eq!(
            parse_engines("Sequential, comb,comb"),
            Ok(vec!["sequential".to_string(), "comb".to_string()])
        );
        assert!(parse_engines("comb,").is_err());
        assert_eq!(mode_key(Algorithm::AesCbc, Op::Encrypt), "aes-cbc/encrypt");
    }
}
