//! AES-SILC v3 (Iwata, Minematsu, Guo, Morioka, Nikolić), the CAESAR parameter set
//! `aes128n12t8silcv3`: AES-128, 12-byte nonce, 8-byte tag. SILC is CLOC made for small
//! hardware, and runs on CLOC's lane machinery ([`super::cloc`]); only the [`Scheme`] differs.
//!
//! * Nonce and AD: `S = E(0^24 ‖ PARAM ‖ N)` (PARAM = `0xC0`), then CBC-style over the AD
//!   blocks, the last one zero-padded: `S = E(S ^ A_i)`. Then the AD's byte length as a
//!   64-bit big-endian number is xored into the last 8 bytes and `V = g(S)`, where `g` moves
//!   every byte one place towards the front and makes the new last byte `s_0 ^ s_1`.
//! * Encryption: CLOC's CFB with fix1, `K_1 = E(V)`, `K_{i+1} = E(fix1(C_i))`.
//! * MAC over the ciphertext: `T = E(g(V))`, `T = E(T ^ C_i)` for every block, the last one
//!   zero-padded; then the message byte length (64-bit big-endian) is xored into the last 8
//!   bytes and `tag = E(g(T))`, first 8 bytes. The last two cipher calls depend on each other
//!   and run as two batched calls across all jobs (`FINAL_CALLS = 2`).
//!
//! Scheduling, decryption (keystream first, plaintext only for a matching tag) and wiping are
//! CLOC's (see [`super::cloc`]): the MAC blocks before the last run beside the encryption (on
//! decryption, beside the keystream) on CLOC's CFB+MAC kernels, and the last block's call and
//! the tag's are the two batched finalisation calls.

use super::cloc::{run_scheme, Scheme, PARAM};
use crate::aes::Kernels;
use crate::block::{load_short, xor, Block, BLOCK};
use crate::modes::Prepared;
use crate::sched::exec::Path;
use crate::{JobResult, Op};

/// AES-SILC v3.
pub(crate) struct Silc;

/// `g`: the bytes shifted one place towards the front, the new last byte `s_0 ^ s_1`.
fn g(s: &Block) -> Block {
    let v = u128::from_be_bytes(*s);
    ((v << 8) | u128::from(s[0] ^ s[1])).to_be_bytes()
}

/// `0^24 ‖ PARAM ‖ N`, the nonce in the last bytes, as a little-endian integer, as CLOC's
/// nonce block. The validated 12-byte nonce through [`load_short`] at a constant length (two
/// fixed-width loads, constant shifts); any other length (the type allows it, validation does
/// not) through it at the run-time length.
///
/// Built inline in the batch's nonce pass (before, [`Scheme::ad_input`] was a call per job
/// and shifted by the nonce's length at run time): 57 fewer instructions per message of SILC
/// at 64 bytes (892 against 949, `scripts/count-instructions.sh aes128-silc --dist fixed
/// --lengths 64`, xmm kernels). Intel AVX-512 VM, a busy host, batches of 64, TSC ticks per
/// message, 10th percentile of 100 calls, three alternated pairs: 64 bytes 248-256 -> 224-228,
/// the realistic mix 581-602 -> 557-567 (CLOC's, whose code did not change, 196-205 against
/// 199-201 and 534-554 against 532-547).
#[inline]
fn nonce_block(nonce: &[u8]) -> Block {
    match nonce.first_chunk::<12>() {
        // `load_short` of a 12-byte array: its two word loads, the length a constant.
        Some(n) if nonce.len() == 12 => {
            (u128::from(PARAM) << 24 | u128::from_le_bytes(load_short(n)) << 32).to_le_bytes()
        }
        _ => {
            // `at` is 16 for an empty nonce: no nonce bits, where `<< 128` would overflow.
            let at = BLOCK - nonce.len().min(BLOCK - 1);
            let n = u128::from_le_bytes(load_short(nonce))
                .checked_shl(8 * at as u32)
                .unwrap_or(0);
            (u128::from(PARAM) << (8 * (at - 1)) | n).to_le_bytes()
        }
    }
}

/// `s` with the 64-bit big-endian `len` xored into its last 8 bytes.
fn xor_len(s: &Block, len: usize) -> Block {
    (u128::from_be_bytes(*s) ^ u128::from(len as u64)).to_be_bytes()
}

impl Scheme for Silc {
    const FINAL_CALLS: usize = 2;

    fn ad_steps(ad_len: usize) -> usize {
        1 + ad_len.div_ceil(BLOCK)
    }

    #[inline]
    fn ad_input(state: &Block, ad: &[u8], nonce: &[u8], step: usize) -> Block {
        if step == 0 {
            return nonce_block(nonce);
        }
        let rest = &ad[BLOCK * (step - 1)..];
        let a = match rest.first_chunk::<BLOCK>() {
            Some(full) => *full,
            None => load_short(rest),
        };
        xor(state, &a)
    }

    fn ad_output(out: &Block, _ad: &[u8], _step: usize) -> Block {
        *out
    }

    fn v(state: &Block, ad: &[u8], _nonce: &[u8]) -> Block {
        g(&xor_len(state, ad.len()))
    }

    fn mac_seed(v: &Block) -> Block {
        g(v)
    }

    fn final_input(v: &Block, last: Option<(&Block, usize)>) -> Block {
        match last {
            // An empty message: the MAC chain's first call, T = E(g(V)), is the first
            // finalisation call.
            None => g(v),
            // The last block's MAC call: T ^ C_m, zero-padded.
            Some((u, _)) => *u,
        }
    }

    fn final_second(out: &Block, msg_len: usize) -> Block {
        g(&xor_len(out, msg_len))
    }
}

/// Runs AES-SILC `op` over validated jobs.
pub(crate) fn run(
    k: Kernels,
    jobs: &mut [Prepared<'_>],
    results: &mut [JobResult],
    op: Op,
    path: Path,
) {
    run_scheme::<Silc>(k, jobs, results, op, path);
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The nonce block against its definition, `0^(15 - |N|) ‖ PARAM ‖ N`, for every nonce
    /// length the block holds (validation admits 12 only).
    #[test]
    fn nonce_block_is_param_then_nonce() {
        for len in 0..BLOCK {
            let nonce: Vec<u8> = (0..len as u8).map(|b| 0xa0 ^ b.wrapping_mul(37)).collect();
            let mut want = [0u8; BLOCK];
            want[BLOCK - 1 - len] = PARAM;
            want[BLOCK - len..].copy_from_slice(&nonce);
            assert_eq!(nonce_block(&nonce), want, "nonce of {len} bytes");
            assert_eq!(Silc::ad_input(&[0x55; BLOCK], b"ad", &nonce, 0), want);
        }
    }
}
