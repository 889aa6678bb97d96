//! Result tables shaped like the papers' (Table 3: speed-up against lanes; Tables 4–7: modes ×
//! engines with speed-up), as aligned text for the terminal and as Markdown for the report.

use super::measure::{LaneSource, Measured};
use super::spec::mode_key;

/// A titled table of strings; the first column is left-aligned, the others right-aligned.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Table {
    pub title: String,
    pub header: Vec<String>,
    pub rows: Vec<Vec<String>>,
    pub notes: Vec<String>,
}

impl Table {
    /// Aligned plain text.
    pub fn text(&self) -> String {
        let cols = self.header.len();
        let mut w = vec![0usize; cols];
        for row in std::iter::once(&self.header).chain(&self.rows) {
            for (i, c) in row.iter().enumerate().take(cols) {
                w[i] = w[i].max(c.chars().count());
            }
        }
        let line = |row: &Vec<String>| {
            let mut s = String::new();
            for (i, width) in w.iter().enumerate() {
                let c = row.get(i).map(String::as_str).unwrap_or("");
                let pad = width.saturating_sub(c.chars().count());
                if i == 0 {
                    s.push_str(c);
                    s.push_str(&" ".repeat(pad));
                } else {
                    s.push_str("  ");
                    s.push_str(&" ".repeat(pad));
                    s.push_str(c);
                }
            }
            s.trim_end().to_string()
        };
        let mut out = format!("{}\n", self.title);
        out.push_str(&line(&self.header));
        out.push('\n');
        let total: usize = w.iter().sum::<usize>() + 2 * cols.saturating_sub(1);
        out.push_str(&"-".repeat(total));
        out.push('\n');
        for r in &self.rows {
            out.push_str(&line(r));
            out.push('\n');
        }
        for n in &self.notes {
            out.push_str(&format!("  {n}\n"));
        }
        out
    }

    /// GitHub-flavoured Markdown.
    pub fn markdown(&self) -> String {
        let esc = |s: &str| s.replace('|', "\\|");
        let mut out = format!("**{}**\n\n", esc(&self.title));
        out.push_str(&format!(
            "| {} |\n",
            self.header
                .iter()
                .map(|h| esc(h))
                .collect::<Vec<_>>()
                .join(" | ")
        ));
        let align: Vec<&str> = (0..self.header.len())
            .map(|i| if i == 0 { "---" } else { "---:" })
            .collect();
        out.push_str(&format!("|{}|\n", align.join("|")));
        for r in &self.rows {
            out.push_str(&format!(
                "| {} |\n",
                r.iter().map(|c| esc(c)).collect::<Vec<_>>().join(" | ")
            ));
        }
        if !self.notes.is_empty() {
            out.push('\n');
            for n in &self.notes {
                out.push_str(&format!("{}\n", esc(n)));
            }
        }
        out
    }
}

/// Cycles per byte with sensible precision.
pub fn fmt_cpb(x: f64) -> String {
    if !x.is_finite() {
        "—".into()
    } else if x >= 10.0 {
        format!("{x:.1}")
    } else if x >= 1.0 {
        format!("{x:.2}")
    } else {
        format!("{x:.3}")
    }
}

/// A speed-up factor, `×5.14`.
pub fn fmt_ratio(x: f64) -> String {
    if x.is_finite() {
        format!("×{x:.2}")
    } else {
        "—".into()
    }
}

/// Groups results by (workload label, mode) in first-seen order.
fn groups<'a>(results: &[&'a Measured]) -> Vec<(String, String, Vec<&'a Measured>)> {
    let mut out: Vec<(String, String, Vec<&Measured>)> = Vec::new();
    for m in results {
        let w = m.config.workload_label();
        let k = mode_key(m.config.alg, m.config.op);
        match out.iter_mut().find(|(a, b, _)| *a == w && *b == k) {
            Some(g) => g.2.push(m),
            None => out.push((w, k, vec![m])),
        }
    }
    out
}

/// The figure of `engine` in a group: what `--lanes auto` ran if it was measured, else the
/// fastest lane count.
pub fn primary<'a>(group: &[&'a Measured], engine: &str) -> Option<&'a Measured> {
    let mine: Vec<&Measured> = group
        .iter()
        .copied()
        .filter(|m| m.config.engine == engine)
        .collect();
    mine.iter()
        .copied()
        .find(|m| m.config.lane_source.is_auto())
        .or_else(|| {
            mine.iter()
                .copied()
                .min_by(|a, b| a.cpb().total_cmp(&b.cpb()))
        })
}

/// The fastest comb lane count of a group, when more than one was measured.
pub fn best_comb<'a>(group: &[&'a Measured]) -> Option<&'a Measured> {
    let comb: Vec<&Measured> = group
        .iter()
        .copied()
        .filter(|m| m.config.engine == "comb")
        .collect();
    if comb.len() < 2 {
        return None;
    }
    comb.into_iter().min_by(|a, b| a.cpb().total_cmp(&b.cpb()))
}

fn lanes_cell(m: &Measured) -> String {
    match (m.config.lanes, m.config.lane_source) {
        (Some(p), LaneSource::Tuned) => format!("{p} (tuned)"),
        (Some(p), _) => p.to_string(),
        (None, _) => "—".into(),
    }
}

/// Tables 4–7 shape: one table per workload; rows are modes, columns the engines' median
/// cycles per byte (TSC, with core cycles in parentheses), comb's speed-up over every other
/// engine, the lane count used, and the best lane count when a sweep measured several.
pub fn modes_tables(results: &[&Measured], engine_order: &[String]) -> Vec<Table> {
    let mut tables: Vec<Table> = Vec::new();
    let all = groups(results);
    let mut workloads: Vec<String> = Vec::new();
    for (w, _, _) in &all {
        if !workloads.contains(w) {
            workloads.push(w.clone());
        }
    }
    for w in workloads {
        let gs: Vec<&(String, String, Vec<&Measured>)> = all.iter().filter(|g| g.0 == w).collect();
        let engines: Vec<&String> = engine_order
            .iter()
            .filter(|e| {
                gs.iter()
                    .any(|g| g.2.iter().any(|m| &m.config.engine == *e))
            })
            .collect();
        let has_comb = engines.iter().any(|e| *e == "comb");
        let others: Vec<&String> = engines.iter().copied().filter(|e| *e != "comb").collect();
        let any_sweep = gs.iter().any(|g| best_comb(&g.2).is_some());
        let batch = gs
            .first()
            .and_then(|g| g.2.first())
            .map(|m| m.config.batch)
            .unwrap_or(0);
        // The run's associated data, as the AEAD rows of this table were given it.
        let ad_len = gs
            .iter()
            .flat_map(|g| &g.2)
            .map(|m| m.config.ad_len)
            .max()
            .unwrap_or(0);

        let mut header = vec!["mode".to_string()];
        header.extend(engines.iter().map(|e| e.to_string()));
        if has_comb {
            header.extend(others.iter().map(|e| format!("vs {e}")));
            header.push("P".into());
            if any_sweep {
                header.push("best P".into());
            }
        }
        let mut rows = Vec::new();
        for (_, mode, group) in &gs {
            let mut row = vec![mode.clone()];
            for e in &engines {
                row.push(match primary(group, e) {
                    Some(m) => format!("{} ({})", fmt_cpb(m.cpb()), fmt_cpb(m.cpb_core)),
                    None => "—".into(),
                });
            }
            if has_comb {
                let comb = primary(group, "comb");
                for e in &others {
                    let r = match (comb, primary(group, e)) {
                        (Some(c), Some(o)) => o.cpb() / c.cpb(),
                        _ => f64::NAN,
                    };
                    row.push(fmt_ratio(r));
                }
                row.push(comb.map(lanes_cell).unwrap_or_else(|| "—".into()));
                if any_sweep {
                    row.push(match best_comb(group) {
                        Some(b) => format!(
                            "{} ({})",
                            b.config.lanes.map(|p| p.to_string()).unwrap_or_default(),
                            fmt_cpb(b.cpb())
                        ),
                        None => "—".into(),
                    });
                }
            }
            rows.push(row);
        }
        let mut notes = vec![
            "cells: median TSC cycles/byte (core cycles/byte); \"vs X\": X's cycles/byte ÷ comb's"
                .to_string(),
        ];
        if any_sweep {
            notes.push("best P: the fastest lane count of the sweep (its TSC cycles/byte)".into());
        }
        let title = if ad_len > 0 {
            format!(
                "Workload {w}, batch {batch}, AEAD modes with {ad_len} bytes of associated data"
            )
        } else {
            format!("Workload {w}, batch {batch}")
        };
        if ad_len > 0 {
            notes.push(
                "associated data is not counted in the bytes of cycles/byte; the other modes \
                 take none"
                    .into(),
            );
        }
        tables.push(Table {
            title,
            header,
            rows,
            notes,
        });
    }
    tables
}

/// A group of results: (workload label, mode, measurements).
type Group<'a> = (String, String, Vec<&'a Measured>);

/// Table 3 shape: for every workload with a lane sweep, rows are `sequential` and `P = …`,
/// columns per mode the cycles per byte and the speed-up over `sequential` (at most four
/// modes per table, to stay readable in a terminal).
pub fn lanes_tables(results: &[&Measured]) -> Vec<Table> {
    let all = groups(results);
    let mut workloads: Vec<String> = Vec::new();
    for (w, _, g) in &all {
        if best_comb(g).is_some() && !workloads.contains(w) {
            workloads.push(w.clone());
        }
    }
    let mut tables = Vec::new();
    for w in workloads {
        let every: Vec<&Group<'_>> = all
            .iter()
            .filter(|g| g.0 == w && best_comb(&g.2).is_some())
            .collect();
        for gs in every.chunks(4) {
            tables.push(lanes_table(&w, gs));
        }
    }
    tables
}

fn lanes_table(w: &str, gs: &[&Group<'_>]) -> Table {
    let mut lanes: Vec<usize> = gs
        .iter()
        .flat_map(|g| {
            g.2.iter()
                .filter(|m| m.config.engine == "comb")
                .filter_map(|m| m.config.lanes)
        })
        .collect();
    lanes.sort_unstable();
    lanes.dedup();
    let mut header = vec!["P".to_string()];
    for g in gs {
        header.push(format!("{} cpb", g.1));
        header.push("speed-up".into());
    }
    let mut rows = Vec::new();
    let seq: Vec<Option<f64>> = gs
        .iter()
        .map(|g| {
            g.2.iter()
                .find(|m| m.config.engine == "sequential")
                .map(|m| m.cpb())
        })
        .collect();
    let mut row = vec!["sequential".to_string()];
    for s in &seq {
        row.push(s.map(fmt_cpb).unwrap_or_else(|| "—".into()));
        row.push(if s.is_some() {
            fmt_ratio(1.0)
        } else {
            "—".into()
        });
    }
    rows.push(row);
    for p in lanes {
        let mut row = vec![p.to_string()];
        for (g, s) in gs.iter().zip(&seq) {
            let m =
                g.2.iter()
                    .filter(|m| m.config.engine == "comb" && m.config.lanes == Some(p))
                    .min_by(|a, b| a.cpb().total_cmp(&b.cpb()));
            match m {
                Some(m) => {
                    row.push(fmt_cpb(m.cpb()));
                    row.push(
                        s.map(|s| fmt_ratio(s / m.cpb()))
                            .unwrap_or_else(|| "—".into()),
                    );
                }
                None => {
                    row.push("—".into());
                    row.push("—".into());
                }
            }
        }
        rows.push(row);
    }
    Table {
        title: format!("Comb speed-up against lanes P (papers/000 Table 3 shape), workload {w}"),
        header,
        rows,
        notes: vec!["median TSC cycles/byte; speed-up over the sequential engine".into()],
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::bench::measure::Config;
    use crate::bench::stats::Summary;
    use crate::bench::workload::Dist;
    use comb::{Algorithm, Op};

    fn m(engine: &str, lanes: Option<usize>, src: LaneSource, cpb: f64) -> Measured {
        let c = Config::new(
            "t",
            Algorithm::AesCbc,
            Op::Encrypt,
            engine,
            &Dist::Realistic,
            64,
            lanes,
            src,
            128,
        );
        Measured {
            config: c,
            tsc: Summary::of(&[cpb]).unwrap(),
            cpb_core: cpb * 1.3,
            samples: 1,
            rejected: 0,
            forced: 0,
        }
    }

    #[test]
    fn modes_table_speedup_and_best_lane() {
        let rs = [
            m("sequential", None, LaneSource::None, 1.5),
            m("comb", Some(8), LaneSource::Default, 0.3),
            m("comb", Some(4), LaneSource::Explicit, 0.5),
            m("comb", Some(12), LaneSource::Explicit, 0.25),
        ];
        let refs: Vec<&Measured> = rs.iter().collect();
        let t = modes_tables(&refs, &["sequential".into(), "comb".into()]);
        assert_eq!(t.len(), 1);
        assert_eq!(
            t[0].header,
            vec!["mode", "sequential", "comb", "vs sequential", "P", "best P"]
        );
        assert_eq!(
            t[0].rows[0],
            vec![
                "aes-cbc/encrypt",
                "1.50 (1.95)",
                "0.300 (0.390)",
                "×5.00",
                "8",
                "12 (0.250)"
            ]
        );
        let text = t[0].text();
        assert!(text.contains("Workload realistic, batch 64"));
        assert!(t[0].markdown().contains("|---|---:|"));
    }

    #[test]
    fn lanes_table_rows() {
        let rs = [
            m("sequential", None, LaneSource::None, 4.0),
            m("comb", Some(1), LaneSource::Explicit, 4.0),
            m("comb", Some(2), LaneSource::Explicit, 2.0),
        ];
        let refs: Vec<&Measured> = rs.iter().collect();
        let t = lanes_tables(&refs);
        assert_eq!(t.len(), 1);
        assert_eq!(t[0].rows.len(), 3);
        assert_eq!(t[0].rows[2], vec!["2", "2.00", "×2.00"]);
        assert!(
            lanes_tables(&refs[..2]).is_empty(),
            "one lane count is no sweep"
        );
    }

    #[test]
    fn number_formats() {
        assert_eq!(fmt_cpb(0.2401), "0.240");
        assert_eq!(fmt_cpb(4.384), "4.38");
        assert_eq!(fmt_cpb(12.34), "12.3");
        assert_eq!(fmt_cpb(f64::NAN), "—");
        assert_eq!(fmt_ratio(5.138), "×5.14");
    }
}
