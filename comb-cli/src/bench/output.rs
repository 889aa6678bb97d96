//! Machine description and the JSON results file:
//! `{"machine": {...}, "results": [{"alg", "op", "engine", "workload", "msg_len", "batch",
//! "ad_len", "lanes", "cpb_tsc", "cpb_core", "samples", ...}]}`.

use super::measure::Measured;
use serde::Serialize;
use std::path::Path;

/// Where and how the figures were taken.
#[derive(Clone, Debug, Serialize)]
pub struct Machine {
    pub cpu: String,
    pub vendor: String,
    pub family: u32,
    pub model: u32,
    pub stepping: u32,
    pub logical_cpus: usize,
    pub os: String,
    pub comb_version: String,
    pub backend: String,
    pub features: Vec<String>,
    /// TSC frequency in GHz (measured against the OS clock).
    pub tsc_ghz: f64,
    pub invariant_tsc: bool,
    /// TSC ticks per core cycle (dependent add chain), before and after measuring, and their
    /// mean, which converts TSC to core cycles per byte.
    pub tsc_per_core_cycle_start: f64,
    pub tsc_per_core_cycle_end: f64,
    pub tsc_per_core_cycle: f64,
    /// Estimated core clock during the run, GHz.
    pub core_ghz: f64,
    pub pinned_cpu: Option<usize>,
    pub gate: bool,
    pub gate_threshold: f64,
    pub gate_retries: usize,
    pub warmup_calls: usize,
    pub seed: u64,
    pub unix_time: u64,
    pub wall_seconds: f64,
    pub command: String,
}

/// One line of `results`.
#[derive(Clone, Debug, Serialize, PartialEq)]
pub struct ResultRow {
    pub alg: String,
    pub op: String,
    pub engine: String,
    /// `"fixed"`, `"realistic"` or `"file"`.
    pub workload: String,
    /// The message length for `fixed`, else null.
    pub msg_len: Option<usize>,
    pub batch: usize,
    /// Bytes of associated data per message (`--ad-len`; AEAD modes only, 0 otherwise; not
    /// counted in the bytes of cycles per byte).
    pub ad_len: usize,
    /// Lane count P (null for engines without lanes).
    pub lanes: Option<usize>,
    /// Median TSC cycles per byte.
    pub cpb_tsc: f64,
    /// Median core cycles per byte.
    pub cpb_core: f64,
    pub samples: usize,
    /// Calls per sample.
    pub calls: usize,
    pub phase: String,
    pub lane_source: String,
    pub mean_len: f64,
    pub key_bits: usize,
    /// Keys a batch: message `i` under key `i mod keys` (`--keys`).
    pub keys: usize,
    pub threads: usize,
    pub key_setup: bool,
    pub cpb_tsc_q1: f64,
    pub cpb_tsc_q3: f64,
    pub cpb_tsc_min: f64,
    pub rejected: usize,
    pub forced: usize,
}

impl ResultRow {
    /// The JSON view of a measurement.
    pub fn from(m: &Measured) -> ResultRow {
        let c = &m.config;
        ResultRow {
            alg: c.subject.clone().unwrap_or_else(|| c.alg.id().to_string()),
            op: c.op.to_string(),
            engine: c.engine.clone(),
            workload: c.workload.to_string(),
            msg_len: c.msg_len,
            batch: c.batch,
            ad_len: c.ad_len,
            lanes: c.lanes,
            cpb_tsc: round6(m.tsc.median),
            cpb_core: round6(m.cpb_core),
            samples: m.samples,
            calls: c.calls,
            phase: c.phase.to_string(),
            lane_source: c.lane_source.name().to_string(),
            mean_len: round6(c.mean_len),
            key_bits: c.key_bits,
            keys: c.keys,
            threads: c.threads,
            key_setup: c.key_setup,
            cpb_tsc_q1: round6(m.tsc.q1),
            cpb_tsc_q3: round6(m.tsc.q3),
            cpb_tsc_min: round6(m.tsc.min),
            rejected: m.rejected,
            forced: m.forced,
        }
    }
}

fn round6(x: f64) -> f64 {
    if x.is_finite() {
        (x * 1e6).round() / 1e6
    } else {
        0.0
    }
}

#[derive(Serialize)]
struct Document<'a> {
    machine: &'a Machine,
    results: Vec<ResultRow>,
}

/// The JSON document for a run.
pub fn json(machine: &Machine, results: &[Measured]) -> String {
    let doc = Document {
        machine,
        results: results.iter().map(ResultRow::from).collect(),
    };
    serde_json::to_string_pretty(&doc).unwrap_or_default() + "\n"
}

/// Writes the JSON document to `path` (creating its directory).
pub fn write_json(path: &Path, machine: &Machine, results: &[Measured]) -> Result<(), String> {
    write_text(path, &json(machine, results))
}

/// Writes a text file, creating its directory.
pub fn write_text(path: &Path, text: &str) -> Result<(), String> {
    if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
        std::fs::create_dir_all(dir).map_err(|e| format!("{}: {e}", dir.display()))?;
    }
    std::fs::write(path, text).map_err(|e| format!("{}: {e}", path.display()))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::bench::measure::{Config, LaneSource};
    use crate::bench::stats::Summary;
    use crate::bench::workload::Dist;
    use comb::{Algorithm, Op};

    fn machine() -> Machine {
        Machine {
            cpu: "cpu".into(),
            vendor: "v".into(),
            family: 6,
            model: 207,
            stepping: 2,
            logical_cpus: 2,
            os: "linux".into(),
            comb_version: "0.1.0".into(),
            backend: "ni".into(),
            features: vec!["aes".into()],
            tsc_ghz: 2.3,
            invariant_tsc: true,
            tsc_per_core_cycle_start: 0.77,
            tsc_per_core_cycle_end: 0.77,
            tsc_per_core_cycle: 0.77,
            core_ghz: 3.0,
            pinned_cpu: None,
            gate: true,
            gate_threshold: 1.3,
            gate_retries: 5,
            warmup_calls: 10,
            seed: 1,
            unix_time: 0,
            wall_seconds: 1.0,
            command: "comb bench".into(),
        }
    }

    #[test]
    fn json_shape() {
        let mk = |dist: &Dist, engine: &str, lanes| Measured {
            config: Config::new(
                "modes",
                Algorithm::AesCbc,
                Op::Encrypt,
                engine,
                dist,
                64,
                lanes,
                LaneSource::Default,
                128,
            ),
            tsc: Summary::of(&[0.5, 0.25, 0.3]).unwrap(),
            cpb_core: 0.3 / 0.77,
            samples: 3,
            rejected: 1,
            forced: 0,
        };
        let rs = [
            mk(&Dist::Fixed(2048), "comb", Some(8)),
            mk(&Dist::Realistic, "sequential", None),
        ];
        let v: serde_json::Value = serde_json::from_str(&json(&machine(), &rs)).unwrap();
        assert!(v["machine"].is_object());
        assert_eq!(v["machine"]["tsc_per_core_cycle"], 0.77);
        let r = v["results"].as_array().unwrap();
        assert_eq!(r.len(), 2);
        for key in [
            "alg", "op", "engine", "workload", "msg_len", "batch", "ad_len", "lanes", "cpb_tsc",
            "cpb_core", "samples",
        ] {
            assert!(r[0].get(key).is_some(), "missing {key}");
            assert!(r[1].get(key).is_some(), "missing {key}");
        }
        assert_eq!(r[0]["alg"], "aes-cbc");
        assert_eq!(r[0]["op"], "encrypt");
        assert_eq!(r[0]["workload"], "fixed");
        assert_eq!(r[0]["msg_len"], 2048);
        assert_eq!(r[0]["lanes"], 8);
        assert_eq!(r[0]["cpb_tsc"], 0.3);
        assert_eq!(r[0]["samples"], 3);
        assert_eq!(r[1]["workload"], "realistic");
        assert!(r[1]["msg_len"].is_null());
        assert!(r[1]["lanes"].is_null());
    }
}
