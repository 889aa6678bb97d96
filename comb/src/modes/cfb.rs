//! CFB128 (SP 800-38A §6.3, s = 128): `C_i = P_i ^ E(C_{i-1})`. Encryption is one dependent
//! chain per message (comb-scheduled); decryption is parallel (wide kernel). A partial last
//! block xors a batched keystream block in both directions.

use crate::aes::{ChainRule, Kernels, Parallel};
use crate::modes::{keystream_tails, set_ok, Prepared};
use crate::sched::exec::{run_chain_then, Path};
use crate::JobResult;

pub(crate) struct CfbEncrypt;

impl ChainRule for CfbEncrypt {
    const INPUT_XORS_DATA: bool = false;
    const CHAIN_XORS_DATA: bool = true;
    const WRITES_OUTPUT: bool = true;
    const OUTPUT_XORS_DATA: bool = true;
}

pub(crate) fn encrypt(
    k: Kernels,
    jobs: &mut [Prepared<'_>],
    results: &mut [JobResult],
    path: Path,
) {
    // Each comb group's tails right after its chains, while their last blocks are in cache.
    run_chain_then::<CfbEncrypt, _>(k, jobs, path, |jobs, members| {
        keystream_tails(k, jobs, members.iter().copied())
    });
    for job in jobs {
        set_ok(&mut results[job.index], job.lane.io.len);
    }
}

pub(crate) fn decrypt(k: Kernels, jobs: &mut [Prepared<'_>], results: &mut [JobResult]) {
    for job in jobs.iter_mut() {
        let l = &mut job.lane;
        l.chain = k.parallel(Parallel::CfbDecrypt, l.key, &l.io, l.blocks, &l.chain);
    }
    keystream_tails(k, jobs, 0..jobs.len());
    for job in jobs {
        set_ok(&mut results[job.index], job.lane.io.len);
    }
}
