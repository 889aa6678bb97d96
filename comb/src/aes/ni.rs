//! AES-NI (xmm) backend: key schedule, single blocks, lane kernels and wide
//! single-message kernels.
//!
//! Every public function takes a [`NiToken`], the proof that the CPU has AES-NI, SSSE3 and
//! SSE4.1; that is what makes each call of a `#[target_feature]` function below sound.
//! Inside the target-feature functions the register intrinsics are safe; the only `unsafe`
//! left is memory access through pointers, each with its own justification.
//!
//! Lane kernels are const-generic in the lane count `N` and loop rounds outer, lanes inner,
//! so that `N` independent AESENC chains are in flight (latency 3, two issued per cycle on
//! the development CPU: N >= 6 fills the unit). `SHARED = true` is the fast path where every
//! lane uses the same key, so each round key is loaded once per round, not once per lane.

#[cfg(target_arch = "x86")]
use core::arch::x86::*;
#[cfg(target_arch = "x86_64")]
use core::arch::x86_64::*;

use super::lanes::{dispatch_parallel, dispatch_width, CBC_DEC, ECB_DEC, ECB_ENC};
use super::{AesKey, ChainLane, ChainRule, CounterWidth, Parallel, RoundKeys};
use crate::block::{Block, IoPtrs, BLOCK};
use crate::cpu::NiToken;

// ---------------------------------------------------------------------------------------
// loads and stores

#[inline]
#[target_feature(enable = "sse2")]
pub(crate) fn load(b: &Block) -> __m128i {
    // SAFETY: `b` is a reference to 16 readable bytes; loadu has no alignment requirement.
    unsafe { _mm_loadu_si128(b.as_ptr().cast()) }
}

#[inline]
#[target_feature(enable = "sse2")]
pub(crate) fn store(b: &mut Block, v: __m128i) {
    // SAFETY: `b` is a reference to 16 writable bytes; storeu has no alignment requirement.
    unsafe { _mm_storeu_si128(b.as_mut_ptr().cast(), v) }
}

/// Round key `r` (r < 15). `RoundKeys` is `align(16)` and its rows are 16 bytes, so row `r`
/// is 16-byte aligned.
#[inline]
#[target_feature(enable = "sse2")]
fn rk(k: &RoundKeys, r: usize) -> __m128i {
    let row = &k.0[r];
    // SAFETY: `row` is 16 readable, 16-byte-aligned bytes (see above).
    unsafe { _mm_load_si128(row.as_ptr().cast()) }
}

/// Block `i` of a message's input. Caller guarantees `16 * (i + 1) <= io.len`.
#[inline]
#[target_feature(enable = "sse2")]
pub(crate) unsafe fn load_in(io: &IoPtrs<'_>, i: usize) -> __m128i {
    debug_assert!(BLOCK * (i + 1) <= io.len);
    // SAFETY: by the caller's guarantee the 16 bytes are inside the readable input.
    unsafe { _mm_loadu_si128(io.src.add(BLOCK * i).cast()) }
}

/// Writes block `i` of a message's output. Caller guarantees `16 * (i + 1) <= io.out_cap`
/// and a non-null `dst`.
#[inline]
#[target_feature(enable = "sse2")]
pub(crate) unsafe fn store_out(io: &IoPtrs<'_>, i: usize, v: __m128i) {
    debug_assert!(!io.dst.is_null() && BLOCK * (i + 1) <= io.out_cap);
    // SAFETY: by the caller's guarantee the 16 bytes are inside the writable output.
    unsafe { _mm_storeu_si128(io.dst.add(BLOCK * i).cast(), v) }
}

// ---------------------------------------------------------------------------------------
// key schedule

/// Expands a 16/24/32-byte key into `out.0[0..=rounds]`.
pub(crate) fn expand_key(_t: NiToken, key: &[u8], out: &mut RoundKeys) {
    // SAFETY: the token proves AES-NI/SSE4.1 are present.
    unsafe {
        match key.len() {
            16 => expand128(key.try_into().unwrap_or(&[0; 16]), out),
            24 => expand192(key, out),
            _ => expand256(key.try_into().unwrap_or(&[0; 32]), out),
        }
    }
}

/// `k ^ (k << 32) ^ (k << 64) ^ (k << 96)`: the running xor of the previous round key's words.
#[inline]
#[target_feature(enable = "sse2")]
fn prefix_xor(k: __m128i) -> __m128i {
    let k = _mm_xor_si128(k, _mm_slli_si128::<4>(k));
    let k = _mm_xor_si128(k, _mm_slli_si128::<4>(k));
    _mm_xor_si128(k, _mm_slli_si128::<4>(k))
}

#[target_feature(enable = "aes,sse2")]
fn expand128(key: &[u8; 16], out: &mut RoundKeys) {
    let mut k = load(key);
    store(&mut out.0[0], k);
    macro_rules! step {
        ($i:expr, $rcon:expr) => {{
            let t = _mm_shuffle_epi32::<0xff>(_mm_aeskeygenassist_si128::<$rcon>(k));
            k = _mm_xor_si128(prefix_xor(k), t);
            store(&mut out.0[$i], k);
        }};
    }
    step!(1, 0x01);
    step!(2, 0x02);
    step!(3, 0x04);
    step!(4, 0x08);
    step!(5, 0x10);
    step!(6, 0x20);
    step!(7, 0x40);
    step!(8, 0x80);
    step!(9, 0x1b);
    step!(10, 0x36);
}

#[target_feature(enable = "aes,sse2")]
fn expand256(key: &[u8; 32], out: &mut RoundKeys) {
    let mut a = load(key[..16].try_into().unwrap_or(&[0; 16]));
    let mut b = load(key[16..].try_into().unwrap_or(&[0; 16]));
    store(&mut out.0[0], a);
    store(&mut out.0[1], b);
    macro_rules! even {
        ($i:expr, $rcon:expr) => {{
            // Even round key: SubWord(RotWord(w)) ^ rcon of b's top word.
            let t = _mm_shuffle_epi32::<0xff>(_mm_aeskeygenassist_si128::<$rcon>(b));
            a = _mm_xor_si128(prefix_xor(a), t);
            store(&mut out.0[$i], a);
        }};
    }
    macro_rules! odd {
        ($i:expr) => {{
            // Odd round key: SubWord (no rotation, no rcon) of a's top word.
            let t = _mm_shuffle_epi32::<0xaa>(_mm_aeskeygenassist_si128::<0>(a));
            b = _mm_xor_si128(prefix_xor(b), t);
            store(&mut out.0[$i], b);
        }};
    }
    even!(2, 0x01);
    odd!(3);
    even!(4, 0x02);
    odd!(5);
    even!(6, 0x04);
    odd!(7);
    even!(8, 0x08);
    odd!(9);
    even!(10, 0x10);
    odd!(11);
    even!(12, 0x20);
    odd!(13);
    even!(14, 0x40);
}

/// AES-192 works word by word (six words a step do not fit the 4-word registers), using
/// AESKEYGENASSIST only for SubWord(RotWord(w)) ^ rcon: FIPS 197 §5.2 literally.
#[target_feature(enable = "aes,sse2,sse4.1")]
fn expand192(key: &[u8], out: &mut RoundKeys) {
    let mut w = [0u32; 52];
    for (i, c) in key.chunks_exact(4).take(6).enumerate() {
        w[i] = u32::from_le_bytes([c[0], c[1], c[2], c[3]]);
    }
    const RCON: [u8; 8] = [0x01, 0x02, 0x04, 0x08, 0x10, 0x20, 0x40, 0x80];
    for i in 6..52 {
        let mut t = w[i - 1];
        if i % 6 == 0 {
            // Word 1 of AESKEYGENASSIST(x, 0) is RotWord(SubWord(x[1])); xor rcon ourselves
            // (the immediate must be a constant).
            let v = _mm_aeskeygenassist_si128::<0>(_mm_set1_epi32(t as i32));
            t = (_mm_extract_epi32::<1>(v) as u32) ^ u32::from(RCON[i / 6 - 1]);
        }
        w[i] = w[i - 6] ^ t;
    }
    for (r, row) in out.0.iter_mut().take(13).enumerate() {
        for c in 0..4 {
            row[4 * c..4 * c + 4].copy_from_slice(&w[4 * r + c].to_le_bytes());
        }
    }
    zeroize::Zeroize::zeroize(&mut w);
}

/// Decryption schedule for the equivalent inverse cipher (AESDEC): reversed order, AESIMC on
/// the middle keys.
pub(crate) fn invert_key(_t: NiToken, enc: &RoundKeys, rounds: usize, dec: &mut RoundKeys) {
    // SAFETY: the token proves AES-NI is present.
    unsafe { invert_key_ni(enc, rounds, dec) }
}

#[target_feature(enable = "aes,sse2")]
fn invert_key_ni(enc: &RoundKeys, rounds: usize, dec: &mut RoundKeys) {
    let rounds = rounds.min(14);
    dec.0[0] = enc.0[rounds];
    for i in 1..rounds {
        store(&mut dec.0[i], _mm_aesimc_si128(rk(enc, rounds - i)));
    }
    dec.0[rounds] = enc.0[0];
}

// ---------------------------------------------------------------------------------------
// lane kernels: N independent blocks, one cipher call each

/// The key of lane `j`: `keys[0]` for every lane on the shared-key path.
#[inline(always)]
fn key_of<'k, const N: usize, const SHARED: bool>(keys: &[&'k AesKey; N], j: usize) -> &'k AesKey {
    if SHARED {
        keys[0]
    } else {
        keys[j]
    }
}

/// The keys and I/O of a window kernel's lanes, as arrays the optimiser keeps in registers.
#[inline(always)]
fn keys_and_io<'a, const N: usize>(
    lanes: &[ChainLane<'a>; N],
) -> ([&'a AesKey; N], [IoPtrs<'a>; N]) {
    (
        core::array::from_fn(|j| lanes[j].key),
        core::array::from_fn(|j| lanes[j].io),
    )
}

/// Rounds 1..rounds-1 (all AESENC rounds) on N lanes, rounds outer, lanes inner.
#[inline]
#[target_feature(enable = "aes,sse2")]
fn middle_rounds<const N: usize, const SHARED: bool>(
    x: &mut [__m128i; N],
    keys: &[&AesKey; N],
    rounds: usize,
) {
    for r in 1..rounds {
        if SHARED {
            // One round-key load per round for all lanes.
            let k = rk(&keys[0].enc, r);
            for xj in x.iter_mut() {
                *xj = _mm_aesenc_si128(*xj, k);
            }
        } else {
            for (j, xj) in x.iter_mut().enumerate() {
                *xj = _mm_aesenc_si128(*xj, rk(&keys[j].enc, r));
            }
        }
    }
}

/// Encrypts N blocks, lane j under `keys[j]` (all lanes' keys have `rounds` rounds):
/// `encrypt_lanes!(N, SHARED; x, keys, rounds)`.
///
/// A macro rather than a function: LLVM declined to inline the function into the wide loops,
/// so the 8 blocks went through the stack around a call (measured: ECB encryption at 1440
/// bytes 0.33–0.40 TSC cycles/byte against 0.29 for decryption, whose kernel was inlined).
macro_rules! encrypt_lanes {
    ($n:expr, $shared:expr; $x:expr, $keys:expr, $rounds:expr) => {{
        let x: &mut [__m128i; $n] = $x;
        let keys: &[&AesKey; $n] = $keys;
        let rounds: usize = $rounds;
        for (j, xj) in x.iter_mut().enumerate() {
            *xj = _mm_xor_si128(*xj, rk(&key_of::<{ $n }, { $shared }>(keys, j).enc, 0));
        }
        middle_rounds::<{ $n }, { $shared }>(x, keys, rounds);
        for (j, xj) in x.iter_mut().enumerate() {
            let last = rk(&key_of::<{ $n }, { $shared }>(keys, j).enc, rounds);
            *xj = _mm_aesenclast_si128(*xj, last);
        }
    }};
}

/// Decrypts N blocks under one key.
#[inline]
#[target_feature(enable = "aes,sse2")]
fn decrypt_lanes<const N: usize>(x: &mut [__m128i; N], key: &AesKey) {
    let rounds = key.rounds.min(14);
    for xj in x.iter_mut() {
        *xj = _mm_xor_si128(*xj, rk(&key.dec, 0));
    }
    for r in 1..rounds {
        let k = rk(&key.dec, r);
        for xj in x.iter_mut() {
            *xj = _mm_aesdec_si128(*xj, k);
        }
    }
    let k = rk(&key.dec, rounds);
    for xj in x.iter_mut() {
        *xj = _mm_aesdeclast_si128(*xj, k);
    }
}

/// Encrypts one block in place.
pub(crate) fn encrypt_block(_t: NiToken, key: &AesKey, block: &mut Block) {
    // SAFETY: the token proves AES-NI is present.
    unsafe { encrypt_block_ni(key, block) }
}

#[target_feature(enable = "aes,sse2")]
fn encrypt_block_ni(key: &AesKey, block: &mut Block) {
    let mut x = [load(block)];
    encrypt_lanes!(1, true; &mut x, &[key], key.rounds.min(14));
    store(block, x[0]);
}

/// Decrypts one block in place.
pub(crate) fn decrypt_block(_t: NiToken, key: &AesKey, block: &mut Block) {
    // SAFETY: the token proves AES-NI is present.
    unsafe { decrypt_block_ni(key, block) }
}

#[target_feature(enable = "aes,sse2")]
fn decrypt_block_ni(key: &AesKey, block: &mut Block) {
    let mut x = [load(block)];
    decrypt_lanes::<1>(&mut x, key);
    store(block, x[0]);
}

/// Encrypts `blocks[i]` under `keys[i]` in place, for any number of independent blocks with
/// any mix of keys (of one size or several): the batched initialisation/finalisation step
/// (CMAC tags, PKCS#7 last blocks, CFB/OFB partial tails of a whole batch) and the step of
/// the generic comb stepper ([`crate::sched::steps`]). Runs 8 lanes at a time, the remainder
/// as one narrower call; shared-key path when a chunk has one key.
pub(crate) fn encrypt_many(_t: NiToken, blocks: &mut [Block], keys: &[&AesKey]) {
    assert_eq!(blocks.len(), keys.len());
    // SAFETY: the token proves AES-NI is present.
    unsafe { crypt_many_ni::<false>(blocks, keys) }
}

/// Decrypts `blocks[i]` under `keys[i]` in place (the inverse cipher), as [`encrypt_many`].
pub(crate) fn decrypt_many(_t: NiToken, blocks: &mut [Block], keys: &[&AesKey]) {
    assert_eq!(blocks.len(), keys.len());
    // SAFETY: the token proves AES-NI is present.
    unsafe { crypt_many_ni::<true>(blocks, keys) }
}

#[target_feature(enable = "aes,sse2")]
fn crypt_many_ni<const DEC: bool>(blocks: &mut [Block], keys: &[&AesKey]) {
    const W: usize = 8;
    let mut bc = blocks.chunks_exact_mut(W);
    let mut kc = keys.chunks_exact(W);
    for (b, k) in (&mut bc).zip(&mut kc) {
        crypt_chunk::<W, DEC>(b, k);
    }
    let (b, k) = (bc.into_remainder(), kc.remainder());
    match b.len() {
        0 => {}
        1 => crypt_chunk::<1, DEC>(b, k),
        2 => crypt_chunk::<2, DEC>(b, k),
        3 => crypt_chunk::<3, DEC>(b, k),
        4 => crypt_chunk::<4, DEC>(b, k),
        5 => crypt_chunk::<5, DEC>(b, k),
        6 => crypt_chunk::<6, DEC>(b, k),
        _ => crypt_chunk::<7, DEC>(b, k),
    }
}

/// `N` blocks under their keys; `b` and `k` have exactly `N` entries.
#[inline]
#[target_feature(enable = "aes,sse2")]
fn crypt_chunk<const N: usize, const DEC: bool>(b: &mut [Block], k: &[&AesKey]) {
    let (Ok(b), Ok(k)) = (<&mut [Block; N]>::try_from(b), <&[&AesKey; N]>::try_from(k)) else {
        unreachable!("callers pass exactly N blocks and keys")
    };
    let rounds = k[0].rounds;
    let shared = k.iter().all(|kk| core::ptr::eq(*kk, k[0]));
    if !k.iter().all(|kk| kk.rounds == rounds) {
        // Mixed key sizes in one chunk: lanes cannot run in lockstep.
        for (bj, kj) in b.iter_mut().zip(k) {
            if DEC {
                decrypt_block_ni(kj, bj);
            } else {
                encrypt_block_ni(kj, bj);
            }
        }
        return;
    }
    let mut x: [__m128i; N] = core::array::from_fn(|j| load(&b[j]));
    match (DEC, shared) {
        (false, true) => encrypt_lanes!(N, true; &mut x, k, rounds.min(14)),
        (false, false) => encrypt_lanes!(N, false; &mut x, k, rounds.min(14)),
        (true, true) => decrypt_lanes::<N>(&mut x, k[0]),
        (true, false) => {
            let r = rounds.min(14);
            for (j, xj) in x.iter_mut().enumerate() {
                *xj = _mm_xor_si128(*xj, rk(&k[j].dec, 0));
            }
            for round in 1..r {
                for (j, xj) in x.iter_mut().enumerate() {
                    *xj = _mm_aesdec_si128(*xj, rk(&k[j].dec, round));
                }
            }
            for (j, xj) in x.iter_mut().enumerate() {
                *xj = _mm_aesdeclast_si128(*xj, rk(&k[j].dec, r));
            }
        }
    }
    for j in 0..N {
        store(&mut b[j], x[j]);
    }
}

// ---------------------------------------------------------------------------------------
// chained (sequential) modes: the comb scheduler's window kernel

/// Advances `N` lanes by `count >= 1` blocks each, from block `start`.
///
/// The xor that links a block's cipher output to the next block's input, and the next
/// whitening xor, are folded into the last round key: `AESENCLAST(s, k_last ^ k_0 ^ d)`
/// yields the next whitened input directly, so the dependent chain is the AES rounds alone.
/// The last block of the window is not folded (the next block may belong to a later window or
/// not exist), which costs one xor per lane per window.
///
/// # Safety
/// For every lane, `start + count <= lane.blocks` (the lane invariant then makes every access
/// in bounds); every lane's key has the same number of rounds as `lanes[0]`'s; with `SHARED`
/// all lanes use `lanes[0].key`.
#[target_feature(enable = "aes,sse2")]
pub(crate) unsafe fn chain_window<R: ChainRule, const N: usize, const SHARED: bool>(
    lanes: &mut [ChainLane<'_>; N],
    start: usize,
    count: usize,
) {
    debug_assert!(count >= 1);
    debug_assert!(lanes.iter().all(|l| start + count <= l.blocks));
    let (keys, io) = keys_and_io(lanes);
    let rounds = keys[0].rounds.min(14);
    let k0 = |j: usize| rk(&key_of::<N, SHARED>(&keys, j).enc, 0);
    let zero = _mm_setzero_si128();

    // SAFETY (all loads/stores below): block indices are in start..start+count, within every
    // lane's `blocks`, so inside its input and (for writing rules) its output.
    let mut x: [__m128i; N] = core::array::from_fn(|j| {
        let c = load(&lanes[j].chain);
        let d = if R::INPUT_XORS_DATA {
            unsafe { load_in(&io[j], start) }
        } else {
            zero
        };
        _mm_xor_si128(_mm_xor_si128(c, d), k0(j))
    });

    // Only the N states stay live across the rounds; each lane's data and fold key are loaded
    // right where they are used, so 16 lanes still fit the 16 xmm registers without spills.
    let end = start + count - 1;
    for i in start..end {
        middle_rounds::<N, SHARED>(&mut x, &keys, rounds);
        for j in 0..N {
            let key = key_of::<N, SHARED>(&keys, j);
            let p = if R::CHAIN_XORS_DATA || R::OUTPUT_XORS_DATA {
                unsafe { load_in(&io[j], i) }
            } else {
                zero
            };
            let mut d = if R::CHAIN_XORS_DATA { p } else { zero };
            if R::INPUT_XORS_DATA {
                d = _mm_xor_si128(d, unsafe { load_in(&io[j], i + 1) });
            }
            x[j] = _mm_aesenclast_si128(x[j], _mm_xor_si128(load(&key.fold), d));
            if R::WRITES_OUTPUT {
                let y = _mm_xor_si128(x[j], _mm_xor_si128(k0(j), d));
                let out = if R::OUTPUT_XORS_DATA {
                    _mm_xor_si128(y, p)
                } else {
                    y
                };
                unsafe { store_out(&io[j], i, out) };
            }
        }
    }

    // Last block of the window: plain AESENCLAST, then the chaining value.
    middle_rounds::<N, SHARED>(&mut x, &keys, rounds);
    for j in 0..N {
        let y = _mm_aesenclast_si128(x[j], rk(&key_of::<N, SHARED>(&keys, j).enc, rounds));
        let p = if R::CHAIN_XORS_DATA || R::OUTPUT_XORS_DATA {
            unsafe { load_in(&io[j], end) }
        } else {
            zero
        };
        if R::WRITES_OUTPUT {
            let out = if R::OUTPUT_XORS_DATA {
                _mm_xor_si128(y, p)
            } else {
                y
            };
            unsafe { store_out(&io[j], end, out) };
        }
        let c = if R::CHAIN_XORS_DATA {
            _mm_xor_si128(y, p)
        } else {
            y
        };
        store(&mut lanes[j].chain, c);
    }
}

/// CLOC's and SILC's encryption, both chains of each of `N` lanes: advances them by `count >=
/// 1` blocks each, from block `start`. A lane's `chain` is the CFB chain's next cipher input
/// (`V`, then `fix1(C_i)`) and `macs[j]` the MAC chain's next cipher input (`mac_seed(V)`,
/// then `T ^ C_i`); per block `K = E(chain)`, `T = E(mac)`, `C = M ^ K` is written,
/// `chain = fix1(C)`, `mac = T ^ C`. The MAC thus lags the encryption by one block and never
/// waits for it: both cipher calls of a block depend only on the previous block's `C`, and
/// the two chains of a lane run side by side through the rounds, so `N` lanes keep `2N`
/// independent blocks in flight.
///
/// The last round folds `k_last ^ k_0 ^ M` (the CFB chain's output is then `s = C ^ k_0`): the
/// next CFB input, whitened, `fix1(C) ^ k_0`, is `(s | m) ^ (k_0 & m)` for the bit mask `m`
/// (`k_0 & m` a per-lane constant), and the next MAC input, whitened, is `T ^ s`: one vector
/// op after the MAC's own last round.
///
/// With `DEC` (decryption's pass) the input is the ciphertext `C_i`: the output is the
/// keystream `K_i = E(chain)` alone, and both chains take the loaded `C_i` (`chain =
/// fix1(C_i)`, `mac = T ^ C_i`), so they are the encryption's chains and no plaintext is made.
///
/// # Safety
/// As for [`chain_window`].
#[target_feature(enable = "aes,sse2")]
pub(crate) unsafe fn cfb_mac_window<const N: usize, const SHARED: bool, const DEC: bool>(
    lanes: &mut [ChainLane<'_>; N],
    macs: &mut [Block; N],
    start: usize,
    count: usize,
) {
    debug_assert!(count >= 1);
    debug_assert!(lanes.iter().all(|l| start + count <= l.blocks));
    let (keys, io) = keys_and_io(lanes);
    let rounds = keys[0].rounds.min(14);
    let k0 = |j: usize| rk(&key_of::<N, SHARED>(&keys, j).enc, 0);
    let fix = _mm_cvtsi32_si128(super::lanes::FIX1_BIT);
    let fix_k0: [__m128i; N] = core::array::from_fn(|j| _mm_and_si128(k0(j), fix));
    let mut a: [__m128i; N] = core::array::from_fn(|j| _mm_xor_si128(load(&lanes[j].chain), k0(j)));
    let mut b: [__m128i; N] = core::array::from_fn(|j| _mm_xor_si128(load(&macs[j]), k0(j)));
    for i in start..start + count {
        for r in 1..rounds {
            for j in 0..N {
                let k = rk(&key_of::<N, SHARED>(&keys, j).enc, r);
                a[j] = _mm_aesenc_si128(a[j], k);
                b[j] = _mm_aesenc_si128(b[j], k);
            }
        }
        for j in 0..N {
            let key = key_of::<N, SHARED>(&keys, j);
            // SAFETY: i < start + count <= blocks: inside the input and the output.
            let p = unsafe { load_in(&io[j], i) };
            if DEC {
                // `K_i` out; `fix1(C_i) ^ k_0` and `T ^ C_i ^ k_0` (the MAC's last round
                // under the fold key) from the loaded `C_i`.
                let ks = _mm_aesenclast_si128(a[j], rk(&key.enc, rounds));
                let t = _mm_aesenclast_si128(b[j], load(&key.fold));
                // SAFETY: as above.
                unsafe { store_out(&io[j], i, ks) };
                a[j] = _mm_xor_si128(_mm_or_si128(p, fix), k0(j));
                b[j] = _mm_xor_si128(t, p);
                continue;
            }
            let s = _mm_aesenclast_si128(a[j], _mm_xor_si128(load(&key.fold), p));
            let t = _mm_aesenclast_si128(b[j], rk(&key.enc, rounds));
            // SAFETY: as above.
            unsafe { store_out(&io[j], i, _mm_xor_si128(s, k0(j))) };
            a[j] = _mm_xor_si128(_mm_or_si128(s, fix), fix_k0[j]);
            b[j] = _mm_xor_si128(t, s);
        }
    }
    for j in 0..N {
        store(&mut lanes[j].chain, _mm_xor_si128(a[j], k0(j)));
        store(&mut macs[j], _mm_xor_si128(b[j], k0(j)));
    }
}

// ---------------------------------------------------------------------------------------
// parallel modes: wide single-message kernels (8 blocks per step)

const WIDE: usize = 8;

/// Runs a parallel mode over the first `blocks` whole blocks of `io`, with `iv` as the
/// chaining value before block 0 (CBC/CFB decryption). Returns the last ciphertext block
/// (the chaining value after the run). In place is allowed: every block is loaded before the
/// step's stores.
pub(crate) fn parallel(
    _t: NiToken,
    mode: Parallel,
    key: &AesKey,
    io: &IoPtrs<'_>,
    blocks: usize,
    iv: &Block,
) -> Block {
    assert!(BLOCK * blocks <= io.len && BLOCK * blocks <= io.out_cap && !io.dst.is_null());
    // SAFETY: the token proves AES-NI; the assertion gives the kernel's bounds.
    unsafe { dispatch_parallel!(mode, parallel_ni(key, io, blocks, iv)) }
}

#[target_feature(enable = "aes,sse2")]
unsafe fn parallel_ni<const MODE: u8>(
    key: &AesKey,
    io: &IoPtrs<'_>,
    blocks: usize,
    iv: &Block,
) -> Block {
    let mut prev = load(iv);
    let mut i = 0;
    // SAFETY (loads/stores): i + WIDE <= blocks resp. i < blocks, and the caller checked
    // 16 * blocks against both input and output.
    while i + WIDE <= blocks {
        let c: [__m128i; WIDE] = core::array::from_fn(|j| unsafe { load_in(io, i + j) });
        let out = step::<WIDE, MODE>(key, &c, prev);
        for (j, o) in out.iter().enumerate() {
            unsafe { store_out(io, i + j, *o) };
        }
        prev = c[WIDE - 1];
        i += WIDE;
    }
    while i < blocks {
        let c = [unsafe { load_in(io, i) }];
        let out = step::<1, MODE>(key, &c, prev);
        unsafe { store_out(io, i, out[0]) };
        prev = c[0];
        i += 1;
    }
    let mut last = [0u8; 16];
    store(&mut last, prev);
    last
}

/// One step of a parallel mode on N consecutive input blocks `c`, `prev` being the input
/// block before `c[0]`.
#[inline]
#[target_feature(enable = "aes,sse2")]
fn step<const N: usize, const MODE: u8>(
    key: &AesKey,
    c: &[__m128i; N],
    prev: __m128i,
) -> [__m128i; N] {
    let before = |j: usize| if j == 0 { prev } else { c[j - 1] };
    let rounds = key.rounds.min(14);
    match MODE {
        ECB_ENC => {
            let mut x = *c;
            encrypt_lanes!(N, true; &mut x, &[key; N], rounds);
            x
        }
        ECB_DEC => {
            let mut x = *c;
            decrypt_lanes::<N>(&mut x, key);
            x
        }
        CBC_DEC => {
            let mut x = *c;
            decrypt_lanes::<N>(&mut x, key);
            core::array::from_fn(|j| _mm_xor_si128(x[j], before(j)))
        }
        _ => {
            // CFB_DEC
            let mut x: [__m128i; N] = core::array::from_fn(before);
            encrypt_lanes!(N, true; &mut x, &[key; N], rounds);
            core::array::from_fn(|j| _mm_xor_si128(x[j], c[j]))
        }
    }
}

/// CTR keystream xor over the whole message (partial last block included), counter blocks
/// `ctr + i`: 128-bit big-endian integers wrapping mod 2^128 (`Full128`), or with only the
/// last 32 bits counting, wrapping mod 2^32 while the first 96 bits stay fixed (`Low32`,
/// GCM's `inc32`).
pub(crate) fn ctr(_t: NiToken, key: &AesKey, io: &IoPtrs<'_>, ctr: &Block, width: CounterWidth) {
    assert!(io.len <= io.out_cap && !io.dst.is_null());
    // SAFETY: the token proves AES-NI; bounds asserted above.
    unsafe { dispatch_width!(width, ctr_ni(key, io, ctr)) }
}

/// Block offset `i` as a vector to add to a byte-reversed counter: into the low 64-bit word,
/// or (`LOW32`) the low 32-bit word only, `i` reduced mod 2^32.
#[inline]
#[target_feature(enable = "sse2")]
fn ctr_offset<const LOW32: bool>(i: usize) -> __m128i {
    if LOW32 {
        _mm_set_epi32(0, 0, 0, i as u32 as i32)
    } else {
        _mm_set_epi64x(0, i as i64)
    }
}

/// `a + b` on the counter word: 64-bit lanes, or (`LOW32`) 32-bit lanes, so that the low word
/// wraps mod 2^32 without a carry into the fixed 96 bits. (`b` is a [`ctr_offset`].)
#[inline]
#[target_feature(enable = "sse2")]
fn ctr_add<const LOW32: bool>(a: __m128i, b: __m128i) -> __m128i {
    if LOW32 {
        _mm_add_epi32(a, b)
    } else {
        _mm_add_epi64(a, b)
    }
}

#[target_feature(enable = "aes,sse2,ssse3")]
unsafe fn ctr_ni<const LOW32: bool>(key: &AesKey, io: &IoPtrs<'_>, ctr: &Block) {
    let rounds = key.rounds.min(14);
    let keys = [key; WIDE];
    let c0 = u128::from_be_bytes(*ctr);
    // Byte reversal turns the little-endian u128 lanes into big-endian counter blocks.
    let bswap = _mm_set_epi8(0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15);
    let full = io.len / BLOCK;
    let blocks = full + usize::from(!io.len.is_multiple_of(BLOCK));
    // Fast path: when the low 64 bits do not wrap within this message (all but 1 in 2^50 of
    // random IVs for a 16 MiB message), a counter is one 64-bit vector add and a shuffle; else
    // the full 128-bit add (carries across 64 bits). A 32-bit counter never carries out of its
    // word: always the fast path, with a 32-bit add.
    let no_carry = LOW32 || (c0 as u64 as u128) + (blocks as u128) <= 1 << 64;
    let base = _mm_set_epi64x((c0 >> 64) as i64, c0 as u64 as i64);
    let counter = |i: usize| {
        if no_carry {
            _mm_shuffle_epi8(ctr_add::<LOW32>(base, ctr_offset::<LOW32>(i)), bswap)
        } else {
            let v = c0.wrapping_add(i as u128);
            _mm_shuffle_epi8(_mm_set_epi64x((v >> 64) as i64, v as i64), bswap)
        }
    };
    let mut i = 0;
    // SAFETY (loads/stores): i + WIDE <= full resp. i < full; full blocks lie inside the
    // input, and the caller checked len <= out_cap.
    let offsets: [__m128i; WIDE] = core::array::from_fn(|j| ctr_offset::<LOW32>(j));
    while i + WIDE <= full {
        let mut x: [__m128i; WIDE] = if no_carry {
            // One scalar-to-vector move per step, then an add and a shuffle per block.
            let b = ctr_add::<LOW32>(base, ctr_offset::<LOW32>(i));
            core::array::from_fn(|j| _mm_shuffle_epi8(ctr_add::<LOW32>(b, offsets[j]), bswap))
        } else {
            core::array::from_fn(|j| counter(i + j))
        };
        encrypt_lanes!(WIDE, true; &mut x, &keys, rounds);
        for (j, xj) in x.iter().enumerate() {
            let p = unsafe { load_in(io, i + j) };
            unsafe { store_out(io, i + j, _mm_xor_si128(*xj, p)) };
        }
        i += WIDE;
    }
    while i < full {
        let mut x = [counter(i)];
        encrypt_lanes!(1, true; &mut x, &[key], rounds);
        let p = unsafe { load_in(io, i) };
        unsafe { store_out(io, i, _mm_xor_si128(x[0], p)) };
        i += 1;
    }
    let rest = io.len - BLOCK * full;
    if rest > 0 {
        let mut x = [counter(full)];
        encrypt_lanes!(1, true; &mut x, &[key], rounds);
        let mut ks = [0u8; 16];
        store(&mut ks, x[0]);
        io.xor_tail(&ks);
        crate::block::wipe(&mut ks);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    use crate::block::test_bytes as bytes;

    /// CTR with both counter widths against the block-by-block reference, the low 32-bit word
    /// starting just before 2^32 (the wrap inside the 8-block loop, in the one-block loop, in
    /// the partial tail, at the first block) and the fixed 96 bits all ones, all zeros or
    /// random: `Low32` wraps within its word, `Full128` carries into the rest. Out of place
    /// (spare output untouched) and in place.
    #[test]
    fn ctr_both_widths_across_the_32_bit_wrap() {
        let Some(t) = NiToken::get() else { return };
        for (ki, klen) in [16usize, 24, 32].into_iter().enumerate() {
            let key = AesKey::new(&bytes(ki as u64 + 40, klen)).unwrap();
            for low in [0xffff_fffeu32, 0xffff_ffff, 0xffff_fff0, 0xffff_ffe1, 0] {
                let fixed: [[u8; 12]; 3] = [
                    [0xff; 12],
                    [0; 12],
                    bytes(u64::from(low) + 9, 12).try_into().unwrap(),
                ];
                for f in fixed {
                    let mut c = [0u8; 16];
                    c[..12].copy_from_slice(&f);
                    c[12..].copy_from_slice(&low.to_be_bytes());
                    for len in (0..=300).chain([1440, 4113]) {
                        let input = bytes(len as u64 + 5, len);
                        for width in [CounterWidth::Low32, CounterWidth::Full128] {
                            let want = super::super::ctr_reference(&key, &input, &c, width);
                            let mut out = vec![0xEEu8; len + 9];
                            ctr(t, &key, &IoPtrs::copy(&input, &mut out), &c, width);
                            assert_eq!(&out[..len], &want[..], "{width:?} {c:02x?} len {len}");
                            assert!(out[len..].iter().all(|&b| b == 0xEE));
                            let mut buf = input.clone();
                            ctr(t, &key, &IoPtrs::in_place(&mut buf, len), &c, width);
                            assert_eq!(buf, want, "{width:?} {c:02x?} len {len} in place");
                        }
                    }
                }
            }
        }
    }
}
