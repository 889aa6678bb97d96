//! `comb tune`: sweep the lane count of every chained mode on the realistic mix, keep the
//! fastest, and store it in the library's tuning file (`comb::Tuning`: `$COMB_TUNING`, else
//! `$XDG_CONFIG_HOME/comb/lanes.txt`, else `~/.config/comb/lanes.txt`), which
//! `comb::Engine::new` applies. The file is text, one `backend algorithm op lanes` line per
//! mode; `comb tune` adds the measured cycles per byte as comments:
//!
//! ```text
//! # comb tune: backend algorithm op lanes
//! # AMD EPYC (family 25 model 1); realistic mix, batch 64, median of 91 x 200 calls
//! ni aes-cbc encrypt 9  # 0.485 TSC cycles/byte
//! ```
//!
//! Lines of other backends already in the file are kept.

use super::engines;
use super::measure::{self, Measured};
use super::session::{self, Session};
use super::spec::{mode_key, LaneSpec};
use super::suite::{self, Common, Sweep};
use super::table::{fmt_cpb, fmt_ratio, Table};
use super::workload::Dist;
use super::TuneArgs;
use comb::{Algorithm, Backend, Op, Tuning};
use std::path::Path;
use std::process::ExitCode;

/// A lane count within this factor of the fastest counts as fast; the smallest such P wins
/// (fewer messages in flight, lower latency, same throughput).
pub const TOLERANCE: f64 = 1.01;

/// The chained (comb-scheduled) modes: what tuning is about.
pub fn chained_modes() -> Vec<(Algorithm, Op)> {
    let mut v = Vec::new();
    for &alg in Algorithm::ALL {
        for op in [Op::Encrypt, Op::Decrypt] {
            if alg.is_chained(op) {
                v.push((alg, op));
            }
        }
    }
    v
}

/// The chosen lane count from `(P, cpb)` pairs: the smallest P within [`TOLERANCE`] of the
/// fastest. `None` if there are none.
pub fn choose(points: &[(usize, f64)]) -> Option<(usize, f64)> {
    let best = points
        .iter()
        .map(|p| p.1)
        .filter(|c| c.is_finite())
        .fold(f64::INFINITY, f64::min);
    if !best.is_finite() {
        return None;
    }
    points
        .iter()
        .filter(|p| p.1 <= best * TOLERANCE)
        .min_by_key(|p| p.0)
        .copied()
}

/// The tuning file text: `header` comment lines, the kept lines of other backends, then one
/// line per `(alg, op, lanes, cpb)` entry. Checked to parse as the library reads it.
pub fn tuning_text(
    backend: Backend,
    header: &[String],
    keep: &[String],
    entries: &[(Algorithm, Op, usize, f64)],
) -> Result<String, String> {
    let mut s = String::from("# comb tune: backend algorithm op lanes\n");
    for h in header {
        s.push_str(&format!("# {h}\n"));
    }
    for k in keep {
        s.push_str(k);
        s.push('\n');
    }
    for (alg, op, p, cpb) in entries {
        s.push_str(&format!(
            "{} {} {op} {p}  # {cpb:.3} TSC cycles/byte\n",
            backend.name(),
            alg.id()
        ));
    }
    let parsed = Tuning::parse(&s)?;
    for (alg, op, p, _) in entries {
        if parsed.lanes(backend, *alg, *op) != Some(*p) {
            return Err(format!(
                "tuning text does not round-trip for {}",
                mode_key(*alg, *op)
            ));
        }
    }
    Ok(s)
}

/// Entry lines of `text` (an existing tuning file) for other backends than `backend`.
pub fn other_backends(text: &str, backend: Backend) -> Vec<String> {
    text.lines()
        .filter(|l| {
            let body = l.split('#').next().unwrap_or("").trim();
            !body.is_empty() && body.split_whitespace().next() != Some(backend.name())
        })
        .map(|l| l.trim().to_string())
        .collect()
}

fn write(path: &Path, text: &str) -> Result<(), String> {
    if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
        std::fs::create_dir_all(dir).map_err(|e| format!("{}: {e}", dir.display()))?;
    }
    std::fs::write(path, text).map_err(|e| format!("{}: {e}", path.display()))
}

/// Runs `comb tune`.
pub fn run(a: TuneArgs) -> Result<ExitCode, String> {
    let max = comb::sched::plan::MAX_LANES;
    let backend = comb::Engine::new().map_err(|e| e.to_string())?.backend();
    // The built-in default, not a tuned one: the sweep must not depend on the last tuning.
    let default = comb::Engine::untuned(backend)
        .map_err(|e| e.to_string())?
        .lanes(comb::Algorithm::AesCbc, comb::Op::Encrypt);
    let max_lanes = a.max_lanes.unwrap_or((2 * default).min(max));
    if !(1..=max).contains(&max_lanes) {
        return Err(format!("--max-lanes {max_lanes} is out of range 1..={max}"));
    }
    if a.batch == 0 {
        return Err("--batch must be at least 1".into());
    }
    let samples = a.samples.unwrap_or(if a.quick { 31 } else { 91 }).max(1);
    let calls = a.calls.unwrap_or(if a.quick { 100 } else { 200 }).max(1);
    let path = match &a.out {
        Some(p) => p.clone(),
        None => Tuning::path().ok_or(
            "no config directory (set HOME, XDG_CONFIG_HOME or COMB_TUNING, or pass --out FILE)",
        )?,
    };
    let comb_engine = engines::by_name("comb")?;
    let session = Session::start(a.cpu, !a.no_gate, 10, a.seed)?;
    let common = Common {
        batch: a.batch,
        key_bits: 128,
        keys: 1,
        ad_len: 0,
        seed: a.seed,
        warmup: 10,
        engines: vec![comb_engine],
        tuned: None,
        backend,
    };
    let lanes: Vec<usize> = (1..=max_lanes).collect();
    let mut notes = Vec::new();
    let mut tasks = Vec::new();
    for (alg, op) in chained_modes() {
        let sweep = Sweep {
            phase: "tune",
            algs: vec![alg],
            ops: vec![op],
            dists: vec![Dist::Realistic],
            lanes: LaneSpec::List(lanes.clone()),
            engines: None,
            batch: None,
            samples,
            calls,
        };
        tasks.extend(suite::build(&sweep, &common, &mut notes)?);
    }
    eprintln!(
        "comb tune: {} modes × lanes 1..={} on the realistic mix, batch {}, median of {samples} × {calls} calls",
        chained_modes().len(),
        max_lanes,
        a.batch
    );
    let total = tasks.iter().map(|t| t.samples as u64).sum();
    let bar = measure::progress(total);
    let mut session = session;
    let mut results = measure::run(&mut tasks, &mut session.gate, &bar, "tune")?;
    bar.finish_and_clear();
    drop(tasks);
    let machine = session.finish(&mut results, "comb tune".into());

    let default_engine = comb::Engine::untuned(backend).map_err(|e| e.to_string())?;
    let file_header = vec![
        format!("{} (family {} model {})", machine.cpu, machine.family, machine.model),
        format!(
            "realistic mix, batch {}, median of {samples} x {calls} calls; the smallest P within {:.0}% of the fastest",
            a.batch,
            (TOLERANCE - 1.0) * 100.0
        ),
    ];
    let mut entries: Vec<(Algorithm, Op, usize, f64)> = Vec::new();
    let mut header = vec!["mode".to_string()];
    header.extend(lanes.iter().map(|p| p.to_string()));
    header.extend(["best P".into(), "default P".into(), "gain".into()]);
    let mut rows = Vec::new();
    for (alg, op) in chained_modes() {
        let key = mode_key(alg, op);
        let mine: Vec<&Measured> = results
            .iter()
            .filter(|m| m.config.alg == alg && m.config.op == op)
            .collect();
        let points: Vec<(usize, f64)> = mine
            .iter()
            .filter_map(|m| m.config.lanes.map(|p| (p, m.cpb())))
            .collect();
        let Some((p, cpb)) = choose(&points) else {
            continue;
        };
        let default_p = default_engine.lanes(alg, op);
        let at_default = points.iter().find(|x| x.0 == default_p).map(|x| x.1);
        let mut row = vec![key.clone()];
        row.extend(lanes.iter().map(|l| {
            points
                .iter()
                .find(|x| x.0 == *l)
                .map(|x| fmt_cpb(x.1))
                .unwrap_or_else(|| "—".into())
        }));
        row.push(format!("{p} ({})", fmt_cpb(cpb)));
        row.push(default_p.to_string());
        row.push(
            at_default
                .map(|d| fmt_ratio(d / cpb))
                .unwrap_or_else(|| "—".into()),
        );
        rows.push(row);
        entries.push((alg, op, p, cpb));
    }
    let table = Table {
        title: format!("comb tune: median TSC cycles/byte against lanes P (realistic mix, batch {})", a.batch),
        header,
        rows,
        notes: vec![format!(
            "best P: the smallest P within {:.0}% of the fastest; gain: default P's cycles/byte ÷ best P's",
            (TOLERANCE - 1.0) * 100.0
        )],
    };
    println!("{}", session::machine_line(&machine));
    println!();
    println!("{}", table.text());
    println!("{}", session::gate_line(&machine, &results));
    for n in &notes {
        println!("note: {n}");
    }
    let keep = match std::fs::read_to_string(&path) {
        Ok(old) => other_backends(&old, backend),
        Err(_) => Vec::new(),
    };
    let text = tuning_text(backend, &file_header, &keep, &entries)?;
    if a.dry_run {
        println!("dry run: {} not written; it would hold:", path.display());
        print!("{text}");
    } else {
        write(&path, &text)?;
        println!(
            "wrote {} (comb::Engine::new applies it; `comb info` shows it)",
            path.display()
        );
    }
    println!("took {:.1} s", machine.wall_seconds);
    Ok(ExitCode::SUCCESS)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn choice_prefers_small_p_within_tolerance() {
        assert_eq!(
            choose(&[(1, 4.0), (8, 0.300), (12, 0.299)]),
            Some((8, 0.300))
        );
        assert_eq!(choose(&[(1, 4.0), (8, 0.35), (12, 0.30)]), Some((12, 0.30)));
        assert_eq!(choose(&[]), None);
        assert_eq!(choose(&[(3, f64::NAN)]), None);
    }

    #[test]
    fn tuning_text_is_what_the_library_reads() {
        let entries = [
            (Algorithm::AesCbc, Op::Encrypt, 9, 0.4851),
            (Algorithm::AesCmac, Op::Decrypt, 12, 0.5),
        ];
        let keep = other_backends(
            "# c\nni aes-cbc encrypt 3\nvaes aes-cbc encrypt 16 # x\n\n",
            Backend::Ni,
        );
        assert_eq!(keep, vec!["vaes aes-cbc encrypt 16 # x".to_string()]);
        let text = tuning_text(Backend::Ni, &["cpu x".into()], &[], &entries).unwrap();
        assert!(
            text.contains("ni aes-cbc encrypt 9  # 0.485 TSC cycles/byte\n"),
            "{text}"
        );
        assert!(text.starts_with("# comb tune: backend algorithm op lanes\n# cpu x\n"));
        let t = Tuning::parse(&text).unwrap();
        assert_eq!(
            t.lanes(Backend::Ni, Algorithm::AesCmac, Op::Decrypt),
            Some(12)
        );
        assert_eq!(t.lanes(Backend::Ni, Algorithm::AesOfb, Op::Encrypt), None);
    }

    #[test]
    fn chained_modes_are_the_comb_scheduled_ones() {
        let m = chained_modes();
        assert!(m.contains(&(Algorithm::AesCbc, Op::Encrypt)));
        assert!(!m.contains(&(Algorithm::AesCbc, Op::Decrypt)));
        assert!(m.contains(&(Algorithm::AesCmac, Op::Decrypt)));
        assert!(!m
            .iter()
            .any(|(a, _)| *a == Algorithm::AesCtr || *a == Algorithm::AesEcb));
    }
}
