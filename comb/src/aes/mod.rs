//! AES key schedules and lane kernels.
//!
//! [`AesKey`] is the expanded-key handle jobs point at: encryption and decryption schedules,
//! the folded last-round key used by chained modes, and the CMAC subkeys, all zeroized on
//! drop. The kernels live in backend modules (`ni` for AES-NI on xmm registers, `vaes` for
//! VAES on ymm registers); [`Kernels`] is the one place that picks between them.

mod lanes;
pub(crate) mod ni;
pub(crate) mod vaes;

pub(crate) use lanes::{ChainLane, ChainRule, Lanes, Parallel};

use crate::block::{Block, IoPtrs};
use crate::cpu::{Backend, NiToken, VaesToken};
use crate::Error;
use zeroize::{Zeroize, ZeroizeOnDrop};

/// Round keys, 16-byte aligned so kernels can use aligned loads.
#[derive(Clone, Copy)]
#[repr(C, align(16))]
pub(crate) struct RoundKeys(pub(crate) [[u8; 16]; 15]);

/// An expanded AES-128/192/256 key.
///
/// Create it once and let any number of jobs point at it; it is immutable and can be shared
/// between threads. Every byte of key material is overwritten with zeros when it is dropped.
///
/// ```
/// # fn main() -> Result<(), comb::Error> {
/// let key = comb::AesKey::new(&[0x2b; 16])?;
/// assert_eq!(key.key_len(), 16);
/// assert!(comb::AesKey::new(&[0; 20]).is_err());
/// # Ok(()) }
/// ```
#[repr(C, align(64))]
pub struct AesKey {
    /// Encryption round keys `k[0..=rounds]`.
    pub(crate) enc: RoundKeys,
    /// Decryption (equivalent inverse cipher) round keys, AESIMC applied to the middle ones.
    pub(crate) dec: RoundKeys,
    /// `k[rounds] ^ k[0]`: a chain that feeds a cipher output (xor data) into the next cipher
    /// input folds that xor and the next whitening into AESENCLAST (DESIGN.md).
    pub(crate) fold: [u8; 16],
    /// CMAC subkeys K1 = 2·E(0), K2 = 4·E(0) in GF(2^128).
    pub(crate) cmac_k1: [u8; 16],
    pub(crate) cmac_k2: [u8; 16],
    pub(crate) rounds: usize,
    /// Proof that AES-NI was present when the key was made (zero-sized).
    pub(crate) token: NiToken,
}

impl AesKey {
    /// Expands a 16-, 24- or 32-byte AES key.
    ///
    /// Errors: [`Error::InvalidKeyLength`] for any other length, [`Error::Unsupported`] when
    /// the CPU has no AES-NI (the key schedule uses AESKEYGENASSIST and AESIMC).
    pub fn new(key: &[u8]) -> Result<AesKey, Error> {
        let rounds = match key.len() {
            16 => 10,
            24 => 12,
            32 => 14,
            got => return Err(Error::InvalidKeyLength { got }),
        };
        let token = NiToken::get().ok_or(Error::Unsupported("AES key expansion needs AES-NI"))?;
        let mut k = AesKey {
            enc: RoundKeys([[0; 16]; 15]),
            dec: RoundKeys([[0; 16]; 15]),
            fold: [0; 16],
            cmac_k1: [0; 16],
            cmac_k2: [0; 16],
            rounds,
            token,
        };
        ni::expand_key(token, key, &mut k.enc);
        ni::invert_key(token, &k.enc, rounds, &mut k.dec);
        for i in 0..16 {
            k.fold[i] = k.enc.0[rounds][i] ^ k.enc.0[0][i];
        }
        let mut l = [0u8; 16];
        ni::encrypt_block(token, &k, &mut l);
        k.cmac_k1 = crate::block::dbl(&l);
        k.cmac_k2 = crate::block::dbl(&k.cmac_k1);
        l.zeroize();
        Ok(k)
    }

    /// Key length in bytes (16, 24 or 32).
    pub fn key_len(&self) -> usize {
        match self.rounds {
            10 => 16,
            12 => 24,
            _ => 32,
        }
    }

    /// Number of AES rounds (10, 12 or 14).
    pub fn rounds(&self) -> usize {
        self.rounds
    }

    /// Encrypts one block in place (the raw block cipher).
    pub fn encrypt_block(&self, block: &mut [u8; 16]) {
        ni::encrypt_block(self.token, self, block);
    }

    /// Decrypts one block in place (the raw inverse cipher).
    pub fn decrypt_block(&self, block: &mut [u8; 16]) {
        ni::decrypt_block(self.token, self, block);
    }
}

impl Zeroize for AesKey {
    fn zeroize(&mut self) {
        self.enc.0.zeroize();
        self.dec.0.zeroize();
        self.fold.zeroize();
        self.cmac_k1.zeroize();
        self.cmac_k2.zeroize();
    }
}

impl Drop for AesKey {
    fn drop(&mut self) {
        self.zeroize();
    }
}

impl ZeroizeOnDrop for AesKey {}

impl core::fmt::Debug for AesKey {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        // Never print key material.
        write!(f, "AesKey(AES-{})", self.key_len() * 8)
    }
}

/// The kernels a batch runs with: an engine's backend together with the proof that this CPU
/// has its instructions. Modes call these; only the comb executor looks inside (its window
/// kernels differ per backend in shape, not just in width).
#[derive(Clone, Copy, Debug)]
pub(crate) enum Kernels {
    Ni(NiToken),
    Vaes256(VaesToken),
}

impl Kernels {
    /// The kernels of `backend`, if this CPU can run them.
    pub(crate) fn new(backend: Backend) -> Option<Kernels> {
        match backend {
            Backend::Ni => NiToken::get().map(Kernels::Ni),
            Backend::Vaes256 => VaesToken::get().map(Kernels::Vaes256),
        }
    }

    /// Every backend can run the xmm code (single chains, small batched steps).
    pub(crate) fn ni(self) -> NiToken {
        match self {
            Kernels::Ni(t) => t,
            Kernels::Vaes256(t) => t.ni(),
        }
    }

    /// A parallel mode over the first `blocks` whole blocks of `io` (see [`ni::parallel`]).
    pub(crate) fn parallel(
        self,
        mode: Parallel,
        key: &AesKey,
        io: &IoPtrs<'_>,
        blocks: usize,
        iv: &Block,
    ) -> Block {
        match self {
            Kernels::Ni(t) => ni::parallel(t, mode, key, io, blocks, iv),
            Kernels::Vaes256(t) => vaes::parallel(t, mode, key, io, blocks, iv),
        }
    }

    /// CTR keystream xor over the whole message (see [`ni::ctr`]).
    pub(crate) fn ctr(self, key: &AesKey, io: &IoPtrs<'_>, ctr: &Block) {
        match self {
            Kernels::Ni(t) => ni::ctr(t, key, io, ctr),
            Kernels::Vaes256(t) => vaes::ctr(t, key, io, ctr),
        }
    }

    /// Independent blocks under per-block keys: the batched initialisation/finalisation
    /// step. At most one block per job, so a few hundred cycles per batch on any backend; the
    /// xmm kernel serves all of them.
    pub(crate) fn encrypt_many(self, blocks: &mut [Block], keys: &[&AesKey]) {
        ni::encrypt_many(self.ni(), blocks, keys)
    }
}
