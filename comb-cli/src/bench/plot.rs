//! Plots, each as PNG and SVG: cycles per byte against message length per engine, against the
//! lane count P, and heat maps of comb's cycles per byte over message length × P (the shape
//! of papers/000 Figures 3–4).

use super::measure::Measured;
use super::pngtext::{self, PngBackend};
use super::spec::mode_key;
use super::table::primary;
use plotters::coord::Shift;
use plotters::prelude::*;
use std::path::{Path, PathBuf};

fn err<E: std::fmt::Display>(e: E) -> String {
    format!("plot: {e}")
}

const FONT: &str = "sans-serif";
/// Font size of a heat map's title.
const HEAT_TITLE: u32 = 20;

/// Title font size of the panel plots (cycles/byte against length and against lanes).
const PANELS_TITLE: u32 = 22;

/// The width of a panel plot: `per` pixels a column for `cols` columns, and at least the
/// title's width (a single panel was narrower than its title, which the PNG's bitmap font
/// then cut at both edges).
fn panels_width(title: &str, per: u32, cols: usize) -> u32 {
    (per * cols as u32 + 40).max(pngtext::text_size(title, PANELS_TITLE.into()).0 + 40)
}

/// Distinguishable line colours (Okabe–Ito), then repeated.
fn color(i: usize) -> RGBColor {
    const C: [RGBColor; 8] = [
        RGBColor(0, 114, 178),
        RGBColor(213, 94, 0),
        RGBColor(0, 158, 115),
        RGBColor(204, 121, 167),
        RGBColor(86, 180, 233),
        RGBColor(230, 159, 0),
        RGBColor(0, 0, 0),
        RGBColor(240, 228, 66),
    ];
    C[i % C.len()]
}

/// Viridis, sampled at five stops and interpolated; `t` in 0..=1.
pub fn viridis(t: f64) -> RGBColor {
    const S: [(f64, f64, f64); 5] = [
        (68.0, 1.0, 84.0),
        (59.0, 82.0, 139.0),
        (33.0, 145.0, 140.0),
        (94.0, 201.0, 98.0),
        (253.0, 231.0, 37.0),
    ];
    let t = if t.is_finite() {
        t.clamp(0.0, 1.0)
    } else {
        0.0
    };
    let x = t * (S.len() - 1) as f64;
    let i = (x.floor() as usize).min(S.len() - 2);
    let f = x - i as f64;
    let mix = |a: f64, b: f64| (a + (b - a) * f).round() as u8;
    RGBColor(
        mix(S[i].0, S[i + 1].0),
        mix(S[i].1, S[i + 1].1),
        mix(S[i].2, S[i + 1].2),
    )
}

/// One line of a panel.
#[derive(Clone, Debug, PartialEq)]
pub struct Series {
    pub name: String,
    pub points: Vec<(f64, f64)>,
}

/// One small chart.
#[derive(Clone, Debug, PartialEq)]
pub struct Panel {
    pub title: String,
    pub series: Vec<Series>,
}

/// A heat map: `cpb[y][x]` for lanes `lanes[y]` and lengths `lens[x]` (NaN: not measured).
#[derive(Clone, Debug, PartialEq)]
pub struct Heat {
    /// File name without extension, e.g. `heatmap_aes-cbc_encrypt`.
    pub name: String,
    pub title: String,
    pub lens: Vec<usize>,
    pub lanes: Vec<usize>,
    pub cpb: Vec<Vec<f64>>,
}

/// Panels of cycles per byte against fixed message length, one per mode with at least two
/// lengths; one series per engine (its `--lanes auto` figure, else its best).
pub fn length_panels(results: &[&Measured], engine_order: &[String]) -> Vec<Panel> {
    let mut modes: Vec<String> = Vec::new();
    for m in results.iter().filter(|m| m.config.msg_len.is_some()) {
        let k = mode_key(m.config.alg, m.config.op);
        if !modes.contains(&k) {
            modes.push(k);
        }
    }
    let mut panels = Vec::new();
    for mode in modes {
        let mine: Vec<&Measured> = results
            .iter()
            .copied()
            .filter(|m| m.config.msg_len.is_some() && mode_key(m.config.alg, m.config.op) == mode)
            .collect();
        let mut lens: Vec<usize> = mine.iter().filter_map(|m| m.config.msg_len).collect();
        lens.sort_unstable();
        lens.dedup();
        if lens.len() < 2 {
            continue;
        }
        let mut series = Vec::new();
        for e in engine_order {
            let mut points = Vec::new();
            for &l in &lens {
                let at: Vec<&Measured> = mine
                    .iter()
                    .copied()
                    .filter(|m| m.config.msg_len == Some(l))
                    .collect();
                if let Some(m) = primary(&at, e) {
                    points.push((l as f64, m.cpb()));
                }
            }
            if !points.is_empty() {
                series.push(Series {
                    name: e.clone(),
                    points,
                });
            }
        }
        panels.push(Panel {
            title: mode,
            series,
        });
    }
    panels
}

/// Panels of comb's cycles per byte against P, one per workload with a sweep; one series per
/// mode (its sequential figure in the name).
pub fn lane_panels(results: &[&Measured]) -> Vec<Panel> {
    let mut workloads: Vec<String> = Vec::new();
    for m in results {
        let w = m.config.workload_label();
        if !workloads.contains(&w) {
            workloads.push(w);
        }
    }
    let mut panels = Vec::new();
    for w in workloads {
        let mine: Vec<&Measured> = results
            .iter()
            .copied()
            .filter(|m| m.config.workload_label() == w)
            .collect();
        let mut modes: Vec<String> = Vec::new();
        for m in &mine {
            let k = mode_key(m.config.alg, m.config.op);
            if !modes.contains(&k) {
                modes.push(k);
            }
        }
        let mut series = Vec::new();
        for mode in modes {
            let of = |m: &&&Measured| mode_key(m.config.alg, m.config.op) == mode;
            let mut points: Vec<(f64, f64)> = mine
                .iter()
                .filter(of)
                .filter(|m| m.config.engine == "comb")
                .filter_map(|m| m.config.lanes.map(|p| (p as f64, m.cpb())))
                .collect();
            points.sort_by(|a, b| a.0.total_cmp(&b.0));
            points.dedup_by(|a, b| a.0 == b.0);
            if points.len() < 2 {
                continue;
            }
            let seq = mine
                .iter()
                .filter(of)
                .find(|m| m.config.engine == "sequential");
            let name = match seq {
                Some(s) => format!("{mode} (seq {:.2})", s.cpb()),
                None => mode,
            };
            series.push(Series { name, points });
        }
        if !series.is_empty() {
            panels.push(Panel {
                title: format!("workload {w}"),
                series,
            });
        }
    }
    panels
}

/// Heat maps of comb over fixed length × lanes, one per mode with at least two of each.
pub fn heats(results: &[&Measured]) -> Vec<Heat> {
    let comb: Vec<&Measured> = results
        .iter()
        .copied()
        .filter(|m| {
            m.config.engine == "comb" && m.config.msg_len.is_some() && m.config.lanes.is_some()
        })
        .collect();
    let mut modes: Vec<String> = Vec::new();
    for m in &comb {
        let k = mode_key(m.config.alg, m.config.op);
        if !modes.contains(&k) {
            modes.push(k);
        }
    }
    let mut out = Vec::new();
    for mode in modes {
        let mine: Vec<&Measured> = comb
            .iter()
            .copied()
            .filter(|m| mode_key(m.config.alg, m.config.op) == mode)
            .collect();
        let mut lens: Vec<usize> = mine.iter().filter_map(|m| m.config.msg_len).collect();
        let mut lanes: Vec<usize> = mine.iter().filter_map(|m| m.config.lanes).collect();
        lens.sort_unstable();
        lens.dedup();
        lanes.sort_unstable();
        lanes.dedup();
        if lens.len() < 2 || lanes.len() < 2 {
            continue;
        }
        let cpb = lanes
            .iter()
            .map(|&p| {
                lens.iter()
                    .map(|&l| {
                        mine.iter()
                            .filter(|m| m.config.msg_len == Some(l) && m.config.lanes == Some(p))
                            .map(|m| m.cpb())
                            .fold(f64::NAN, f64::min)
                    })
                    .collect()
            })
            .collect();
        out.push(Heat {
            name: format!("heatmap_{}", mode.replace('/', "_")),
            title: format!("comb {mode}: median TSC cycles/byte"),
            lens,
            lanes,
            cpb,
        });
    }
    out
}

fn grid(n: usize) -> (usize, usize) {
    let cols = match n {
        0 | 1 => 1,
        2..=4 => 2,
        _ => 3,
    };
    (n.div_ceil(cols).max(1), cols)
}

fn draw_panels<DB: DrawingBackend>(
    root: &DrawingArea<DB, Shift>,
    title: &str,
    panels: &[Panel],
    x_desc: &str,
    log2_x: bool,
) -> Result<(), String>
where
    DB::ErrorType: 'static,
{
    root.fill(&WHITE).map_err(err)?;
    let area = root.titled(title, (FONT, PANELS_TITLE)).map_err(err)?;
    let cells = area.split_evenly(grid(panels.len()));
    for (p, cell) in panels.iter().zip(cells.iter()) {
        let tx = |x: f64| if log2_x { x.max(1.0).log2() } else { x };
        let pts = p.series.iter().flat_map(|s| s.points.iter());
        let (mut x0, mut x1, mut y1) = (f64::MAX, f64::MIN, 0.0f64);
        for &(x, y) in pts {
            x0 = x0.min(tx(x));
            x1 = x1.max(tx(x));
            y1 = y1.max(y);
        }
        if x0 > x1 {
            continue;
        }
        let pad = ((x1 - x0) * 0.05).max(0.25);
        let (x0, x1) = (x0 - pad, x1 + pad);
        let y1 = if y1 > 0.0 { y1 * 1.12 } else { 1.0 };
        let mut chart = ChartBuilder::on(cell)
            .caption(&p.title, (FONT, 16))
            .margin(10)
            .x_label_area_size(40)
            .y_label_area_size(52)
            .build_cartesian_2d(x0..x1, 0f64..y1)
            .map_err(err)?;
        let fmt_x = |x: &f64| {
            if log2_x {
                format!("{:.0}", 2f64.powf(*x))
            } else {
                format!("{x:.0}")
            }
        };
        let steps = (x1 - x0).round().max(1.0) as usize + 1;
        chart
            .configure_mesh()
            .x_labels(steps.min(17))
            .x_label_formatter(&fmt_x)
            .y_label_formatter(&|y| format!("{y:.2}"))
            .x_desc(x_desc)
            .y_desc("TSC cycles/byte")
            .label_style((FONT, 12))
            .axis_desc_style((FONT, 13))
            .light_line_style(RGBColor(235, 235, 235))
            .draw()
            .map_err(err)?;
        for (i, s) in p.series.iter().enumerate() {
            let c = color(i);
            let pts: Vec<(f64, f64)> = s.points.iter().map(|&(x, y)| (tx(x), y)).collect();
            chart
                .draw_series(LineSeries::new(pts.clone(), c.stroke_width(2)))
                .map_err(err)?;
            chart
                .draw_series(pts.iter().map(|&(x, y)| Circle::new((x, y), 3, c.filled())))
                .map_err(err)?;
        }
        let items: Vec<(String, RGBColor)> = p
            .series
            .iter()
            .enumerate()
            .map(|(i, s)| (s.name.clone(), color(i)))
            .collect();
        legend(&chart.plotting_area().strip_coord_spec(), &items)?;
    }
    root.present().map_err(err)
}

/// A legend box in the upper right corner of `area`, sized with the backend's own text
/// metrics (plotters' built-in legend measures with its font estimate, which the bitmap
/// font of the PNG backend does not match).
fn legend<DB: DrawingBackend>(
    area: &DrawingArea<DB, Shift>,
    items: &[(String, RGBColor)],
) -> Result<(), String>
where
    DB::ErrorType: 'static,
{
    use plotters::style::text_anchor::{HPos, Pos, VPos};
    if items.is_empty() {
        return Ok(());
    }
    let style = TextStyle::from((FONT, 12).into_font())
        .color(&BLACK)
        .pos(Pos::new(HPos::Left, VPos::Center));
    let (mut tw, mut th) = (0i32, 0i32);
    for (t, _) in items {
        let (w, h) = area.estimate_text_size(t, &style).map_err(err)?;
        tw = tw.max(w as i32);
        th = th.max(h as i32);
    }
    let line = th + 6;
    let (bw, bh) = (tw + 44, line * items.len() as i32 + 8);
    let (aw, _) = area.dim_in_pixel();
    let (x0, y0) = ((aw as i32 - bw - 6).max(0), 6);
    area.draw(&Rectangle::new(
        [(x0, y0), (x0 + bw, y0 + bh)],
        WHITE.mix(0.85).filled(),
    ))
    .map_err(err)?;
    area.draw(&Rectangle::new(
        [(x0, y0), (x0 + bw, y0 + bh)],
        RGBColor(160, 160, 160),
    ))
    .map_err(err)?;
    for (i, (t, c)) in items.iter().enumerate() {
        let y = y0 + 4 + i as i32 * line + line / 2;
        area.draw(&PathElement::new(
            vec![(x0 + 8, y), (x0 + 30, y)],
            c.stroke_width(2),
        ))
        .map_err(err)?;
        area.draw(&Text::new(t.clone(), (x0 + 36, y), style.clone()))
            .map_err(err)?;
    }
    Ok(())
}

fn draw_heat<DB: DrawingBackend>(root: &DrawingArea<DB, Shift>, h: &Heat) -> Result<(), String>
where
    DB::ErrorType: 'static,
{
    root.fill(&WHITE).map_err(err)?;
    let area = root.titled(&h.title, (FONT, HEAT_TITLE)).map_err(err)?;
    let (w, _) = area.dim_in_pixel();
    let (main, key) = area.split_horizontally(w.saturating_sub(120));
    let vals: Vec<f64> = h
        .cpb
        .iter()
        .flatten()
        .copied()
        .filter(|v| v.is_finite() && *v > 0.0)
        .collect();
    let lo = vals.iter().copied().fold(f64::MAX, f64::min);
    let hi = vals.iter().copied().fold(f64::MIN, f64::max);
    let (lo, hi) = if lo < hi {
        (lo, hi)
    } else {
        (lo * 0.9, lo * 1.1 + 1e-9)
    };
    // Fast (low cycles/byte) is bright.
    let shade = |v: f64| viridis(1.0 - (v.ln() - lo.ln()) / (hi.ln() - lo.ln()));

    let nx = h.lens.len() as f64;
    let ny = h.lanes.len() as f64;
    let mut chart = ChartBuilder::on(&main)
        .margin(12)
        .margin_left(70)
        .margin_bottom(50)
        .build_cartesian_2d(0f64..nx, 0f64..ny)
        .map_err(err)?;
    for (yi, row) in h.cpb.iter().enumerate() {
        for (xi, &v) in row.iter().enumerate() {
            let (x, y) = (xi as f64, yi as f64);
            let fill = if v.is_finite() {
                shade(v)
            } else {
                RGBColor(220, 220, 220)
            };
            chart
                .draw_series(std::iter::once(Rectangle::new(
                    [(x, y), (x + 1.0, y + 1.0)],
                    fill.filled(),
                )))
                .map_err(err)?;
            if v.is_finite() {
                let bright =
                    (fill.0 as u32 * 299 + fill.1 as u32 * 587 + fill.2 as u32 * 114) / 1000 > 128;
                let tc = if bright { BLACK } else { WHITE };
                let style = TextStyle::from((FONT, 11).into_font()).color(&tc).pos(
                    plotters::style::text_anchor::Pos::new(
                        plotters::style::text_anchor::HPos::Center,
                        plotters::style::text_anchor::VPos::Center,
                    ),
                );
                chart
                    .draw_series(std::iter::once(Text::new(
                        format!("{v:.2}"),
                        (x + 0.5, y + 0.5),
                        style,
                    )))
                    .map_err(err)?;
            }
        }
    }
    // Axis labels, drawn on the root in pixel coordinates.
    let centered = |h, v| {
        TextStyle::from((FONT, 13).into_font())
            .color(&BLACK)
            .pos(plotters::style::text_anchor::Pos::new(h, v))
    };
    use plotters::style::text_anchor::{HPos, VPos};
    for (xi, l) in h.lens.iter().enumerate() {
        let (px, py) = chart.backend_coord(&(xi as f64 + 0.5, 0.0));
        root.draw(&Text::new(
            l.to_string(),
            (px, py + 6),
            centered(HPos::Center, VPos::Top),
        ))
        .map_err(err)?;
    }
    for (yi, p) in h.lanes.iter().enumerate() {
        let (px, py) = chart.backend_coord(&(0.0, yi as f64 + 0.5));
        root.draw(&Text::new(
            p.to_string(),
            (px - 8, py),
            centered(HPos::Right, VPos::Center),
        ))
        .map_err(err)?;
    }
    let (bx, by) = chart.backend_coord(&(nx / 2.0, 0.0));
    root.draw(&Text::new(
        "message length (bytes)",
        (bx, by + 28),
        centered(HPos::Center, VPos::Top),
    ))
    .map_err(err)?;
    let (lx, ly) = chart.backend_coord(&(0.0, ny / 2.0));
    root.draw(&Text::new(
        "lanes P",
        (lx - 40, ly),
        centered(HPos::Center, VPos::Center).transform(FontTransform::Rotate270),
    ))
    .map_err(err)?;

    // Colour key.
    let (kw, kh) = key.dim_in_pixel();
    let (top, bottom) = (40i32, kh as i32 - 60);
    let x0 = 20i32;
    let steps = 64;
    for i in 0..steps {
        let t0 = i as f64 / steps as f64;
        let y_a = top + ((bottom - top) as f64 * t0) as i32;
        let y_b = top + ((bottom - top) as f64 * (i + 1) as f64 / steps as f64) as i32;
        // top of the key = slowest
        let v = (hi.ln() + (lo.ln() - hi.ln()) * t0).exp();
        key.draw(&Rectangle::new(
            [(x0, y_a), (x0 + 24, y_b.max(y_a + 1))],
            shade(v).filled(),
        ))
        .map_err(err)?;
    }
    let _ = kw;
    for (t, v) in [
        (0.0, hi),
        (0.5, (lo.ln() * 0.5 + hi.ln() * 0.5).exp()),
        (1.0, lo),
    ] {
        let y = top + ((bottom - top) as f64 * t) as i32;
        key.draw(&Text::new(
            format!("{v:.2}"),
            (x0 + 30, y),
            centered(HPos::Left, VPos::Center),
        ))
        .map_err(err)?;
    }
    key.draw(&Text::new(
        "cpb",
        (x0, top - 24),
        centered(HPos::Left, VPos::Top),
    ))
    .map_err(err)?;
    root.present().map_err(err)
}

/// Writes `name.png` and `name.svg` in `dir` with the same drawing.
fn both<F, G>(
    dir: &Path,
    name: &str,
    size: (u32, u32),
    png: F,
    svg: G,
    out: &mut Vec<PathBuf>,
) -> Result<(), String>
where
    F: FnOnce(&DrawingArea<PngBackend<'_>, Shift>) -> Result<(), String>,
    G: FnOnce(&DrawingArea<SVGBackend<'_>, Shift>) -> Result<(), String>,
{
    let p = dir.join(format!("{name}.png"));
    {
        let root = PngBackend::new(&p, size).into_drawing_area();
        png(&root)?;
    }
    out.push(p);
    let s = dir.join(format!("{name}.svg"));
    {
        let root = SVGBackend::new(&s, size).into_drawing_area();
        svg(&root)?;
    }
    out.push(s);
    Ok(())
}

/// What to draw, each from its own set of results.
pub struct PlotInput<'a> {
    pub lengths: Vec<&'a Measured>,
    pub lanes: Vec<&'a Measured>,
    pub heat: Vec<&'a Measured>,
    pub engine_order: Vec<String>,
}

/// Draws every plot the results allow into `dir`; returns the files written.
pub fn write_all(dir: &Path, input: &PlotInput<'_>) -> Result<Vec<PathBuf>, String> {
    std::fs::create_dir_all(dir).map_err(|e| format!("{}: {e}", dir.display()))?;
    let mut out = Vec::new();
    let lp = length_panels(&input.lengths, &input.engine_order);
    if !lp.is_empty() {
        let (r, c) = grid(lp.len());
        let t = "Cycles per byte against message length";
        let size = (panels_width(t, 480, c), 360 * r as u32 + 60);
        both(
            dir,
            "cpb_vs_length",
            size,
            |a| draw_panels(a, t, &lp, "message length (bytes)", true),
            |a| draw_panels(a, t, &lp, "message length (bytes)", true),
            &mut out,
        )?;
    }
    let np = lane_panels(&input.lanes);
    if !np.is_empty() {
        let (r, c) = grid(np.len());
        let t = "Comb: cycles per byte against lanes P";
        let size = (panels_width(t, 560, c), 400 * r as u32 + 60);
        both(
            dir,
            "cpb_vs_lanes",
            size,
            |a| draw_panels(a, t, &np, "lanes P", false),
            |a| draw_panels(a, t, &np, "lanes P", false),
            &mut out,
        )?;
    }
    for h in heats(&input.heat) {
        let height = (36 * h.lanes.len() as u32 + 160).max(420);
        // Wide enough for the title too: with few lengths (--quick has four) the PNG's
        // bitmap font ran past both edges.
        let title = pngtext::text_size(&h.title, HEAT_TITLE.into()).0 + 40;
        let size = ((110 * h.lens.len() as u32 + 260).max(title), height);
        both(
            dir,
            &h.name,
            size,
            |a| draw_heat(a, &h),
            |a| draw_heat(a, &h),
            &mut out,
        )?;
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::bench::measure::{Config, LaneSource};
    use crate::bench::stats::Summary;
    use crate::bench::workload::Dist;
    use comb::{Algorithm, Op};

    fn m(engine: &str, len: usize, lanes: Option<usize>, cpb: f64) -> Measured {
        Measured {
            config: Config::new(
                "t",
                Algorithm::AesCbc,
                Op::Encrypt,
                engine,
                &Dist::Fixed(len),
                64,
                lanes,
                if lanes.is_some() {
                    LaneSource::Explicit
                } else {
                    LaneSource::None
                },
                128,
            ),
            tsc: Summary::of(&[cpb]).unwrap(),
            cpb_core: cpb,
            samples: 1,
            rejected: 0,
            forced: 0,
        }
    }

    /// One panel is as wide as its title, many panels as their columns.
    #[test]
    fn panel_plots_are_wide_enough_for_their_title() {
        let t = "Cycles per byte against message length";
        let title = pngtext::text_size(t, PANELS_TITLE.into()).0;
        assert!(panels_width(t, 480, 1) >= title + 40);
        assert_eq!(panels_width(t, 480, 3), 480 * 3 + 40);
    }

    #[test]
    fn heat_grid_and_panels() {
        let rs = [
            m("comb", 32, Some(1), 4.0),
            m("comb", 64, Some(1), 3.0),
            m("comb", 32, Some(2), 2.0),
            m("sequential", 32, None, 5.0),
            m("sequential", 64, None, 4.5),
        ];
        let refs: Vec<&Measured> = rs.iter().collect();
        let h = heats(&refs);
        assert_eq!(h.len(), 1);
        assert_eq!(h[0].name, "heatmap_aes-cbc_encrypt");
        assert_eq!(h[0].lens, vec![32, 64]);
        assert_eq!(h[0].lanes, vec![1, 2]);
        assert_eq!(h[0].cpb[0], vec![4.0, 3.0]);
        assert!(h[0].cpb[1][1].is_nan());
        let p = length_panels(&refs, &["sequential".into(), "comb".into()]);
        assert_eq!(p.len(), 1);
        assert_eq!(p[0].series[0].points, vec![(32.0, 5.0), (64.0, 4.5)]);
        let l = lane_panels(&refs);
        assert_eq!(l.len(), 1, "32 B has a two-point lane sweep");
        assert_eq!(l[0].series[0].points, vec![(1.0, 4.0), (2.0, 2.0)]);
    }

    #[test]
    fn colours() {
        assert_eq!(viridis(0.0), RGBColor(68, 1, 84));
        assert_eq!(viridis(1.0), RGBColor(253, 231, 37));
        assert_eq!(viridis(f64::NAN), RGBColor(68, 1, 84));
        assert_eq!(grid(7), (3, 3));
        assert_eq!(grid(1), (1, 1));
    }
}
