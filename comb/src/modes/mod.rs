//! Modes of operation, one file each. A mode takes validated jobs ([`Prepared`]) and a
//! [`Path`] and sets each job's result; the same code serves the single-message path (each
//! job alone, one after another) and the batch path (the comb scheduler for chained work,
//! then initialisation/finalisation batched across all jobs).

pub(crate) mod cbc;
pub(crate) mod ccm;
pub(crate) mod cfb;
pub(crate) mod cloc;
pub(crate) mod cmac;
pub(crate) mod cobra_r;
pub(crate) mod copa;
pub(crate) mod ctr;
pub(crate) mod ecb;
pub(crate) mod gcm;
pub(crate) mod jambu;
pub(crate) mod julius;
pub(crate) mod mcoe_g;
pub(crate) mod ocb3;
pub(crate) mod ofb;
pub(crate) mod otr;
pub(crate) mod poet;
pub(crate) mod poet_gf;
pub(crate) mod silc;

use crate::aes::{ChainLane, Kernels};
use crate::block::{load_short, store_short, tag_matches, Block, BLOCK};
use crate::sched::exec::{HasLane, Path};
use crate::{Algorithm, Error, JobResult, Op};

/// The tag side of a validated job.
#[derive(Debug)]
pub(crate) enum TagIo<'a> {
    None,
    Out(&'a mut [u8]),
    In(&'a [u8]),
}

/// A job that passed validation: lengths and buffers fit the algorithm and operation.
#[derive(Debug)]
pub(crate) struct Prepared<'a> {
    /// Key, input/output, and `chain` = the IV / initial counter block (zeros where the mode
    /// has none; GCM's pre-counter block `J0`); `blocks` = the whole blocks of the input,
    /// which a mode may lower (CMAC keeps its last block for the finalisation). Chained modes
    /// run the scheduler directly on these lanes.
    pub(crate) lane: ChainLane<'a>,
    pub(crate) tag: TagIo<'a>,
    /// Associated data (AEAD modes; empty for the others).
    pub(crate) ad: &'a [u8],
    /// The nonce / IV exactly as the caller gave it (length validated for the algorithm).
    /// The SP 800-38A modes use `lane.chain` instead; the AEAD modes other than GCM build
    /// their initial state from this.
    pub(crate) nonce: &'a [u8],
    /// The job's position in the caller's batch: where the mode writes its result.
    pub(crate) index: usize,
}

impl<'a> HasLane<'a> for Prepared<'a> {
    fn lane(&self) -> &ChainLane<'a> {
        &self.lane
    }
    fn lane_mut(&mut self) -> &mut ChainLane<'a> {
        &mut self.lane
    }
}

impl Drop for Prepared<'_> {
    fn drop(&mut self) {
        crate::block::wipe(&mut self.lane.chain);
    }
}

/// `num2str(τ mod 128, 7) ‖ 0* ‖ 1 ‖ N` as a big-endian integer, τ the tag length in bits:
/// OCB3's nonce block (RFC 7253 §4.2) and OTR's `Format(τ, N)`, which are the same. `nonce`
/// is 1..=15 bytes (validated; of a longer one the last 15 count). The nonce is read with
/// [`load_short`]'s word loads: copied byte by byte into a block, the 16-byte load of that
/// block waited on the copy's stores (OTR on the realistic mix: the costliest instruction
/// outside its kernels).
pub(crate) fn format_nonce(nonce: &[u8], tag_len: usize) -> u128 {
    let taglen_bits = ((8 * tag_len) % 128) as u128;
    // The usual 12-byte nonce with constant shifts: the general form's three variable u128
    // shifts took a quarter of OTR's per-job setup on the realistic mix (Zen 5, perf).
    if let Ok(n12) = <&[u8; 12]>::try_from(nonce) {
        let (hi, lo) = n12.split_at(8);
        let hi = u64::from_be_bytes(hi.try_into().unwrap_or([0; 8]));
        let lo = u32::from_be_bytes(lo.try_into().unwrap_or([0; 4]));
        return u128::from(hi) << 32 | u128::from(lo) | 1u128 << 96 | taglen_bits << 121;
    }
    let n = nonce.len().min(BLOCK - 1);
    // Byte k of the nonce at bits 8k; reversed, its last byte is the lowest and its first
    // the highest, which the shift brings down to bit 8n - 8.
    let v = u128::from_le_bytes(load_short(&nonce[nonce.len() - n..]))
        .swap_bytes()
        .checked_shr(8 * (BLOCK - n) as u32)
        .unwrap_or(0);
    v | 1u128 << (8 * n) | taglen_bits << 121
}

/// Sets a job's result to `Ok(len)`. The engine fills every slot with `Ok(0)` before a mode
/// runs, so this is one store into the payload. Assigning a fresh `Ok(len)` instead let LLVM
/// build the 32-byte value on the stack with two 8-byte stores and copy it out with 16-byte
/// loads, which cannot be forwarded from narrower stores: a stall per job (after an unrelated
/// change, CBC encryption's result loop took 3% of its samples, 6% slower).
#[inline(always)]
pub(crate) fn set_ok(slot: &mut JobResult, len: usize) {
    match slot {
        Ok(n) => *n = len,
        other => *other = Ok(len),
    }
}

/// Finishes an authenticated job whose full tag block is `t`, writing its result into `slot`
/// in place (see [`set_ok`]): encrypting, `MSB(t)` goes out as the tag and the result is
/// `Ok(len)`; decrypting, the received tag is compared with `MSB(t)` in constant time and on
/// a mismatch the output's first `len` bytes are zeroed (no plaintext released) and the
/// result is [`Error::AuthenticationFailed`]. A job without a tag (excluded by validation)
/// gets [`Error::TagMisuse`] and its output zeroed too.
///
/// Writing the slot in place matters: OTR, which built the result and assigned it, ran 64-byte
/// batches 10% faster with this (perf samples of the mode's code, 2242-2247 -> 2019-2020, two
/// runs each on the Intel VM), CMAC 3%. An `#[inline]` hint measured slower than the
/// compiler's own choice (OTR 2019-2020 -> 2074-2162).
pub(crate) fn finish_tag(job: &mut Prepared<'_>, t: &Block, slot: &mut JobResult, len: usize) {
    finish_tag_then(job, t, slot, len, || {});
}

/// [`finish_tag`], calling `verified` when a received tag matches, before the result is set:
/// where the plaintext is made only then (CLOC's and SILC's decryption xors its keystream
/// in). Always inlined, so [`finish_tag`]'s own body stays what it was.
#[inline(always)]
pub(crate) fn finish_tag_then(
    job: &mut Prepared<'_>,
    t: &Block,
    slot: &mut JobResult,
    len: usize,
    verified: impl FnOnce(),
) {
    match &mut job.tag {
        TagIo::Out(out) => {
            store_short(out, t);
            set_ok(slot, len);
        }
        TagIo::In(expected) => {
            if tag_matches(t, expected) {
                verified();
                set_ok(slot, len);
            } else {
                job.lane.io.zero_output(len);
                *slot = Err(Error::AuthenticationFailed);
            }
        }
        TagIo::None => {
            job.lane.io.zero_output(len);
            *slot = Err(Error::TagMisuse);
        }
    }
}

/// Runs `alg`/`op` over validated jobs, writing `results[job.index]` for each. With
/// `Path::Single` each job is processed on its own from start to finish (the sequential
/// baseline); with `Path::Comb` the whole slice is one batch.
pub(crate) fn run(
    k: Kernels,
    alg: Algorithm,
    op: Op,
    jobs: &mut [Prepared<'_>],
    results: &mut [JobResult],
    path: Path,
) {
    if path == Path::Single && jobs.len() > 1 {
        for job in jobs.chunks_mut(1) {
            run(k, alg, op, job, results, path);
        }
        return;
    }
    match (alg, op) {
        (Algorithm::AesEcb, op) => ecb::run(k, jobs, results, op),
        (Algorithm::AesCbc, Op::Encrypt) => cbc::encrypt(k, jobs, results, path, false),
        (Algorithm::AesCbc, Op::Decrypt) => cbc::decrypt(k, jobs, results, false),
        (Algorithm::AesCbcPkcs7, Op::Encrypt) => cbc::encrypt(k, jobs, results, path, true),
        (Algorithm::AesCbcPkcs7, Op::Decrypt) => cbc::decrypt(k, jobs, results, true),
        (Algorithm::AesCtr, _) => ctr::run(k, jobs, results),
        (Algorithm::AesCfb128, Op::Encrypt) => cfb::encrypt(k, jobs, results, path),
        (Algorithm::AesCfb128, Op::Decrypt) => cfb::decrypt(k, jobs, results),
        (Algorithm::AesOfb, _) => ofb::run(k, jobs, results, path),
        (Algorithm::AesCmac, _) => cmac::run(k, jobs, results, path),
        (Algorithm::AesGcm, op) => gcm::run(k, jobs, results, op),
        (Algorithm::AesCcm, op) => ccm::run(k, jobs, results, op, path),
        (Algorithm::AesOcb3, op) => ocb3::run(k, jobs, results, op, path),
        (Algorithm::Aes128Otr, op) => otr::run(k, jobs, results, op, path),
        (Algorithm::Aes128Cloc, op) => cloc::run(k, jobs, results, op, path),
        (Algorithm::Aes128Silc, op) => silc::run(k, jobs, results, op, path),
        (Algorithm::Aes128Jambu, op) => jambu::run(k, jobs, results, op, path),
        (Algorithm::Aes128McoeG, op) => mcoe_g::run(k, jobs, results, op, path),
        (Algorithm::Aes128Copa, op) => copa::run(k, jobs, results, op, path),
        (Algorithm::Aes128Poet, op) => poet::run(k, jobs, results, op, path),
        (Algorithm::Aes128PoetGf, op) => poet_gf::run(k, jobs, results, op, path),
        (Algorithm::Aes128Julius, op) => julius::run(k, jobs, results, op, path),
        (Algorithm::Aes128CobraR, op) => cobra_r::run(k, jobs, results, op, path),
    }
}

/// Lanes per batched cipher call of [`encrypt_per_job`] (its blocks and keys on the stack).
const PER_CALL: usize = 32;

/// For each item `items[i]`, `i` in `idx`: `E(make(item))` under the lane's key, in batched
/// calls of up to [`PER_CALL`] blocks (one job alone: the one-block cipher), handed to
/// `take(item, block)`, then wiped. The chained modes' per-message finishing work (tags, the
/// keystream of a partial last block), run per comb group from
/// [`run_chain_then`](crate::sched::exec::run_chain_then).
pub(crate) fn encrypt_per_job<'a, L: HasLane<'a>>(
    k: Kernels,
    items: &mut [L],
    idx: &[usize],
    make: impl Fn(&L) -> Block,
    mut take: impl FnMut(&mut L, &Block),
) {
    // One job (the single-message path calls this once per message): the one-block cipher,
    // without the stack arrays and the batched kernel's dispatch. Intel VM, realistic mix,
    // sequential engine, alternated builds: CFB 1.32 -> 1.20-1.23 TSC cycles/byte, OFB 1.32
    // -> 1.19-1.23, CMAC 1.31-1.32 -> 1.18-1.21 (CBC, which has no such block, unchanged).
    if let [i] = *idx {
        let item = &mut items[i];
        let mut b = make(item);
        item.lane().key.encrypt_block(&mut b);
        take(item, &b);
        crate::block::wipe(&mut b);
        return;
    }
    for some in idx.chunks(PER_CALL) {
        let n = some.len();
        let mut blocks = [[0u8; BLOCK]; PER_CALL];
        let mut keys = [items[some[0]].lane().key; PER_CALL];
        for ((b, key), &i) in blocks.iter_mut().zip(keys.iter_mut()).zip(some) {
            *b = make(&items[i]);
            *key = items[i].lane().key;
        }
        k.encrypt_many(&mut blocks[..n], &keys[..n]);
        for (b, &i) in blocks.iter_mut().zip(some) {
            take(&mut items[i], b);
            crate::block::wipe(b);
        }
    }
}

/// For every item `items[i]`, `i` in `members`, whose message is not a whole number of
/// blocks: keystream `E(chain)` xored into the partial last block (CFB, OFB and CLOC, both
/// directions), `chain` being the lane's next cipher input after its whole blocks.
pub(crate) fn keystream_tails<'a, L: HasLane<'a>>(
    k: Kernels,
    items: &mut [L],
    members: impl IntoIterator<Item = usize>,
) {
    let mut tails = [0usize; PER_CALL];
    let mut members = members.into_iter();
    // Up to PER_CALL tails per pass; a pass that finds none has used up `members`.
    loop {
        let mut n = 0;
        for i in members.by_ref() {
            if !items[i].lane().io.len.is_multiple_of(BLOCK) {
                tails[n] = i;
                n += 1;
                if n == PER_CALL {
                    break;
                }
            }
        }
        if n == 0 {
            return;
        }
        let chain = |item: &L| item.lane().chain;
        encrypt_per_job(k, items, &tails[..n], chain, |item, ks| {
            item.lane().io.xor_tail(ks);
        });
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Against the construction byte by byte, for every nonce length and several tag lengths.
    #[test]
    fn format_nonce_matches_its_definition() {
        let nonce: Vec<u8> = (0..20u8).map(|i| i.wrapping_mul(37) ^ 0xa5).collect();
        for n in 1usize..=17 {
            for tag_len in [0, 1, 8, 12, 15, 16, 17] {
                let used = &nonce[n.saturating_sub(15)..n];
                let mut b = [0u8; BLOCK];
                b[BLOCK - used.len()..].copy_from_slice(used);
                b[BLOCK - used.len() - 1] |= 1;
                b[0] |= (((8 * tag_len) % 128) << 1) as u8;
                let got = format_nonce(&nonce[..n], tag_len).to_be_bytes();
                assert_eq!(got, b, "nonce length {n}, tag length {tag_len}");
            }
        }
    }
}
