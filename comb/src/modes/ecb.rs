//! ECB (SP 800-38A §6.1): every block on its own. Parallel in both directions, so both paths
//! run the wide kernel over each message.

use crate::aes::{Kernels, Parallel};
use crate::block::BLOCK;
use crate::modes::{set_ok, Prepared};
use crate::JobResult;
use crate::Op;

pub(crate) fn run(k: Kernels, jobs: &mut [Prepared<'_>], results: &mut [JobResult], op: Op) {
    let mode = match op {
        Op::Encrypt => Parallel::EcbEncrypt,
        Op::Decrypt => Parallel::EcbDecrypt,
    };
    for job in jobs {
        k.parallel(
            mode,
            job.lane.key,
            &job.lane.io,
            job.lane.io.len / BLOCK,
            &[0; BLOCK],
        );
        set_ok(&mut results[job.index], job.lane.io.len);
    }
}
