//! From options to configurations: a [`Sweep`] (algorithms × operations × workloads ×
//! engines × lane counts) becomes verified, ready-to-time [`Task`]s.

use super::engines::{self, BenchEngine, KeySet};
use super::measure::{BatchSampler, Config, LaneSource, Task};
use super::spec::{mode_key, LaneSpec};
use super::workload::{Dist, Rng};
use comb::{Algorithm, Op};

/// Settings shared by every configuration of a run.
pub struct Common {
    pub batch: usize,
    pub key_bits: usize,
    /// Keys a batch (`--keys`): message `i` takes key `i mod keys`.
    pub keys: usize,
    /// Bytes of associated data per AEAD message (`--ad-len`).
    pub ad_len: usize,
    pub seed: u64,
    pub warmup: usize,
    /// The engines of the run, in `--engines` order.
    pub engines: Vec<Box<dyn BenchEngine>>,
    /// The tuning file the library applied (`comb tune`), to label `--lanes auto` figures.
    pub tuned: Option<comb::Tuning>,
    /// The library backend.
    pub backend: comb::Backend,
}

impl Common {
    /// The keys of the run for `alg` (`keys` of them, the first the same whatever their
    /// number): `key_bits` bits derived from the seed, or, for an algorithm that does not take
    /// that size (the `aes128-*` modes; McOE-G's 32-byte `K1 || K2`), its own key length.
    pub fn keys_for(&self, alg: Algorithm) -> KeySet {
        let n = if alg.key_len_allowed(self.key_bits / 8) {
            self.key_bits / 8
        } else {
            alg.key_lens()[0]
        };
        let mut rng = Rng::new(self.seed ^ 0x006b_6579); // "key"
        KeySet::cycle(
            (0..self.keys.max(1))
                .map(|_| {
                    let mut k = vec![0u8; n];
                    rng.fill(&mut k);
                    k
                })
                .collect(),
        )
    }
}

/// One part of a run: every combination of its lists is a configuration.
#[derive(Clone, Debug)]
pub struct Sweep {
    pub phase: &'static str,
    pub algs: Vec<Algorithm>,
    pub ops: Vec<Op>,
    pub dists: Vec<Dist>,
    pub lanes: LaneSpec,
    /// Only these engines of the run (`None`: all of them).
    pub engines: Option<Vec<&'static str>>,
    /// Messages per call (`None`: the run's `--batch`).
    pub batch: Option<usize>,
    pub samples: usize,
    pub calls: usize,
}

impl Sweep {
    fn takes(&self, engine: &str) -> bool {
        self.engines.as_ref().is_none_or(|v| v.contains(&engine))
    }
}

/// Builds and verifies the tasks of `sweep`. `notes` collects what was skipped.
pub fn build(sweep: &Sweep, common: &Common, notes: &mut Vec<String>) -> Result<Vec<Task>, String> {
    let mut tasks = Vec::new();
    let batch = sweep.batch.unwrap_or(common.batch);
    for &alg in &sweep.algs {
        let keys = common.keys_for(alg);
        for &op in &sweep.ops {
            for dist in &sweep.dists {
                let raw = dist.batches(batch, common.seed);
                let pool =
                    engines::build_batches(alg, op, &keys, &raw, common.seed, common.ad_len)?;
                let messages: usize = pool.iter().map(|b| b.data.len()).sum();
                let bytes: u64 = pool.iter().map(|b| b.bytes()).sum();
                let mean_len = bytes as f64 / messages.max(1) as f64;
                if bytes == 0 {
                    return Err(format!(
                        "{} with {}: every message is empty, cycles per byte are undefined",
                        alg.id(),
                        dist.label()
                    ));
                }
                for engine in common.engines.iter().filter(|e| sweep.takes(e.name())) {
                    if !engine.supports(alg, op) {
                        let note =
                            format!("{} does not implement {}", engine.name(), mode_key(alg, op));
                        note_once(notes, note);
                        continue;
                    }
                    if !engine.takes_keys(keys.count()) {
                        let note = format!("{} takes one key a batch: not run", engine.name());
                        note_once(notes, note);
                        continue;
                    }
                    for (lanes, source) in
                        lane_choices(engine.as_ref(), alg, op, &sweep.lanes, common)
                    {
                        let explicit = if source == LaneSource::Explicit {
                            lanes
                        } else {
                            None
                        };
                        let mut prepared = engine.prepare(alg, op, &keys, explicit)?;
                        if let Err(e) = engines::load_pool(prepared.as_mut(), &pool) {
                            // An anchor's limit (not a wrong result): the rest of the run goes
                            // on without this configuration.
                            let note = format!(
                                "{} skipped {} on {}: {e}",
                                engine.name(),
                                mode_key(alg, op),
                                dist.label()
                            );
                            note_once(notes, note);
                            continue;
                        }
                        engines::verify(prepared.as_mut(), engine.name(), alg, op, &keys, &pool)?;
                        let mut config = Config::new(
                            sweep.phase,
                            alg,
                            op,
                            engine.name(),
                            dist,
                            batch,
                            lanes,
                            source,
                            common.key_bits,
                        );
                        config.mean_len = mean_len;
                        config.keys = keys.count();
                        config.ad_len = engines::ad_len_for(alg, common.ad_len);
                        let what =
                            format!("{} {} {}", mode_key(alg, op), engine.name(), dist.label());
                        let sampler = BatchSampler::new(prepared, pool.clone(), what);
                        tasks.push(Task::new(
                            config,
                            Box::new(sampler),
                            sweep.samples,
                            sweep.calls,
                            common.warmup,
                        ));
                    }
                }
            }
        }
    }
    Ok(tasks)
}

/// Adds `note` to `notes` unless the run already has it (a sweep meets the same skipped
/// engine once per workload and lane count).
fn note_once(notes: &mut Vec<String>, note: String) {
    if !notes.contains(&note) {
        notes.push(note);
    }
}

/// The lane counts to measure `engine` with, and where each came from.
fn lane_choices(
    engine: &dyn BenchEngine,
    alg: Algorithm,
    op: Op,
    spec: &LaneSpec,
    common: &Common,
) -> Vec<(Option<usize>, LaneSource)> {
    if !engine.has_lanes() {
        return vec![(None, LaneSource::None)];
    }
    match spec {
        LaneSpec::List(v) => v.iter().map(|&p| (Some(p), LaneSource::Explicit)).collect(),
        LaneSpec::Auto => {
            // The library's engine already applies the tuning file; say where P came from.
            let tuned = common
                .tuned
                .as_ref()
                .is_some_and(|t| t.lanes(common.backend, alg, op).is_some());
            let source = if tuned {
                LaneSource::Tuned
            } else {
                LaneSource::Default
            };
            vec![(engine.default_lanes(alg, op), source)]
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The tasks and notes [`build`] makes of encrypting `algs` on 64-byte messages with
    /// `engines`, `ad_len` bytes of associated data per AEAD message.
    fn built(engines: &[&str], ad_len: usize, algs: Vec<Algorithm>) -> (Vec<Task>, Vec<String>) {
        let common = Common {
            batch: 4,
            key_bits: 128,
            keys: 1,
            ad_len,
            seed: 9,
            warmup: 0,
            engines: engines
                .iter()
                .map(|n| engines::by_name(n).expect("engine"))
                .collect(),
            tuned: None,
            backend: comb::Engine::new().expect("engine").backend(),
        };
        let sweep = Sweep {
            phase: "custom",
            algs,
            ops: vec![Op::Encrypt],
            dists: vec![Dist::Fixed(64)],
            lanes: LaneSpec::Auto,
            engines: None,
            batch: None,
            samples: 1,
            calls: 1,
        };
        let mut notes = Vec::new();
        let tasks = build(&sweep, &common, &mut notes).expect("the sweep builds");
        (tasks, notes)
    }

    /// Every configuration records the associated data its messages carry: the run's for the
    /// AEAD modes, none for the others.
    #[test]
    fn configurations_record_their_associated_data() {
        let algs = vec![Algorithm::AesGcm, Algorithm::AesCbc];
        let (tasks, notes) = built(&["sequential", "comb"], 13, algs);
        assert_eq!(tasks.len(), 4);
        for t in &tasks {
            let want = if t.config.alg.is_aead() { 13 } else { 0 };
            assert_eq!(t.config.ad_len, want, "{:?}", t.config.alg);
        }
        assert!(notes.is_empty(), "{notes:?}");
    }

    /// An anchor refusing a workload (intel-ipsec-mb's CCM takes at most 46 bytes of
    /// associated data) skips that configuration with a note; the rest of the run is built.
    #[cfg(feature = "anchors")]
    #[test]
    fn an_anchors_refusal_skips_only_its_configuration() {
        if engines::by_name("ipsec-mb").is_err() {
            return; // no intel-ipsec-mb on this machine
        }
        let algs = vec![Algorithm::AesCcm, Algorithm::AesGcm];
        let (tasks, notes) = built(&["comb", "ipsec-mb"], 47, algs);
        let names: Vec<String> = tasks
            .iter()
            .map(|t| format!("{} {}", t.config.alg.id(), t.config.engine))
            .collect();
        assert_eq!(
            names,
            ["aes-ccm comb", "aes-gcm comb", "aes-gcm ipsec-mb"],
            "{notes:?}"
        );
        assert_eq!(notes.len(), 1);
        assert!(
            notes[0].contains("ipsec-mb skipped aes-ccm/encrypt"),
            "{}",
            notes[0]
        );
        assert!(notes[0].contains("at most 46 bytes"), "{}", notes[0]);
    }
}
