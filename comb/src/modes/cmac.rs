//! CMAC (SP 800-38B, RFC 4493), tags of 1..=16 bytes.
//!
//! CBC-MAC over all blocks but the last is one dependent chain per message (comb-scheduled);
//! the last block, xored with K1 (complete) or padded 10* and xored with K2, is encrypted for
//! the jobs of each comb group in one batched call as soon as their chains are done.
//! Verification compares in constant time.

use crate::aes::{ChainRule, Kernels};
use crate::block::{pad10, store_short, tag_matches, xor, Block, BLOCK};
use crate::modes::{encrypt_per_job, Prepared, TagIo};
use crate::sched::exec::{run_chain_then, Path};
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
    // Each comb group's last blocks and tags right after its chains, while the blocks are in
    // cache.
    run_chain_then::<CbcMac, _>(k, jobs, path, |jobs, members| {
        encrypt_per_job(k, jobs, members, last_block, |job, tag| {
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
        });
    });
}

/// The cipher input of the tag, its chain final: `M_n* ⊕ chain`, with `M_n* = M_n ⊕ K1` for
/// a whole last block, `pad10(M_n) ⊕ K2` otherwise (in registers, see `pad10`).
fn last_block(job: &Prepared<'_>) -> Block {
    let lane = &job.lane;
    let off = BLOCK * lane.blocks;
    let rest = lane.io.len - off;
    let m = pad10(&lane.io.read_from(off), rest);
    let subkey = if rest == BLOCK {
        &lane.key.cmac_k1
    } else {
        &lane.key.cmac_k2
    };
    xor(&xor(&m, &lane.chain), subkey)
}
