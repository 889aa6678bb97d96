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
/// the output xors data.
///
/// With `CHAIN_IS_DATA` the chaining value is the data block alone, `c_i = p_i`: the cipher
/// output only reaches the output. That is CFB decryption's shape (`P_i = C_i ^ E(C_{i-1})`);
/// its blocks do not depend on each other, but as a chain rule it runs on the same
/// register-resident window kernels as the real chains, many lanes side by side. Requires
/// neither `INPUT_XORS_DATA` nor `CHAIN_XORS_DATA`.
///
/// With `CHAIN_FIX1` the chaining value is `fix1(c_i)`, `c_i` with the most significant bit
/// of its byte 0 set (CLOC's and SILC's CFB variant, `K_{i+1} = E(fix1(C_i))`): that is the
/// next input and the value the lane's `chain` holds after a window, while the written output
/// stays as above. A lane's initial `chain` is used as is (CLOC's `V`, which is not fixed).
/// Not combined with `INPUT_XORS_DATA` (no mode needs it, and the kernels fold the bit into
/// the next whitening assuming nothing else joins the chain there).
///
/// Both default to `false`, the plain rules above.
pub(crate) trait ChainRule {
    const INPUT_XORS_DATA: bool;
    const CHAIN_XORS_DATA: bool;
    const WRITES_OUTPUT: bool;
    const OUTPUT_XORS_DATA: bool;
    const CHAIN_IS_DATA: bool = false;
    const CHAIN_FIX1: bool = false;
}

/// The bit `fix1` sets: the most significant bit of byte 0, as a little-endian 128-bit lane
/// (byte 0 is the lowest byte of a loaded vector).
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
        for lane in &mut self.0 {
            crate::block::wipe(&mut lane.chain);
        }
    }
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
