//! CMAC (SP 800-38B, RFC 4493), tags of 1..=16 bytes.
//!
//! CBC-MAC over all blocks but the last is one dependent chain per message (comb-scheduled);
//! the last block, xored with K1 (complete) or padded 10* and xored with K2, is encrypted for
//! every job in one batched call. Verification compares in constant time.

use crate::aes::AesKey;
use crate::aes::{ChainRule, Kernels};
use crate::block::{pad10, store_short, tag_matches, xor, Block, BLOCK};
use crate::modes::{Prepared, TagIo};
use crate::sched::exec::{run_chain, Path};
use crate::Error;
use crate::JobResult;

pub(crate) struct CbcMac;

impl ChainRule for CbcMac {
    const INPUT_XORS_DATA: bool = true;
    const CHAIN_XORS_DATA: bool = false;
    const WRITES_OUTPUT: bool = false;
    const OUTPUT_XORS_DATA: bool = false;
}

/// Blocks before the last one (the last one is never empty unless the message is).
fn body_blocks(len: usize) -> usize {
    len.saturating_sub(1) / BLOCK
}

pub(crate) fn run(k: Kernels, jobs: &mut [Prepared<'_>], results: &mut [JobResult], path: Path) {
    for job in jobs.iter_mut() {
        job.lane.blocks = body_blocks(job.lane.io.len);
    }
    run_chain::<CbcMac, _>(k, jobs, path);
    let mut last: Vec<Block> = Vec::with_capacity(jobs.len());
    for lane in jobs.iter().map(|j| &j.lane) {
        let off = BLOCK * lane.blocks;
        let rest = lane.io.len - off;
        // M_n* = pad10(M_n) with K2, or M_n with K1 (whole), in registers (see `pad10`).
        let b = pad10(&lane.io.read_from(off), rest);
        let subkey = if rest == BLOCK {
            &lane.key.cmac_k1
        } else {
            &lane.key.cmac_k2
        };
        last.push(xor(&xor(&b, &lane.chain), subkey));
    }
    let keys: Vec<&AesKey> = jobs.iter().map(|j| j.lane.key).collect();
    k.encrypt_many(&mut last, &keys);
    for (job, tag) in jobs.iter_mut().zip(&mut last) {
        results[job.index] = match &mut job.tag {
            TagIo::Out(out) => {
                store_short(out, tag);
                Ok(0)
            }
            TagIo::In(expected) => {
                if tag_matches(tag, expected) {
                    Ok(0)
                } else {
                    Err(Error::AuthenticationFailed)
                }
            }
            TagIo::None => Err(Error::TagMisuse),
        };
        crate::block::wipe(tag);
    }
}
