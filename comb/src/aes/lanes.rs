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
pub(crate) trait ChainRule {
    const INPUT_XORS_DATA: bool;
    const CHAIN_XORS_DATA: bool;
    const WRITES_OUTPUT: bool;
    const OUTPUT_XORS_DATA: bool;
}

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
