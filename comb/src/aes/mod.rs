//! AES key schedules and lane kernels.
//!
//! [`AesKey`] is the expanded-key handle jobs point at: encryption and decryption schedules,
//! the folded last-round key used by chained modes, the CMAC subkeys and (made on first use)
//! the GCM hash key, all zeroized on drop. The kernels live in backend modules (`ni` for AES-NI on xmm registers, `vaes` for
//! VAES on ymm registers); [`Kernels`] is the one place that picks between them.

pub(crate) mod lanes;
pub(crate) mod ni;
pub(crate) mod vaes;

pub(crate) use lanes::{ChainLane, ChainRule, Lanes, Parallel};

use crate::block::{Block, IoPtrs, BLOCK};
use crate::cpu::{Backend, NiToken, VaesToken};
use crate::gf128::{GhashKey, StitchGhash};
use crate::Error;
use std::sync::OnceLock;
use zeroize::{Zeroize, ZeroizeOnDrop};

/// Which bits of a CTR counter block count (see [`Kernels::ctr`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum CounterWidth {
    /// The whole 128-bit block is a big-endian counter, wrapping mod 2^128 (SP 800-38A CTR).
    Full128,
    /// Only the last 32 bits count, big-endian, wrapping mod 2^32; the first 96 bits stay
    /// fixed (`inc32` of SP 800-38D, GCM's GCTR).
    Low32,
}

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
    /// `E(0^128)`, made anyway for the CMAC subkeys and kept: the GHASH key `H`, OTR's `Q`,
    /// OCB3's `L_*` and the like, and CLOC's AD phase when the AD is empty (its one cipher call
    /// is `E(0)`), need no call of their own.
    pub(crate) e_zero: [u8; 16],
    /// CMAC subkeys K1 = 2·E(0), K2 = 4·E(0) in GF(2^128).
    pub(crate) cmac_k1: [u8; 16],
    pub(crate) cmac_k2: [u8; 16],
    pub(crate) rounds: usize,
    /// Proof that AES-NI was present when the key was made (zero-sized).
    pub(crate) token: NiToken,
    /// The GHASH key H = E_K(0^128) with its powers H^1..H^8, made on the first GCM job that
    /// uses this key ([`AesKey::ghash_key`]) and kept with the key: per job it would cost a
    /// block encryption and eight field products, more than the whole GHASH of a short packet.
    /// Lazily, so that keys never used for GCM pay nothing. `OnceLock` is `Sync`, so a key
    /// shared between threads stays shareable (two threads racing on the first use compute H
    /// once; the loser waits). Boxed so that [`Zeroize::zeroize`] can take it out and drop it
    /// where it lies: `GhashKey` overwrites its powers with zeros on drop.
    ghash: OnceLock<Box<GhashKey>>,
    /// What other modes derive from the key and keep with it (OCB3's L table, POET's
    /// derived keys, ...): one lazily filled slot per mode, see [`Derived`].
    derived: [OnceLock<Box<dyn core::any::Any + Send + Sync>>; DERIVED_SLOTS],
}

/// Number of [`Derived`] slots in a key.
pub(crate) const DERIVED_SLOTS: usize = 7;

/// Key material a mode derives from an [`AesKey`] once (block encryptions of constants,
/// doublings, sub-key schedules) and caches with the key, as the GHASH key is: per job it
/// would cost more than a short packet's whole encryption. Each implementing type owns one
/// slot (`SLOT`, one of the distinct constants of [`slot`], checked at compile time) and must
/// wipe its secrets on drop; the key drops every slot when it is zeroized.
pub(crate) trait Derived: Send + Sync + Sized + 'static {
    /// This type's slot, `0..DERIVED_SLOTS`.
    const SLOT: usize;
    /// Computes the material from the key.
    fn derive(key: &AesKey) -> Self;
}

/// The slots of the modes that use one (one constant per mode, listed here so that no two
/// modes share a slot).
pub(crate) mod slot {
    pub(crate) const OCB3: usize = 0;
    pub(crate) const COPA: usize = 1;
    pub(crate) const JULIUS: usize = 2;
    pub(crate) const MCOE_G: usize = 3;
    pub(crate) const POET: usize = 4;
    pub(crate) const POET_GF: usize = 5;
    pub(crate) const COBRA_R: usize = 6;

    /// Every slot above, each within the key's slots and used once (checked at compile time).
    const ALL: [usize; 7] = [OCB3, COPA, JULIUS, MCOE_G, POET, POET_GF, COBRA_R];
    const _: () = {
        let mut i = 0;
        while i < ALL.len() {
            assert!(ALL[i] < super::DERIVED_SLOTS);
            let mut j = i + 1;
            while j < ALL.len() {
                assert!(ALL[i] != ALL[j]);
                j += 1;
            }
            i += 1;
        }
    };
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
            e_zero: [0; 16],
            cmac_k1: [0; 16],
            cmac_k2: [0; 16],
            rounds,
            token,
            ghash: OnceLock::new(),
            derived: Default::default(),
        };
        ni::expand_key(token, key, &mut k.enc);
        ni::invert_key(token, &k.enc, rounds, &mut k.dec);
        for i in 0..16 {
            k.fold[i] = k.enc.0[rounds][i] ^ k.enc.0[0][i];
        }
        let mut l = [0u8; 16];
        ni::encrypt_block(token, &k, &mut l);
        k.e_zero = l;
        l.zeroize();
        k.cmac_k1 = crate::block::dbl(&k.e_zero);
        k.cmac_k2 = crate::block::dbl(&k.cmac_k1);
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

    /// The GCM hash key of this key, H = E_K(0^128) (kept with the key) and its powers,
    /// computed on first use and cached (see the `ghash` field). The hashing backend is the
    /// best of this CPU ([`crate::gf128::GhashBackend::best`]), whatever engine backend runs
    /// the AES part.
    pub(crate) fn ghash_key(&self) -> &GhashKey {
        self.ghash
            .get_or_init(|| Box::new(GhashKey::new(&self.e_zero)))
    }
}

impl AesKey {
    /// The material of type `T` derived from this key, computed on first use and cached (see
    /// [`Derived`]). Thread-safe as [`AesKey::ghash_key`] is.
    pub(crate) fn derived<T: Derived>(&self) -> &T {
        let any = self.derived[T::SLOT].get_or_init(|| Box::new(T::derive(self)));
        match any.downcast_ref::<T>() {
            Some(t) => t,
            // Two types with one slot: a programming error the check in `slot` rules out.
            None => unreachable!("derived-key slot {} used by two types", T::SLOT),
        }
    }

    /// The first 16 bytes of the key as given to [`AesKey::new`] (round key 0 is the key
    /// itself), and for a 32-byte key the second 16 (AES-256's round key 1): McOE-G splits
    /// its 32-byte key `K1 || K2` this way.
    pub(crate) fn raw_halves(&self) -> (Block, Block) {
        (self.enc.0[0], self.enc.0[1])
    }
}

impl Zeroize for AesKey {
    fn zeroize(&mut self) {
        self.enc.0.zeroize();
        self.dec.0.zeroize();
        self.fold.zeroize();
        self.e_zero.zeroize();
        self.cmac_k1.zeroize();
        self.cmac_k2.zeroize();
        // Dropping the box zeroizes the powers in place on the heap (GhashKey's Drop); the
        // next GCM use of the (now all-zero) key would make a new one.
        drop(self.ghash.take());
        for slot in &mut self.derived {
            drop(slot.take());
        }
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

    /// ECB under `outer`, then CFB decryption under `inner` over its output, in place (`io`
    /// must be an in-place view: asserted) over the first `blocks` whole blocks of `io`: `Y_i = E_outer(x_i)`,
    /// `out_i = Y_i ⊕ E_inner(Y_{i-1})`, `Y_{-1} = iv`. Returns the last `Y` (`iv` for no
    /// blocks). POET's middle layer and bottom hash on encryption: on VAES both layers in one
    /// pass, in registers; on xmm the two [`Kernels::parallel`] passes.
    pub(crate) fn ecb_then_cfb_decrypt(
        self,
        outer: &AesKey,
        inner: &AesKey,
        io: &IoPtrs<'_>,
        blocks: usize,
        iv: &Block,
    ) -> Block {
        // In place: the xmm form's second pass reads what the first one wrote.
        assert!(core::ptr::eq(io.src, io.dst.cast_const()));
        match self {
            Kernels::Vaes256(t) => vaes::ecb_then_cfb_decrypt(t, outer, inner, io, blocks, iv),
            Kernels::Ni(t) => {
                let zero = [0u8; crate::block::BLOCK];
                let mut last_x = ni::parallel(t, Parallel::EcbEncrypt, outer, io, blocks, &zero);
                crate::block::wipe(&mut last_x);
                // CFB decryption returns its last input block: the last Y.
                ni::parallel(t, Parallel::CfbDecrypt, inner, io, blocks, iv)
            }
        }
    }

    /// CTR keystream xor over the whole message, partial last block included (see
    /// [`ni::ctr`]): counter blocks `ctr + i` with the whole block as a 128-bit big-endian
    /// counter (`Full128`, SP 800-38A) or only its last 32 bits (`Low32`, GCM's `inc32`). Both
    /// widths run the same wide kernels at the same speed.
    pub(crate) fn ctr(self, key: &AesKey, io: &IoPtrs<'_>, ctr: &Block, width: CounterWidth) {
        match self {
            Kernels::Ni(t) => ni::ctr(t, key, io, ctr, width),
            Kernels::Vaes256(t) => vaes::ctr(t, key, io, ctr, width),
        }
    }

    /// GCM encryption of one message with its CTR and its GHASH stitched in one kernel: CTR
    /// with a 32-bit counter from `ctr` (= inc32(J0)) over `io`, and `s` set to `S`, the
    /// GHASH of `ad` and the ciphertext. Only on VAES with a key whose GHASH runs on zmm, or
    /// on ymm for a message of at least [`vaes::YMM_STITCH_MIN`] bytes (VPCLMULQDQ); elsewhere
    /// nothing is done and the result is `false` (the caller runs [`Kernels::ctr`] and the
    /// stream hash).
    pub(crate) fn gcm_encrypt(
        self,
        key: &AesKey,
        io: &IoPtrs<'_>,
        ctr: &Block,
        ad: &[u8],
        s: &mut Block,
    ) -> bool {
        let Kernels::Vaes256(t) = self else {
            return false;
        };
        let g = key.ghash_key();
        let Some(wide) = g.stitch() else {
            return false;
        };
        if matches!(wide, StitchGhash::Ymm(_)) && io.len < vaes::YMM_STITCH_MIN {
            return false;
        }
        vaes::gcm_encrypt(t, wide, key, io, ctr, ad, s);
        true
    }

    /// ECB (`decrypt`: the inverse cipher) over `blocks` in place under one key, on the
    /// backend's wide kernel: the scratch windows of COPA, Julius and COBRA-R.
    pub(crate) fn ecb_in_place(self, key: &AesKey, blocks: &mut [Block], decrypt: bool) {
        let n = blocks.len();
        if n == 0 {
            return;
        }
        let mode = if decrypt {
            Parallel::EcbDecrypt
        } else {
            Parallel::EcbEncrypt
        };
        let io = IoPtrs::in_place(blocks.as_flattened_mut(), n * BLOCK);
        // ECB hands back its last input block; a copy of secret data, wiped.
        let mut last = self.parallel(mode, key, &io, n, &[0; BLOCK]);
        crate::block::wipe(&mut last);
    }

    /// Independent blocks under per-block keys: the batched initialisation/finalisation
    /// steps. On VAES, keys that repeat with period two (one key for the batch, or two
    /// alternating) run on the wide ECB kernel; any other pattern, and every block on the
    /// xmm backend, on the xmm multi-key kernel.
    pub(crate) fn encrypt_many(self, blocks: &mut [Block], keys: &[&AesKey]) {
        match self {
            Kernels::Vaes256(t) if vaes::crypt_many(t, blocks, keys, false) => {}
            _ => ni::encrypt_many(self.ni(), blocks, keys),
        }
    }

    /// The inverse cipher on independent blocks under per-block keys (as
    /// [`Kernels::encrypt_many`]).
    pub(crate) fn decrypt_many(self, blocks: &mut [Block], keys: &[&AesKey]) {
        match self {
            Kernels::Vaes256(t) if vaes::crypt_many(t, blocks, keys, true) => {}
            _ => ni::decrypt_many(self.ni(), blocks, keys),
        }
    }
}

/// CTR one block at a time with the raw block cipher: the reference the kernels' tests
/// compare against (both counter widths).
#[cfg(test)]
pub(crate) fn ctr_reference(
    key: &AesKey,
    input: &[u8],
    ctr0: &Block,
    width: CounterWidth,
) -> Vec<u8> {
    let c0 = u128::from_be_bytes(*ctr0);
    input
        .chunks(16)
        .enumerate()
        .flat_map(|(i, chunk)| {
            let c = match width {
                CounterWidth::Full128 => c0.wrapping_add(i as u128),
                CounterWidth::Low32 => {
                    let low = (c0 as u32).wrapping_add(i as u32);
                    (c0 & !0xffff_ffff) | u128::from(low)
                }
            };
            let mut ks = c.to_be_bytes();
            key.encrypt_block(&mut ks);
            chunk
                .iter()
                .zip(ks)
                .map(|(x, k)| x ^ k)
                .collect::<Vec<u8>>()
        })
        .collect()
}
