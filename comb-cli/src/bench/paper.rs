//! `comb bench --paper`: the shape of papers/000 Table 3 (CBC speed-up against lanes, 2 KiB
//! and realistic messages), papers/000 Table 4 (NIST modes, sequential against comb,
//! realistic mix) and papers/001 Table 2 (CBC encryption and decryption of 32 KiB buffers,
//! 128/192/256-bit keys, key expansion included, 1 and 2 threads), with the papers' figures
//! printed beside ours. Fig. 5 and Table 9 of papers/000 (GF(2^128) products and doublings)
//! are in `gf`.
//!
//! The papers measured core cycles at a fixed clock (Haswell i5-4300U at 1.9 GHz; Westmere
//! i7-980X at 3.33 GHz without turbo), so our core cycles per byte are the comparable figure;
//! TSC cycles per byte are shown too. The papers' numbers are embedded here: the bench reads
//! nothing but its own options at run time.

use super::buffers::Buffers;
use super::engines;
use super::gf;
use super::measure::{Config, LaneSource, Measured, Sampler, Task};
use super::spec::LaneSpec;
use super::suite::Sweep;
use super::table::{fmt_cpb, fmt_ratio, Table};
use super::timer;
use super::workload::Dist;
use comb::{AesKey, Algorithm, Engine, Job, Op};
use std::sync::Barrier;

/// papers/000 Table 3: CBC encryption, sequential then P = 2..=8 (cycles/byte, Haswell).
pub const T3_2K: [(usize, f64); 8] = [
    (0, 4.38),
    (2, 2.19),
    (3, 1.47),
    (4, 1.11),
    (5, 0.91),
    (6, 0.76),
    (7, 0.66),
    (8, 0.65),
];
/// papers/000 Table 3, realistic distribution (P = 0 stands for sequential).
pub const T3_REALISTIC: [(usize, f64); 8] = [
    (0, 4.38),
    (2, 2.42),
    (3, 1.73),
    (4, 1.37),
    (5, 1.08),
    (6, 0.98),
    (7, 0.87),
    (8, 0.85),
];

/// papers/000 Table 4: (mode, sequential cpb, comb cpb) on the realistic mix, Haswell.
pub const T4: [(Algorithm, f64, Option<f64>); 6] = [
    (Algorithm::AesEcb, 0.65, None),
    (Algorithm::AesCtr, 0.78, None),
    (Algorithm::AesCbc, 4.47, Some(0.87)),
    (Algorithm::AesOfb, 4.48, Some(0.88)),
    (Algorithm::AesCfb128, 4.45, Some(0.89)),
    (Algorithm::AesCmac, 4.29, Some(0.84)),
];

/// papers/001 Table 2 (i7-980X, 32 KiB buffers, key expansion included): cycles/byte for
/// `(threads, op, key bits)`; the 2-thread row is "2 cores, 2 threads" (aggregate).
pub const T2: [(usize, Op, usize, f64); 12] = [
    (1, Op::Encrypt, 128, 4.20),
    (1, Op::Encrypt, 192, 4.95),
    (1, Op::Encrypt, 256, 5.70),
    (1, Op::Decrypt, 128, 1.30),
    (1, Op::Decrypt, 192, 1.56),
    (1, Op::Decrypt, 256, 1.80),
    (2, Op::Encrypt, 128, 2.11),
    (2, Op::Encrypt, 192, 2.48),
    (2, Op::Encrypt, 256, 2.86),
    (2, Op::Decrypt, 128, 0.67),
    (2, Op::Decrypt, 192, 0.80),
    (2, Op::Decrypt, 256, 0.91),
];

/// Facts of the development CPU from DESIGN.md (Intel family 6 model 207, TSC 2.3 GHz): TSC
/// cycles per byte, AES-128.
pub const DESIGN_FACTS: [(&str, f64); 5] = [
    ("one dependent chain (CBC-enc of one message)", 1.44),
    ("all AES units busy, xmm", 0.240),
    ("all AES units busy, ymm/zmm (VAES floor)", 0.120),
    (
        "intel-ipsec-mb 1.3 multi-buffer CBC-enc, realistic, batch 64",
        0.45,
    ),
    ("OpenSSL 3.0, one message at a time, realistic", 2.00),
];

/// The buffer size of papers/001 Table 2.
pub const T2_BUF: usize = 32 << 10;

/// The regular sweeps of the paper run (Tables 3 and 4, and Fig. 5's modes: COBRA-R and
/// McOE-G on eight messages of each Fig. 5 length, one at a time and comb-scheduled).
pub fn sweeps(samples: usize, calls: usize) -> Vec<Sweep> {
    vec![
        Sweep {
            phase: "paper-t3",
            algs: vec![Algorithm::AesCbc],
            ops: vec![Op::Encrypt],
            dists: vec![Dist::Fixed(2048), Dist::Realistic],
            lanes: LaneSpec::List((1..=16).collect()),
            engines: Some(engines::BUILTIN.to_vec()),
            batch: None,
            samples,
            calls,
        },
        Sweep {
            phase: "paper-f5-modes",
            algs: vec![Algorithm::Aes128CobraR, Algorithm::Aes128McoeG],
            ops: vec![Op::Encrypt],
            dists: gf::F5_LENGTHS.iter().map(|&n| Dist::Fixed(n)).collect(),
            lanes: LaneSpec::Auto,
            engines: Some(engines::BUILTIN.to_vec()),
            batch: Some(gf::F5_MESSAGES),
            samples,
            // A call is eight messages of up to 16 KiB, not a batch of packets.
            calls: calls.div_ceil(4),
        },
        Sweep {
            phase: "paper-t4",
            algs: T4.iter().map(|t| t.0).collect(),
            ops: vec![Op::Encrypt],
            dists: vec![Dist::Realistic],
            lanes: LaneSpec::Auto,
            engines: None,
            batch: None,
            samples,
            calls,
        },
    ]
}

/// One call of papers/001 Table 2: expand the key, then CBC over one 32 KiB buffer through
/// the single-message path; on `threads` threads at once (aggregate cycles per byte).
struct BigCbc {
    engine: Engine,
    op: Op,
    key: Vec<u8>,
    iv: [u8; 16],
    /// One 32 KiB input and output per thread (fixed layout, see `buffers`).
    bufs: Vec<Buffers>,
    /// CPUs to pin the worker threads to (empty: leave placement to the OS).
    cpus: Vec<usize>,
}

fn big_call(engine: &Engine, op: Op, key: &[u8], iv: &[u8; 16], buf: &mut Buffers) -> bool {
    let Ok(k) = AesKey::new(key) else {
        return false;
    };
    let Some((input, output)) = buf.io_mut().next() else {
        return false;
    };
    engine
        .process_one(
            Algorithm::AesCbc,
            op,
            Job::copy(&k, input, output).with_iv(iv),
        )
        .is_ok()
}

impl Sampler for BigCbc {
    fn warm(&mut self, calls: usize) -> Result<(), String> {
        for buf in &mut self.bufs {
            for _ in 0..calls {
                if !big_call(&self.engine, self.op, &self.key, &self.iv, buf) {
                    return Err("CBC of a 32 KiB buffer failed".into());
                }
            }
        }
        Ok(())
    }

    fn timed(&mut self, calls: usize) -> Result<(u64, u64), String> {
        let bytes = (calls * T2_BUF * self.bufs.len()) as u64;
        let (engine, op, key, iv) = (self.engine, self.op, &self.key, &self.iv);
        if self.bufs.len() == 1 {
            let buf = &mut self.bufs[0];
            let mut ok = true;
            let t0 = timer::start();
            for _ in 0..calls {
                ok &= big_call(&engine, op, key, iv, buf);
            }
            let t1 = timer::stop();
            return if ok {
                Ok((t1.wrapping_sub(t0), bytes))
            } else {
                Err("CBC of a 32 KiB buffer failed".into())
            };
        }
        let barrier = Barrier::new(self.bufs.len());
        let cpus = &self.cpus;
        let spans: Vec<Option<(u64, u64)>> = std::thread::scope(|s| {
            let handles: Vec<_> = self
                .bufs
                .iter_mut()
                .enumerate()
                .map(|(i, buf)| {
                    let barrier = &barrier;
                    s.spawn(move || {
                        if let Some(&c) = cpus.get(i) {
                            let _ = timer::pin_to_cpu(c);
                        }
                        barrier.wait();
                        let mut ok = true;
                        let t0 = timer::start();
                        for _ in 0..calls {
                            ok &= big_call(&engine, op, key, iv, buf);
                        }
                        let t1 = timer::stop();
                        ok.then_some((t0, t1))
                    })
                })
                .collect();
            handles
                .into_iter()
                .map(|h| h.join().ok().flatten())
                .collect()
        });
        let mut first = u64::MAX;
        let mut last = 0u64;
        for span in spans {
            let (t0, t1) = span.ok_or("a worker thread failed")?;
            first = first.min(t0);
            last = last.max(t1);
        }
        Ok((last.wrapping_sub(first), bytes))
    }
}

/// The papers/001 Table 2 tasks: CBC encrypt/decrypt × 128/192/256 × `threads`.
pub fn table2_tasks(
    threads: &[usize],
    cpus: &[usize],
    samples: usize,
    calls: usize,
    warmup: usize,
) -> Result<Vec<Task>, String> {
    let engine = Engine::new().map_err(|e| e.to_string())?;
    let mut tasks = Vec::new();
    for &t in threads {
        for op in [Op::Encrypt, Op::Decrypt] {
            for bits in [128usize, 192, 256] {
                let key: Vec<u8> = (0..bits / 8).map(|i| i as u8 ^ 0x2b).collect();
                let bufs = (0..t)
                    .map(|i| {
                        let mut b = Buffers::new(&[T2_BUF], &[T2_BUF]);
                        b.input_mut(0).fill((i as u8).wrapping_mul(7) ^ 0x5c);
                        b
                    })
                    .collect();
                let sampler = BigCbc {
                    engine,
                    op,
                    key,
                    iv: [0x1f; 16],
                    bufs,
                    cpus: if t > 1 { cpus.to_vec() } else { Vec::new() },
                };
                let mut config = Config::new(
                    "paper-t2",
                    Algorithm::AesCbc,
                    op,
                    "sequential",
                    &Dist::Fixed(T2_BUF),
                    1,
                    None,
                    LaneSource::None,
                    bits,
                );
                config.threads = t;
                config.key_setup = true;
                config.mean_len = T2_BUF as f64;
                // Fewer calls: one call is 32 KiB, not a batch.
                tasks.push(Task::new(
                    config,
                    Box::new(sampler),
                    samples,
                    calls.div_ceil(4),
                    warmup.div_ceil(4),
                ));
            }
        }
    }
    Ok(tasks)
}

fn ours(m: Option<&Measured>) -> String {
    match m {
        Some(m) => format!("{} ({})", fmt_cpb(m.cpb()), fmt_cpb(m.cpb_core)),
        None => "—".into(),
    }
}

fn find<'a>(rs: &[&'a Measured], f: impl Fn(&Measured) -> bool) -> Option<&'a Measured> {
    rs.iter().copied().find(|m| f(m))
}

/// The three comparison tables.
pub fn tables(results: &[&Measured]) -> Vec<Table> {
    let mut out = Vec::new();

    // Table 3.
    let t3: Vec<&Measured> = results
        .iter()
        .copied()
        .filter(|m| m.config.phase == "paper-t3")
        .collect();
    let is_2k = |m: &Measured| m.config.msg_len == Some(2048);
    let is_real = |m: &Measured| m.config.workload == "realistic";
    let seq_2k = find(&t3, |m| is_2k(m) && m.config.engine == "sequential");
    let seq_real = find(&t3, |m| is_real(m) && m.config.engine == "sequential");
    let paper = |t: &[(usize, f64)], p: usize| {
        let base = t[0].1;
        t.iter()
            .find(|x| x.0 == p)
            .map(|x| format!("{:.2} {}", x.1, fmt_ratio(base / x.1)))
            .unwrap_or_else(|| "—".into())
    };
    let ours_speed = |m: Option<&Measured>, seq: Option<&Measured>| match (m, seq) {
        (Some(m), Some(s)) => format!(
            "{} ({}) {}",
            fmt_cpb(m.cpb()),
            fmt_cpb(m.cpb_core),
            fmt_ratio(s.cpb() / m.cpb())
        ),
        (Some(m), None) => ours(Some(m)),
        _ => "—".into(),
    };
    let mut rows = vec![vec![
        "sequential".to_string(),
        paper(&T3_2K, 0),
        ours_speed(seq_2k, seq_2k),
        paper(&T3_REALISTIC, 0),
        ours_speed(seq_real, seq_real),
    ]];
    for p in 1..=16 {
        let c2k = find(&t3, |m| {
            is_2k(m) && m.config.engine == "comb" && m.config.lanes == Some(p)
        });
        let creal = find(&t3, |m| {
            is_real(m) && m.config.engine == "comb" && m.config.lanes == Some(p)
        });
        rows.push(vec![
            format!("P = {p}"),
            paper(&T3_2K, p),
            ours_speed(c2k, seq_2k),
            paper(&T3_REALISTIC, p),
            ours_speed(creal, seq_real),
        ]);
    }
    out.push(Table {
        title: "papers/000 Table 3: CBC encryption, cycles/byte and speed-up against lanes P".into(),
        header: vec![
            "".into(),
            "paper 2 KiB".into(),
            "ours 2 KiB".into(),
            "paper realistic".into(),
            "ours realistic".into(),
        ],
        rows,
        notes: vec![
            "paper: Haswell i5-4300U at 1.9 GHz, core cycles/byte; ours: TSC cycles/byte (core cycles/byte) and speed-up over our sequential engine".into(),
        ],
    });

    // Table 4.
    let t4: Vec<&Measured> = results
        .iter()
        .copied()
        .filter(|m| m.config.phase == "paper-t4")
        .collect();
    let mut rows = Vec::new();
    for (alg, p_seq, p_comb) in T4 {
        let s = find(&t4, |m| {
            m.config.alg == alg && m.config.engine == "sequential"
        });
        let c = find(&t4, |m| m.config.alg == alg && m.config.engine == "comb");
        rows.push(vec![
            alg.id().to_string(),
            format!("{p_seq:.2}"),
            p_comb
                .map(|c| format!("{c:.2}"))
                .unwrap_or_else(|| "—".into()),
            p_comb
                .map(|c| fmt_ratio(p_seq / c))
                .unwrap_or_else(|| "—".into()),
            ours(s),
            ours(c),
            match (s, c) {
                (Some(s), Some(c)) => fmt_ratio(s.cpb() / c.cpb()),
                _ => "—".into(),
            },
            c.and_then(|c| c.config.lanes)
                .map(|p| p.to_string())
                .unwrap_or_else(|| "—".into()),
        ]);
    }
    let mut notes = vec![
        "paper: Haswell, core cycles/byte, comb P = 7 (ECB/CTR: no comb, already parallel); ours: TSC (core) cycles/byte".to_string(),
        "DESIGN.md figures for the development CPU (Intel family 6 model 207, TSC cycles/byte):".to_string(),
    ];
    for (what, v) in DESIGN_FACTS {
        notes.push(format!("  {what}: {v:.3}"));
    }
    // Anchors, when measured, appear in the regular modes table of the run.
    out.push(Table {
        title: "papers/000 Table 4: NIST modes, sequential against comb, realistic mix".into(),
        header: vec![
            "mode".into(),
            "paper seq".into(),
            "paper comb".into(),
            "paper ×".into(),
            "ours seq".into(),
            "ours comb".into(),
            "ours ×".into(),
            "P".into(),
        ],
        rows,
        notes,
    });

    // Table 2 of papers/001.
    let t2: Vec<&Measured> = results
        .iter()
        .copied()
        .filter(|m| m.config.phase == "paper-t2")
        .collect();
    let mut rows = Vec::new();
    for op in [Op::Encrypt, Op::Decrypt] {
        for bits in [128usize, 192, 256] {
            let paper = |t: usize| {
                T2.iter()
                    .find(|x| x.0 == t && x.1 == op && x.2 == bits)
                    .map(|x| format!("{:.2}", x.3))
                    .unwrap_or_else(|| "—".into())
            };
            let o = |t: usize| {
                ours(find(&t2, |m| {
                    m.config.op == op && m.config.key_bits == bits && m.config.threads == t
                }))
            };
            rows.push(vec![
                format!("CBC {op} AES-{bits}"),
                paper(1),
                o(1),
                paper(2),
                o(2),
            ]);
        }
    }
    out.push(Table {
        title: "papers/001 Table 2: CBC on 32 KiB buffers, key expansion included, cycles/byte".into(),
        header: vec![
            "".into(),
            "paper 1 thread".into(),
            "ours 1 thread".into(),
            "paper 2 threads".into(),
            "ours 2 threads".into(),
        ],
        rows,
        notes: vec![
            "paper: i7-980X (Westmere) at 3.33 GHz without turbo, core cycles/byte; 2 threads = 2 cores, aggregate".into(),
            "ours: single-message path, TSC (core) cycles/byte; 2 threads: wall-clock TSC ticks / bytes of both threads".into(),
        ],
    });
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn embedded_figures_are_consistent() {
        // The paper's printed speed-ups follow from its cycles/byte.
        assert!((T3_2K[0].1 / T3_2K[7].1 - 6.74).abs() < 0.01);
        assert!((T3_REALISTIC[0].1 / T3_REALISTIC[7].1 - 5.15).abs() < 0.01);
        assert!((4.47f64 / 0.87 - 5.14).abs() < 0.01);
        assert_eq!(T2.len(), 12);
        let s = sweeps(3, 4);
        assert_eq!(s.len(), 3);
        assert_eq!(s[1].batch, Some(gf::F5_MESSAGES));
        assert_eq!(s[0].lanes, LaneSpec::List((1..=16).collect()));
    }

    #[test]
    fn tables_render_without_results() {
        let t = tables(&[]);
        assert_eq!(t.len(), 3);
        assert_eq!(t[0].rows.len(), 17);
        assert_eq!(t[0].rows[2][1], "2.19 ×2.00");
        assert_eq!(t[1].rows[2][3], "×5.14");
        assert_eq!(t[2].rows[0][1], "4.20");
    }
}
