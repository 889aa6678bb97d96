//! Message-length workloads (pure code, unit-tested): fixed lengths, the realistic Internet
//! mix of papers/000 §3 ("44% of packets are between 40 and 100 bytes long; 37% are between
//! 1400 and 1500 bytes; the remaining 19% somewhere in between"), and lengths from a file.

use comb::{Algorithm, Op};

/// Batches kept per configuration for the realistic mix: calls cycle through them, so one
/// figure averages over `REALISTIC_POOL × batch` messages, not one draw of `batch`.
pub const REALISTIC_POOL: usize = 8;

/// Most batches kept for a lengths file (the file's lengths are cut into batches in order).
pub const MAX_FILE_POOL: usize = 64;

/// A small, fast, seedable generator (SplitMix64): deterministic workloads for a given seed.
#[derive(Clone, Debug)]
pub struct Rng(u64);

impl Rng {
    /// A generator for `seed`.
    pub fn new(seed: u64) -> Rng {
        Rng(seed)
    }

    /// The next 64 random bits.
    pub fn next_u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }

    /// Uniform in `0..n` (`n > 0`; multiply-shift, bias below 2^-50 for our ranges).
    pub fn below(&mut self, n: u64) -> u64 {
        ((self.next_u64() as u128 * n as u128) >> 64) as u64
    }

    /// Uniform in `lo..=hi`.
    pub fn range(&mut self, lo: usize, hi: usize) -> usize {
        lo + self.below((hi - lo) as u64 + 1) as usize
    }

    /// Fills `buf` with random bytes.
    pub fn fill(&mut self, buf: &mut [u8]) {
        for chunk in buf.chunks_mut(8) {
            let r = self.next_u64().to_le_bytes();
            chunk.copy_from_slice(&r[..chunk.len()]);
        }
    }
}

/// The message-length distribution of a run.
#[derive(Clone, Debug, PartialEq)]
pub enum Dist {
    /// Every message has this length (bytes, before block rounding).
    Fixed(usize),
    /// The realistic Internet mix.
    Realistic,
    /// Lengths read from a file, used in file order.
    File { name: String, lengths: Vec<usize> },
}

impl Dist {
    /// `"fixed"`, `"realistic"` or `"file"` (the JSON `workload` field).
    pub fn kind(&self) -> &'static str {
        match self {
            Dist::Fixed(_) => "fixed",
            Dist::Realistic => "realistic",
            Dist::File { .. } => "file",
        }
    }

    /// A short label for tables, e.g. `2048 B`, `realistic`, `file sizes.txt`.
    pub fn label(&self) -> String {
        match self {
            Dist::Fixed(n) => format!("{n} B"),
            Dist::Realistic => "realistic".into(),
            Dist::File { name, .. } => format!("file {name}"),
        }
    }

    /// The fixed length, if any.
    pub fn fixed_len(&self) -> Option<usize> {
        match self {
            Dist::Fixed(n) => Some(*n),
            _ => None,
        }
    }

    /// Raw message lengths (before block rounding), as batches of `batch` messages; calls
    /// cycle through the batches. Deterministic for a given `seed`.
    pub fn batches(&self, batch: usize, seed: u64) -> Vec<Vec<usize>> {
        let batch = batch.max(1);
        match self {
            Dist::Fixed(n) => vec![vec![*n; batch]],
            Dist::Realistic => {
                let mut rng = Rng::new(seed);
                (0..REALISTIC_POOL)
                    .map(|_| (0..batch).map(|_| realistic_len(&mut rng)).collect())
                    .collect()
            }
            Dist::File { lengths, .. } => {
                let count = lengths.len().div_ceil(batch).clamp(1, MAX_FILE_POOL);
                let mut it = lengths.iter().copied().cycle();
                (0..count)
                    .map(|_| it.by_ref().take(batch).collect())
                    .collect()
            }
        }
    }
}

/// One length from the realistic mix: 44% uniform in 40..=100, 37% uniform in 1400..=1500,
/// 19% uniform in 101..=1399.
pub fn realistic_len(rng: &mut Rng) -> usize {
    let u = rng.below(100);
    if u < 44 {
        rng.range(40, 100)
    } else if u < 44 + 37 {
        rng.range(1400, 1500)
    } else {
        rng.range(101, 1399)
    }
}

/// The length actually used for `alg`/`op`: rounded up to whole blocks where the mode needs
/// them (to whole block pairs for COBRA-R), and at least one block for PKCS#7 decryption
/// (whose input is a padded ciphertext). For AEAD decryption this is the *plaintext* length
/// the ciphertext is made from ([`Algorithm::output_len`] gives the ciphertext's).
pub fn round_len(alg: Algorithm, op: Op, len: usize) -> usize {
    let mut n = len;
    if alg == Algorithm::Aes128CobraR {
        n = n.div_ceil(32) * 32;
    }
    if alg.needs_whole_blocks(op) {
        n = n.div_ceil(16) * 16;
    }
    if alg == Algorithm::AesCbcPkcs7 && op == Op::Decrypt {
        n = n.max(16);
    }
    n
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rng_is_deterministic_and_in_range() {
        let a: Vec<u64> = {
            let mut r = Rng::new(7);
            (0..4).map(|_| r.next_u64()).collect()
        };
        let mut r = Rng::new(7);
        assert_eq!(a, (0..4).map(|_| r.next_u64()).collect::<Vec<_>>());
        let mut r = Rng::new(1);
        for _ in 0..10_000 {
            let x = r.range(3, 5);
            assert!((3..=5).contains(&x));
        }
        let mut buf = [0u8; 13];
        r.fill(&mut buf);
        assert!(buf.iter().any(|&b| b != 0));
    }

    #[test]
    fn realistic_mix_proportions() {
        let mut rng = Rng::new(0x636f_6d62);
        let n = 200_000;
        let (mut small, mut large, mut mid) = (0usize, 0usize, 0usize);
        let (mut lo, mut hi) = (usize::MAX, 0);
        for _ in 0..n {
            let l = realistic_len(&mut rng);
            lo = lo.min(l);
            hi = hi.max(l);
            match l {
                40..=100 => small += 1,
                1400..=1500 => large += 1,
                101..=1399 => mid += 1,
                _ => panic!("length {l} outside 40..=1500"),
            }
        }
        let pct = |c: usize| c as f64 * 100.0 / n as f64;
        assert!((pct(small) - 44.0).abs() < 0.5, "small {}", pct(small));
        assert!((pct(large) - 37.0).abs() < 0.5, "large {}", pct(large));
        assert!((pct(mid) - 19.0).abs() < 0.5, "mid {}", pct(mid));
        assert_eq!((lo, hi), (40, 1500));
    }

    #[test]
    fn block_rounding() {
        use Algorithm::*;
        assert_eq!(round_len(AesCbc, Op::Encrypt, 40), 48);
        assert_eq!(round_len(AesCbc, Op::Decrypt, 1500), 1504);
        assert_eq!(round_len(AesEcb, Op::Encrypt, 64), 64);
        assert_eq!(round_len(AesCtr, Op::Encrypt, 41), 41);
        assert_eq!(round_len(AesCfb128, Op::Encrypt, 99), 99);
        assert_eq!(round_len(AesCmac, Op::Encrypt, 77), 77);
        assert_eq!(round_len(AesCbcPkcs7, Op::Encrypt, 41), 41);
        assert_eq!(round_len(AesCbcPkcs7, Op::Decrypt, 41), 48);
        assert_eq!(round_len(AesCbcPkcs7, Op::Decrypt, 0), 16);
        assert_eq!(round_len(AesCbc, Op::Encrypt, 0), 0);
        for alg in Algorithm::ALL {
            for op in [Op::Encrypt, Op::Decrypt] {
                if alg.needs_whole_blocks(op) {
                    let mut rng = Rng::new(3);
                    for _ in 0..1000 {
                        assert_eq!(round_len(*alg, op, realistic_len(&mut rng)) % 16, 0);
                    }
                }
            }
        }
    }

    #[test]
    fn batches_shapes() {
        assert_eq!(Dist::Fixed(128).batches(3, 1), vec![vec![128, 128, 128]]);
        let r = Dist::Realistic.batches(64, 9);
        assert_eq!(r.len(), REALISTIC_POOL);
        assert!(r.iter().all(|b| b.len() == 64));
        assert_eq!(
            r,
            Dist::Realistic.batches(64, 9),
            "same seed, same workload"
        );
        assert_ne!(r, Dist::Realistic.batches(64, 10));
        let f = Dist::File {
            name: "x".into(),
            lengths: vec![1, 2, 3, 4, 5],
        };
        assert_eq!(f.batches(2, 0), vec![vec![1, 2], vec![3, 4], vec![5, 1]]);
        assert_eq!(f.batches(8, 0), vec![vec![1, 2, 3, 4, 5, 1, 2, 3]]);
        assert_eq!(Dist::Realistic.kind(), "realistic");
        assert_eq!(f.label(), "file x");
    }
}
