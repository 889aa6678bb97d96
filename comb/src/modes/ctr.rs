//! CTR (SP 800-38A §6.5): keystream `E(T_0 + i)`, the whole 128-bit block a big-endian
//! counter that wraps mod 2^128 (so it carries across 32 and 64 bits). Parallel: the wide
//! kernel per message; a partial last block is allowed. Encryption = decryption.

use crate::aes::{CounterWidth, Kernels};
use crate::modes::{set_ok, Prepared};
use crate::JobResult;

pub(crate) fn run(k: Kernels, jobs: &mut [Prepared<'_>], results: &mut [JobResult]) {
    for job in jobs {
        k.ctr(
            job.lane.key,
            &job.lane.io,
            &job.lane.chain,
            CounterWidth::Full128,
        );
        set_ok(&mut results[job.index], job.lane.io.len);
    }
}
