//! The measurement method (papers/000 §4, papers/004 §5.1): each figure is the median of
//! `samples` samples, each sample the average over `calls` calls, timed with serialised TSC
//! reads, after `warmup` untimed calls.
//!
//! Samples are taken round-robin: sample `s` of every configuration of a run before sample
//! `s + 1` of any, so slow drifts of the host (another process, the clock) hit every
//! configuration alike instead of one of them; each round in its own order, so no
//! configuration always follows the same one.
//!
//! The quiet-host gate: before and after every sample, a short AES throughput probe (our ECB
//! over 16 KiB, best of eight) is timed. The gate keeps the best probe seen; a sample whose
//! probe before or after is slower than `threshold ×` that best was taken while the core was
//! shared (a hyper-thread sibling busy, a frequency drop) and is retaken, up to
//! `max_retries` times, after which it is kept and counted as *forced*.

use super::engines::{Batch, Prepared};
use super::stats::Summary;
use super::timer;
use super::workload::{Dist, Rng};
use comb::{AesKey, Algorithm, Engine, Job, Op};
use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};

/// Something that can be timed: one configuration.
pub trait Sampler {
    /// Untimed calls (caches, branch predictors).
    fn warm(&mut self, calls: usize) -> Result<(), String>;
    /// `calls` timed calls: `(TSC ticks, bytes processed)`.
    fn timed(&mut self, calls: usize) -> Result<(u64, u64), String>;
}

/// A [`Prepared`] engine over a pool of batches; call `c` processes batch `c mod pool`.
pub struct BatchSampler {
    prepared: Box<dyn Prepared>,
    pool: Vec<Batch>,
    what: String,
}

impl BatchSampler {
    /// `prepared` must have every batch of `pool` loaded ([`super::engines::load_pool`]).
    pub fn new(prepared: Box<dyn Prepared>, pool: Vec<Batch>, what: String) -> BatchSampler {
        BatchSampler {
            prepared,
            pool,
            what,
        }
    }

    fn bytes(&self, calls: usize) -> u64 {
        let per: Vec<u64> = self.pool.iter().map(Batch::bytes).collect();
        (0..calls).map(|c| per[c % per.len()]).sum()
    }

    fn fail(&self) -> String {
        format!("{}: a job failed while measuring", self.what)
    }
}

impl Sampler for BatchSampler {
    fn warm(&mut self, calls: usize) -> Result<(), String> {
        let n = self.pool.len();
        for c in 0..calls {
            if !self.prepared.run(c % n, &mut self.pool[c % n]) {
                return Err(self.fail());
            }
        }
        Ok(())
    }

    fn timed(&mut self, calls: usize) -> Result<(u64, u64), String> {
        let bytes = self.bytes(calls);
        let n = self.pool.len();
        let mut ok = true;
        let t0 = timer::start();
        for c in 0..calls {
            ok &= self.prepared.run(c % n, &mut self.pool[c % n]);
        }
        let t1 = timer::stop();
        if !ok {
            return Err(self.fail());
        }
        Ok((t1.wrapping_sub(t0), bytes))
    }
}

/// How the lane count of a configuration was chosen.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum LaneSource {
    /// The engine has no lanes (sequential, most anchors).
    None,
    /// `--lanes auto`, the library's default.
    Default,
    /// `--lanes auto`, the value stored by `comb tune`.
    Tuned,
    /// Given on the command line (or swept).
    Explicit,
}

impl LaneSource {
    /// Name in the JSON output.
    pub fn name(self) -> &'static str {
        match self {
            LaneSource::None => "none",
            LaneSource::Default => "default",
            LaneSource::Tuned => "tuned",
            LaneSource::Explicit => "explicit",
        }
    }

    /// Whether this is what `--lanes auto` picked.
    pub fn is_auto(self) -> bool {
        matches!(self, LaneSource::Default | LaneSource::Tuned)
    }
}

/// What one measured configuration is.
#[derive(Clone, Debug)]
pub struct Config {
    /// The part of the run it belongs to (`modes`, `lanes`, `lengths`, `heatmap`, `paper-…`).
    pub phase: &'static str,
    pub alg: Algorithm,
    pub op: Op,
    pub engine: String,
    pub workload: &'static str,
    /// The fixed message length, if the workload has one.
    pub msg_len: Option<usize>,
    /// Mean input length per message over the configuration's pool.
    pub mean_len: f64,
    pub batch: usize,
    /// Bytes of associated data per message (AEAD modes; 0 for the others).
    pub ad_len: usize,
    pub lanes: Option<usize>,
    pub lane_source: LaneSource,
    pub key_bits: usize,
    /// Keys a batch (`--keys`).
    pub keys: usize,
    /// Threads running the configuration at once (aggregate cycles per byte).
    pub threads: usize,
    /// Whether key expansion is inside each timed call.
    pub key_setup: bool,
    /// Calls per sample (set by [`Task::new`]).
    pub calls: usize,
    /// What was measured when it is a primitive of the library rather than `alg` (the GF(2^128)
    /// product chains and doublings of `--paper`, such as `gf-mul-clmul-karatsuba`): the JSON's
    /// `alg`.
    pub subject: Option<String>,
}

impl Config {
    /// A configuration of a batch engine on a workload.
    #[allow(clippy::too_many_arguments)]
    pub fn new(
        phase: &'static str,
        alg: Algorithm,
        op: Op,
        engine: &str,
        dist: &Dist,
        batch: usize,
        lanes: Option<usize>,
        lane_source: LaneSource,
        key_bits: usize,
    ) -> Config {
        Config {
            phase,
            alg,
            op,
            engine: engine.to_string(),
            workload: dist.kind(),
            msg_len: dist.fixed_len(),
            mean_len: 0.0,
            batch,
            ad_len: 0,
            lanes,
            lane_source,
            key_bits,
            keys: 1,
            threads: 1,
            key_setup: false,
            calls: 0,
            subject: None,
        }
    }

    /// The workload part of the table key: `realistic`, `2048 B`, `file`.
    pub fn workload_label(&self) -> String {
        match self.msg_len {
            Some(n) => format!("{n} B"),
            None => self.workload.to_string(),
        }
    }
}

/// One configuration to measure.
pub struct Task {
    pub config: Config,
    pub sampler: Box<dyn Sampler>,
    pub samples: usize,
    pub calls: usize,
    pub warmup: usize,
    data: Vec<f64>,
    rejected: usize,
    forced: usize,
}

impl Task {
    /// A task taking `samples` samples of `calls` calls each, after `warmup` untimed calls.
    pub fn new(
        config: Config,
        sampler: Box<dyn Sampler>,
        samples: usize,
        calls: usize,
        warmup: usize,
    ) -> Task {
        let mut config = config;
        config.calls = calls.max(1);
        Task {
            config,
            sampler,
            samples: samples.max(1),
            calls: calls.max(1),
            warmup,
            data: Vec::new(),
            rejected: 0,
            forced: 0,
        }
    }
}

/// The result of one configuration.
#[derive(Clone, Debug)]
pub struct Measured {
    pub config: Config,
    /// Cycles per byte in TSC ticks (median and quartiles).
    pub tsc: Summary,
    /// Median cycles per byte in core cycles (set once the clock ratio is known).
    pub cpb_core: f64,
    pub samples: usize,
    /// Samples retaken because the quiet-host gate failed.
    pub rejected: usize,
    /// Samples kept although the gate still failed after all retries.
    pub forced: usize,
}

impl Measured {
    /// The headline figure: median TSC cycles per byte.
    pub fn cpb(&self) -> f64 {
        self.tsc.median
    }
}

/// Runs of the probe; the fastest counts (the first ones also bring the buffer into L1 and
/// the clock up after the thread slept).
const PROBE_REPS: usize = 8;

/// The quiet-host gate's probe and state.
pub struct Gate {
    enabled: bool,
    threshold: f64,
    max_retries: usize,
    engine: Engine,
    key: AesKey,
    buf: Vec<u8>,
    best: u64,
}

impl Gate {
    /// A gate that retakes samples whose probes are slower than `threshold ×` the best.
    pub fn new(enabled: bool, threshold: f64, max_retries: usize) -> Result<Gate, String> {
        Ok(Gate {
            enabled,
            threshold,
            max_retries,
            engine: Engine::new().map_err(|e| e.to_string())?,
            key: AesKey::new(&[0x5a; 16]).map_err(|e| e.to_string())?,
            buf: vec![0x33; 16 << 10],
            best: u64::MAX,
        })
    }

    /// Whether the gate is on.
    pub fn enabled(&self) -> bool {
        self.enabled
    }

    /// TSC ticks of the probe: ECB encryption of 16 KiB in place, best of [`PROBE_REPS`].
    pub fn probe(&mut self) -> u64 {
        let mut best = u64::MAX;
        for _ in 0..PROBE_REPS {
            let t0 = timer::start();
            let job = Job::in_place(&self.key, &mut self.buf);
            let r = self.engine.process_one(Algorithm::AesEcb, Op::Encrypt, job);
            let t1 = timer::stop();
            debug_assert!(r.is_ok());
            best = best.min(t1.wrapping_sub(t0));
        }
        best
    }

    /// Runs the probe for about `span` to settle the clock and learn the best probe time.
    pub fn settle(&mut self, span: std::time::Duration) {
        let t = std::time::Instant::now();
        while t.elapsed() < span {
            let p = self.probe();
            self.best = self.best.min(p);
        }
    }

    fn passes(&mut self, before: u64, after: u64) -> bool {
        self.best = self.best.min(before).min(after);
        let limit = self.best as f64 * self.threshold;
        before as f64 <= limit && after as f64 <= limit
    }
}

/// Builds the progress bar for `total` samples (drawn on stderr when it is a terminal).
pub fn progress(total: u64) -> ProgressBar {
    let bar = ProgressBar::with_draw_target(Some(total), ProgressDrawTarget::stderr_with_hz(4));
    let style = ProgressStyle::with_template(
        "{msg:24} [{bar:36}] {percent:>3}% {elapsed_precise} eta {eta}",
    )
    .unwrap_or_else(|_| ProgressStyle::default_bar())
    .progress_chars("=> ");
    bar.set_style(style);
    bar
}

/// The order of round `s` over `n` configurations: a permutation drawn afresh each round
/// (Fisher-Yates from the workloads' [`Rng`] seeded with `s`, so runs repeat), so that no
/// configuration always follows the same one. Configurations are built engine by engine within
/// a mode, and the rotating start this replaces kept that order, so `comb` always came right
/// after `sequential` of the same mode. That matters on the Zen 3 VM at times: in one spell,
/// the gate's probe after one-message-at-a-time CBC encryption failed in 50-80% of the samples
/// of `--engines sequential` alone, and comb CBC measured 5-15% slower beside `sequential`
/// than alone; half an hour later neither showed. A/B runs of this order against the old one fell
/// in such a slow spell and showed no difference either way.
fn round_order(n: usize, s: usize) -> Vec<usize> {
    let mut rng = Rng::new(s as u64);
    let mut order: Vec<usize> = (0..n).collect();
    for i in (1..n).rev() {
        order.swap(i, rng.range(0, i));
    }
    order
}

/// Measures every task, round-robin, through the gate; the bar advances one step per sample.
/// `label` names the run on the bar.
pub fn run(
    tasks: &mut [Task],
    gate: &mut Gate,
    bar: &ProgressBar,
    label: &str,
) -> Result<Vec<Measured>, String> {
    let rounds = tasks.iter().map(|t| t.samples).max().unwrap_or(0);
    let n = tasks.len();
    let mut rejected_total = 0usize;
    bar.set_message(label.to_string());
    for s in 0..rounds {
        for k in round_order(n, s) {
            let t = &mut tasks[k];
            if t.data.len() >= t.samples {
                continue;
            }
            let mut attempt = 0;
            loop {
                let before = if gate.enabled { gate.probe() } else { 0 };
                t.sampler.warm(t.warmup)?;
                let (ticks, bytes) = t.sampler.timed(t.calls)?;
                let after = if gate.enabled { gate.probe() } else { 0 };
                if bytes == 0 {
                    return Err("a configuration processes no bytes (all messages empty)".into());
                }
                let cpb = ticks as f64 / bytes as f64;
                let pass = !gate.enabled || gate.passes(before, after);
                if pass || attempt >= gate.max_retries {
                    if !pass {
                        t.forced += 1;
                    }
                    t.data.push(cpb);
                    break;
                }
                t.rejected += 1;
                rejected_total += 1;
                attempt += 1;
            }
            bar.inc(1);
        }
        if rejected_total > 0 {
            bar.set_message(format!("{label} ({rejected_total} retaken)"));
        }
    }
    Ok(tasks
        .iter()
        .filter_map(|t| {
            Summary::of(&t.data).map(|tsc| Measured {
                config: t.config.clone(),
                tsc,
                cpb_core: f64::NAN,
                samples: t.data.len(),
                rejected: t.rejected,
                forced: t.forced,
            })
        })
        .collect())
}

#[cfg(test)]
mod tests {
    use super::round_order;

    #[test]
    fn each_round_is_a_permutation_and_successors_vary() {
        for n in [0, 1, 2, 3, 13, 100] {
            // successor[a] = the set of configurations seen right after a.
            let mut successors = vec![std::collections::BTreeSet::new(); n];
            for s in 0..91 {
                let order = round_order(n, s);
                let mut seen = order.clone();
                seen.sort_unstable();
                assert_eq!(seen, (0..n).collect::<Vec<_>>(), "n={n} round {s}");
                assert_eq!(order, round_order(n, s), "deterministic");
                for w in order.windows(2) {
                    successors[w[0]].insert(w[1]);
                }
            }
            // With three or more configurations none keeps one successor throughout (under
            // the rotating start it replaces, each had exactly one).
            if n >= 3 {
                assert!(successors.iter().all(|s| s.len() > 1), "n={n}");
            }
        }
        assert_ne!(round_order(13, 0), round_order(13, 1));
    }
}
