//! What the lane kernels of every backend share: how a chained mode links its blocks, a lane
//! of the comb scheduler, and the parallel modes the wide kernels run.

use super::AesKey;
use crate::block::{Block, IoPtrs};

/// How a sequential mode links block `i` to block `i + 1`, in terms of the cipher output
/// `y_i = E(in_i)`, the data block `p_i` and the chaining value `c_i`:
///
/// * `in_{i+1} = c_i ^ (INPUT_XORS_DATA ? p_{i+1} : 0)`
/// * `c_i = y_i ^ (CHAIN_XORS_DATA ? p_i : 0)`
/// * output block `i` (if `WRITES_OUTPUT`) `= y_i ^ (OUTPUT_XORS_DATA ? p_i : 0)`
///
/// CBC encryption and CMAC: input xors data; CFB encryption: chain xors data; OFB: neither,
/// the output xors data. (CLOC's and SILC's chains, `fix1` of the ciphertext feeding both the
/// next block and a MAC, have kernels of their own: `cfb_mac_window` on xmm, `cfb_mac_lanes`
/// on ymm.)
pub(crate) trait ChainRule {
    const INPUT_XORS_DATA: bool;
    const CHAIN_XORS_DATA: bool;
    const WRITES_OUTPUT: bool;
    const OUTPUT_XORS_DATA: bool;
}

/// Whether a rule's written block `i` equals its chaining value `c_i`: the chain and the
/// output both xor the data and the next input does not (CFB encryption: `C_i = y_i ^ p_i`).
/// The ymm window kernel then writes the state its folded last round left, `c_i ^ k_0`, less
/// `k_0`, instead of reloading `p_i` to undo the fold (the reload cannot be merged with the
/// step's first load of `p_i`: the other registers' stores lie between them). The xmm kernel
/// keeps `p_i` in a register through the step; the same change there made no measured
/// difference.
pub(crate) const fn output_is_next_chain<R: ChainRule>() -> bool {
    R::WRITES_OUTPUT && R::CHAIN_XORS_DATA && R::OUTPUT_XORS_DATA && !R::INPUT_XORS_DATA
}

/// The bit CLOC's and SILC's `fix1` sets: the most significant bit of byte 0, as a
/// little-endian 128-bit lane (byte 0 is the lowest byte of a loaded vector).
pub(crate) const FIX1_BIT: i32 = 0x80;

/// One message (lane) of a chained mode as the window kernel sees it.
#[derive(Clone, Copy, Debug)]
pub(crate) struct ChainLane<'a> {
    pub(crate) io: IoPtrs<'a>,
    /// Chaining value `c` before the lane's next block (the IV at the start).
    pub(crate) chain: Block,
    pub(crate) key: &'a AesKey,
    /// Whole blocks of this lane that the scheduler may process (`16 * blocks <= io.len`, and
    /// `<= io.out_cap` when the rule writes output).
    pub(crate) blocks: usize,
}

/// A set of lanes whose chaining values are wiped when it is dropped (a CMAC chain value is
/// as secret as the tag; CBC/CFB/OFB chain values are keystream or ciphertext state).
#[derive(Debug, Default)]
pub(crate) struct Lanes<'a>(pub(crate) Vec<ChainLane<'a>>);

impl Drop for Lanes<'_> {
    fn drop(&mut self) {
        wipe_chains(&mut self.0);
    }
}

/// Zeroes the chaining value of every slot of `v`'s allocation, its lanes and its spare
/// capacity: the executors reuse one group vector after `clear`, so a last group shorter than
/// the others leaves earlier groups' final chains (a CMAC chain is as secret as the tag) in
/// slots past its length. The same as [`crate::block::SecretBlocks`] does for blocks.
fn wipe_chains(v: &mut Vec<ChainLane<'_>>) {
    let p = v.as_mut_ptr();
    for i in 0..v.capacity() {
        // SAFETY: slot `i` is inside the allocation; writing one field through a raw pointer
        // neither reads nor drops the slot, initialised or not (`ChainLane` has no drop glue).
        unsafe {
            core::ptr::write_volatile(core::ptr::addr_of_mut!((*p.add(i)).chain), [0u8; 16]);
        }
    }
    core::sync::atomic::compiler_fence(core::sync::atomic::Ordering::SeqCst);
}

impl<'a> core::ops::Deref for Lanes<'a> {
    type Target = Vec<ChainLane<'a>>;
    fn deref(&self) -> &Vec<ChainLane<'a>> {
        &self.0
    }
}

impl<'a> core::ops::DerefMut for Lanes<'a> {
    fn deref_mut(&mut self) -> &mut Vec<ChainLane<'a>> {
        &mut self.0
    }
}

/// Which parallel mode a wide kernel runs.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Parallel {
    EcbEncrypt,
    EcbDecrypt,
    CbcDecrypt,
    CfbDecrypt,
}

/// The const parameter of the wide kernels: one monomorphised loop per parallel mode (a
/// runtime match inside the loop kept the blocks on the stack and cost 10% on ECB).
pub(crate) const ECB_ENC: u8 = 0;
pub(crate) const ECB_DEC: u8 = 1;
pub(crate) const CBC_DEC: u8 = 2;
pub(crate) const CFB_DEC: u8 = 3;

/// `dispatch_parallel!(mode, kernel(args..))`: `kernel::<CODE>(args..)` with the const code
/// of the runtime `mode`; every backend's entry point maps modes to its kernel through this.
macro_rules! dispatch_parallel {
    ($mode:expr, $kernel:ident($($arg:expr),* $(,)?)) => {{
        use $crate::aes::lanes::{CBC_DEC, CFB_DEC, ECB_DEC, ECB_ENC};
        match $mode {
            $crate::aes::Parallel::EcbEncrypt => $kernel::<ECB_ENC>($($arg),*),
            $crate::aes::Parallel::EcbDecrypt => $kernel::<ECB_DEC>($($arg),*),
            $crate::aes::Parallel::CbcDecrypt => $kernel::<CBC_DEC>($($arg),*),
            $crate::aes::Parallel::CfbDecrypt => $kernel::<CFB_DEC>($($arg),*),
        }
    }};
}
pub(crate) use dispatch_parallel;

/// `dispatch_width!(width, kernel(args..))`: `kernel::<LOW32>(args..)` with the const flag of
/// the runtime counter width (one loop per width, no branch on it inside).
macro_rules! dispatch_width {
    ($width:expr, $kernel:ident($($arg:expr),* $(,)?)) => {
        match $width {
            $crate::aes::CounterWidth::Full128 => $kernel::<false>($($arg),*),
            $crate::aes::CounterWidth::Low32 => $kernel::<true>($($arg),*),
        }
    };
}
pub(crate) use dispatch_width;

/// `dispatch_pairs!(n, shared, kernel::<LAST..>(args..))`: the kernel of a ymm window that holds
/// two lanes per register, for `n` lanes (2..=16): `kernel::<PAIRS, ODD, SHARED, LAST..>(args..)`
/// with `PAIRS = ⌈n / 2⌉` registers, `ODD` when `n` is odd (the last register's high half a
/// ghost whose results are dropped) and the runtime `shared` (every lane has lane 0's key) as
/// a const. The kernels are `unsafe fn`s: the caller wraps the call in `unsafe` and says why
/// it is sound.
macro_rules! dispatch_pairs {
    (@call $kernel:ident, $pairs:literal, $odd:literal, $shared:expr, ($($last:ident),+), ($($arg:expr),*)) => {
        if $shared {
            $kernel::<$pairs, $odd, true, $($last),+>($($arg),*)
        } else {
            $kernel::<$pairs, $odd, false, $($last),+>($($arg),*)
        }
    };
    ($n:expr, $shared:expr, $kernel:ident::<$($last:ident),+>($($arg:expr),* $(,)?)) => {
        match $n {
            2 => $crate::aes::lanes::dispatch_pairs!(@call $kernel, 1, false, $shared, ($($last),+), ($($arg),*)),
            3 => $crate::aes::lanes::dispatch_pairs!(@call $kernel, 2, true, $shared, ($($last),+), ($($arg),*)),
            4 => $crate::aes::lanes::dispatch_pairs!(@call $kernel, 2, false, $shared, ($($last),+), ($($arg),*)),
            5 => $crate::aes::lanes::dispatch_pairs!(@call $kernel, 3, true, $shared, ($($last),+), ($($arg),*)),
            6 => $crate::aes::lanes::dispatch_pairs!(@call $kernel, 3, false, $shared, ($($last),+), ($($arg),*)),
            7 => $crate::aes::lanes::dispatch_pairs!(@call $kernel, 4, true, $shared, ($($last),+), ($($arg),*)),
            8 => $crate::aes::lanes::dispatch_pairs!(@call $kernel, 4, false, $shared, ($($last),+), ($($arg),*)),
            9 => $crate::aes::lanes::dispatch_pairs!(@call $kernel, 5, true, $shared, ($($last),+), ($($arg),*)),
            10 => $crate::aes::lanes::dispatch_pairs!(@call $kernel, 5, false, $shared, ($($last),+), ($($arg),*)),
            11 => $crate::aes::lanes::dispatch_pairs!(@call $kernel, 6, true, $shared, ($($last),+), ($($arg),*)),
            12 => $crate::aes::lanes::dispatch_pairs!(@call $kernel, 6, false, $shared, ($($last),+), ($($arg),*)),
            13 => $crate::aes::lanes::dispatch_pairs!(@call $kernel, 7, true, $shared, ($($last),+), ($($arg),*)),
            14 => $crate::aes::lanes::dispatch_pairs!(@call $kernel, 7, false, $shared, ($($last),+), ($($arg),*)),
            15 => $crate::aes::lanes::dispatch_pairs!(@call $kernel, 8, true, $shared, ($($last),+), ($($arg),*)),
            16 => $crate::aes::lanes::dispatch_pairs!(@call $kernel, 8, false, $shared, ($($last),+), ($($arg),*)),
            _ => unreachable!("2..=16 lanes, two per register"),
        }
    };
}
pub(crate) use dispatch_pairs;

#[cfg(test)]
mod tests {
    use super::*;
    use crate::block::IoPtrs;

    /// The chains of lanes past the vector's length are zeroed too.
    #[test]
    fn lanes_wipe_the_chains_of_their_spare_capacity_too() {
        let key = AesKey::new(&[7; 16]).unwrap();
        let input = [0u8; 32];
        let lane = ChainLane {
            io: IoPtrs::read_only(&input),
            chain: [0xa5; 16],
            key: &key,
            blocks: 2,
        };
        let mut v: Vec<ChainLane<'_>> = Vec::with_capacity(4);
        v.resize(v.capacity(), lane);
        let cap = v.capacity();
        v.truncate(1);
        wipe_chains(&mut v);
        // SAFETY: all `cap` slots were initialised by `resize`; the wipe wrote only their
        // chains.
        unsafe { v.set_len(cap) };
        assert!(v.iter().all(|l| l.chain == [0; 16] && l.blocks == 2));
        // The drop path runs the same function.
        drop(Lanes(v));
    }
}
