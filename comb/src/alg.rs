//! Algorithm IDs (DESIGN.md, "Algorithm IDs") and what each one takes.

use crate::Error;
use core::fmt;
use core::str::FromStr;

/// A mode of operation with its block cipher. The string IDs are shared by the API, the CLI
/// and the test files.
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

    /// Valid key lengths in bytes.
    pub fn key_lens(self) -> &'static [usize] {
        &[16, 24, 32]
    }

    /// IV / initial counter length in bytes (0: the mode takes none).
    pub fn iv_len(self) -> usize {
        match self {
            Algorithm::AesEcb | Algorithm::AesCmac => 0,
            _ => 16,
        }
    }

    /// Allowed tag lengths `(min, max, default)` for MACs; `None` for plain encryption.
    pub fn tag_lens(self) -> Option<(usize, usize, usize)> {
        match self {
            Algorithm::AesCmac => Some((1, 16, 16)),
            _ => None,
        }
    }

    /// Whether the algorithm only authenticates (produces or verifies a tag, no output data).
    pub fn is_mac(self) -> bool {
        matches!(self, Algorithm::AesCmac)
    }

    /// Whether inputs must be whole 16-byte blocks for `op`.
    pub fn needs_whole_blocks(self, op: Op) -> bool {
        matches!(
            (self, op),
            (Algorithm::AesEcb, _) | (Algorithm::AesCbc, _) | (Algorithm::AesCbcPkcs7, Op::Decrypt)
        )
    }

    /// Whether `op` is a dependent chain inside one message (and so comb-scheduled).
    pub fn is_chained(self, op: Op) -> bool {
        matches!(
            (self, op),
            (
                Algorithm::AesCbc | Algorithm::AesCbcPkcs7 | Algorithm::AesCfb128,
                Op::Encrypt
            ) | (Algorithm::AesOfb | Algorithm::AesCmac, _)
        )
    }

    /// Output buffer length needed for an input of `len` bytes (0 for MACs). For PKCS#7
    /// decryption this is the room needed (the input length); the result says how many bytes
    /// are plaintext.
    pub fn output_len(self, op: Op, len: usize) -> usize {
        match (self, op) {
            (Algorithm::AesCmac, _) => 0,
            (Algorithm::AesCbcPkcs7, Op::Encrypt) => (len / 16 + 1) * 16,
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
    }
}
