//! `aes128-poet-gf`: POET v1 with the GF(2^128)-multiplication hash (SUPERCOP
//! `aes128poetv1gf128mul`, 2014-05-25 release). The construction, the batching and the
//! shared code are in `poet.rs`; this file holds what v1 with field multiplications has of
//! its own:
//!
//! * the hash keys: `F_top(x) = x·L_t`, `F_bot(y) = y·L_b` in the GCM field (SP 800-38D bit
//!   order: byte 0's most significant bit is the constant term, as the reference's
//!   `1 = 0x80…`), `L_t = E_key(2)`, `L_b = E_key(3)`, each held as a [`GhashKey`];
//! * v1's header body: every block of `AD ‖ nonce` but the last under the masks
//!   `L, x·L, x^2·L, ...`; the last block (whole, or 10*-padded) is not encrypted on its own but
//!   xored, with the mask `3·m` (whole) or `5·m` (padded), into the sum before `τ = E_K(·)`;
//! * the passes over the whole blocks with a multiplication for `F`: the chain
//!   `x_i = x_{i-1}·L ⊕ M_i` (a Horner chain with every intermediate value written out; no
//!   AES call, so nothing for the AES pipeline to wait on: on the batch path the comb plan's
//!   windows advance up to `P` messages' chains side by side in one field-multiplier loop,
//!   so that many independent products are in flight), and the other hash
//!   `out_i = in_i ⊕ in_{i-1}·L`, independent products. Both run in the `gf128` chain
//!   kernels, the values in registers, not through one `mul_h` call per block.
//!
//! The middle layer `E_K` / `E_K^{-1}` is the wide ECB kernel, as for v2.

use crate::aes::Kernels;
use crate::block::{pad10, wipe, xor, Block, IoPtrs, BLOCK};
use crate::gf128::{mul_chains, GhashKey, MulLane};
use crate::modes::poet::{header_block, run_poet, xtime, Side};
use crate::modes::Prepared;
use crate::sched::exec::Path;
use crate::sched::plan::plan;
use crate::{JobResult, Op};

/// `aes128-poet-gf`: POET v1 with the field-multiplication hash.
pub(crate) fn run(
    k: Kernels,
    jobs: &mut [Prepared<'_>],
    results: &mut [JobResult],
    op: Op,
    path: Path,
) {
    run_poet::<true>(k, jobs, results, op, path);
}

/// v1's hash keys: multiplication by `L_t` (top chain) and `L_b` (bottom chain). A
/// [`GhashKey`] overwrites its powers on drop.
pub(crate) struct GfHash {
    top: GhashKey,
    bot: GhashKey,
}

impl GfHash {
    pub(crate) fn new(lt: &Block, lb: &Block) -> GfHash {
        GfHash {
            top: GhashKey::new(lt),
            bot: GhashKey::new(lb),
        }
    }

    pub(crate) fn side(&self, side: Side) -> &GhashKey {
        match side {
            Side::Top => &self.top,
            Side::Bot => &self.bot,
        }
    }
}

/// v1's header body (see the module docs): each `B_i ⊕ x^i·L` but the last goes to `emit`;
/// returns `Z`, the last block xored with its mask.
pub(crate) fn header_body(
    l: &Block,
    ad: &[u8],
    nonce: &[u8],
    emit: &mut impl FnMut(Block),
) -> Block {
    let hl = ad.len() + nonce.len(); // >= 16: the nonce is 16 bytes
    let mut m = *l;
    let mut off = 0;
    while hl - off > BLOCK {
        emit(xor(&header_block(ad, nonce, off, BLOCK), &m));
        m = xtime(&m);
        off += BLOCK;
    }
    let n = hl - off;
    let mut last = header_block(ad, nonce, off, n);
    // 3·m = m ⊕ x·m for a whole last block; 5·m = m ⊕ x^2·m for a padded one.
    let mut mask = if n == BLOCK {
        xor(&m, &xtime(&m))
    } else {
        last = pad10(&last, n);
        xor(&m, &xtime(&xtime(&m)))
    };
    let z = xor(&last, &mask);
    wipe(&mut m);
    wipe(&mut mask);
    wipe(&mut last);
    z
}

/// One message's Horner chain for pass A: `x ← x·g ⊕ M_i` over its first `blocks` input
/// blocks, each `x` written to output block `i`.
pub(crate) struct GfLane<'a> {
    pub(crate) io: IoPtrs<'a>,
    pub(crate) g: &'a GhashKey,
    /// The initial value; after [`chain`], the value after the last block.
    pub(crate) x: Block,
    pub(crate) blocks: usize,
}

/// Pass A with the field hash over every lane (also COBRA-R's multiplication chain).
///
/// Single path: one [`GhashKey::mul_chain`] call per message, the chain value in a register
/// throughout (a single chain is latency-bound: one product's full latency per block).
///
/// Batch path: the comb plan with the path's `P` (messages sorted by length, groups of `P`,
/// windows of equal progress), and in each window one [`mul_chains`] call over the window's
/// lanes, which advances them one block each per iteration: `P` independent products in
/// flight instead of one, so the multiplier runs at its throughput. Windows with more lanes
/// than the kernel keeps in registers run as several loops (`gf128::CHAIN_LANES`).
pub(crate) fn chain(lanes: &mut [GfLane<'_>], path: Path) {
    match path {
        Path::Comb { lanes: p } if lanes.len() > 1 => {
            let lens: Vec<usize> = lanes.iter().map(|l| l.blocks).collect();
            let plan = plan(&lens, p);
            // The lanes in plan order: a window's lanes (the first `lanes` members of its
            // group) are then one contiguous run, handed to the kernel as a slice.
            let mut sorted: Vec<MulLane<'_>> = plan
                .order
                .iter()
                .map(|&i| MulLane {
                    key: lanes[i].g,
                    x: lanes[i].x,
                    io: lanes[i].io,
                })
                .collect();
            for g in &plan.groups {
                let members = &mut sorted[g.members.clone()];
                let mut done = 0;
                for w in plan.windows_of(g) {
                    mul_chains(&mut members[..w.lanes], done, w.blocks);
                    done += w.blocks;
                }
            }
            for (&i, l) in plan.order.iter().zip(&mut sorted) {
                lanes[i].x = l.x;
                wipe(&mut l.x);
            }
        }
        _ => {
            for lane in lanes.iter_mut() {
                lane.g.mul_chain(&mut lane.x, &lane.io, 0, lane.blocks);
            }
        }
    }
}

/// Pass C with the field hash, in place over whole blocks: `out_i = in_i ⊕ in_{i-1}·g`,
/// `in_{-1} = iv`. The products are independent of each other: [`GhashKey::mul_each`] keeps
/// several in flight.
pub(crate) fn unchain(buf: &mut [u8], g: &GhashKey, iv: &Block) {
    let (blocks, _) = buf.as_chunks_mut::<BLOCK>();
    g.mul_each(iv, blocks);
}
