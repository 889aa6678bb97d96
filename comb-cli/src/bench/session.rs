//! Setting up a measuring session (clock checks, pinning, warm-up, calibration) and closing
//! it (second calibration, machine description, core cycles per byte).

use super::measure::{Gate, Measured};
use super::output::Machine;
use super::timer;
use std::time::{Duration, Instant};

/// Gate threshold: a probe this much slower than the best one means a shared core.
pub const GATE_THRESHOLD: f64 = 1.3;
/// Retakes of one sample before it is kept anyway (and counted as forced).
pub const GATE_RETRIES: usize = 5;
/// Core cycles of one calibration chain (about 1 ms).
const CHAIN_CYCLES: u64 = 3_000_000;

/// A measuring session.
pub struct Session {
    pub gate: Gate,
    /// CPUs the process could use before pinning (for worker threads).
    pub allowed: Vec<usize>,
    pub pinned: Option<usize>,
    pub warmup: usize,
    pub seed: u64,
    ratio_start: f64,
    started: Instant,
}

impl Session {
    /// Checks the clock, pins (optionally), warms the core up and calibrates.
    pub fn start(
        cpu: Option<usize>,
        gate: bool,
        warmup: usize,
        seed: u64,
    ) -> Result<Session, String> {
        let started = Instant::now();
        timer::check_clock()?;
        let allowed = timer::allowed_cpus();
        if let Some(c) = cpu {
            if !allowed.is_empty() && !allowed.contains(&c) {
                return Err(format!(
                    "--cpu {c}: this process may only run on CPUs {allowed:?}"
                ));
            }
            timer::pin_to_cpu(c)?;
        }
        let mut gate = Gate::new(gate, GATE_THRESHOLD, GATE_RETRIES)?;
        timer::spin(Duration::from_millis(250));
        gate.settle(Duration::from_millis(100));
        let ratio_start = timer::ticks_per_core_cycle(CHAIN_CYCLES, 7);
        Ok(Session {
            gate,
            allowed,
            pinned: cpu,
            warmup,
            seed,
            ratio_start,
            started,
        })
    }

    /// CPUs for `n` worker threads: the pinned CPU first, then other allowed ones; empty when
    /// nothing is pinned (the OS places the threads).
    pub fn worker_cpus(&self, n: usize) -> Vec<usize> {
        match self.pinned {
            None => Vec::new(),
            Some(p) => std::iter::once(p)
                .chain(self.allowed.iter().copied().filter(|&c| c != p))
                .take(n)
                .collect(),
        }
    }

    /// Calibrates again, converts every result to core cycles per byte and describes the
    /// machine.
    pub fn finish(&self, results: &mut [Measured], command: String) -> Machine {
        let ratio_end = timer::ticks_per_core_cycle(CHAIN_CYCLES, 7);
        let ratio = (self.ratio_start + ratio_end) / 2.0;
        for m in results.iter_mut() {
            m.cpb_core = m.tsc.median / ratio;
        }
        let hz = timer::tsc_hz(Duration::from_millis(60));
        let id = timer::cpu_id();
        let engine = comb::Engine::new().ok();
        let features = comb::CpuFeatures::detect()
            .list()
            .iter()
            .filter(|(_, on)| *on)
            .map(|(n, _)| n.to_string())
            .collect();
        Machine {
            cpu: if id.brand.is_empty() {
                "unknown".into()
            } else {
                id.brand.clone()
            },
            vendor: id.vendor.clone(),
            family: id.family,
            model: id.model,
            stepping: id.stepping,
            logical_cpus: std::thread::available_parallelism()
                .map(|n| n.get())
                .unwrap_or(1),
            os: std::env::consts::OS.to_string(),
            comb_version: env!("CARGO_PKG_VERSION").to_string(),
            backend: engine
                .map(|e| e.backend().name().to_string())
                .unwrap_or_default(),
            features,
            tsc_ghz: round3(hz / 1e9),
            invariant_tsc: id.invariant_tsc,
            tsc_per_core_cycle_start: round4(self.ratio_start),
            tsc_per_core_cycle_end: round4(ratio_end),
            tsc_per_core_cycle: round4(ratio),
            core_ghz: round3(hz / 1e9 / ratio),
            pinned_cpu: self.pinned,
            gate: self.gate.enabled(),
            gate_threshold: GATE_THRESHOLD,
            gate_retries: GATE_RETRIES,
            warmup_calls: self.warmup,
            seed: self.seed,
            unix_time: std::time::SystemTime::now()
                .duration_since(std::time::UNIX_EPOCH)
                .map(|d| d.as_secs())
                .unwrap_or(0),
            wall_seconds: (self.started.elapsed().as_secs_f64() * 10.0).round() / 10.0,
            command,
        }
    }
}

fn round3(x: f64) -> f64 {
    (x * 1e3).round() / 1e3
}

fn round4(x: f64) -> f64 {
    (x * 1e4).round() / 1e4
}

/// One line about the machine and the clocks, for the terminal and the report.
pub fn machine_line(m: &Machine) -> String {
    format!(
        "{} (family {} model {}), backend {}, TSC {:.2} GHz{}, core ≈ {:.2} GHz ({:.3} TSC ticks per core cycle{})",
        m.cpu,
        m.family,
        m.model,
        m.backend,
        m.tsc_ghz,
        if m.invariant_tsc { "" } else { " (not invariant!)" },
        m.core_ghz,
        m.tsc_per_core_cycle,
        if (m.tsc_per_core_cycle_start - m.tsc_per_core_cycle_end).abs() > 0.05 * m.tsc_per_core_cycle {
            format!(
                "; drifted {:.3} → {:.3} during the run",
                m.tsc_per_core_cycle_start, m.tsc_per_core_cycle_end
            )
        } else {
            String::new()
        }
    )
}

/// One line about the gate.
pub fn gate_line(m: &Machine, results: &[Measured]) -> String {
    if !m.gate {
        return "quiet-host gate: off (--no-gate)".into();
    }
    let samples: usize = results.iter().map(|r| r.samples).sum();
    let rejected: usize = results.iter().map(|r| r.rejected).sum();
    let forced: usize = results.iter().map(|r| r.forced).sum();
    format!(
        "quiet-host gate: {rejected} of {} samples retaken (probe > {:.1}× best), {forced} kept after {} retries{}",
        samples + rejected,
        m.gate_threshold,
        m.gate_retries,
        if forced * 10 > samples {
            " — the host was busy; figures are noisy"
        } else {
            ""
        }
    )
}
