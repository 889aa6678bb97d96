//! CBC (SP 800-38A §6.2), whole blocks or with PKCS#7 padding (RFC 5652 §6.3).
//!
//! Encryption is one dependent chain per message: whole blocks go through the comb
//! scheduler, and the padded last block of every job is encrypted in one batched call.
//! Decryption is parallel: the wide kernel per message, then (PKCS#7) a constant-time
//! padding check whose failure is one error kind and zeroes the output.

use crate::aes::AesKey;
use crate::aes::{ChainRule, Kernels, Parallel};
use crate::block::{merge, xor, Block, BLOCK};
use crate::modes::{set_ok, Prepared};
use crate::sched::exec::{run_chain, Path};
use crate::Error;
use crate::JobResult;

pub(crate) struct CbcEncrypt;

impl ChainRule for CbcEncrypt {
    const INPUT_XORS_DATA: bool = true;
    const CHAIN_XORS_DATA: bool = false;
    const WRITES_OUTPUT: bool = true;
    const OUTPUT_XORS_DATA: bool = false;
}

pub(crate) fn encrypt(
    k: Kernels,
    jobs: &mut [Prepared<'_>],
    results: &mut [JobResult],
    path: Path,
    pkcs7: bool,
) {
    run_chain::<CbcEncrypt, _>(k, jobs, path);
    if !pkcs7 {
        for job in jobs {
            set_ok(&mut results[job.index], job.lane.io.len);
        }
        return;
    }
    // Last block: the 0..15 remaining bytes, padded with their count's complement to 16.
    let mut last: Vec<Block> = Vec::with_capacity(jobs.len());
    for lane in jobs.iter().map(|j| &j.lane) {
        let off = BLOCK * lane.blocks;
        let rest = lane.io.len - off;
        // PKCS#7: bytes rest..16 all BLOCK - rest. Merged in registers: byte stores into the
        // block, then its 16-byte load by the cipher call, stalled store forwarding.
        let b = merge(
            &lane.io.read_from(off),
            &[(BLOCK - rest) as u8; BLOCK],
            rest,
        );
        last.push(xor(&b, &lane.chain));
    }
    let keys: Vec<&AesKey> = jobs.iter().map(|j| j.lane.key).collect();
    k.encrypt_many(&mut last, &keys);
    for (job, b) in jobs.iter().zip(&last) {
        let off = BLOCK * job.lane.blocks;
        job.lane.io.write_block(off, b);
        set_ok(&mut results[job.index], off + BLOCK);
    }
}

pub(crate) fn decrypt(
    k: Kernels,
    jobs: &mut [Prepared<'_>],
    results: &mut [JobResult],
    pkcs7: bool,
) {
    for job in jobs {
        let l = &mut job.lane;
        let n = l.io.len;
        k.parallel(Parallel::CbcDecrypt, l.key, &l.io, n / BLOCK, &l.chain);
        if !pkcs7 {
            set_ok(&mut results[job.index], n);
            continue;
        }
        let out = l.io.output(n);
        match unpad_len(out) {
            Some(len) => {
                zeroize::Zeroize::zeroize(&mut out[len..]);
                set_ok(&mut results[job.index], len);
            }
            None => {
                l.io.zero_output(n);
                results[job.index] = Err(Error::InvalidPadding);
            }
        }
    }
}

/// Length without PKCS#7 padding, checked in constant time over the last block: the padding
/// value never steers a branch or an index before it is known to be valid. Plain 32-bit mask
/// arithmetic (`subtle`'s byte comparisons cost ~500 cycles for the 16 bytes here, tripling
/// the cost of decrypting a packet).
fn unpad_len(out: &[u8]) -> Option<usize> {
    if out.len() < BLOCK || !out.len().is_multiple_of(BLOCK) {
        return None;
    }
    let last: &[u8] = &out[out.len() - BLOCK..];
    // 1 if x != 0, else 0, without a branch.
    let nonzero = |x: u32| (x | x.wrapping_neg()) >> 31;
    let v = u32::from(last[BLOCK - 1]);
    let mut bad = (nonzero(v) ^ 1) | ((BLOCK as u32).wrapping_sub(v) >> 31); // v == 0 or v > 16
    for (i, &b) in last.iter().enumerate() {
        // Byte i is padding iff it is among the last v bytes: 15 - i < v.
        let in_pad = ((BLOCK - 1 - i) as u32).wrapping_sub(v) >> 31;
        bad |= in_pad & nonzero(u32::from(b) ^ v);
    }
    (core::hint::black_box(bad) == 0).then(|| out.len() - v as usize)
}

#[cfg(test)]
mod tests {
    use super::unpad_len;

    #[test]
    fn unpad_accepts_every_valid_padding_and_nothing_else() {
        for v in 0u8..=255 {
            for pad_ok in [true, false] {
                let mut b = [0xAAu8; 32];
                let n = usize::from(v).min(16);
                for x in &mut b[32 - n..] {
                    *x = v;
                }
                if !pad_ok && n > 1 {
                    b[32 - n] ^= 1;
                }
                let valid = (1..=16).contains(&v) && (pad_ok || n == 1);
                assert_eq!(unpad_len(&b), valid.then(|| 32 - usize::from(v)), "v={v}");
            }
        }
        assert_eq!(unpad_len(&[]), None);
        assert_eq!(unpad_len(&[1; 15]), None);
    }
}
