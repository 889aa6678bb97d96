//! CFB128 (SP 800-38A §6.3, s = 128): `C_i = P_i ^ E(C_{i-1})`. Encryption is one dependent
//! chain per message (comb-scheduled); decryption is parallel (wide kernel). A partial last
//! block xors a batched keystream block in both directions.

use crate::aes::ni::{self, ChainRule, Parallel};
use crate::block::BLOCK;
use crate::cpu::NiToken;
use crate::modes::{chain_lanes, keystream_tails, Prepared};
use crate::sched::exec::{run_chain, Path};
use crate::JobResult;

struct CfbEncrypt;

impl ChainRule for CfbEncrypt {
    const INPUT_XORS_DATA: bool = false;
    const CHAIN_XORS_DATA: bool = true;
    const WRITES_OUTPUT: bool = true;
    const OUTPUT_XORS_DATA: bool = true;
}

pub(crate) fn encrypt(
    t: NiToken,
    jobs: &mut [Prepared<'_>],
    results: &mut [JobResult],
    path: Path,
) {
    let mut lanes = chain_lanes(jobs, |j| j.io.len / BLOCK);
    run_chain::<CfbEncrypt>(t, &mut lanes, path);
    let chains: Vec<_> = lanes.iter().map(|l| l.chain).collect();
    keystream_tails(t, jobs, &chains);
    for job in jobs {
        results[job.index] = Ok(job.io.len);
    }
}

pub(crate) fn decrypt(t: NiToken, jobs: &mut [Prepared<'_>], results: &mut [JobResult]) {
    let chains: Vec<_> = jobs
        .iter()
        .map(|j| {
            ni::parallel(
                t,
                Parallel::CfbDecrypt,
                j.key,
                &j.io,
                j.io.len / BLOCK,
                &j.iv,
            )
        })
        .collect();
    keystream_tails(t, jobs, &chains);
    for job in jobs {
        results[job.index] = Ok(job.io.len);
    }
}
