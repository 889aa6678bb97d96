//! `comb bench --paper`, the GF(2^128) part: the shape of papers/000 Fig. 5 and Table 9.
//!
//! * **Fig. 5** (§6.3-6.4): the two ways to multiply in GF(2^128) with PCLMULQDQ, the
//!   "classical" Karatsuba product (3 multiplications) and the "Haswell-optimised" schoolbook
//!   product (4), in chains of products by `H` with nothing to aggregate, one message at a
//!   time against eight side by side. The paper measured them inside COBRA and McOE-G; our
//!   modes each keep the variant measured fastest for their path, so here the chains run by
//!   themselves, through [`comb::gf128::mul_chains_in_place`] with the key forced to each
//!   backend and variant: the kernels the field hashes of COBRA-R and POET run.
//! * **Table 9** (§6.5): doubling in GF(2^128) by way of testing the most significant bit.
//!   The paper's four approaches branch on it; ours all turn it into a mask (no
//!   secret-dependent branch), in five ways. Each is timed as a dependent chain of doublings,
//!   as a mode makes its masks `L_i = 2·L_(i-1)`.
//!
//! Beside them, the modes of the figure as the library runs them (COBRA-R and McOE-G, eight
//! messages of each length, one at a time and comb-scheduled; a regular sweep of
//! `paper::sweeps`).
//!
//! The JSON names the primitives' results by their `subject` (`gf-mul-clmul-karatsuba`,
//! `gf-dbl-xmm-cmp`, ...); the engine is `sequential` for one message at a time and `comb`
//! for the chains side by side.

use super::measure::{Config, LaneSource, Measured, Sampler, Task};
use super::table::{fmt_cpb, Table};
use super::timer;
use super::workload::Dist;
use comb::block::Block;
use comb::gf128::{self, GhashBackend, GhashKey, MulChain, MulVariant};
use comb::{Algorithm, Op};

/// The message lengths of Fig. 5 (bytes).
pub const F5_LENGTHS: [usize; 5] = [128, 2048, 4096, 8192, 16384];

/// Messages per call: Fig. 5's "8 multiple messages of equal length", and as many one at a
/// time for the single-message figure.
pub const F5_MESSAGES: usize = 8;

/// papers/000 Table 9 (Haswell): cycles per doubling, by the way the MSB is tested (each
/// with a branch).
pub const T9: [(&str, f64); 4] = [
    ("(i) extraction", 15.4),
    ("(ii) test", 15.4),
    ("(iii) MSB mask", 16.7),
    ("(iv) compare + extract", 5.6),
];

/// Doublings per timed call: the masks of a 16 KiB message.
const DOUBLINGS: usize = 1024;

/// The multiplication backends compared: xmm PCLMULQDQ (the paper's) and, where the CPU has
/// it, VPCLMULQDQ with two chains per ymm register; each in both variants.
fn product_backends() -> Vec<GhashBackend> {
    let mut out = Vec::new();
    for v in [MulVariant::Karatsuba, MulVariant::Schoolbook] {
        out.push(GhashBackend::Clmul(v));
    }
    for v in [MulVariant::Karatsuba, MulVariant::Schoolbook] {
        out.push(GhashBackend::Vclmul(v));
    }
    out.retain(|b| b.is_supported());
    out
}

/// Eight messages of product chains under one key: one call runs every message's chain over
/// its blocks, in place, one message at a time or all side by side.
struct Chains {
    key: GhashKey,
    xs: [Block; F5_MESSAGES],
    bufs: Vec<Vec<Block>>,
    side_by_side: bool,
}

impl Chains {
    fn call(&mut self) {
        if self.side_by_side {
            let mut chains = arrayvec::ArrayVec::<MulChain<'_>, F5_MESSAGES>::new();
            for (x, blocks) in self.xs.iter().zip(self.bufs.iter_mut()) {
                chains.push(MulChain {
                    key: &self.key,
                    x: *x,
                    blocks,
                });
            }
            gf128::mul_chains_in_place(&mut chains);
            for (x, c) in self.xs.iter_mut().zip(&chains) {
                *x = c.x;
            }
        } else {
            for (x, blocks) in self.xs.iter_mut().zip(self.bufs.iter_mut()) {
                let mut one = [MulChain {
                    key: &self.key,
                    x: *x,
                    blocks,
                }];
                gf128::mul_chains_in_place(&mut one);
                *x = one[0].x;
            }
        }
    }

    fn bytes(&self) -> u64 {
        self.bufs.iter().map(|b| 16 * b.len() as u64).sum()
    }
}

impl Sampler for Chains {
    fn warm(&mut self, calls: usize) -> Result<(), String> {
        for _ in 0..calls {
            self.call();
        }
        Ok(())
    }

    fn timed(&mut self, calls: usize) -> Result<(u64, u64), String> {
        let t0 = timer::start();
        for _ in 0..calls {
            self.call();
        }
        let t1 = timer::stop();
        std::hint::black_box(&self.xs);
        Ok((t1.wrapping_sub(t0), calls as u64 * self.bytes()))
    }
}

/// A way to double in GF(2^128) (`comb::gf128`'s functions).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Doubling {
    /// `dbl`: the MSB mask as `0 − msb` (CMAC's, OCB3's).
    Neg,
    /// `dbl_sar`: the mask by an arithmetic shift (sign fill).
    Sar,
    /// `dbl_mulbit`: the reduction term as `msb · 0x87`.
    MulBit,
    /// `dbl_xmm_sar`: Listing 1.1's shift on xmm, the mask by `psrad` of the top dword.
    XmmSar,
    /// `dbl_xmm_cmp`: the same, the mask by `pcmpgtd` against zero.
    XmmCmp,
}

impl Doubling {
    fn all() -> Vec<Doubling> {
        let mut v = vec![Doubling::Neg, Doubling::Sar, Doubling::MulBit];
        if cfg!(any(target_arch = "x86", target_arch = "x86_64")) {
            v.extend([Doubling::XmmSar, Doubling::XmmCmp]);
        }
        v
    }

    /// The JSON subject.
    fn subject(self) -> &'static str {
        match self {
            Doubling::Neg => "gf-dbl-neg",
            Doubling::Sar => "gf-dbl-sar",
            Doubling::MulBit => "gf-dbl-mulbit",
            Doubling::XmmSar => "gf-dbl-xmm-sar",
            Doubling::XmmCmp => "gf-dbl-xmm-cmp",
        }
    }

    /// The table's row label.
    fn label(self) -> &'static str {
        match self {
            Doubling::Neg => "ours: 0 − msb (dbl)",
            Doubling::Sar => "ours: sign fill (dbl_sar)",
            Doubling::MulBit => "ours: msb · 0x87 (dbl_mulbit)",
            Doubling::XmmSar => "ours: xmm, psrad (dbl_xmm_sar)",
            Doubling::XmmCmp => "ours: xmm, pcmpgtd (dbl_xmm_cmp)",
        }
    }

    /// `n` doublings of `b`, each of the last.
    fn chain(self, b: &Block, n: usize) -> Block {
        let mut b = *b;
        match self {
            Doubling::Neg => (0..n).for_each(|_| b = gf128::dbl(&b)),
            Doubling::Sar => (0..n).for_each(|_| b = gf128::dbl_sar(&b)),
            Doubling::MulBit => (0..n).for_each(|_| b = gf128::dbl_mulbit(&b)),
            Doubling::XmmSar | Doubling::XmmCmp => b = xmm_chain(self == Doubling::XmmCmp, &b, n),
        }
        b
    }
}

/// The xmm doublings' chain: the block as the integer the functions take (big-endian value
/// in the register).
#[cfg(any(target_arch = "x86", target_arch = "x86_64"))]
fn xmm_chain(cmp: bool, b: &Block, n: usize) -> Block {
    #[cfg(target_arch = "x86")]
    use core::arch::x86::*;
    #[cfg(target_arch = "x86_64")]
    use core::arch::x86_64::*;
    let le = u128::from_be_bytes(*b).to_le_bytes();
    // SAFETY: SSE2 is part of x86-64 (and of every x86 CPU that has AES-NI, which the engine
    // already required); the load and store touch the 16 bytes of local arrays.
    unsafe {
        let mut v = _mm_loadu_si128(le.as_ptr().cast());
        for _ in 0..n {
            v = if cmp {
                gf128::dbl_xmm_cmp(v)
            } else {
                gf128::dbl_xmm_sar(v)
            };
        }
        let mut out = [0u8; 16];
        _mm_storeu_si128(out.as_mut_ptr().cast(), v);
        u128::from_le_bytes(out).to_be_bytes()
    }
}

#[cfg(not(any(target_arch = "x86", target_arch = "x86_64")))]
fn xmm_chain(_cmp: bool, b: &Block, _n: usize) -> Block {
    *b
}

/// A dependent chain of [`DOUBLINGS`] doublings per call.
struct Doublings {
    how: Doubling,
    state: Block,
}

impl Sampler for Doublings {
    fn warm(&mut self, calls: usize) -> Result<(), String> {
        for _ in 0..calls {
            self.state = self.how.chain(&self.state, DOUBLINGS);
        }
        Ok(())
    }

    fn timed(&mut self, calls: usize) -> Result<(u64, u64), String> {
        let t0 = timer::start();
        for _ in 0..calls {
            self.state = self.how.chain(std::hint::black_box(&self.state), DOUBLINGS);
        }
        let t1 = timer::stop();
        std::hint::black_box(&self.state);
        Ok((t1.wrapping_sub(t0), (calls * DOUBLINGS * 16) as u64))
    }
}

/// The Fig. 5 and Table 9 tasks: every product backend and variant at every Fig. 5 length,
/// one message at a time and side by side; every doubling. Before any timing, every way is
/// checked against the portable reference (`gf_mul`, `dbl`).
pub fn tasks(samples: usize, calls: usize, warmup: usize) -> Result<Vec<Task>, String> {
    check()?;
    let h: Block = core::array::from_fn(|i| (i as u8).wrapping_mul(29) ^ 0x6b);
    let mut tasks = Vec::new();
    for b in product_backends() {
        let key = GhashKey::with_backend(&h, b).map_err(|e| e.to_string())?;
        for &len in &F5_LENGTHS {
            for side_by_side in [false, true] {
                let bufs = (0..F5_MESSAGES)
                    .map(|m| {
                        (0..len / 16)
                            .map(|i| core::array::from_fn(|j| (m * 31 + i * 7 + j) as u8))
                            .collect()
                    })
                    .collect();
                let sampler = Chains {
                    key: key.clone(),
                    xs: core::array::from_fn(|m| [m as u8 ^ 0x35; 16]),
                    bufs,
                    side_by_side,
                };
                let (engine, lanes) = if side_by_side {
                    ("comb", F5_MESSAGES)
                } else {
                    ("sequential", 1)
                };
                let mut config = Config::new(
                    "paper-f5",
                    Algorithm::Aes128CobraR,
                    Op::Encrypt,
                    engine,
                    &Dist::Fixed(len),
                    F5_MESSAGES,
                    Some(lanes),
                    LaneSource::Explicit,
                    128,
                );
                config.mean_len = len as f64;
                config.subject = Some(format!("gf-mul-{}", b.name()));
                // About as many bytes per sample at every length.
                let div = (len / 2048).max(1);
                tasks.push(Task::new(
                    config,
                    Box::new(sampler),
                    samples,
                    calls.div_ceil(div),
                    warmup.div_ceil(div),
                ));
            }
        }
    }
    for how in Doubling::all() {
        let mut config = Config::new(
            "paper-dbl",
            Algorithm::AesOcb3,
            Op::Encrypt,
            "sequential",
            &Dist::Fixed(16 * DOUBLINGS),
            1,
            None,
            LaneSource::None,
            128,
        );
        config.mean_len = (16 * DOUBLINGS) as f64;
        config.subject = Some(how.subject().to_string());
        let sampler = Doublings {
            how,
            state: [0xa7; 16],
        };
        tasks.push(Task::new(config, Box::new(sampler), samples, calls, warmup));
    }
    Ok(tasks)
}

/// Every product backend and doubling measured gives the reference's bytes.
fn check() -> Result<(), String> {
    let h = [0x9du8; 16];
    let x0 = [0x3cu8; 16];
    let data: Vec<Block> = (0..37u8).map(|i| [i.wrapping_mul(13); 16]).collect();
    let mut want = data.clone();
    let mut x = x0;
    for b in want.iter_mut() {
        x = gf128::gf_mul(&x, &h);
        for (v, d) in x.iter_mut().zip(b.iter()) {
            *v ^= d;
        }
        *b = x;
    }
    for b in product_backends() {
        let key = GhashKey::with_backend(&h, b).map_err(|e| e.to_string())?;
        let mut got = data.clone();
        let mut c = [MulChain {
            key: &key,
            x: x0,
            blocks: &mut got,
        }];
        gf128::mul_chains_in_place(&mut c);
        if c[0].x != x || got != want {
            return Err(format!("GF(2^128) chain on {b} differs from gf_mul"));
        }
    }
    // Not a palindrome: a byte-order slip in the xmm conversions shows.
    let start: Block = core::array::from_fn(|i| (i as u8).wrapping_mul(37) | 0x80);
    let want = Doubling::Neg.chain(&start, 300);
    for how in Doubling::all() {
        if how.chain(&start, 300) != want {
            return Err(format!("doubling {} differs from dbl", how.subject()));
        }
    }
    Ok(())
}

fn cell(m: Option<&Measured>, scale: f64) -> String {
    match m {
        Some(m) => format!(
            "{} ({})",
            fmt_cpb(m.cpb() * scale),
            fmt_cpb(m.cpb_core * scale)
        ),
        None => "—".into(),
    }
}

/// The Fig. 5 tables (one per multiplier width measured) and Table 9.
pub fn tables(results: &[&Measured]) -> Vec<Table> {
    let find = |phase: &str, subject: &str, engine: &str, len: usize| {
        results.iter().copied().find(|m| {
            let c = &m.config;
            c.phase == phase
                && c.subject.as_deref() == Some(subject)
                && c.engine == engine
                && c.msg_len == Some(len)
        })
    };
    let mut out = Vec::new();
    let widths = [
        ("clmul", "PCLMULQDQ on xmm, as in the paper"),
        ("vclmul", "VPCLMULQDQ on ymm, two chains per register"),
    ];
    for (w, what) in widths {
        let k = format!("gf-mul-{w}-karatsuba");
        let s = format!("gf-mul-{w}-schoolbook");
        let rows: Vec<Vec<String>> = F5_LENGTHS
            .iter()
            .map(|&len| {
                vec![
                    format!("{len} B"),
                    cell(find("paper-f5", &k, "sequential", len), 1.0),
                    cell(find("paper-f5", &s, "sequential", len), 1.0),
                    cell(find("paper-f5", &k, "comb", len), 1.0),
                    cell(find("paper-f5", &s, "comb", len), 1.0),
                ]
            })
            .collect();
        let measured = rows.iter().any(|r| r[1..].iter().any(|c| c != "—"));
        if !measured && w == "vclmul" {
            continue;
        }
        out.push(Table {
            title: format!(
                "papers/000 Fig. 5 (shape): GF(2^128) product chains, classical against \
                 Haswell-optimised multiplication, {what}, cycles/byte"
            ),
            header: vec![
                "length".into(),
                "classical, one".into(),
                "Haswell, one".into(),
                format!("classical, {F5_MESSAGES} side by side"),
                format!("Haswell, {F5_MESSAGES} side by side"),
            ],
            rows,
            notes: vec![
                "classical: Karatsuba, 3 carry-less multiplications and a shift reduction; Haswell-optimised: schoolbook, 4 and a 2-multiplication reduction".into(),
                format!("one: {F5_MESSAGES} messages' chains one after another (each product waits for the last); side by side: the {F5_MESSAGES} chains interleaved"),
                "paper (Haswell, inside COBRA and McOE-G): one message, Haswell-optimised faster; 8 messages, classical faster".into(),
                "ours: TSC (core) cycles/byte of the chains alone (comb::gf128::mul_chains_in_place)".into(),
            ],
        });
    }
    // The modes of the paper's figure as the library runs them (each path with the variant
    // measured fastest for it).
    let mode = |alg: Algorithm, engine: &str, len: usize| {
        results.iter().copied().find(|m| {
            let c = &m.config;
            c.phase == "paper-f5-modes"
                && c.alg == alg
                && c.engine == engine
                && c.msg_len == Some(len)
        })
    };
    let rows: Vec<Vec<String>> = F5_LENGTHS
        .iter()
        .map(|&len| {
            let mut row = vec![format!("{len} B")];
            for alg in [Algorithm::Aes128CobraR, Algorithm::Aes128McoeG] {
                for engine in ["sequential", "comb"] {
                    row.push(cell(mode(alg, engine, len), 1.0));
                }
            }
            row
        })
        .collect();
    out.push(Table {
        title: format!(
            "papers/000 Fig. 5, the modes: COBRA-R and McOE-G on {F5_MESSAGES} messages of each length, cycles/byte"
        ),
        header: vec![
            "length".into(),
            "COBRA-R one at a time".into(),
            "COBRA-R comb".into(),
            "McOE-G one at a time".into(),
            "McOE-G comb".into(),
        ],
        rows,
        notes: vec![
            "paper (Haswell, each mode in both variants): the figure's axes span 4-8 cpb for one message and 2-3.5 cpb for 8".into(),
            "ours: each path with the product variant measured fastest for it; TSC (core) cycles/byte".into(),
        ],
    });
    let mut rows: Vec<Vec<String>> = T9
        .iter()
        .map(|(what, c)| vec![format!("paper: {what}"), format!("{c:.1}"), "—".into()])
        .collect();
    for how in Doubling::all() {
        let m = find("paper-dbl", how.subject(), "sequential", 16 * DOUBLINGS);
        rows.push(vec![how.label().into(), "—".into(), cell(m, 16.0)]);
    }
    out.push(Table {
        title: "papers/000 Table 9 (§6.5): doubling in GF(2^128) by way of testing the MSB, cycles per doubling".into(),
        header: vec!["approach".into(), "paper".into(), "ours".into()],
        rows,
        notes: vec![
            "paper: Haswell, core cycles, each approach branches on the MSB".into(),
            "ours: a dependent chain of doublings, the MSB turned into a mask (no branch on secret data); TSC (core) cycles per doubling".into(),
        ],
    });
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_way_matches_the_reference() {
        check().unwrap();
    }

    #[test]
    fn doublings_agree_and_are_not_the_identity() {
        let b = [0x80u8; 16];
        let d = Doubling::Neg.chain(&b, 1);
        assert_ne!(d, b);
        // 0x80.. doubled: the top bit leaves, 0x87 comes in.
        let mut want = [0u8; 16];
        for (i, w) in want.iter_mut().enumerate() {
            *w = 0x80u8.wrapping_shl(1) | if i < 15 { 1 } else { 0 };
        }
        want[15] ^= 0x87;
        assert_eq!(d, want);
        for how in Doubling::all() {
            assert_eq!(how.chain(&b, 5), Doubling::Neg.chain(&b, 5), "{how:?}");
        }
    }

    #[test]
    fn tables_render_without_results() {
        let t = tables(&[]);
        // The xmm Fig. 5 table (the ymm one only once measured), the modes and Table 9.
        assert_eq!(t.len(), 3);
        assert_eq!(t[0].rows.len(), F5_LENGTHS.len());
        assert_eq!(t[1].rows.len(), F5_LENGTHS.len());
        assert_eq!(t[1].rows[0].len(), 5);
        assert_eq!(t[2].rows.len(), T9.len() + Doubling::all().len());
        assert_eq!(t[2].rows[3][1], "5.6");
    }

    #[test]
    fn tasks_name_every_subject() {
        let t = tasks(1, 1, 0).unwrap();
        let dbl: Vec<_> = t.iter().filter(|t| t.config.phase == "paper-dbl").collect();
        assert_eq!(dbl.len(), Doubling::all().len());
        let f5 = t.iter().filter(|t| t.config.phase == "paper-f5").count();
        assert_eq!(f5, product_backends().len() * F5_LENGTHS.len() * 2);
        assert!(t.iter().all(|t| t.config.subject.is_some()));
    }
}
