//! The one error type of the library.

use core::fmt;

/// Everything that can go wrong with a key, an engine or one job of a batch.
///
/// In a batch each job gets its own `Result`: an error in one job never affects the others.
/// Errors carry no secret-dependent detail (a bad padding and a bad tag are one kind each).
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum Error {
    /// The CPU lacks the instructions the requested backend needs (e.g. no AES-NI).
    Unsupported(&'static str),
    /// `COMB_BACKEND` or a backend name did not name a known backend.
    UnknownBackend(String),
    /// An algorithm ID that this build does not know.
    UnknownAlgorithm(String),
    /// Key length in bytes is not valid for the algorithm (AES: 16, 24 or 32; the `aes128-*`
    /// modes take 16, McOE-G 32: see [`crate::Algorithm::key_lens`]).
    InvalidKeyLength { got: usize },
    /// IV / nonce length in bytes is not what the algorithm takes (modes with one fixed IV
    /// length: CBC, CTR, CFB, OFB).
    InvalidIvLength { expected: usize, got: usize },
    /// Nonce length in bytes outside the range the algorithm takes (modes with variable-length
    /// nonces: AES-GCM takes `1..=2^61 - 1` bytes, 12 being the fast path).
    InvalidNonceLength { got: usize, min: usize, max: usize },
    /// The input must be a whole number of 16-byte blocks for this mode (ECB, CBC, CBC-PKCS7
    /// decryption), and was not.
    NotBlockMultiple { len: usize },
    /// The output buffer is shorter than the mode produces for this input.
    OutputTooShort { needed: usize, got: usize },
    /// PKCS#7 padding did not verify on decryption (no further detail, on purpose).
    InvalidPadding,
    /// Tag length out of the algorithm's range (algorithms that take every length of a range:
    /// CMAC).
    InvalidTagLength { got: usize, min: usize, max: usize },
    /// Tag length not one of the lengths the algorithm allows (algorithms with a set of tag
    /// lengths: AES-GCM takes 4, 8, 12, 13, 14, 15 or 16 bytes, SP 800-38D §5.2.1.2).
    TagLengthNotAllowed {
        got: usize,
        allowed: &'static [usize],
    },
    /// The message (or associated data) is longer than the algorithm allows: AES-GCM
    /// plaintexts are at most 2^36 - 32 bytes and associated data at most 2^61 - 1 bytes
    /// (SP 800-38D §5.2.1.1). Checked before any of the data is read.
    MessageTooLong { len: usize, max: usize },
    /// A MAC/AEAD job was given no tag buffer, or a tag of the wrong direction (an output tag
    /// for verification or an expected tag for generation), or a non-authenticating mode was
    /// given a tag.
    TagMisuse,
    /// Associated data was given to a mode that does not authenticate any.
    AdNotSupported,
    /// The tag did not verify. The job's output (if any) has been zeroed. (AES-GCM checks the
    /// tag before it decrypts anything, so no plaintext was ever written; the output bytes
    /// `[..len]` are zeroed all the same, in place the ciphertext too, so that every failed
    /// authentication leaves the same state.)
    AuthenticationFailed,
    /// Lane count (parallelism degree P) outside 1..=32.
    InvalidLaneCount { got: usize },
    /// The message length does not have the shape the algorithm needs (COBRA-R: an even
    /// number of blocks; AES-COPA ciphertexts: `16k + 1` bytes, k >= 1; Julius: `16k`, k >= 1); `rule`
    /// says which. Checked before any data is read.
    InvalidMessageLength { len: usize, rule: &'static str },
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Error::Unsupported(what) => write!(f, "unsupported on this CPU: {what}"),
            Error::UnknownBackend(name) => {
                write!(f, "unknown backend {name:?} (known: auto, vaes256, ni)")
            }
            Error::UnknownAlgorithm(id) => write!(f, "unknown algorithm {id:?}"),
            Error::InvalidKeyLength { got } => {
                write!(f, "invalid key length {got} bytes for this algorithm")
            }
            Error::InvalidIvLength { expected, got } => {
                write!(
                    f,
                    "invalid IV/nonce length {got} bytes (expected {expected})"
                )
            }
            Error::InvalidNonceLength { got, min, max } => {
                write!(
                    f,
                    "invalid IV/nonce length {got} bytes (allowed {min}..={max})"
                )
            }
            Error::NotBlockMultiple { len } => {
                write!(f, "input length {len} is not a multiple of 16 bytes")
            }
            Error::OutputTooShort { needed, got } => {
                write!(f, "output buffer too short: {got} bytes, {needed} needed")
            }
            Error::InvalidPadding => write!(f, "invalid padding"),
            Error::InvalidTagLength { got, min, max } => {
                write!(f, "invalid tag length {got} bytes (allowed {min}..={max})")
            }
            Error::TagLengthNotAllowed { got, allowed } => {
                write!(f, "invalid tag length {got} bytes (allowed: ")?;
                for (i, n) in allowed.iter().enumerate() {
                    if i > 0 {
                        f.write_str(", ")?;
                    }
                    write!(f, "{n}")?;
                }
                f.write_str(")")
            }
            Error::MessageTooLong { len, max } => {
                write!(f, "input of {len} bytes is too long (at most {max} bytes)")
            }
            Error::TagMisuse => write!(
                f,
                "tag buffer missing or of the wrong direction for this algorithm and operation"
            ),
            Error::AdNotSupported => write!(f, "associated data given to a mode without AD"),
            Error::AuthenticationFailed => write!(f, "authentication failed"),
            Error::InvalidLaneCount { got } => {
                write!(f, "invalid lane count {got} (allowed 1..=32)")
            }
            Error::InvalidMessageLength { len, rule } => {
                write!(f, "invalid input length {len} bytes: {rule}")
            }
        }
    }
}

impl std::error::Error for Error {}
