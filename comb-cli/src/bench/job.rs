//! What a `comb bench` command measures (the main job, `--paper`, or a custom sweep), and
//! running it: build and verify every configuration, measure round-robin with a progress
//! bar, print the tables, write JSON, plots and the report.

use super::engines;
use super::gf;
use super::measure::{self, Measured, Task};
use super::paper;
use super::plot::{self, PlotInput};
use super::report;
use super::session::{self, Session};
use super::spec::{self, LaneSpec};
use super::suite::{self, Common, Sweep};
use super::table;
use super::workload::Dist;
use super::{Args, Options};
use comb::{Algorithm, Op};
use std::path::PathBuf;
use std::process::ExitCode;

/// Which kind of run a command is.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Kind {
    /// `comb bench` with no workload options.
    Main,
    /// `comb bench --paper`.
    Paper,
    /// Anything else: one sweep of the given lists.
    Custom,
}

/// Samples and calls of the main figures (papers' method).
pub const SAMPLES: usize = 91;
pub const CALLS: usize = 200;
/// With `--quick`: fewer and shorter samples, so that the whole main job stays under 30 s
/// with a fifth of its samples retaken by the gate (on a Zen 3 VM, 100 calls per sample and
/// 40 in the secondary phases took 36.7 s with 9% retaken and 44.7 s with 20%; the time is
/// proportional to the calls). 60 calls of ECB, the fastest mode, on the realistic mix are
/// still about 7·10^5 TSC ticks, far above the timer's resolution.
pub const QUICK_SAMPLES: usize = 31;
pub const QUICK_CALLS: usize = 60;
/// The secondary phases with `--quick`.
pub const QUICK_SWEEP_SAMPLES: usize = 15;
pub const QUICK_SWEEP_CALLS: usize = 24;
/// The main job's secondary phases (lane sweep, length curves, heat maps), which are read as
/// shapes and for the best lane count: fewer samples than the main table, so that the main
/// job over twenty algorithms stays near 3 minutes (at 91 x 200 throughout it took 6 min 16 s
/// on a quiet Zen 4 VM, 90% of it in these phases). At 41 x 100 they still took 240 of the
/// 400 s of a main job with the anchors on the contended Zen 3 VM (its table, at 91 x 200,
/// the other 160); 25 x 60 takes them to about 40% of that.
pub const SWEEP_SAMPLES: usize = 25;
pub const SWEEP_CALLS: usize = 60;
/// Untimed calls before each sample.
pub const WARMUP: usize = 10;
/// Messages per call.
pub const BATCH: usize = 64;
/// Most associated data per message `--ad-len` takes (1 MiB): every batch of the pool holds
/// a copy for each message, so a mistyped size would otherwise exhaust memory.
pub const MAX_AD_LEN: usize = 1 << 20;

/// Most keys a batch (`--keys`): enough for a key per message of any sensible batch, few
/// enough that expanding them all stays instant.
pub const MAX_KEYS: usize = 4096;
/// Default fixed lengths.
pub const LENGTHS: [usize; 5] = [128, 256, 512, 1024, 2048];
/// Lengths of the cycles-per-byte-against-length plot and the heat map (papers/000 Fig. 3–4).
pub const PLOT_LENGTHS: [usize; 7] = [32, 64, 128, 256, 512, 1024, 2048];
/// The same with `--quick`: every other one. The length curves (every mode, sequential and
/// comb) were the quick job's largest secondary phase: 7.3 s of 28 s on a slow Zen 3 VM.
pub const QUICK_PLOT_LENGTHS: [usize; 4] = [32, 128, 512, 2048];

/// A resolved command.
#[derive(Clone, Debug)]
pub struct Plan {
    pub kind: Kind,
    pub quick: bool,
    pub sweeps: Vec<Sweep>,
    pub batch: usize,
    pub samples: usize,
    pub calls: usize,
    pub warmup: usize,
    pub engines: Vec<String>,
    /// Whether to run papers/001 Table 2 (paper job).
    pub table2: bool,
    pub report_dir: Option<PathBuf>,
}

/// Scales a secondary phase's default by the user's change of the main one.
fn scaled(base: usize, user: Option<usize>, default: usize, min: usize) -> usize {
    match user {
        Some(u) => ((base as f64 * u as f64 / default as f64).round() as usize).max(min),
        None => base,
    }
}

fn resolve_dist(a: &Options) -> Result<Vec<Dist>, String> {
    let file = |path: &std::path::Path| -> Result<Vec<Dist>, String> {
        let text = std::fs::read_to_string(path).map_err(|e| format!("{}: {e}", path.display()))?;
        let lengths =
            spec::parse_lengths_file(&text).map_err(|e| format!("{}: {e}", path.display()))?;
        let name = path
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_else(|| path.display().to_string());
        Ok(vec![Dist::File { name, lengths }])
    };
    let fixed = |list: &str| -> Result<Vec<Dist>, String> {
        Ok(spec::parse_lengths(list)?
            .into_iter()
            .map(Dist::Fixed)
            .collect())
    };
    match a.dist.as_deref().map(str::trim) {
        Some("realistic") => {
            if a.lengths.is_some() || a.lengths_file.is_some() {
                return Err("--lengths/--lengths-file go with --dist fixed or --dist file".into());
            }
            Ok(vec![Dist::Realistic])
        }
        Some("fixed") => match &a.lengths {
            Some(l) => fixed(l),
            None => Ok(LENGTHS.iter().map(|&n| Dist::Fixed(n)).collect()),
        },
        Some("file") => match (&a.lengths_file, &a.lengths) {
            (Some(p), _) => file(p),
            (None, Some(l)) => file(std::path::Path::new(l)),
            (None, None) => Err("--dist file needs --lengths-file FILE".into()),
        },
        Some(other) => Err(format!(
            "unknown --dist {other:?} (realistic, fixed or file)"
        )),
        None => match (&a.lengths_file, &a.lengths) {
            (Some(p), _) => file(p),
            (None, Some(l)) => match spec::parse_lengths(l) {
                Ok(v) => Ok(v.into_iter().map(Dist::Fixed).collect()),
                Err(e) if std::path::Path::new(l).is_file() => {
                    file(std::path::Path::new(l)).map_err(|f| format!("{e}; {f}"))
                }
                Err(e) => Err(e),
            },
            (None, None) => Ok(vec![Dist::Realistic]),
        },
    }
}

/// The main job's lane sweep: 1..=16, and up to 32 in steps of 4 for a backend whose
/// default is wider than 8 (two lanes per register). With `--quick`, every other count from
/// 4 up (and 24, 32 on a wide backend): the lane sweep and the heat maps took 58% of the quick
/// job's samples at 20 lane counts, and the job 30 s on a slow Zen 3 VM.
fn sweep_lanes(quick: bool) -> Vec<usize> {
    let default = comb::Engine::new()
        .and_then(|e| comb::Engine::untuned(e.backend()))
        .map_or(8, |e| e.lanes(Algorithm::AesCbc, Op::Encrypt));
    let wide = default > 8;
    let mut lanes: Vec<usize> = if quick {
        [1, 2, 3].into_iter().chain((4..=16).step_by(2)).collect()
    } else {
        (1..=16).collect()
    };
    match (wide, quick) {
        (true, false) => lanes.extend([20, 24, 28, 32]),
        (true, true) => lanes.extend([24, 32]),
        (false, _) => {}
    }
    lanes
}

/// The engines of a run without `--engines`: ours; the main job also every anchor compiled
/// in (the `anchors` feature), beside ours in its main table.
fn default_engines(kind: Kind) -> Vec<String> {
    let anchors = if kind == Kind::Main && cfg!(feature = "anchors") {
        engines::ANCHORS
    } else {
        &[]
    };
    engines::BUILTIN
        .iter()
        .chain(anchors)
        .map(|s| s.to_string())
        .collect()
}

/// Turns the options into a plan.
pub fn plan(a: &Options) -> Result<Plan, String> {
    if ![128, 192, 256].contains(&a.key_bits) {
        return Err(format!("--key-bits {} (128, 192 or 256)", a.key_bits));
    }
    if !(1..=MAX_KEYS).contains(&a.keys) {
        return Err(format!("--keys {} (1 to {MAX_KEYS})", a.keys));
    }
    let quick = a.quick;
    let samples = a
        .samples
        .unwrap_or(if quick { QUICK_SAMPLES } else { SAMPLES })
        .max(1);
    let calls = a
        .calls
        .unwrap_or(if quick { QUICK_CALLS } else { CALLS })
        .max(1);
    let warmup = a.warmup.unwrap_or(WARMUP);
    let batch = a.batch.unwrap_or(BATCH);
    if batch == 0 {
        return Err("--batch must be at least 1".into());
    }
    if a.ad_len > MAX_AD_LEN {
        return Err(format!(
            "--ad-len {} is more than the benchmark's {MAX_AD_LEN} bytes per message",
            a.ad_len
        ));
    }
    let (s_def, c_def) = if quick {
        (QUICK_SAMPLES, QUICK_CALLS)
    } else {
        (SAMPLES, CALLS)
    };
    let sc = |base_s: usize, base_c: usize| {
        (
            scaled(base_s, a.samples, s_def, 3),
            scaled(base_c, a.calls, c_def, 5),
        )
    };
    let main = a.alg.is_none()
        && a.op.is_none()
        && a.dist.is_none()
        && a.lengths.is_none()
        && a.lengths_file.is_none()
        && a.batch.is_none()
        && a.lanes.is_none()
        && a.ad_len == 0
        && a.keys == 1;
    let kind = if a.paper {
        Kind::Paper
    } else if main {
        Kind::Main
    } else {
        Kind::Custom
    };
    let engines = match &a.engines {
        Some(list) => spec::parse_engines(list)?,
        None => default_engines(kind),
    };
    let chained: Vec<Algorithm> = Algorithm::ALL
        .iter()
        .copied()
        .filter(|a| a.is_chained(Op::Encrypt))
        .collect();
    let sweeps = match kind {
        Kind::Main => {
            // The same configurations with fewer samples and calls outside the main table
            // (scaled with any --samples / --calls given).
            let (s2, c2) = if quick {
                sc(QUICK_SWEEP_SAMPLES, QUICK_SWEEP_CALLS)
            } else {
                sc(SWEEP_SAMPLES, SWEEP_CALLS)
            };

            let lanes = LaneSpec::List(sweep_lanes(quick));
            let plot_lengths: &[usize] = if quick {
                &QUICK_PLOT_LENGTHS
            } else {
                &PLOT_LENGTHS
            };
            let plot_lengths: Vec<Dist> = plot_lengths.iter().map(|&n| Dist::Fixed(n)).collect();
            let chained_dec: Vec<Algorithm> = Algorithm::ALL
                .iter()
                .copied()
                .filter(|a| a.is_chained(Op::Decrypt))
                .collect();
            vec![
                Sweep {
                    phase: "modes",
                    algs: Algorithm::ALL.to_vec(),
                    ops: vec![Op::Encrypt, Op::Decrypt],
                    dists: vec![Dist::Realistic],
                    lanes: LaneSpec::Auto,
                    engines: None,
                    batch: None,
                    samples,
                    calls,
                },
                Sweep {
                    phase: "lanes",
                    algs: chained,
                    ops: vec![Op::Encrypt],
                    dists: vec![Dist::Realistic],
                    lanes: lanes.clone(),
                    engines: Some(vec!["comb"]),
                    batch: None,
                    samples: s2,
                    calls: c2,
                },
                Sweep {
                    phase: "lanes",
                    algs: chained_dec,
                    ops: vec![Op::Decrypt],
                    dists: vec![Dist::Realistic],
                    lanes: lanes.clone(),
                    engines: Some(vec!["comb"]),
                    batch: None,
                    samples: s2,
                    calls: c2,
                },
                Sweep {
                    phase: "lengths",
                    algs: Algorithm::ALL.to_vec(),
                    ops: vec![Op::Encrypt],
                    dists: plot_lengths.clone(),
                    lanes: LaneSpec::Auto,
                    // The anchors a default main job adds run in its table only: their length
                    // curves too took it from 264 s to 400 s on a contended Zen 3 VM. Named
                    // with --engines, they run here as well.
                    engines: a.engines.is_none().then(|| engines::BUILTIN.to_vec()),
                    batch: None,
                    samples: s2,
                    calls: c2,
                },
                Sweep {
                    phase: "heatmap",
                    algs: vec![Algorithm::AesCbc, Algorithm::AesCmac],
                    ops: vec![Op::Encrypt],
                    dists: plot_lengths,
                    lanes,
                    engines: Some(vec!["comb"]),
                    batch: None,
                    samples: s2,
                    calls: c2,
                },
            ]
        }
        Kind::Paper => {
            let (s, c) = if quick {
                sc(QUICK_SWEEP_SAMPLES, QUICK_SWEEP_CALLS)
            } else {
                (samples, calls)
            };
            paper::sweeps(s, c)
        }
        Kind::Custom => vec![Sweep {
            phase: "custom",
            algs: spec::parse_algs(a.alg.as_deref().unwrap_or("all"))?,
            ops: spec::parse_ops(a.op.as_deref().unwrap_or("encrypt"))?,
            dists: resolve_dist(a)?,
            lanes: LaneSpec::parse(a.lanes.as_deref().unwrap_or("auto"))?,
            engines: None,
            batch: None,
            samples,
            calls,
        }],
    };
    let report_dir = match (&a.report, kind, a.no_report) {
        (_, _, true) => None,
        (Some(d), _, false) => Some(d.clone()),
        (None, Kind::Main, false) => Some(PathBuf::from("report")),
        (None, _, false) => None,
    };
    Ok(Plan {
        kind,
        quick,
        sweeps,
        batch,
        samples,
        calls,
        warmup,
        engines,
        table2: kind == Kind::Paper,
        report_dir,
    })
}

fn command_line() -> String {
    let mut parts = vec!["comb".to_string()];
    parts.extend(std::env::args().skip(1));
    parts.join(" ")
}

/// Runs `comb bench`.
pub fn run(a: Args) -> Result<ExitCode, String> {
    let a = *a.opts;
    let plan = plan(&a)?;
    let engine_list: Vec<Box<dyn engines::BenchEngine>> = plan
        .engines
        .iter()
        .map(|n| engines::by_name(n))
        .collect::<Result<_, _>>()?;
    let backend = comb::Engine::new().map_err(|e| e.to_string())?.backend();
    let mut notes: Vec<String> = Vec::new();
    if a.keys > 1 {
        notes.push(format!(
            "--keys {0}: message i of each batch under key i mod {0}",
            a.keys
        ));
    }
    let tuned = match comb::Tuning::load() {
        Ok(Some(t)) => {
            let path = comb::Tuning::path()
                .map(|p| p.display().to_string())
                .unwrap_or_default();
            notes.push(format!(
                "--lanes auto: the library applied the tuning file {path}"
            ));
            Some(t)
        }
        Ok(None) => None,
        Err(e) => {
            notes.push(format!("tuning file ignored by the library: {e}"));
            None
        }
    };

    let session = Session::start(a.cpu, !a.no_gate, plan.warmup, a.seed)?;
    let common = Common {
        batch: plan.batch,
        key_bits: a.key_bits,
        keys: a.keys,
        ad_len: a.ad_len,
        seed: a.seed,
        warmup: plan.warmup,
        engines: engine_list,
        tuned,
        backend,
    };

    // Build and verify everything before timing anything.
    let mut phases: Vec<(String, Vec<Task>)> = Vec::new();
    for sweep in &plan.sweeps {
        let tasks = suite::build(sweep, &common, &mut notes)?;
        phases.push((sweep.phase.to_string(), tasks));
    }
    if plan.table2 {
        let threads: Vec<usize> = if std::thread::available_parallelism()
            .map(|n| n.get())
            .unwrap_or(1)
            >= 2
        {
            vec![1, 2]
        } else {
            notes.push("papers/001 Table 2: one CPU only, the 2-thread row is skipped".into());
            vec![1]
        };
        let (s, c) = if plan.quick {
            (15, 40)
        } else {
            (plan.samples, plan.calls)
        };
        let tasks = paper::table2_tasks(&threads, &session.worker_cpus(2), s, c, plan.warmup)?;
        phases.push(("paper-t2".into(), tasks));
        phases.push(("paper-gf".into(), gf::tasks(s, c, plan.warmup)?));
    }
    let configs: usize = phases.iter().map(|p| p.1.len()).sum();
    let total: u64 = phases
        .iter()
        .flat_map(|p| p.1.iter())
        .map(|t| t.samples as u64)
        .sum();
    eprintln!(
        "comb bench: {configs} configurations verified against the sequential engine; measuring {total} samples \
         (median of {} × {} calls for the main figures; gate {})",
        plan.samples,
        plan.calls,
        if a.no_gate { "off" } else { "on" }
    );
    let mut session = session;
    let bar = measure::progress(total);
    let mut results: Vec<Measured> = Vec::new();
    for (label, tasks) in &mut phases {
        results.extend(measure::run(tasks, &mut session.gate, &bar, label)?);
    }
    bar.finish_and_clear();
    drop(phases);
    let machine = session.finish(&mut results, command_line());

    // Tables.
    let all: Vec<&Measured> = results.iter().collect();
    let of = |phases: &[&str]| -> Vec<&Measured> {
        results
            .iter()
            .filter(|m| phases.contains(&m.config.phase))
            .collect()
    };
    let mut tables: Vec<(String, table::Table)> = Vec::new();
    match plan.kind {
        Kind::Main => {
            for t in table::modes_tables(&of(&["modes", "lanes"]), &plan.engines) {
                tables.push(("Sequential against comb".into(), t));
            }
            for t in table::lanes_tables(&of(&["modes", "lanes"])) {
                tables.push(("Lanes".into(), t));
            }
        }
        Kind::Paper => {
            for t in paper::tables(&all).into_iter().chain(gf::tables(&all)) {
                tables.push(("Papers".into(), t));
            }
            if plan
                .engines
                .iter()
                .any(|e| engines::ANCHORS.contains(&e.as_str()))
            {
                for t in table::modes_tables(&of(&["paper-t4"]), &plan.engines) {
                    tables.push(("Engines".into(), t));
                }
            }
        }
        Kind::Custom => {
            for t in table::modes_tables(&all, &plan.engines) {
                tables.push(("Results".into(), t));
            }
            for t in table::lanes_tables(&all) {
                tables.push(("Lanes".into(), t));
            }
        }
    }
    println!("{}", session::machine_line(&machine));
    println!();
    for (_, t) in &tables {
        println!("{}", t.text());
    }
    let gate = session::gate_line(&machine, &results);
    println!("{gate}");
    for n in &notes {
        println!("note: {n}");
    }

    // Files.
    let plot_input = match plan.kind {
        Kind::Main => PlotInput {
            lengths: of(&["lengths"]),
            lanes: of(&["modes", "lanes"]),
            heat: of(&["heatmap"]),
            engine_order: plan.engines.clone(),
        },
        _ => {
            // The GF(2^128) primitives of `--paper` (results with a subject) have their own
            // tables; drawn as curves they would pass for their placeholder algorithm's.
            let modes: Vec<&Measured> = all
                .iter()
                .copied()
                .filter(|m| m.config.subject.is_none())
                .collect();
            PlotInput {
                lengths: modes.clone(),
                lanes: modes.clone(),
                heat: modes,
                engine_order: plan.engines.clone(),
            }
        }
    };
    if let Some(path) = &a.json {
        super::output::write_json(path, &machine, &results)?;
        println!("wrote {}", path.display());
    }
    if let Some(dir) = &a.plot {
        let files = plot::write_all(dir, &plot_input)?;
        if files.is_empty() {
            println!("no plots: these results have no length or lane series to draw");
        } else {
            println!("wrote {} plots in {}", files.len(), dir.display());
        }
    }
    if let Some(dir) = &plan.report_dir {
        let files = plot::write_all(dir, &plot_input)?;
        report::write(dir, &machine, &results, &tables, &files, &gate, &notes)?;
        println!(
            "wrote {}/summary.md, results.json and {} plots",
            dir.display(),
            files.len()
        );
    }
    println!("took {:.1} s", machine.wall_seconds);
    Ok(ExitCode::SUCCESS)
}

#[cfg(test)]
mod tests {
    use super::*;
    use clap::Parser;

    #[derive(Parser)]
    struct Cli {
        #[command(flatten)]
        args: Args,
    }

    fn plan_of(argv: &[&str]) -> Result<Plan, String> {
        let cli = Cli::try_parse_from(std::iter::once("bench").chain(argv.iter().copied()))
            .map_err(|e| e.to_string())?;
        plan(&cli.args.opts)
    }

    /// The main job's (samples, calls): `main` for the main table, `sweeps` for every
    /// secondary phase.
    fn assert_samples(p: &Plan, main: (usize, usize), sweeps: (usize, usize)) {
        assert_eq!((p.sweeps[0].samples, p.sweeps[0].calls), main);
        for s in &p.sweeps[1..] {
            assert_eq!((s.samples, s.calls), sweeps, "{}", s.phase);
        }
    }

    #[test]
    fn ad_len_is_a_workload_option_and_bounded() {
        let p = plan_of(&["--ad-len", "13"]).unwrap();
        assert_eq!(p.kind, Kind::Custom);
        assert_eq!(plan_of(&[]).unwrap().kind, Kind::Main);
        assert!(plan_of(&["--ad-len", &MAX_AD_LEN.to_string()]).is_ok());
        let e = plan_of(&["--ad-len", &(MAX_AD_LEN + 1).to_string()]).unwrap_err();
        assert!(e.contains("--ad-len"), "{e}");
        assert!(plan_of(&["--paper", "--ad-len", "13"]).is_err());
    }

    #[test]
    fn main_job_and_quick() {
        let p = plan_of(&[]).unwrap();
        assert_eq!(p.kind, Kind::Main);
        assert_eq!(p.report_dir, Some(PathBuf::from("report")));
        let phases: Vec<&str> = p.sweeps.iter().map(|s| s.phase).collect();
        assert_eq!(phases, ["modes", "lanes", "lanes", "lengths", "heatmap"]);
        assert_samples(&p, (SAMPLES, CALLS), (SWEEP_SAMPLES, SWEEP_CALLS));
        // An explicit --samples / --calls scales the secondary phases with the main table.
        let d = plan_of(&["--samples", "182", "--calls", "400"]).unwrap();
        assert_eq!((d.sweeps[0].samples, d.sweeps[0].calls), (182, 400));
        assert_eq!(
            (d.sweeps[1].samples, d.sweeps[1].calls),
            (2 * SWEEP_SAMPLES, 2 * SWEEP_CALLS)
        );
        let q = plan_of(&["--quick", "--json", "x.json", "--no-report"]).unwrap();
        assert_eq!(q.kind, Kind::Main);
        assert_eq!(q.report_dir, None);
        assert_samples(
            &q,
            (QUICK_SAMPLES, QUICK_CALLS),
            (QUICK_SWEEP_SAMPLES, QUICK_SWEEP_CALLS),
        );
        // Coarser sweeps: fewer lane counts and plot lengths than the main job's.
        let lanes_of = |p: &Plan| match &p.sweeps[1].lanes {
            LaneSpec::List(l) => l.clone(),
            other => panic!("the lane sweep is a list, not {other:?}"),
        };
        let (full, coarse) = (lanes_of(&p), lanes_of(&q));
        assert!(coarse.len() < full.len() && coarse.iter().all(|l| full.contains(l)));
        assert_eq!(full[..16], (1..=16).collect::<Vec<_>>());
        assert_eq!(coarse[..10], [1, 2, 3, 4, 6, 8, 10, 12, 14, 16]);
        let fixed = |d: &[Dist]| -> Vec<usize> {
            d.iter()
                .map(|d| match d {
                    Dist::Fixed(n) => *n,
                    other => panic!("a fixed length, not {other:?}"),
                })
                .collect()
        };
        assert_eq!(fixed(&p.sweeps[3].dists), PLOT_LENGTHS);
        assert_eq!(fixed(&q.sweeps[3].dists), QUICK_PLOT_LENGTHS);
        assert_eq!(fixed(&q.sweeps[4].dists), QUICK_PLOT_LENGTHS);
        let e = plan_of(&["--engines", "sequential,comb,openssl"]).unwrap();
        assert_eq!(e.kind, Kind::Main);
        assert_eq!(e.engines.len(), 3);
        // Without --engines: ours, and in the main job every anchor built in.
        let anchors = if cfg!(feature = "anchors") {
            engines::ANCHORS.len()
        } else {
            0
        };
        assert_eq!(p.engines.len(), 2 + anchors);
        assert_eq!(p.engines[..2], ["sequential", "comb"]);
        let ours = Some(vec!["sequential", "comb"]);
        assert_eq!(p.sweeps[0].engines, None, "the main table: every engine");
        assert_eq!(p.sweeps[3].engines, ours, "the length curves: ours");
        assert_eq!(e.sweeps[3].engines, None, "named anchors: their curves too");
        let c = plan_of(&["--alg", "aes-cbc"]).unwrap();
        assert_eq!(c.engines, ["sequential", "comb"]);
        let t = plan_of(&["--paper"]).unwrap();
        assert_eq!(t.engines, ["sequential", "comb"]);
    }

    #[test]
    fn custom_sweeps() {
        let p = plan_of(&[
            "--alg",
            "aes-cbc",
            "--lanes",
            "1..16",
            "--dist",
            "fixed",
            "--lengths",
            "2048",
        ])
        .unwrap();
        assert_eq!(p.kind, Kind::Custom);
        assert_eq!(p.report_dir, None);
        let s = &p.sweeps[0];
        assert_eq!(s.algs, vec![Algorithm::AesCbc]);
        assert_eq!(s.dists, vec![Dist::Fixed(2048)]);
        assert_eq!(s.lanes, LaneSpec::List((1..=16).collect()));
        let f = plan_of(&["--dist", "fixed"]).unwrap();
        assert_eq!(f.sweeps[0].dists.len(), LENGTHS.len());
        let l = plan_of(&["--lengths", "64,1k"]).unwrap();
        assert_eq!(l.sweeps[0].dists, vec![Dist::Fixed(64), Dist::Fixed(1024)]);
        assert_eq!(l.sweeps[0].ops, vec![Op::Encrypt]);
        assert_eq!(plan_of(&["--op", "both"]).unwrap().sweeps[0].ops.len(), 2);
    }

    #[test]
    fn bad_options() {
        assert!(plan_of(&["--dist", "weird"]).is_err());
        assert!(plan_of(&["--dist", "realistic", "--lengths", "64"]).is_err());
        assert!(plan_of(&["--dist", "file"]).is_err());
        assert!(plan_of(&["--lanes", "0"]).is_err());
        assert!(plan_of(&["--key-bits", "100"]).is_err());
        assert!(plan_of(&["--keys", "0"]).is_err());
        assert!(plan_of(&["--keys", "4097"]).is_err());
        assert!(plan_of(&["--keys", "16"]).is_ok());
        assert!(plan_of(&["--batch", "0"]).is_err());
        assert!(plan_of(&["--alg", "aes-xts"]).is_err());
        assert!(plan_of(&["--lengths-file", "/nonexistent/lengths"]).is_err());
        assert!(
            plan_of(&["--paper", "--alg", "aes-cbc"]).is_err(),
            "--paper fixes its own workloads"
        );
    }

    #[test]
    fn paper_plan() {
        let p = plan_of(&["--paper"]).unwrap();
        assert_eq!(p.kind, Kind::Paper);
        assert!(p.table2);
        assert_eq!(p.sweeps.len(), 3);
        assert_eq!(p.report_dir, None);
    }

    #[test]
    fn scaling_of_secondary_phases() {
        assert_eq!(scaled(41, None, 91, 3), 41);
        assert_eq!(scaled(40, Some(10), 200, 5), 5);
        assert_eq!(scaled(40, Some(400), 200, 5), 80);
    }
}
