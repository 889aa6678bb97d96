//! Lane counts measured by `comb tune`, stored in a small text file the engine reads.
//!
//! The file is `$COMB_TUNING` if set, else `$XDG_CONFIG_HOME/comb/lanes.txt`, else
//! `$HOME/.config/comb/lanes.txt`. One entry per line, `#` starts a comment:
//!
//! ```text
//! # backend algorithm op lanes
//! ni aes-cbc encrypt 8
//! ni aes-cmac encrypt 10
//! ```
//!
//! [`crate::Engine::new`] applies the entries for its backend on top of the built-in
//! defaults. A file that does not parse is ignored as a whole (performance tuning must never
//! stop encryption); [`Tuning::load`] reports why, and `comb info` shows it.

use crate::sched::plan::MAX_LANES;
use crate::{Algorithm, Backend, Op};
use std::path::PathBuf;

/// A set of measured lane counts.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Tuning {
    entries: Vec<(Backend, Algorithm, Op, usize)>,
}

impl Tuning {
    /// The tuning file's path (whether or not it exists), or `None` with no home directory.
    pub fn path() -> Option<PathBuf> {
        if let Some(p) = std::env::var_os("COMB_TUNING").filter(|p| !p.is_empty()) {
            return Some(PathBuf::from(p));
        }
        let base = std::env::var_os("XDG_CONFIG_HOME")
            .filter(|p| !p.is_empty())
            .map(PathBuf::from)
            .or_else(|| std::env::var_os("HOME").map(|h| PathBuf::from(h).join(".config")))?;
        Some(base.join("comb").join("lanes.txt"))
    }

    /// Reads the tuning file: `Ok(None)` if there is none, `Err` if it cannot be read or
    /// parsed.
    pub fn load() -> Result<Option<Tuning>, String> {
        let Some(path) = Tuning::path() else {
            return Ok(None);
        };
        match std::fs::read_to_string(&path) {
            Ok(text) => Tuning::parse(&text)
                .map(Some)
                .map_err(|e| format!("{}: {e}", path.display())),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(None),
            Err(e) => Err(format!("{}: {e}", path.display())),
        }
    }

    /// Parses the text format (see the module documentation).
    pub fn parse(text: &str) -> Result<Tuning, String> {
        let mut t = Tuning::default();
        for (n, line) in text.lines().enumerate() {
            let line = line.split('#').next().unwrap_or("").trim();
            if line.is_empty() {
                continue;
            }
            let f: Vec<&str> = line.split_whitespace().collect();
            let [backend, alg, op, lanes] = f[..] else {
                return Err(format!(
                    "line {}: expected `backend algorithm op lanes`",
                    n + 1
                ));
            };
            let backend =
                Backend::from_name(backend).map_err(|e| format!("line {}: {e}", n + 1))?;
            let alg = Algorithm::from_id(alg).map_err(|e| format!("line {}: {e}", n + 1))?;
            let op: Op = op.parse().map_err(|e| format!("line {}: {e}", n + 1))?;
            let lanes: usize = lanes
                .parse()
                .ok()
                .filter(|l| (1..=MAX_LANES).contains(l))
                .ok_or_else(|| format!("line {}: lanes must be 1..={MAX_LANES}", n + 1))?;
            t.set(backend, alg, op, lanes);
        }
        Ok(t)
    }

    /// The text format, one line per entry.
    pub fn to_text(&self) -> String {
        let mut s = String::from("# comb tune: backend algorithm op lanes\n");
        for (b, a, o, l) in &self.entries {
            s.push_str(&format!("{b} {a} {o} {l}\n"));
        }
        s
    }

    /// Sets (or replaces) one entry.
    pub fn set(&mut self, backend: Backend, alg: Algorithm, op: Op, lanes: usize) {
        self.entries
            .retain(|e| (e.0, e.1, e.2) != (backend, alg, op));
        self.entries.push((backend, alg, op, lanes));
    }

    /// The measured lane count, if any.
    pub fn lanes(&self, backend: Backend, alg: Algorithm, op: Op) -> Option<usize> {
        self.entries
            .iter()
            .find(|e| (e.0, e.1, e.2) == (backend, alg, op))
            .map(|e| e.3)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn round_trip_and_errors() {
        let mut t = Tuning::default();
        t.set(Backend::Ni, Algorithm::AesCbc, Op::Encrypt, 9);
        t.set(Backend::Ni, Algorithm::AesCmac, Op::Encrypt, 12);
        t.set(Backend::Ni, Algorithm::AesCbc, Op::Encrypt, 7);
        let back = Tuning::parse(&t.to_text()).unwrap();
        assert_eq!(back, t);
        assert_eq!(
            back.lanes(Backend::Ni, Algorithm::AesCbc, Op::Encrypt),
            Some(7)
        );
        assert_eq!(
            back.lanes(Backend::Ni, Algorithm::AesOfb, Op::Encrypt),
            None
        );
        for bad in [
            "ni aes-cbc encrypt",
            "ni aes-cbc encrypt 0",
            "ni aes-cbc encrypt 33",
            "xx aes-cbc encrypt 8",
            "ni aes-xts encrypt 8",
            "ni aes-cbc sideways 8",
            "ni aes-cbc encrypt 8 9",
        ] {
            assert!(Tuning::parse(bad).is_err(), "{bad}");
        }
        assert_eq!(
            Tuning::parse("# only a comment\n\n").unwrap(),
            Tuning::default()
        );
    }
}
