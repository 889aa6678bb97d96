//! CMAC (SP 800-38B, RFC 4493), tags of 1..=16 bytes.
//!
//! CBC-MAC over all blocks but the last is one dependent chain per message (comb-scheduled);
//! the last block, xored with K1 (complete) or padded 10* and xored with K2, is encrypted for
//! the jobs of each comb group in one batched call as soon as their chains are done.
//! Verification compares in constant time.

use crate::aes::{ChainRule, Kernels};
use crate::block::{pad10, xor, Block, BLOCK};
use crate::modes::{encrypt_per_job, finish_tag, Prepared};
use crate::sched::exec::{run_chain_then, Path};
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
            // The slot is written in place ([`finish_tag`] with `set_ok`), not replaced by a
            // result built on the stack: copied in 16-byte loads right after its narrower
            // stores, that value waited for them to commit: in one build of the crate on the
            // Intel VM (how the codegen units fall decides), 47% of this closure's samples,
            // which fell from 1099 to 542 of a `perf record` of CMAC on the realistic mix. A
            // MAC has no output to zero on a mismatch: its result length is 0.
            finish_tag(job, tag, &mut results[job.index], 0);
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
