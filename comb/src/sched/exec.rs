//! The comb executor: walks the comb schedule (the sorted [`Order`], its
//! groups and their windows, as [`plan`](super::plan::plan) would lay them out) and calls the
//! lane kernel instantiated for each window's lane count, once per window (CLOC's and SILC's
//! ymm kernel instead runs each group's lanes to their own ends, see [`run_cfb_mac`]).

use super::plan::{group_windows, order_by_decreasing_length, Order, MAX_LANES};
use crate::aes::vaes::{self, GroupKeys, PairKey, QuadKey};
use crate::aes::{ni, ChainLane, ChainRule, Kernels, Lanes};
use crate::block::{truncate, wipe, xor, Block, BLOCK};
use crate::cpu::{NiToken, VaesToken, VaesZmmToken};
use core::ops::Range;

/// How the blocks of a set of messages are scheduled.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Path {
    /// One message at a time, each a single dependent chain: our best single-message code.
    Single,
    /// The comb scheduler with parallelism degree `lanes` (1..=32).
    Comb { lanes: usize },
}

/// Widest xmm kernel call. The kernel keeps one state register per lane live across the
/// rounds; with 16 xmm registers, 13 or more lanes spill (measured: 16 lanes ran at 1.4x the
/// cycles/byte of 12 on 2 KiB messages), so wider windows run as several narrower calls of
/// near-equal size (16 lanes: 8 + 8), each of which still fills the AES unit (L·T = 8).
pub(crate) const MAX_KERNEL_LANES: usize = 12;

/// Widest ymm kernel call, in registers (two lanes each): 8 registers, 16 lanes. Eight fill
/// the AES unit (latency 4, about two 256-bit VAESENC per cycle); with 10 or 12 the states,
/// round keys and data no longer fit the 16 ymm registers (measured, realistic mix, CBC: 24
/// lanes in one call of 12 registers 0.61 TSC cycles/byte, as two calls of 6 registers 0.42).
/// Nor do more registers help where they exist: compiled with AVX-512VL (32 ymm registers)
/// and calls of up to 16 registers, the realistic mix on Zen 4 ran CBC at 0.31 with P = 16
/// and 0.42 with P = 32, CMAC and CCM flat from 16 to 32 (0.30-0.32, 0.58-0.60): past 16
/// lanes the window kernel is bound by its instruction throughput, not by AESENC's latency.
pub(crate) const MAX_KERNEL_REGISTERS: usize = 8;

/// Anything that carries a chain lane: the modes' validated jobs, or bare lanes.
pub(crate) trait HasLane<'a> {
    fn lane(&self) -> &ChainLane<'a>;
    fn lane_mut(&mut self) -> &mut ChainLane<'a>;
}

impl<'a> HasLane<'a> for ChainLane<'a> {
    fn lane(&self) -> &ChainLane<'a> {
        self
    }
    fn lane_mut(&mut self) -> &mut ChainLane<'a> {
        self
    }
}

/// Runs the whole-block body of a chained mode over the lanes of `items` (any order, any mix
/// of key sizes). On return every lane's `chain` holds the chaining value after its last
/// block.
pub(crate) fn run_chain<'a, R: ChainRule, L: HasLane<'a>>(k: Kernels, items: &mut [L], path: Path) {
    run_chain_then::<R, L>(k, items, path, |_, _| {});
}

/// [`run_chain`], calling `done(items, members)` as soon as the lanes `items[m]`, `m` in
/// `members`, have their final chaining values: after each comb group (at most `lanes`
/// members), after each item on the single path, after each key size when sizes are mixed.
/// Work on a message's last blocks placed there finds them still in L1, where a pass after the
/// whole batch read them back from L2 (64 messages of about 1.5 KiB, read and written, are
/// some 190 KiB). With that work batched on the stack instead of in three vectors per call,
/// CFB encryption on the realistic mix ran 3-7% faster on a Zen 3 VM, OFB 1-4%.
pub(crate) fn run_chain_then<'a, R: ChainRule, L: HasLane<'a>>(
    k: Kernels,
    items: &mut [L],
    path: Path,
    mut done: impl FnMut(&mut [L], &[usize]),
) {
    // A batch of one has nothing to interleave: skip planning (its allocations are most of
    // the fixed cost of a call).
    let path = if items.len() <= 1 { Path::Single } else { path };
    match path {
        Path::Single => {
            // One dependent chain is latency-bound: the xmm kernel serves every backend.
            for i in 0..items.len() {
                let lane = items[i].lane_mut();
                let blocks = lane.blocks;
                run_window_ni::<R>(k.ni(), core::slice::from_mut(lane), 0, blocks);
                done(items, &[i]);
            }
        }
        Path::Comb { lanes: p } => {
            let rounds0 = items.first().map_or(0, |i| i.lane().key.rounds);
            if items.iter().all(|i| i.lane().key.rounds == rounds0) {
                run_comb::<R, L>(k, items, p, &mut done);
            } else {
                // Lanes of one kernel call run in lockstep, so they need the same round count:
                // schedule each key size on its own.
                for rounds in [10, 12, 14] {
                    let idx: Vec<usize> = (0..items.len())
                        .filter(|&i| items[i].lane().key.rounds == rounds)
                        .collect();
                    let mut part = Lanes(idx.iter().map(|&i| *items[i].lane()).collect());
                    run_comb::<R, ChainLane<'a>>(k, &mut part, p, &mut |_, _| {});
                    for (&i, l) in idx.iter().zip(part.iter()) {
                        items[i].lane_mut().chain = l.chain;
                    }
                    done(items, &idx);
                }
            }
        }
    }
}

/// Algorithm 1 over lanes of one key size; `done` as in [`run_chain_then`], per group.
///
/// I measured refilled lanes as an alternative: the next message (longest first) takes a
/// lane as soon as its message ends, and each window runs until the next lane ends. A model
/// of the realistic mix that counted only the kernel's steps gave 6% fewer cycles than these
/// groups. Measured on the Intel VM (comb engine, alternated runs, TSC cycles/byte), it was
/// slower:
/// - Refilling at every end, CBC ran 0.361-0.370 against 0.244-0.263, CMAC 0.341-0.356
///   against 0.248-0.271. The ends of staggered messages cut every window after the first to
///   1-4 blocks, each a 16-lane kernel call with its setup.
/// - Refilling only once 4 or 8 lanes were left ran CBC at 0.317-0.328.
/// - The groups' own schedule through the same loop ran at 0.304-0.331, so that loop's
///   bookkeeping also cost some of the difference. Against it, refilling at every end was
///   still 10-20% slower, and refilling at 4 lanes no faster: a leaner loop would not turn
///   the result around.
fn run_comb<'a, R: ChainRule, L: HasLane<'a>>(
    k: Kernels,
    items: &mut [L],
    p: usize,
    done: &mut impl FnMut(&mut [L], &[usize]),
) {
    let order = order_by_decreasing_length(items.len(), |i| items[i].lane().blocks);
    let mut group = Lanes(Vec::with_capacity(p));
    let mut keys = GroupKeys::default();
    for members in order.groups(p) {
        group.clear();
        group.extend(members.iter().map(|&m| *items[m].lane()));
        if let Kernels::Vaes256(_) = k {
            keys.assign(group.iter().map(|l| l.key));
        }
        let mut done_blocks = 0;
        for w in group_windows(members.len(), |i| items[members[i]].lane().blocks) {
            let lanes = &mut group[..w.lanes];
            match k {
                Kernels::Ni(t) => run_window_ni::<R>(t, lanes, done_blocks, w.blocks),
                Kernels::Vaes256(t) => run_window_vaes::<R>(t, &keys, lanes, done_blocks, w.blocks),
            }
            done_blocks += w.blocks;
        }
        for (&m, l) in members.iter().zip(group.iter()) {
            items[m].lane_mut().chain = l.chain;
        }
        done(items, members);
    }
}

/// How a window of `n >= 1` lanes is cut into kernel calls of at most `max` registers of
/// `per_reg` lanes each: calls of near-equal size, cut on register boundaries (so each call's
/// lanes keep their pairs and key rows). Returns the registers per call (the last call may
/// have fewer).
#[inline]
fn regs_per_call(n: usize, max: usize, per_reg: usize) -> usize {
    let regs = n.div_ceil(per_reg).max(1);
    // Nearly every window fits one call: no division by a run-time value (a `div` per
    // window, whose latency the window's first kernel call then waited for).
    if regs <= max {
        return regs;
    }
    regs.div_ceil(regs.div_ceil(max))
}

/// The ymm kernel calls for `n` lanes (a prefix of the group `keys` was assigned for) in calls
/// of at most `max` registers of two lanes: each call's lanes, cut as [`regs_per_call`] cuts
/// them (on register boundaries, so each call's lanes keep their pairs), and its key rows (its
/// registers' own, or the shared row).
fn ymm_calls<'k>(
    n: usize,
    max: usize,
    keys: &'k GroupKeys<'_>,
) -> impl Iterator<Item = (Range<usize>, &'k [PairKey])> + 'k {
    let per_call = regs_per_call(n, max, 2);
    let lanes = 2 * per_call;
    (0..n.div_ceil(lanes)).map(move |c| {
        let call = lanes * c..(lanes * (c + 1)).min(n);
        (call, keys.rows_from(per_call * c))
    })
}

/// The kernel's contract, checked once per window (lanes, not blocks): no lane is asked for
/// blocks it does not have. Lanes run in lockstep, so they need one round count (run_chain
/// partitions by key size); a mismatch would give wrong output, not an out-of-bounds access
/// (round keys are 15-entry arrays).
fn check_window(lanes: &[ChainLane<'_>], start: usize, count: usize) {
    assert!(lanes.iter().all(|l| start + count <= l.blocks));
    debug_assert!(lanes.iter().all(|l| l.key.rounds == lanes[0].key.rounds));
}

/// One window on xmm: `lanes` advance `count` blocks from block `start`. Chooses the kernel
/// for the lane count here, once; more than `MAX_KERNEL_LANES` lanes run as several calls.
fn run_window_ni<R: ChainRule>(
    _t: NiToken,
    lanes: &mut [ChainLane<'_>],
    start: usize,
    count: usize,
) {
    check_window(lanes, start, count);
    if count == 0 {
        return;
    }
    for chunk in lanes.chunks_mut(regs_per_call(lanes.len(), MAX_KERNEL_LANES, 1)) {
        let shared = chunk.iter().all(|l| core::ptr::eq(l.key, chunk[0].key));
        macro_rules! call {
            ($($n:literal)*) => {
                match chunk.len() {
                    $($n => {
                        let arr: &mut [ChainLane<'_>; $n] =
                            chunk.try_into().unwrap_or_else(|_| unreachable!());
                        // SAFETY: the token proves AES-NI; every lane has start + count
                        // blocks (checked above) and one round count (run_chain partitions
                        // by key size); `shared` was checked on this very chunk.
                        unsafe {
                            if shared {
                                ni::chain_window::<R, $n, true>(arr, start, count)
                            } else {
                                ni::chain_window::<R, $n, false>(arr, start, count)
                            }
                        }
                    })*
                    _ => unreachable!("chunks of 1..=MAX_KERNEL_LANES lanes"),
                }
            };
        }
        call!(1 2 3 4 5 6 7 8 9 10 11 12);
    }
}

/// One window on ymm: `lanes` (a prefix of the group `keys` was assigned for) advance `count`
/// blocks from block `start`, two lanes per register; more than `MAX_KERNEL_REGISTERS`
/// registers run as several calls of near-equal size, split on register boundaries so each
/// call's lanes keep their pairs (and key rows).
fn run_window_vaes<R: ChainRule>(
    t: VaesToken,
    keys: &GroupKeys,
    lanes: &mut [ChainLane<'_>],
    start: usize,
    count: usize,
) {
    if lanes.len() == 1 {
        // One lane would leave half the register a shadow: the xmm kernel does the same work
        // with less (CBC, 64 x 32 bytes, P = 1: 5.16 against 6.37 TSC cycles/byte).
        return run_window_ni::<R>(t.ni(), lanes, start, count);
    }
    check_window(lanes, start, count);
    if count == 0 || lanes.is_empty() {
        return;
    }
    let shared = keys.shared();
    for (span, rows) in ymm_calls(lanes.len(), MAX_KERNEL_REGISTERS, keys) {
        let chunk = &mut lanes[span];
        macro_rules! call {
            ($($n:literal)*) => {
                match chunk.len().div_ceil(2) {
                    $($n => {
                        assert!(rows.len() >= if shared { 1 } else { $n });
                        // SAFETY: the token proves AVX2 and VAES; the chunk has 2n - 1 or 2n
                        // lanes, each with start + count blocks (checked above) and one round
                        // count (run_chain partitions by key size); `rows` are this chunk's
                        // registers' rows of the group (windows are prefixes of the group
                        // and chunks start on register boundaries), or the shared row.
                        unsafe {
                            if shared {
                                vaes::chain_window::<R, $n, true>(chunk, rows, start, count)
                            } else {
                                vaes::chain_window::<R, $n, false>(chunk, rows, start, count)
                            }
                        }
                    })*
                    _ => unreachable!("chunks of 1..=MAX_KERNEL_REGISTERS registers"),
                }
            };
        }
        call!(1 2 3 4 5 6 7 8);
    }
}

/// CLOC's and SILC's encryption message phase: both chains of every lane, the CFB chain
/// (`lanes[i].chain`, its next cipher input) and the MAC over its ciphertext (`macs[i]`, its
/// next cipher input), over each lane's `io.len` bytes (`blocks` must be its whole blocks), as
/// [`ni::cfb_mac_window`] defines them for whole blocks. A partial last block `C_m` (`n =
/// len % 16` bytes) takes one more cipher call on both chains: its output is `M_m ^ K_m`, and
/// the lane's MAC becomes `T_{m-1} ^ C_m` with `C_m` zero beyond its `n` bytes; its final
/// chain is then unspecified. Comb-scheduled like [`run_chain`], with both chains of a lane in
/// flight together: half as many lanes fill the AES unit as for one chain each. On xmm a group
/// runs in windows of equal progress, its partial blocks batched after them
/// ([`cfb_mac_tails`]); on ymm without windows ([`cfb_mac_group_vaes`]). Every lane's key has
/// the same round count (CLOC and SILC are AES-128 only).
///
/// The lanes come in the comb order ([`cfb_mac_comb_order`]), which the caller builds them in:
/// each group is then a sub-slice, run in place. (Copying every group's lanes and MAC states
/// out of the caller's order and back, as before, was 1-2% of CLOC's time: Intel AVX-512 VM,
/// CLOC/ECB in the same run, medians of alternated runs, realistic mix 2.53 -> 2.49 (SILC 2.75
/// -> 2.72; five), 64 bytes 2.62 -> 2.59 (four), 1456 bytes 2.22 -> 2.21 (three).)
pub(crate) fn run_cfb_mac(k: Kernels, lanes: &mut [ChainLane<'_>], macs: &mut [Block], path: Path) {
    run_cfb_mac_then::<false>(k, lanes, macs, path, |_, _, _| {});
}

/// Decryption's twin of [`run_cfb_mac`] (CLOC's and SILC's), on the same kernels: every lane
/// reads its ciphertext `C_i` and writes the keystream `K_i = E(X_i)` (`X_1` = its `chain`,
/// `X_{i+1} = fix1(C_i)`, the partial last block's keystream truncated to it) to its output,
/// and its MAC state runs over the ciphertext as on encryption, ending at `T_{m-1} ^ C_m`
/// (`C_m` zero beyond the message). No plaintext is made: the caller xors the keystream into
/// the messages whose tags it has verified. Both chains of a lane are in flight together, as
/// on encryption (a verify-first pass would run the MAC chains alone, then the keystream: two
/// passes). After each comb group (each lane on the single path), `done(group, its MAC
/// states, index of its first lane)`: work there finds the group's messages and keystream
/// still in L1.
pub(crate) fn run_cfb_mac_keystream<'a>(
    k: Kernels,
    lanes: &mut [ChainLane<'a>],
    macs: &mut [Block],
    path: Path,
    done: impl FnMut(&[ChainLane<'a>], &mut [Block], usize),
) {
    run_cfb_mac_then::<true>(k, lanes, macs, path, done);
}

/// [`run_cfb_mac`] (encryption) or, with `DEC`, [`run_cfb_mac_keystream`], with `done` after
/// each group.
fn run_cfb_mac_then<'a, const DEC: bool>(
    k: Kernels,
    lanes: &mut [ChainLane<'a>],
    macs: &mut [Block],
    path: Path,
    mut done: impl FnMut(&[ChainLane<'a>], &mut [Block], usize),
) {
    check_cfb_mac_lanes(lanes, macs);
    match path {
        Path::Comb { .. } if lanes.len() > 1 => {
            let vl = zmm_token(k);
            // The zmm kernel where it issues at the ymm kernel's rate (measured only there).
            let quads = vl.filter(|_| crate::cpu::zmm_aes_full_rate());
            let p = cfb_mac_group_len(path, lanes.len());
            let mut keys = GroupKeys::default();
            let mut quad_keys = GroupKeys::<QuadKey>::default();
            for (g, (group, group_macs)) in lanes.chunks_mut(p).zip(macs.chunks_mut(p)).enumerate()
            {
                match k {
                    Kernels::Vaes256(t) if group.len() > 1 => {
                        // SAFETY (both): the group is a sub-slice of the lanes checked above
                        // (a sub-slice of lanes in the comb order is in it), the keys its keys.
                        if let Some(z) = quads {
                            quad_keys.assign(group.iter().map(|l| l.key));
                            unsafe { cfb_mac_group_quads::<DEC>(z, &quad_keys, group, group_macs) };
                        } else {
                            keys.assign(group.iter().map(|l| l.key));
                            unsafe { cfb_mac_group_vaes::<DEC>(t, vl, &keys, group, group_macs) };
                        }
                    }
                    _ => {
                        let mut blocks = [0; MAX_LANES];
                        for (b, l) in blocks.iter_mut().zip(group.iter()) {
                            *b = l.blocks;
                        }
                        let mut done_blocks = 0;
                        for w in group_windows(group.len(), |i| blocks[i]) {
                            let n = w.lanes;
                            cfb_mac_window::<DEC>(
                                k,
                                &mut group[..n],
                                &mut group_macs[..n],
                                done_blocks,
                                w.blocks,
                            );
                            done_blocks += w.blocks;
                        }
                        cfb_mac_tails::<DEC>(k, group, group_macs);
                    }
                }
                done(group, group_macs, g * p);
            }
        }
        _ => {
            for (i, (lane, mac)) in lanes.chunks_mut(1).zip(macs.chunks_mut(1)).enumerate() {
                let blocks = lane[0].blocks;
                cfb_mac_window::<DEC>(Kernels::Ni(k.ni()), lane, mac, 0, blocks);
                cfb_mac_tails::<DEC>(k, lane, mac);
                done(lane, mac, i);
            }
        }
    }
}

/// How many lanes each comb group of [`run_cfb_mac`] and [`run_cfb_mac_keystream`] takes for
/// `n` lanes on `path`: consecutive runs of this many lanes of the comb order are the groups,
/// the last one shorter (one lane each on the single path, and for one lane).
pub(crate) fn cfb_mac_group_len(path: Path, n: usize) -> usize {
    match path {
        Path::Comb { lanes: p } if n > 1 => p.clamp(1, MAX_LANES),
        _ => 1,
    }
}

/// The AVX-512 token, where `k`'s CPU has it beside VAES.
fn zmm_token(k: Kernels) -> Option<VaesZmmToken> {
    match k {
        Kernels::Vaes256(t) => VaesZmmToken::with(t),
        Kernels::Ni(_) => None,
    }
}

/// The CFB+MAC kernels' contract, refused with a panic where a caller breaks it, in one pass
/// over the lanes: as many MAC states as lanes; every lane's `blocks` its whole blocks and its
/// `io.len` bytes inside its output (a non-null `dst` and `out_cap`: the ymm kernels write the
/// partial last block too); one round count; the comb order ([`cfb_mac_order`]
/// non-increasing). The kernels' memory safety rests on all but the round count (a mismatch
/// there would give wrong output, not an access out of bounds: round keys are 15-entry arrays).
///
/// (Checked as three passes here and two more per comb group on ymm, they cost more: `rdtsc`
/// in a throw-away build, CLOC on 70-byte messages, batch 64, three alternated runs, the time
/// of the ymm groups outside their kernel calls and key rows fell from 24-28 to 12-13 TSC
/// ticks per message, this check's own from 13-16 to 12-15.)
fn check_cfb_mac_lanes(lanes: &[ChainLane<'_>], macs: &[Block]) {
    assert_eq!(lanes.len(), macs.len(), "a MAC state per lane");
    let rounds = lanes.first().map_or(0, |l| l.key.rounds);
    let mut last = usize::MAX;
    // Every lane checked, no early exit: one `and` per condition, one branch per call.
    let ok = lanes.iter().fold(true, |ok, l| {
        let order = cfb_mac_order(l.io.len);
        let in_order = order <= last;
        last = order;
        ok & in_order
            & (l.blocks == l.io.len / BLOCK)
            & (l.io.len <= l.io.out_cap)
            & !l.io.dst.is_null()
            & (l.key.rounds == rounds)
    });
    assert!(
        ok,
        "CFB+MAC lanes: whole blocks, outputs, one round count, in the comb order"
    );
}

/// The order [`run_cfb_mac`] takes its lanes in, for `n` lanes of `len(i)` bytes: indices by
/// decreasing [`cfb_mac_order`], ties in input order.
pub(crate) fn cfb_mac_comb_order(n: usize, len: impl Fn(usize) -> usize) -> Order {
    order_by_decreasing_length(n, |i| cfb_mac_order(len(i)))
}

/// The comb order of [`run_cfb_mac`]'s lanes (sorted by decreasing key, of a lane of `len` bytes):
/// by steps (whole blocks and a partial one), ties whole-block lanes first, so both the steps and
/// the whole blocks are non-increasing along the order (a lane with fewer steps has at most as many
/// whole blocks): what the ymm kernel with tails needs, and the windows and the AVX2 kernel (whole
/// blocks). (Ordering those two by whole blocks alone ran as many instructions: 10.510 against
/// 10.514 million for CLOC on the realistic mix, xmm kernels, valgrind.)
fn cfb_mac_order(len: usize) -> usize {
    2 * len.div_ceil(BLOCK) + usize::from(len.is_multiple_of(BLOCK))
}

/// The partial last blocks of `lanes` after their whole blocks (see [`run_cfb_mac`]): one
/// more cipher call on both chains, `(K_m, T_{m-1}) = (E(chain), E(mac))`, batched across
/// lanes (16 lanes, 32 blocks, per multi-key call: a comb group's at the default lane counts;
/// stack buffers half the size of a 64-job chunk's ran 0.45% fewer instructions on the
/// realistic mix, by `scripts/count-instructions.sh`). `K_m` encrypts the tail bytes and
/// `macs[i]` becomes `T_{m-1} ^ C_m`, `C_m` zero beyond the message. (A lane whose last block
/// is whole already holds that value: the kernels leave `T_{m-1} ^ C_m` as the MAC chain's
/// next input.)
///
/// On the realistic mix this was about 7-9% of CLOC's time (a timing-only build without it,
/// Zen 3, three alternated runs against CLOC's time over CBC's; Intel AVX-512 VM, 34-46 TSC
/// cycles per message of the mix, 36-37 per message of 40-100 bytes). Three other ways
/// measured no better there (alternated runs, time over ECB's or CBC's in the same run): the
/// tails as one more step of the CFB+MAC kernels on zero-padded bounce blocks, CLOC about 8%
/// slower (two kernel calls of 8 lanes, each a full step's latency, against one batched call
/// of independent blocks); the tails of all groups in one batched call after the last group,
/// within noise; and the multi-key call on the xmm kernel (16-byte loads, which the 16-byte
/// stores of `buf` forward), within noise. With AVX-512 the ymm kernel takes them in its
/// steps instead, under byte masks ([`vaes::cfb_mac_lanes_vl`]).
fn cfb_mac_tails<const DEC: bool>(k: Kernels, lanes: &[ChainLane<'_>], macs: &mut [Block]) {
    const PER_CALL: usize = 16;
    let mut buf = [[0u8; BLOCK]; 2 * PER_CALL];
    let mut used = 0;
    // One multi-key call for the lanes `tails` (at most PER_CALL).
    let mut run = |tails: &[usize], macs: &mut [Block]| {
        let n = tails.len();
        let mut keys = [lanes[tails[0]].key; 2 * PER_CALL];
        for ((pair, key), &i) in buf
            .chunks_exact_mut(2)
            .zip(keys.chunks_exact_mut(2))
            .zip(tails)
        {
            pair[0] = lanes[i].chain;
            pair[1] = macs[i];
            key.fill(lanes[i].key);
        }
        used = used.max(2 * n);
        k.encrypt_many(&mut buf[..2 * n], &keys[..2 * n]);
        for (pair, &i) in buf.chunks_exact(2).zip(tails) {
            let io = lanes[i].io;
            let at = io.len - io.len % BLOCK;
            if DEC {
                // The input is `C_m`: the output takes `K_m`, truncated.
                macs[i] = xor(&pair[1], &io.read_from(at));
                io.write_tail(at, &pair[0]);
                continue;
            }
            let mut input = io.xor_tail(&pair[0]);
            let mut c = truncate(&xor(&pair[0], &input), io.len % BLOCK);
            macs[i] = xor(&pair[1], &c);
            wipe(&mut c);
            wipe(&mut input);
        }
    };
    // The partial lanes, collected by a plain loop (an iterator filtered through `by_ref`
    // here ran 3% more instructions for all of CLOC on the realistic mix, xmm kernels).
    let mut tails = [0usize; PER_CALL];
    let mut n = 0;
    for (i, l) in lanes.iter().enumerate() {
        if l.io.len.is_multiple_of(BLOCK) {
            continue;
        }
        tails[n] = i;
        n += 1;
        if n == PER_CALL {
            run(&tails, macs);
            n = 0;
        }
    }
    if n > 0 {
        run(&tails[..n], macs);
    }
    buf[..used].iter_mut().for_each(wipe);
}

/// One comb group of [`run_cfb_mac`] on ymm (with `DEC`, of decryption's keystream pass,
/// [`run_cfb_mac_keystream`]; at least one lane, in its order ([`cfb_mac_order`]), `keys` assigned
/// for them; the executor gives it two or more): every lane's both chains over all its bytes, each
/// kernel call running its lanes to their own ends ([`vaes::cfb_mac_lanes`]): no windows of equal
/// progress, so no call per distinct length. Calls of at most [`vaes::CFB_MAC_REGISTERS`] register
/// pairs (8 lanes, 8 ymm states, half the chain kernels' width as each lane is two chains), the
/// partial last blocks batched after them ([`cfb_mac_tails`]); or with AVX-512 (`vl`, the token of
/// a CPU that has it) [`vaes::CFB_MAC_REGISTERS_VL`] (16 lanes in 32 ymm registers), the partial
/// blocks inside the calls. (Without AVX-512VL, calls of five or six pairs, 10 or 12 ymm states,
/// measured no faster: CLOC at 4096-byte messages, batch 48, Zen 3, three runs of P = 8, 10, 12 and
/// 16 side by side, 0.351-0.465 TSC cycles/byte with one call of 5 or 6 pairs against 0.363-0.444
/// with calls of 4: as for the chain kernel, past 8 states the kernel is bound by its instruction
/// throughput.) Where a zmm VAESENC issues as often as a ymm one, [`cfb_mac_group_quads`] runs
/// the groups instead.
///
/// Not a stream either: one kernel call for a whole shared-key batch, its 16 slots each taking the
/// next lane of the comb order as its lane ends (pointers set back by the step the lane starts at),
/// the lanes still running when none is left to start finished as a group. The kernel would then
/// run 16 lanes wide until no lane is left to start instead of narrowing at each group's end. It
/// ran slower on encryption (stop 68; CLOC, batches of 64, fastest of 150 calls, TSC ticks per
/// message, Intel AVX-512 VM). As a kernel function of its own (its step loop the same code as the
/// groups', expanded in it), four alternated pairs in a quieter spell: the realistic mix 334-348
/// against 282-293, 1440 bytes 485-504 against 432-437, 64 bytes 115-120 against 90-94. At 1440
/// bytes a group's lanes all end together, so the loss there is the stream's code, not its schedule
/// (its step loop reloaded five registers from the stack before each step's rounds). Earlier
/// versions lost more, in busier spells: with the refills in the group kernel's loop, states
/// written at a slot index known only at run time kept both state arrays in memory through every
/// step (1440 bytes 588-642 against 468-500), and with the step loop one function for both, it was
/// not inlined (1440 bytes 515-552 against 390-475; decryption, which did not stream, 408-430
/// against 359-387 on the mix, fastest of 100 calls). What the groups lose at their ends, the most
/// a stream could win, measured in the same harness: 0-4% for lanes of 1440..1680 bytes, all ends
/// distinct, against lanes of equal work, and 5-11% for the mix against each group of 16 set to its
/// mean length.
///
/// # Safety
/// `lanes` pass [`check_cfb_mac_lanes`] (a sub-slice of lanes that passed does: the kernels'
/// contract, which their memory safety rests on, checked once per [`run_cfb_mac`] call, not
/// again per group).
unsafe fn cfb_mac_group_vaes<const DEC: bool>(
    _vaes: VaesToken,
    vl: Option<VaesZmmToken>,
    keys: &GroupKeys,
    lanes: &mut [ChainLane<'_>],
    macs: &mut [Block],
) {
    check_group(lanes, macs);
    let shared = keys.shared();
    let max = match vl {
        Some(_) => vaes::CFB_MAC_REGISTERS_VL,
        None => vaes::CFB_MAC_REGISTERS,
    };
    for (span, rows) in ymm_calls(lanes.len(), max, keys) {
        let (chunk, chunk_macs) = (&mut lanes[span.clone()], &mut macs[span]);
        assert!(rows.len() >= if shared { 1 } else { chunk.len().div_ceil(2) });
        // SAFETY: the token `_vaes` proves AVX2 and VAES, `vl` AVX-512F, VL and BW beside
        // them; the chunk has at most `2 * max` lanes (`ymm_calls`) and as many MAC states, in
        // the comb order (a sub-slice of ordered lanes), each with its bytes inside its
        // buffers and one round count (this function's contract); `rows`
        // are this chunk's registers' rows of the group (chunks start on register
        // boundaries), or the shared row.
        unsafe {
            match (vl, shared) {
                (Some(_), true) => vaes::cfb_mac_lanes_vl::<true, DEC>(chunk, chunk_macs, rows),
                (Some(_), false) => vaes::cfb_mac_lanes_vl::<false, DEC>(chunk, chunk_macs, rows),
                (None, true) => vaes::cfb_mac_lanes::<true, DEC>(chunk, chunk_macs, rows),
                (None, false) => vaes::cfb_mac_lanes::<false, DEC>(chunk, chunk_macs, rows),
            }
        }
    }
    if vl.is_none() {
        cfb_mac_tails::<DEC>(Kernels::Vaes256(_vaes), lanes, macs);
    }
}

/// A group's lanes and MAC states pair up and are not empty; in debug builds the whole
/// contract of [`cfb_mac_group_vaes`] is checked again (release builds rely on the caller's
/// check).
fn check_group(lanes: &[ChainLane<'_>], macs: &[Block]) {
    assert_eq!(lanes.len(), macs.len());
    assert!(!lanes.is_empty());
    if cfg!(debug_assertions) {
        check_cfb_mac_lanes(lanes, macs);
    }
}

/// [`cfb_mac_group_vaes`] on zmm, four lanes a register ([`vaes::cfb_mac_quads`], calls of up
/// to 16 lanes), where a zmm VAESENC issues as often as a ymm one (the token `z` of such a
/// CPU: [`crate::cpu::zmm_aes_full_rate`], AMD Zen 5): twice the blocks per instruction.
/// `keys` assigned for the group's lanes, four a row.
///
/// # Safety
/// As [`cfb_mac_group_vaes`].
unsafe fn cfb_mac_group_quads<const DEC: bool>(
    z: VaesZmmToken,
    keys: &GroupKeys<QuadKey>,
    lanes: &mut [ChainLane<'_>],
    macs: &mut [Block],
) {
    check_group(lanes, macs);
    let shared = keys.shared();
    let per_call = 4 * regs_per_call(lanes.len(), vaes::CFB_MAC_QUADS, 4);
    let calls = lanes.chunks_mut(per_call).zip(macs.chunks_mut(per_call));
    for (c, (chunk, chunk_macs)) in calls.enumerate() {
        // The call's rows: its lanes' (four a row, from row `per_call / 4 · c`); none for one
        // key.
        let rows = keys.rows_from(per_call / 4 * c);
        assert!(shared || rows.len() >= chunk.len().div_ceil(4));
        // SAFETY: the token proves AVX2, VAES, AES-NI and AVX-512F, VL and BW; the chunk has
        // at most `4 * CFB_MAC_QUADS` lanes and as many MAC states, in the comb order, each
        // with its bytes inside its buffers and one round count (this function's contract);
        // `shared`: every lane of the group has the same key, else `rows` are the chunk's
        // lanes' (asserted above; chunks start on register boundaries, four lanes a row).
        unsafe {
            if shared {
                vaes::cfb_mac_quads::<true, DEC>(z, chunk, chunk_macs, rows)
            } else {
                vaes::cfb_mac_quads::<false, DEC>(z, chunk, chunk_macs, rows)
            }
        };
    }
}

/// One window of [`run_cfb_mac`] on xmm (also a one-lane group on ymm, and the single
/// path's message): `lanes` advance `count` blocks from block `start`, in calls of at most 6
/// lanes (12 xmm states, half the chain kernel's width as each lane is two chains).
fn cfb_mac_window<const DEC: bool>(
    k: Kernels,
    lanes: &mut [ChainLane<'_>],
    macs: &mut [Block],
    start: usize,
    count: usize,
) {
    check_window(lanes, start, count);
    assert_eq!(lanes.len(), macs.len());
    if count == 0 || lanes.is_empty() {
        return;
    }
    // The proof that the CPU has AES-NI, which every backend's kernels imply.
    let _ni: NiToken = k.ni();
    let per_call = regs_per_call(lanes.len(), MAX_KERNEL_LANES / 2, 1);
    for (chunk, chunk_macs) in lanes.chunks_mut(per_call).zip(macs.chunks_mut(per_call)) {
        let shared = chunk.iter().all(|l| core::ptr::eq(l.key, chunk[0].key));
        macro_rules! call {
            ($($n:literal)*) => {
                match chunk.len() {
                    $($n => {
                        let arr: &mut [ChainLane<'_>; $n] =
                            chunk.try_into().unwrap_or_else(|_| unreachable!());
                        let m: &mut [Block; $n] =
                            chunk_macs.try_into().unwrap_or_else(|_| unreachable!());
                        // SAFETY: `_ni` proves AES-NI; every lane has start + count blocks
                        // (checked above) and one round count (checked by the caller);
                        // `shared` was checked on this very chunk.
                        unsafe {
                            if shared {
                                ni::cfb_mac_window::<$n, true, DEC>(arr, m, start, count)
                            } else {
                                ni::cfb_mac_window::<$n, false, DEC>(arr, m, start, count)
                            }
                        }
                    })*
                    _ => unreachable!("chunks of 1..=MAX_KERNEL_LANES / 2 lanes"),
                }
            };
        }
        call!(1 2 3 4 5 6);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::aes::AesKey;
    use crate::block::{Block, IoPtrs};
    use std::panic::AssertUnwindSafe;

    use crate::block::test_bytes as bytes;
    use crate::modes::cbc::CbcEncrypt as Cbc;
    use crate::modes::cfb::CfbEncrypt as Cfb;
    use crate::modes::cmac::CbcMac as Mac;
    use crate::modes::ofb::Ofb;

    /// A group of `n` lanes sorted by length, run as the plan runs it: windows over ever
    /// shorter prefixes. Every lane's output and final chain equal the same lane run alone
    /// through the xmm kernel.
    fn group_matches_single_lanes<R: ChainRule>(k: Kernels, n: usize, shared: bool, klen: usize) {
        let owned: Vec<AesKey> = (0..n)
            .map(|j| AesKey::new(&bytes(j as u64 + 7 * klen as u64, klen)).unwrap())
            .collect();
        let keys: Vec<&AesKey> = (0..n)
            .map(|j| if shared { &owned[0] } else { &owned[j] })
            .collect();
        // Lengths descending: lane j has 3 + (n - j) / 2 blocks, so windows shrink by pairs
        // and single lanes (odd and even prefixes).
        let blocks: Vec<usize> = (0..n).map(|j| 3 + (n - j) / 2).collect();
        let input: Vec<Vec<u8>> = (0..n)
            .map(|j| bytes(100 + j as u64, 16 * blocks[j]))
            .collect();
        let ivs: Vec<Block> = (0..n)
            .map(|j| bytes(300 + j as u64, 16).try_into().unwrap())
            .collect();
        let mut batch: Vec<Vec<u8>> = blocks.iter().map(|&b| vec![0; 16 * b]).collect();
        let mut alone = batch.clone();
        let mut lanes = Lanes(
            batch
                .iter_mut()
                .enumerate()
                .map(|(j, out)| ChainLane {
                    io: IoPtrs::copy(&input[j], out),
                    chain: ivs[j],
                    key: keys[j],
                    blocks: blocks[j],
                })
                .collect(),
        );
        let mut group_keys = GroupKeys::default();
        group_keys.assign(lanes.iter().map(|l| l.key));
        let mut done = 0;
        while let Some(live) = (1..=n).rev().find(|&l| blocks[l - 1] > done) {
            let count = blocks[live - 1] - done;
            match k {
                Kernels::Ni(t) => run_window_ni::<R>(t, &mut lanes[..live], done, count),
                Kernels::Vaes256(t) => {
                    run_window_vaes::<R>(t, &group_keys, &mut lanes[..live], done, count)
                }
            }
            done += count;
        }
        let chains: Vec<Block> = lanes.iter().map(|l| l.chain).collect();
        drop(group_keys);
        drop(lanes);
        for j in 0..n {
            let mut one = [ChainLane {
                io: IoPtrs::copy(&input[j], &mut alone[j]),
                chain: ivs[j],
                key: keys[j],
                blocks: blocks[j],
            }];
            run_window_ni::<R>(k.ni(), &mut one, 0, blocks[j]);
            assert_eq!(
                one[0].chain, chains[j],
                "{k:?} n={n} shared={shared} lane {j}"
            );
        }
        assert_eq!(batch, alone, "{k:?} n={n} shared={shared}");
    }

    /// Lanes for the fix1 tests: 19 of 0..=12 blocks, IVs with the fixed bit set in every
    /// other one, keys (`key_lens` cycled) with the bit both set and clear in `k_0`.
    struct Fix1Case {
        keys: Vec<AesKey>,
        blocks: Vec<usize>,
        input: Vec<Vec<u8>>,
        ivs: Vec<Block>,
    }

    impl Fix1Case {
        /// Lane `j`'s input `tail(j)` (0..16) bytes longer than its whole blocks: a partial
        /// last block.
        fn with_tails(key_lens: &[usize], tail: impl Fn(usize) -> usize) -> Fix1Case {
            let n = 19;
            let blocks: Vec<usize> = (0..n).map(|j| (j * 5) % 13).collect();
            Fix1Case {
                keys: (0..6)
                    .map(|i| AesKey::new(&bytes(900 + i, key_lens[i as usize % key_lens.len()])))
                    .map(Result::unwrap)
                    .collect(),
                input: (0..n)
                    .map(|j| bytes(700 + j as u64, 16 * blocks[j] + tail(j)))
                    .collect(),
                ivs: (0..n)
                    .map(|j| {
                        let mut iv: Block = bytes(800 + j as u64, 16).try_into().unwrap();
                        iv[0] = if j % 2 == 0 {
                            iv[0] | 0x80
                        } else {
                            iv[0] & 0x7f
                        };
                        iv
                    })
                    .collect(),
                blocks,
            }
        }

        fn key(&self, j: usize) -> &AesKey {
            &self.keys[j % self.keys.len()]
        }

        /// Fresh outputs and the lanes over them, from the IVs.
        fn lanes<'a>(&'a self, out: &'a mut [Vec<u8>], shared: bool) -> Lanes<'a> {
            Lanes(
                out.iter_mut()
                    .enumerate()
                    .map(|(j, o)| ChainLane {
                        io: IoPtrs::copy(&self.input[j], o),
                        chain: self.ivs[j],
                        key: self.key(if shared { 0 } else { j }),
                        blocks: self.blocks[j],
                    })
                    .collect(),
            )
        }

        fn outputs(&self) -> Vec<Vec<u8>> {
            self.input.iter().map(|m| vec![0; m.len()]).collect()
        }
    }

    /// Both paths, and plans of several lane counts (windows of one block and of many, one
    /// kernel call and split calls), on every backend this CPU runs.
    fn test_paths() -> Vec<(Kernels, Path)> {
        let paths = [Path::Single]
            .into_iter()
            .chain([1, 3, 8, 16, 32].map(|p| Path::Comb { lanes: p }));
        crate::Backend::supported(&crate::CpuFeatures::detect())
            .into_iter()
            .flat_map(|b| paths.clone().map(move |p| (Kernels::new(b).unwrap(), p)))
            .collect()
    }

    /// A window's cut into kernel calls: calls of at most `max` registers that cover the
    /// window's registers, as few calls as `max` allows, of near-equal sizes (all calls
    /// together fewer registers short of full than there are calls), for every window up to
    /// 64 lanes and every call limit the executors use.
    #[test]
    fn windows_are_cut_into_few_even_calls() {
        for per_reg in [1, 2] {
            for max in [
                MAX_KERNEL_LANES / 2,
                MAX_KERNEL_LANES,
                MAX_KERNEL_REGISTERS / 2,
                MAX_KERNEL_REGISTERS,
            ] {
                for n in 1..=64usize {
                    let regs = n.div_ceil(per_reg);
                    let per_call = regs_per_call(n, max, per_reg);
                    let calls = regs.div_ceil(per_call);
                    let ctx = format!("n {n}, max {max}, per_reg {per_reg}");
                    assert!((1..=max).contains(&per_call), "{ctx}: {per_call}");
                    assert_eq!(calls, regs.div_ceil(max), "{ctx}: calls");
                    assert!(per_call * (calls - 1) < regs, "{ctx}: an empty call");
                    assert!(
                        regs <= per_call * calls && per_call * calls - regs < calls,
                        "{ctx}"
                    );
                }
            }
        }
    }

    /// The CFB+MAC definition block by block for lane `j` of `case` under `key`, from MAC
    /// state `y`: `K = E(X)`, `T = E(Y)`, `C_i = M_i ^ K` written, `X = fix1(C_i)`, `Y = T ^
    /// C_i`, from `X = IV`; a partial last block `C_m` zero beyond its bytes in `Y`. Returns
    /// the output, the final `X` (`None` after a partial block: unspecified) and `Y`.
    fn cfb_mac_by_definition(
        case: &Fix1Case,
        j: usize,
        key: &AesKey,
        mut y: Block,
    ) -> (Vec<u8>, Option<Block>, Block) {
        let mut x = case.ivs[j];
        let mut want = Vec::new();
        for m in case.input[j].chunks(16) {
            key.encrypt_block(&mut x);
            key.encrypt_block(&mut y);
            let c: Vec<u8> = x.iter().zip(m).map(|(a, b)| a ^ b).collect();
            want.extend_from_slice(&c);
            for (yi, ci) in y.iter_mut().zip(&c) {
                *yi ^= ci;
            }
            x = [0; 16];
            x[..c.len()].copy_from_slice(&c);
            x[0] |= 0x80;
        }
        let whole = case.input[j].len().is_multiple_of(16);
        (want, whole.then_some(x), y)
    }

    /// MAC IVs for the CFB+MAC tests.
    fn mac_ivs(n: usize) -> Vec<Block> {
        (0..n)
            .map(|j| bytes(600 + j as u64, 16).try_into().unwrap())
            .collect()
    }

    /// Partial last blocks of the CFB+MAC tests: every length 0..16 across the lanes, and
    /// lanes of equal whole blocks with and without one.
    fn cfb_mac_tail(j: usize) -> usize {
        (j * 7) % 16 * usize::from(j % 3 != 1)
    }

    /// A CFB+MAC run over lanes `members` of `case` (result `g` is lane `members[g]`'s,
    /// from MAC IV `ivs[members[g]]`) against the definition: each lane's output in `out`, its
    /// final chain (when specified) and MAC state.
    #[allow(clippy::too_many_arguments)]
    fn check_cfb_mac(
        case: &Fix1Case,
        what: &str,
        shared: bool,
        members: &[usize],
        out: &[Vec<u8>],
        chains: &[Block],
        macs: &[Block],
        ivs: &[Block],
    ) {
        for (g, &j) in members.iter().enumerate() {
            let key = case.key(if shared { 0 } else { j });
            let (want, x, y) = cfb_mac_by_definition(case, j, key, ivs[j]);
            assert_eq!(out[j], want, "{what}: lane {j}");
            if let Some(x) = x {
                assert_eq!(chains[g], x, "{what}: lane {j} chain");
            }
            assert_eq!(macs[g], y, "{what}: lane {j} MAC");
        }
    }

    /// CLOC's and SILC's encryption kernels through [`run_cfb_mac`] against their definition
    /// ([`cfb_mac_by_definition`]), partial last blocks included, the final `X` and `Y` left in
    /// the lane and its MAC state. Per-lane and shared keys of each size, both paths, every
    /// backend.
    #[test]
    fn cfb_mac_matches_its_definition() {
        for klen in [16, 24, 32] {
            let case = Fix1Case::with_tails(&[klen], cfb_mac_tail);
            let n = case.ivs.len();
            let mac_ivs = mac_ivs(n);
            for (k, path) in test_paths() {
                for shared in [false, true] {
                    let what = format!("{k:?} {path:?} klen {klen} shared {shared}");
                    let mut out = case.outputs();
                    let all = case.lanes(&mut out, shared);
                    // The lanes as `run_cfb_mac` takes them: in the comb order.
                    let order = cfb_mac_comb_order(n, |j| all[j].io.len);
                    let mut lanes: Vec<ChainLane<'_>> = order.iter().map(|&j| all[j]).collect();
                    let mut macs: Vec<Block> = order.iter().map(|&j| mac_ivs[j]).collect();
                    run_cfb_mac(k, &mut lanes, &mut macs, path);
                    let chains: Vec<Block> = lanes.iter().map(|l| l.chain).collect();
                    drop((lanes, all));
                    check_cfb_mac(&case, &what, shared, &order, &out, &chains, &macs, &mac_ivs);
                }
            }
        }
    }

    /// A keystream pass (`run`, given the lanes of a [`Fix1Case`] in the comb order, with
    /// ciphertexts made by the definition as their inputs, and their MAC states) against the
    /// definition: each lane's output is its keystream (ciphertext xor plaintext, partial last
    /// blocks included, nothing past the message written), its MAC state the encryption's.
    /// Per-lane and shared keys of each size.
    fn check_keystream_pass(what: &str, mut run: impl FnMut(&mut [ChainLane<'_>], &mut [Block])) {
        for klen in [16, 24, 32] {
            let case = Fix1Case::with_tails(&[klen], cfb_mac_tail);
            let n = case.ivs.len();
            let ivs = mac_ivs(n);
            for shared in [false, true] {
                let what = format!("{what} klen {klen} shared {shared}");
                let key = |j: usize| case.key(if shared { 0 } else { j });
                let sealed: Vec<(Vec<u8>, Block)> = (0..n)
                    .map(|j| {
                        let (c, _, y) = cfb_mac_by_definition(&case, j, key(j), ivs[j]);
                        (c, y)
                    })
                    .collect();
                // One byte past each message, which must stay untouched.
                let mut out: Vec<Vec<u8>> = sealed
                    .iter()
                    .map(|(c, _)| vec![0xa5; c.len() + 1])
                    .collect();
                let order = cfb_mac_comb_order(n, |j| sealed[j].0.len());
                let mut by_lane: Vec<Option<&mut Vec<u8>>> = out.iter_mut().map(Some).collect();
                let mut lanes: Vec<ChainLane<'_>> = order
                    .iter()
                    .map(|&j| {
                        let o = by_lane[j].take().unwrap();
                        let c = &sealed[j].0;
                        ChainLane {
                            io: IoPtrs::copy(c, &mut o[..c.len()]),
                            chain: case.ivs[j],
                            key: key(j),
                            blocks: c.len() / BLOCK,
                        }
                    })
                    .collect();
                let mut macs: Vec<Block> = order.iter().map(|&j| ivs[j]).collect();
                run(&mut lanes, &mut macs);
                drop(lanes);
                for (g, &j) in order.iter().enumerate() {
                    let (c, y) = &sealed[j];
                    let ks: Vec<u8> = c.iter().zip(&case.input[j]).map(|(a, b)| a ^ b).collect();
                    assert_eq!(out[j][..c.len()], ks[..], "{what}: lane {j} keystream");
                    assert_eq!(out[j][c.len()], 0xa5, "{what}: lane {j} past its end");
                    assert_eq!(macs[g], *y, "{what}: lane {j} MAC");
                }
            }
        }
    }

    /// Decryption's keystream pass ([`run_cfb_mac_keystream`]) against the definition
    /// ([`check_keystream_pass`]), both paths, every backend; `done` sees every group once, in
    /// order, at most `p` lanes (one on the single path).
    #[test]
    fn cfb_mac_keystream_matches_encryption() {
        for (k, path) in test_paths() {
            let p = match path {
                Path::Comb { lanes } => lanes,
                Path::Single => 1,
            };
            let what = format!("{k:?} {path:?}");
            check_keystream_pass(&what, |lanes, macs| {
                let mut next = 0;
                run_cfb_mac_keystream(k, lanes, macs, path, |group, _, first| {
                    assert_eq!(first, next, "{what}: groups in order");
                    assert!(!group.is_empty() && group.len() <= p, "{what}");
                    next += group.len();
                });
                assert_eq!(next, lanes.len(), "{what}: every group");
            });
        }
    }

    /// [`run_cfb_mac`]'s contract check refuses every way of breaking it, before any kernel
    /// runs, and passes lanes that keep it: a longer lane after a shorter one (the ymm kernels
    /// would take the shorter lane's end for the longer one's), `blocks` other than the whole
    /// blocks, an output shorter than the message, no output, a second round count, a MAC state
    /// missing.
    #[test]
    fn cfb_mac_check_refuses_each_broken_condition() {
        let k128 = AesKey::new(&[3; 16]).unwrap();
        let k256 = AesKey::new(&[3; 32]).unwrap();
        let input = [vec![1u8; 48], vec![2u8; 20]];
        let mut out = [vec![0u8; 48], vec![0u8; 20]];
        let [o0, o1] = &mut out;
        let good = [(&input[0], &mut o0[..]), (&input[1], &mut o1[..])].map(|(i, o)| ChainLane {
            io: IoPtrs::copy(i, o),
            chain: [0; BLOCK],
            key: &k128,
            blocks: i.len() / BLOCK,
        });
        let macs = [[0u8; BLOCK]; 2];
        check_cfb_mac_lanes(&good, &macs);
        check_cfb_mac_lanes(&good[..1], &macs[..1]);
        check_cfb_mac_lanes(&[], &[]);
        let refused = |lanes: &[ChainLane<'_>], macs: &[Block]| {
            std::panic::catch_unwind(AssertUnwindSafe(|| check_cfb_mac_lanes(lanes, macs))).is_err()
        };
        for what in [
            "out of order",
            "blocks",
            "short output",
            "no output",
            "round count",
        ] {
            let mut l = good;
            match what {
                "out of order" => l.swap(0, 1),
                "blocks" => l[1].blocks = 2,
                "short output" => l[0].io.out_cap = 47,
                "no output" => l[1].io.dst = core::ptr::null_mut(),
                _ => l[1].key = &k256,
            }
            assert!(refused(&l, &macs), "{what}: accepted");
        }
        assert!(refused(&good, &macs[..1]), "a MAC state missing: accepted");
    }

    /// Every VAES CFB+MAC group kernel (AVX2's calls of 8 lanes and its batched partial blocks;
    /// where the CPU has AVX-512, the ymm calls of 16 with the partial blocks inside, and the zmm
    /// kernel's, whether or not this CPU's route takes it) on groups of every size 2..=19 of
    /// lanes in the comb order, of 0..=12 whole blocks and partial ones (so registers leave the
    /// steps one by one, high lanes end before low ones, and groups past a call's width split),
    /// per-lane and shared keys, against the definition; and each as decryption's keystream
    /// pass ([`check_keystream_pass`]), so every kernel is tested whatever route this CPU takes.
    /// One group on the ymm kernels (`quads` none) or the zmm one, its keys assigned as each
    /// takes them.
    ///
    /// # Safety
    /// As [`cfb_mac_group_vaes`].
    unsafe fn run_group<const DEC: bool>(
        t: VaesToken,
        vl: Option<VaesZmmToken>,
        quads: Option<VaesZmmToken>,
        lanes: &mut [ChainLane<'_>],
        macs: &mut [Block],
    ) {
        // SAFETY (both): forwarded.
        match quads {
            Some(z) => {
                let mut keys = GroupKeys::<QuadKey>::default();
                keys.assign(lanes.iter().map(|l| l.key));
                unsafe { cfb_mac_group_quads::<DEC>(z, &keys, lanes, macs) };
            }
            None => {
                let mut keys = GroupKeys::default();
                keys.assign(lanes.iter().map(|l| l.key));
                unsafe { cfb_mac_group_vaes::<DEC>(t, vl, &keys, lanes, macs) };
            }
        }
    }

    #[test]
    fn cfb_mac_groups_match_their_definition_on_every_vaes_kernel() {
        let Some(t) = VaesToken::get() else {
            return;
        };
        let case = Fix1Case::with_tails(&[16], cfb_mac_tail);
        let mut order: Vec<usize> = (0..case.ivs.len()).collect();
        order.sort_by_key(|&j| core::cmp::Reverse(cfb_mac_order(case.input[j].len())));
        let ivs = mac_ivs(case.ivs.len());
        // The AVX2 kernel, and where the CPU has AVX-512 the ymm one with its tails and the zmm
        // one (`quads`, whatever `cpu::zmm_aes_full_rate` says).
        let zmm = VaesZmmToken::with(t);
        let kernels = [(None, None)]
            .into_iter()
            .chain(zmm.map(|z| (Some(z), None)))
            .chain(zmm.map(|z| (Some(z), Some(z))));
        for (vl, quads) in kernels {
            for n in 2..=order.len() {
                for shared in [false, true] {
                    let what = format!(
                        "vl {} quads {} n {n} shared {shared}",
                        vl.is_some(),
                        quads.is_some()
                    );
                    let mut out = case.outputs();
                    let all = case.lanes(&mut out, shared);
                    let mut group = Lanes(order[..n].iter().map(|&j| all[j]).collect());
                    let mut macs: Vec<Block> = order[..n].iter().map(|&j| ivs[j]).collect();
                    check_cfb_mac_lanes(&group, &macs);
                    // SAFETY: checked on the line above.
                    unsafe { run_group::<false>(t, vl, quads, &mut group, &mut macs) };
                    let chains: Vec<Block> = group.iter().map(|l| l.chain).collect();
                    drop((group, all));
                    check_cfb_mac(
                        &case,
                        &what,
                        shared,
                        &order[..n],
                        &out,
                        &chains,
                        &macs,
                        &ivs,
                    );
                }
            }
            // Decryption's keystream on the same kernel, in groups of `n` lanes.
            for n in [2, 3, 8, 16, 19] {
                let what = format!(
                    "vl {} quads {} keystream, groups of {n}",
                    vl.is_some(),
                    quads.is_some()
                );
                check_keystream_pass(&what, |lanes, macs| {
                    for (group, macs) in lanes.chunks_mut(n).zip(macs.chunks_mut(n)) {
                        check_cfb_mac_lanes(group, macs);
                        // SAFETY: checked on the line above.
                        unsafe { run_group::<true>(t, vl, quads, group, macs) };
                    }
                });
            }
        }
    }

    /// Every lane count 1..=32 (odd and even, one call and split calls), shared and per-lane
    /// keys, all key sizes, all four chain rules, on every
    /// backend this CPU runs.
    #[test]
    fn windows_match_single_lanes_on_every_backend() {
        for b in crate::Backend::supported(&crate::CpuFeatures::detect()) {
            let k = Kernels::new(b).unwrap();
            for n in 1..=32 {
                for shared in [false, true] {
                    let klen = [16, 24, 32][n % 3];
                    group_matches_single_lanes::<Cbc>(k, n, shared, klen);
                    group_matches_single_lanes::<Cfb>(k, n, shared, klen);
                    group_matches_single_lanes::<Ofb>(k, n, shared, klen);
                    group_matches_single_lanes::<Mac>(k, n, shared, klen);
                }
            }
        }
    }
}
