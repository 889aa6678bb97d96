//! Algorithm IDs (DESIGN.md, "Algorithm IDs") and what each one takes.

use crate::Error;
use core::fmt;
use core::str::FromStr;

/// A mode of operation with its block cipher. The string IDs are shared by the API, the CLI
/// and the test files.
///
/// New algorithms are added at the end of the enum and of [`Algorithm::ALL`], never in
/// between: tables are indexed by `alg as usize` (the engine's lane table) and by position
/// in `ALL` (the C ABI's numeric IDs), so the existing positions must stay where they are.
/// A unit test checks that `ALL` lists every variant in declaration order.
///
/// ```
/// use comb::Algorithm;
/// let alg: Algorithm = "aes-cbc".parse().unwrap();
/// assert_eq!(alg, Algorithm::AesCbc);
/// assert_eq!(alg.id(), "aes-cbc");
/// assert!("aes-xts".parse::<Algorithm>().is_err());
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum Algorithm {
    /// `aes-ecb`: SP 800-38A ECB, whole blocks.
    AesEcb,
    /// `aes-cbc`: SP 800-38A CBC, whole blocks, 16-byte IV.
    AesCbc,
    /// `aes-cbc-pkcs7`: CBC with PKCS#7 padding (any input length; output grows to the next
    /// whole block, by 1..=16 bytes).
    AesCbcPkcs7,
    /// `aes-ctr`: SP 800-38A CTR, 16-byte initial counter block, whole 128-bit big-endian
    /// counter; any length.
    AesCtr,
    /// `aes-cfb128`: SP 800-38A CFB with s = 128, 16-byte IV; any length.
    AesCfb128,
    /// `aes-ofb`: SP 800-38A OFB, 16-byte IV; any length.
    AesOfb,
    /// `aes-cmac`: SP 800-38B / RFC 4493 CMAC; tags of 1..=16 bytes.
    AesCmac,
    /// `aes-gcm`: SP 800-38D GCM, an AEAD mode. Nonces of any length from 1 byte (12 bytes is
    /// the fast path `J0 = IV || 0^31 || 1`; other lengths are hashed with GHASH), associated
    /// data of any length, detached tags of 4, 8, 12, 13, 14, 15 or 16 bytes
    /// ([`Algorithm::tag_len_allowed`]), plaintexts of at most 2^36 - 32 bytes; the ciphertext
    /// is as long as the plaintext. Decryption checks the tag before it decrypts.
    AesGcm,
    /// `aes-ccm`: SP 800-38C / RFC 3610 CCM. Nonces of 7..=13 bytes (the length field takes
    /// the other `15 - nonce` bytes and bounds the message: 2^(8(15-n)) - 1 bytes), tags of
    /// 4, 6, .., 16 bytes, associated data of any length. Decryption recomputes the MAC over
    /// the recovered plaintext and releases it only if the tag verifies.
    AesCcm,
    /// `aes-ocb3`: RFC 7253 OCB. Nonces of 1..=15 bytes, tags of 8..=16 bytes.
    AesOcb3,
    /// `aes128-otr`: AES-OTR v3 (Minematsu), parallel associated data; 12-byte nonce, 16-byte
    /// tag.
    Aes128Otr,
    /// `aes128-cloc`: AES-CLOC (CAESAR v2/v3, PARAM 0xC0); 12-byte nonce, 8-byte tag.
    Aes128Cloc,
    /// `aes128-silc`: AES-SILC v3; 12-byte nonce, 8-byte tag.
    Aes128Silc,
    /// `aes128-jambu`: AES-JAMBU v2 (64-bit blocks); 8-byte nonce, 8-byte tag.
    Aes128Jambu,
    /// `aes128-mcoe-g`: McOE-G (FSE 2012) per the project's specification: a 32-byte key
    /// `K1 || K2` (AES-128 key, GF(2^128) hash key) given to [`crate::AesKey::new`], 16-byte
    /// nonce and tag. Nonce-misuse resistant (online).
    Aes128McoeG,
    /// `aes128-copa`: AES-COPA v2; 16-byte nonce and tag. The ciphertext is the 10*-padded
    /// message (at least one block) and a one-byte "partial" flag: `16 * max(1, ceil(m / 16))
    /// + 1` bytes ([`Algorithm::output_len`]).
    Aes128Copa,
    /// `aes128-poet`: POET v2 with the full AES-128 hash (3 AES calls per block); 16-byte
    /// nonce and tag.
    Aes128Poet,
    /// `aes128-poet-gf`: POET v1 with the GF(2^128)-multiplication hash; 16-byte nonce and
    /// tag.
    Aes128PoetGf,
    /// `aes128-julius`: Julius-ECB ("regular" Julius, CAESAR v1) as written in its
    /// specification (δ = E_K(0)); 16-byte nonce. No detached tag: authenticity comes from a
    /// 16-byte redundancy block inside the ciphertext, which is `16 * ceil(m / 16) + 16` bytes.
    Aes128Julius,
    /// `aes128-cobra-r`: COBRA as *reconstructed* in the project's specification (the FSE
    /// 2014 algorithm text was not available, and the published COBRA is broken: Nandi,
    /// ASIACRYPT 2014). Not verified against the published COBRA; it exists for performance
    /// comparisons. 16-byte nonce and tag; messages of an even number of 16-byte blocks.
    Aes128CobraR,
}

/// CCM tag lengths in bytes (SP 800-38C §A.1: 4, 6, 8, 10, 12, 14, 16).
const CCM_TAG_LENS: &[usize] = &[4, 6, 8, 10, 12, 14, 16];

/// OCB3 tag lengths in bytes (RFC 7253 allows 1..=16 bytes in principle; 8..=16 is the range
/// this library offers, shorter tags being too weak for a general-purpose API).
const OCB3_TAG_LENS: &[usize] = &[8, 9, 10, 11, 12, 13, 14, 15, 16];

/// One fixed tag length.
const TAG8: &[usize] = &[8];
const TAG16: &[usize] = &[16];

/// Tag lengths AES-GCM accepts, in bytes: SP 800-38D §5.2.1.2 allows 128, 120, 112, 104 and
/// 96 bits, and 64 and 32 bits for some applications (with the limits of its Appendix C on
/// message lengths and invocations per key, which are the caller's to keep).
pub(crate) const GCM_TAG_LENS: &[usize] = &[4, 8, 12, 13, 14, 15, 16];

/// CMAC tag lengths in bytes: every length 1..=16.
const CMAC_TAG_LENS: &[usize] = &[1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16];

/// Longest AES-GCM plaintext in bytes: 2^39 - 256 bits (SP 800-38D §5.2.1.1), so that the
/// 32-bit block counter never wraps back to J0 + 1 (J0 itself masks the tag).
pub(crate) const GCM_MAX_PLAINTEXT: u64 = (1 << 36) - 32;

/// Longest AES-GCM associated data and nonce in bytes: 2^64 - 1 bits (SP 800-38D §5.2.1.1),
/// rounded down to whole bytes.
pub(crate) const GCM_MAX_AD: u64 = (1 << 61) - 1;

/// `n` as a `usize`, saturating (on 32-bit targets the GCM limits exceed the address space).
const fn sat_usize(n: u64) -> usize {
    if n > usize::MAX as u64 {
        usize::MAX
    } else {
        n as usize
    }
}

impl Algorithm {
    /// Every algorithm of this build, in the order of DESIGN.md.
    pub const ALL: &'static [Algorithm] = &[
        Algorithm::AesEcb,
        Algorithm::AesCbc,
        Algorithm::AesCbcPkcs7,
        Algorithm::AesCtr,
        Algorithm::AesCfb128,
        Algorithm::AesOfb,
        Algorithm::AesCmac,
        Algorithm::AesGcm,
        Algorithm::AesCcm,
        Algorithm::AesOcb3,
        Algorithm::Aes128Otr,
        Algorithm::Aes128Cloc,
        Algorithm::Aes128Silc,
        Algorithm::Aes128Jambu,
        Algorithm::Aes128McoeG,
        Algorithm::Aes128Copa,
        Algorithm::Aes128Poet,
        Algorithm::Aes128PoetGf,
        Algorithm::Aes128Julius,
        Algorithm::Aes128CobraR,
    ];

    /// The algorithm ID, e.g. `"aes-cfb128"`.
    pub fn id(self) -> &'static str {
        match self {
            Algorithm::AesEcb => "aes-ecb",
            Algorithm::AesCbc => "aes-cbc",
            Algorithm::AesCbcPkcs7 => "aes-cbc-pkcs7",
            Algorithm::AesCtr => "aes-ctr",
            Algorithm::AesCfb128 => "aes-cfb128",
            Algorithm::AesOfb => "aes-ofb",
            Algorithm::AesCmac => "aes-cmac",
            Algorithm::AesGcm => "aes-gcm",
            Algorithm::AesCcm => "aes-ccm",
            Algorithm::AesOcb3 => "aes-ocb3",
            Algorithm::Aes128Otr => "aes128-otr",
            Algorithm::Aes128Cloc => "aes128-cloc",
            Algorithm::Aes128Silc => "aes128-silc",
            Algorithm::Aes128Jambu => "aes128-jambu",
            Algorithm::Aes128McoeG => "aes128-mcoe-g",
            Algorithm::Aes128Copa => "aes128-copa",
            Algorithm::Aes128Poet => "aes128-poet",
            Algorithm::Aes128PoetGf => "aes128-poet-gf",
            Algorithm::Aes128Julius => "aes128-julius",
            Algorithm::Aes128CobraR => "aes128-cobra-r",
        }
    }

    /// Looks an ID up; [`Error::UnknownAlgorithm`] if this build does not have it.
    pub fn from_id(id: &str) -> Result<Algorithm, Error> {
        Algorithm::ALL
            .iter()
            .copied()
            .find(|a| a.id() == id)
            .ok_or_else(|| Error::UnknownAlgorithm(id.to_string()))
    }

    /// Valid key lengths in bytes: 16, 24 or 32 for the NIST modes, CCM and OCB3; 16 for
    /// the `aes128-*` modes, except McOE-G's 32-byte `K1 || K2`.
    pub fn key_lens(self) -> &'static [usize] {
        match self {
            Algorithm::Aes128McoeG => &[32],
            Algorithm::Aes128Otr
            | Algorithm::Aes128Cloc
            | Algorithm::Aes128Silc
            | Algorithm::Aes128Jambu
            | Algorithm::Aes128Copa
            | Algorithm::Aes128Poet
            | Algorithm::Aes128PoetGf
            | Algorithm::Aes128Julius
            | Algorithm::Aes128CobraR => &[16],
            _ => &[16, 24, 32],
        }
    }

    /// Whether a key of `len` bytes is valid for this algorithm.
    pub fn key_len_allowed(self, len: usize) -> bool {
        self.key_lens().contains(&len)
    }

    /// IV / initial counter / nonce length in bytes (0: the mode takes none). For an
    /// algorithm with variable-length nonces (AES-GCM) this is the recommended length, 12;
    /// [`Algorithm::iv_lens`] gives the range it accepts.
    pub fn iv_len(self) -> usize {
        match self {
            Algorithm::AesEcb | Algorithm::AesCmac => 0,
            Algorithm::AesGcm
            | Algorithm::AesCcm
            | Algorithm::AesOcb3
            | Algorithm::Aes128Otr
            | Algorithm::Aes128Cloc
            | Algorithm::Aes128Silc => 12,
            Algorithm::Aes128Jambu => 8,
            _ => 16,
        }
    }

    /// Accepted IV / nonce lengths in bytes, `(min, max)` inclusive: `(0, 0)` for modes without
    /// one, `(16, 16)` for the SP 800-38A modes, `(1, 2^61 - 1)` for AES-GCM (clamped to
    /// `usize::MAX` on 32-bit targets).
    ///
    /// ```
    /// use comb::Algorithm;
    /// assert_eq!(Algorithm::AesCbc.iv_lens(), (16, 16));
    /// assert_eq!(Algorithm::AesGcm.iv_lens().0, 1);
    /// assert!(Algorithm::AesGcm.iv_len_allowed(12) && Algorithm::AesGcm.iv_len_allowed(60));
    /// assert!(!Algorithm::AesGcm.iv_len_allowed(0));
    /// ```
    pub fn iv_lens(self) -> (usize, usize) {
        match self {
            Algorithm::AesGcm => (1, sat_usize(GCM_MAX_AD)),
            Algorithm::AesCcm => (7, 13),
            Algorithm::AesOcb3 => (1, 15),
            _ => (self.iv_len(), self.iv_len()),
        }
    }

    /// Whether an IV / nonce of `len` bytes is accepted.
    pub fn iv_len_allowed(self, len: usize) -> bool {
        let (min, max) = self.iv_lens();
        (min..=max).contains(&len)
    }

    /// Tag lengths `(min, max, default)` for MACs and AEAD modes; `None` for plain encryption.
    /// Not every length of the range need be allowed: AES-GCM takes 4, 8 and 12..=16 only
    /// (see [`Algorithm::allowed_tag_lens`], [`Algorithm::tag_len_allowed`]).
    pub fn tag_lens(self) -> Option<(usize, usize, usize)> {
        match self {
            Algorithm::AesCmac => Some((1, 16, 16)),
            Algorithm::AesGcm | Algorithm::AesCcm => Some((4, 16, 16)),
            Algorithm::AesOcb3 => Some((8, 16, 16)),
            Algorithm::Aes128Cloc | Algorithm::Aes128Silc | Algorithm::Aes128Jambu => {
                Some((8, 8, 8))
            }
            Algorithm::Aes128Otr
            | Algorithm::Aes128CobraR
            | Algorithm::Aes128McoeG
            | Algorithm::Aes128Copa
            | Algorithm::Aes128Poet
            | Algorithm::Aes128PoetGf => Some((16, 16, 16)),
            _ => None,
        }
    }

    /// Every allowed tag length in bytes, ascending (empty for plain encryption).
    ///
    /// ```
    /// use comb::Algorithm;
    /// assert_eq!(Algorithm::AesGcm.allowed_tag_lens(), &[4, 8, 12, 13, 14, 15, 16]);
    /// assert!(!Algorithm::AesGcm.tag_len_allowed(10));
    /// assert!(Algorithm::AesCmac.tag_len_allowed(10));
    /// ```
    pub fn allowed_tag_lens(self) -> &'static [usize] {
        match self {
            Algorithm::AesCmac => CMAC_TAG_LENS,
            Algorithm::AesGcm => GCM_TAG_LENS,
            Algorithm::AesCcm => CCM_TAG_LENS,
            Algorithm::AesOcb3 => OCB3_TAG_LENS,
            Algorithm::Aes128Cloc | Algorithm::Aes128Silc | Algorithm::Aes128Jambu => TAG8,
            Algorithm::Aes128Otr
            | Algorithm::Aes128CobraR
            | Algorithm::Aes128McoeG
            | Algorithm::Aes128Copa
            | Algorithm::Aes128Poet
            | Algorithm::Aes128PoetGf => TAG16,
            _ => &[],
        }
    }

    /// Whether a tag of `len` bytes is allowed (always false for plain encryption); the same
    /// as `allowed_tag_lens().contains(&len)`, without the search (it runs once per job).
    pub fn tag_len_allowed(self, len: usize) -> bool {
        match self {
            Algorithm::AesCmac => (1..=16).contains(&len),
            Algorithm::AesGcm => matches!(len, 4 | 8 | 12..=16),
            Algorithm::AesCcm => matches!(len, 4 | 6 | 8 | 10 | 12 | 14 | 16),
            Algorithm::AesOcb3 => (8..=16).contains(&len),
            _ => self.allowed_tag_lens().contains(&len),
        }
    }

    /// Whether the algorithm only authenticates (produces or verifies a tag, no output data).
    pub fn is_mac(self) -> bool {
        matches!(self, Algorithm::AesCmac)
    }

    /// Whether the algorithm is authenticated encryption with associated data: it encrypts,
    /// takes associated data ([`crate::Job::with_ad`]) and a detached tag.
    pub fn is_aead(self) -> bool {
        !matches!(
            self,
            Algorithm::AesEcb
                | Algorithm::AesCbc
                | Algorithm::AesCbcPkcs7
                | Algorithm::AesCtr
                | Algorithm::AesCfb128
                | Algorithm::AesOfb
                | Algorithm::AesCmac
        )
    }

    /// Longest message for a nonce of `nonce_len` bytes: as [`Algorithm::max_input_len`],
    /// except for AES-CCM, whose length field has `15 - nonce_len` bytes.
    ///
    /// ```
    /// use comb::Algorithm;
    /// assert_eq!(Algorithm::AesCcm.max_input_len_for_nonce(13), 65535);
    /// ```
    pub fn max_input_len_for_nonce(self, nonce_len: usize) -> usize {
        match self {
            Algorithm::AesCcm => {
                let q = 15usize.saturating_sub(nonce_len).clamp(2, 8) as u32;
                if q >= 8 {
                    usize::MAX
                } else {
                    sat_usize((1u64 << (8 * q)) - 1)
                }
            }
            _ => self.max_input_len(),
        }
    }

    /// Longest message (plaintext or ciphertext, without the tag) in bytes: 2^36 - 32 for
    /// AES-GCM, unlimited (`usize::MAX`) for the others.
    pub fn max_input_len(self) -> usize {
        match self {
            Algorithm::AesGcm => sat_usize(GCM_MAX_PLAINTEXT),
            _ => usize::MAX,
        }
    }

    /// Longest associated data in bytes: 2^61 - 1 for AES-GCM (`usize::MAX` on 32-bit
    /// targets), unlimited for the other AEAD modes, 0 for algorithms without AD.
    pub fn max_ad_len(self) -> usize {
        match self {
            Algorithm::AesGcm => sat_usize(GCM_MAX_AD),
            a if a.is_aead() => usize::MAX,
            _ => 0,
        }
    }

    /// Whether inputs must be whole 16-byte blocks for `op`.
    pub fn needs_whole_blocks(self, op: Op) -> bool {
        matches!(
            (self, op),
            (Algorithm::AesEcb, _) | (Algorithm::AesCbc, _) | (Algorithm::AesCbcPkcs7, Op::Decrypt)
        )
    }

    /// Whether a message of `len` bytes has a shape `op` accepts, beyond the whole-block
    /// rule of [`Algorithm::needs_whole_blocks`]: COBRA-R takes an even number of blocks,
    /// AES-COPA ciphertexts are `16k + 1` bytes
    /// (k >= 1), Julius ciphertexts `16k` bytes (k >= 1). `Err` carries the rule, for
    /// [`crate::Error::InvalidMessageLength`].
    pub fn check_shape(self, op: Op, len: usize) -> Result<(), &'static str> {
        match (self, op) {
            (Algorithm::Aes128CobraR, _) if !len.is_multiple_of(32) => {
                Err("COBRA-R takes an even number of 16-byte blocks")
            }
            (Algorithm::Aes128Copa, Op::Decrypt) if len < 17 || len % 16 != 1 => {
                Err("an AES-COPA ciphertext is 16k + 1 bytes, k >= 1")
            }
            (Algorithm::Aes128Julius, Op::Decrypt) if len < 16 || !len.is_multiple_of(16) => {
                Err("a Julius ciphertext is a non-zero multiple of 16 bytes")
            }
            _ => Ok(()),
        }
    }

    /// Whether `op` is a dependent chain inside one message (and so comb-scheduled; for
    /// COBRA-R encryption the chain is of field multiplications, its AES calls parallel).
    pub fn is_chained(self, op: Op) -> bool {
        matches!(
            (self, op),
            (
                Algorithm::AesCbc
                    | Algorithm::AesCbcPkcs7
                    | Algorithm::AesCfb128
                    | Algorithm::Aes128CobraR,
                Op::Encrypt
            ) | (
                Algorithm::AesOfb
                    | Algorithm::AesCmac
                    | Algorithm::AesCcm
                    | Algorithm::Aes128Cloc
                    | Algorithm::Aes128Silc
                    | Algorithm::Aes128Jambu
                    | Algorithm::Aes128McoeG
                    | Algorithm::Aes128Poet
                    | Algorithm::Aes128PoetGf,
                _
            )
        )
    }

    /// Output buffer length needed for an input of `len` bytes (0 for MACs; AEAD tags are
    /// detached, so most AEAD outputs are as long as their input; AES-COPA and Julius expand,
    /// see their variants). For PKCS#7, COPA and Julius decryption this is the room needed;
    /// the job's result says how many bytes are plaintext.
    pub fn output_len(self, op: Op, len: usize) -> usize {
        match (self, op) {
            (Algorithm::AesCmac, _) => 0,
            // Saturating: for `len` within 16 of `usize::MAX` no buffer can hold the
            // output, and validation reports `OutputTooShort` (found by fuzzing: the plain
            // product overflowed, a panic wherever overflow checks are on).
            (Algorithm::AesCbcPkcs7, Op::Encrypt) => (len / 16 + 1).saturating_mul(16),
            (Algorithm::Aes128Copa, Op::Encrypt) => (len.div_ceil(16).max(1))
                .saturating_mul(16)
                .saturating_add(1),
            (Algorithm::Aes128Copa, Op::Decrypt) => len.saturating_sub(1),
            (Algorithm::Aes128Julius, Op::Encrypt) => {
                len.div_ceil(16).saturating_mul(16).saturating_add(16)
            }
            (Algorithm::Aes128Julius, Op::Decrypt) => len.saturating_sub(16),
            _ => len,
        }
    }
}

impl fmt::Display for Algorithm {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.id())
    }
}

impl FromStr for Algorithm {
    type Err = Error;
    fn from_str(s: &str) -> Result<Algorithm, Error> {
        Algorithm::from_id(s)
    }
}

/// Direction of a job. For MACs, `Encrypt` computes the tag and `Decrypt` verifies it (as
/// for AEAD modes, where encryption produces the tag and decryption checks it).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Op {
    Encrypt,
    Decrypt,
}

impl FromStr for Op {
    type Err = String;
    fn from_str(s: &str) -> Result<Op, String> {
        match s {
            "encrypt" | "enc" => Ok(Op::Encrypt),
            "decrypt" | "dec" => Ok(Op::Decrypt),
            _ => Err(format!("unknown operation {s:?} (encrypt or decrypt)")),
        }
    }
}

impl fmt::Display for Op {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Op::Encrypt => "encrypt",
            Op::Decrypt => "decrypt",
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The engine indexes per-algorithm tables with `alg as usize`: `ALL` must list every
    /// variant in declaration order, and IDs must round-trip.
    #[test]
    fn all_is_in_declaration_order_and_ids_round_trip() {
        for (i, &alg) in Algorithm::ALL.iter().enumerate() {
            assert_eq!(alg as usize, i);
            assert_eq!(Algorithm::from_id(alg.id()), Ok(alg));
            assert_eq!(alg.to_string().parse::<Algorithm>(), Ok(alg));
        }
        assert_eq!("encrypt".parse::<Op>(), Ok(Op::Encrypt));
        assert!("sideways".parse::<Op>().is_err());
        // Existing positions are stable (the C ABI numbers algorithms by them).
        assert_eq!(Algorithm::AesCmac as usize, 6);
        assert_eq!(Algorithm::AesGcm as usize, 7);
        assert_eq!(Algorithm::Aes128CobraR as usize, 19);
        assert_eq!(Algorithm::ALL.last(), Some(&Algorithm::Aes128CobraR));
    }

    #[test]
    fn length_rules() {
        for &alg in Algorithm::ALL {
            let (min, max) = alg.iv_lens();
            assert!(min <= alg.iv_len() && alg.iv_len() <= max, "{alg}");
            assert!(alg.iv_len_allowed(alg.iv_len()), "{alg}");
            match alg.tag_lens() {
                None => assert!(alg.allowed_tag_lens().is_empty(), "{alg}"),
                Some((lo, hi, default)) => {
                    let allowed = alg.allowed_tag_lens();
                    assert_eq!(allowed.first(), Some(&lo), "{alg}");
                    assert_eq!(allowed.last(), Some(&hi), "{alg}");
                    assert!(alg.tag_len_allowed(default), "{alg}");
                    assert!(allowed.windows(2).all(|w| w[0] < w[1]), "{alg}");
                }
            }
            assert_eq!(alg.is_aead(), alg.max_ad_len() > 0, "{alg}");
            assert!(!alg.key_lens().is_empty(), "{alg}");
            // The aes128-* IDs take 128-bit keys only (McOE-G: its two 128-bit halves).
            if alg.id().starts_with("aes128-") {
                assert!(alg.key_lens().iter().all(|&l| l == 16 || l == 32), "{alg}");
            }
            assert!(!(alg.is_aead() && alg.is_mac()), "{alg}");
            for n in 0..=40 {
                assert_eq!(
                    alg.tag_len_allowed(n),
                    alg.allowed_tag_lens().contains(&n),
                    "{alg} {n}"
                );
            }
        }
        let gcm = Algorithm::AesGcm;
        assert_eq!(gcm.output_len(Op::Encrypt, 37), 37);
        assert!(!gcm.needs_whole_blocks(Op::Decrypt) && !gcm.is_chained(Op::Encrypt));
        for n in 0..=20 {
            assert_eq!(gcm.tag_len_allowed(n), matches!(n, 4 | 8 | 12..=16), "{n}");
        }
        assert!(!gcm.iv_len_allowed(0) && gcm.iv_len_allowed(1) && gcm.iv_len_allowed(1 << 20));
        #[cfg(target_pointer_width = "64")]
        {
            assert_eq!(gcm.max_input_len(), (1 << 36) - 32);
            assert_eq!(gcm.max_ad_len(), (1 << 61) - 1);
            assert_eq!(gcm.iv_lens(), (1, (1 << 61) - 1));
            assert!(!gcm.iv_len_allowed(1 << 61));
        }
        assert_eq!(Algorithm::AesCtr.max_input_len(), usize::MAX);
    }
}
