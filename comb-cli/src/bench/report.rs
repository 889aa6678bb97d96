//! The report directory: `summary.md` (machine, method, the tables, the plots), the JSON
//! results and the plots themselves.

use super::measure::Measured;
use super::output::{self, Machine};
use super::session;
use super::table::Table;
use std::path::{Path, PathBuf};

/// The Markdown summary of a run.
pub fn summary(
    machine: &Machine,
    results: &[Measured],
    tables: &[(String, Table)],
    plots: &[PathBuf],
    gate: &str,
    notes: &[String],
) -> String {
    let mut s = String::from("# comb bench report\n\n");
    s.push_str(&format!("Command: `{}`\n\n", machine.command));
    s.push_str(&format!("Machine: {}\n\n", session::machine_line(machine)));
    s.push_str(&format!(
        "CPU features: {}. Logical CPUs: {}{}.\n\n",
        machine.features.join(", "),
        machine.logical_cpus,
        machine
            .pinned_cpu
            .map(|c| format!(", measuring thread pinned to CPU {c}"))
            .unwrap_or_default()
    ));
    let mut parts: Vec<String> = Vec::new();
    for r in results {
        let p = format!(
            "{}: {} × {} calls",
            r.config.phase, r.samples, r.config.calls
        );
        if !parts.contains(&p) {
            parts.push(p);
        }
    }
    s.push_str(&format!(
        "Method (papers/000 §4, papers/004 §5.1): every figure is the median of its samples \
         ({}), each sample the average over its calls, timed \
         with serialised TSC reads (lfence; rdtsc … rdtscp; lfence) after {} untimed calls; \
         samples are taken round-robin over all configurations of a part of the run. One call \
         is one batch (building the job list included; key expansion not, except papers/001 \
         Table 2). Every engine's output was checked equal to the sequential engine's before \
         timing. Figures are TSC cycles per byte, core cycles per byte in parentheses (TSC \
         ticks per core cycle: {:.3}, from a dependent add chain).\n\n",
        parts.join("; "),
        machine.warmup_calls,
        machine.tsc_per_core_cycle,
    ));
    s.push_str(&format!("{gate}.\n\n"));
    let mut section = String::new();
    for (name, t) in tables {
        if *name != section {
            s.push_str(&format!("## {name}\n\n"));
            section = name.clone();
        }
        s.push_str(&t.markdown());
        s.push('\n');
    }
    let pngs: Vec<&PathBuf> = plots
        .iter()
        .filter(|p| p.extension().is_some_and(|e| e == "png"))
        .collect();
    if !pngs.is_empty() {
        s.push_str("## Plots\n\n");
        for p in pngs {
            let name = p
                .file_name()
                .map(|n| n.to_string_lossy().into_owned())
                .unwrap_or_default();
            let stem = name.trim_end_matches(".png");
            s.push_str(&format!("![{stem}]({name}) ([SVG]({stem}.svg))\n\n"));
        }
    }
    if !notes.is_empty() {
        s.push_str("## Notes\n\n");
        for n in notes {
            s.push_str(&format!("- {n}\n"));
        }
        s.push('\n');
    }
    s.push_str(&format!(
        "All figures: `results.json` ({} configurations). Took {:.0} s.\n",
        results.len(),
        machine.wall_seconds
    ));
    s
}

/// Writes `summary.md` and `results.json` into `dir` (the plots are already there).
pub fn write(
    dir: &Path,
    machine: &Machine,
    results: &[Measured],
    tables: &[(String, Table)],
    plots: &[PathBuf],
    gate: &str,
    notes: &[String],
) -> Result<(), String> {
    output::write_json(&dir.join("results.json"), machine, results)?;
    output::write_text(
        &dir.join("summary.md"),
        &summary(machine, results, tables, plots, gate, notes),
    )
}
