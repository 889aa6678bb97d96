//! OFB (SP 800-38A §6.4): `O_i = E(O_{i-1})`, `C_i = P_i ^ O_i`. One dependent chain per
//! message, so whole blocks go through the comb scheduler; a partial last block takes a
//! batched keystream block. Encryption = decryption.

use crate::aes::{ChainRule, Kernels};
use crate::modes::{keystream_tails, set_ok, Prepared};
use crate::sched::exec::{run_chain_then, Path};
use crate::JobResult;

pub(crate) struct Ofb;

impl ChainRule for Ofb {
    const INPUT_XORS_DATA: bool = false;
    const CHAIN_XORS_DATA: bool = false;
    const WRITES_OUTPUT: bool = true;
    const OUTPUT_XORS_DATA: bool = true;
}

pub(crate) fn run(k: Kernels, jobs: &mut [Prepared<'_>], results: &mut [JobResult], path: Path) {
    // Each comb group's tails right after its chains, while their last blocks are in cache.
    run_chain_then::<Ofb, _>(k, jobs, path, |jobs, members| {
        keystream_tails(k, jobs, members.iter().copied())
    });
    for job in jobs {
        set_ok(&mut results[job.index], job.lane.io.len);
    }
}
