//! Message buffers with a fixed, benign memory layout.
//!
//! Where the allocator happens to put inputs and outputs changes the speed of a dependent
//! chain by up to 1.7× on the machines we measured: when an output block and a later input
//! block share their address bits 11..0 ("4K aliasing"), the load waits for the store. Two
//! separately allocated 32 KiB buffers, for instance, sit 32 KiB + 16 bytes apart, which is
//! exactly that. So every batch lives in one allocation: inputs back to back from a 64-byte
//! boundary (each slot rounded up to 64 bytes), outputs in the same slots after them, and
//! each output exactly `2048 (mod 4096)` bytes after its input. Layout no longer depends on
//! what was allocated before, and results are reproducible.
//!
//! Slots also leave a 64-byte gap after each message, as packet buffers leave headroom.
//! Without it, equal power-of-two lengths put every lane of a window on the same few L1 sets:
//! 2 KiB messages back to back map lanes `j` and `j + 2` (and their outputs) to one set, and
//! 16 lanes' 32 streams overflow its 8 ways. CBC encryption with 16 lanes then ran at 0.52
//! TSC cycles/byte instead of 0.25 on Zen 3, a property of the layout, not of any engine.
//! The gap alone does not prevent it: a message of 1921..=1984 bytes fills a slot of 1984
//! and its gap makes the stride 2048 again (Zen 4, 1968-byte messages: CBC 0.367 TSC
//! cycles/byte, 2048-byte ones 0.180). So a stride that is a multiple of 512 bytes, which
//! would put the lanes of a window on 8 or fewer of the 64 L1 sets, takes one more
//! `SLOT_ALIGN`.

/// Alignment of every message slot.
pub const SLOT_ALIGN: usize = 64;
/// Distance of an output from its input, modulo 4096.
pub const OUT_SKEW: usize = 2048;
/// Unused bytes after each message's slot (see the module documentation).
pub const SLOT_GAP: usize = 64;

/// The inputs and output buffers of a batch of messages.
#[derive(Debug)]
pub struct Buffers {
    mem: Vec<u8>,
    /// `(offset, len)` of every input and output in `mem`, outputs in increasing order.
    ins: Vec<(usize, usize)>,
    outs: Vec<(usize, usize)>,
}

fn round_up(x: usize, to: usize) -> usize {
    x.div_ceil(to) * to
}

/// Bytes from one message's slot to the next for a message of `len` bytes: rounded up to
/// `SLOT_ALIGN`, plus `SLOT_GAP`, plus `SLOT_ALIGN` more where that is a multiple of 512
/// (see the module documentation).
fn slot_stride(len: usize) -> usize {
    let s = round_up(len, SLOT_ALIGN) + SLOT_GAP;
    if s.is_multiple_of(512) {
        s + SLOT_ALIGN
    } else {
        s
    }
}

impl Buffers {
    /// Zeroed buffers for inputs of `in_lens` bytes and outputs of `out_lens` bytes.
    pub fn new(in_lens: &[usize], out_lens: &[usize]) -> Buffers {
        debug_assert_eq!(in_lens.len(), out_lens.len());
        let strides: Vec<usize> = in_lens
            .iter()
            .zip(out_lens)
            .map(|(&i, &o)| slot_stride(i.max(o)))
            .collect();
        let total: usize = strides.iter().sum();
        let out_rel = round_up(total, 4096) + OUT_SKEW;
        let mut mem = vec![0u8; out_rel + total + SLOT_ALIGN];
        let start = mem
            .as_mut_ptr()
            .align_offset(SLOT_ALIGN)
            .min(SLOT_ALIGN - 1);
        let mut ins = Vec::with_capacity(in_lens.len());
        let mut outs = Vec::with_capacity(in_lens.len());
        let mut at = start;
        for ((&i, &o), &s) in in_lens.iter().zip(out_lens).zip(&strides) {
            ins.push((at, i));
            outs.push((at + out_rel, o));
            at += s;
        }
        Buffers { mem, ins, outs }
    }

    /// Number of messages.
    pub fn len(&self) -> usize {
        self.ins.len()
    }

    /// Input bytes of all messages.
    pub fn bytes(&self) -> u64 {
        self.ins.iter().map(|&(_, l)| l as u64).sum()
    }

    /// Input `i`.
    pub fn input(&self, i: usize) -> &[u8] {
        let (o, l) = self.ins[i];
        &self.mem[o..o + l]
    }

    /// Input `i`, writable (to fill it).
    pub fn input_mut(&mut self, i: usize) -> &mut [u8] {
        let (o, l) = self.ins[i];
        &mut self.mem[o..o + l]
    }

    /// Output buffer `i`.
    pub fn output(&self, i: usize) -> &[u8] {
        let (o, l) = self.outs[i];
        &self.mem[o..o + l]
    }

    /// Every input, in order.
    pub fn inputs(&self) -> impl Iterator<Item = &[u8]> + '_ {
        self.ins.iter().map(|&(o, l)| &self.mem[o..o + l])
    }

    /// Every `(input, output)` pair, in order.
    pub fn io_mut(&mut self) -> impl Iterator<Item = (&[u8], &mut [u8])> + '_ {
        let split = self.outs.first().map(|o| o.0).unwrap_or(self.mem.len());
        let (lo, hi) = self.mem.split_at_mut(split);
        let lo: &[u8] = lo;
        let mut rest: &mut [u8] = hi;
        let mut pos = split;
        self.ins
            .iter()
            .zip(&self.outs)
            .map(move |(&(io, il), &(oo, ol))| {
                let tail = std::mem::take(&mut rest);
                let (_, tail) = tail.split_at_mut(oo - pos);
                let (out, tail) = tail.split_at_mut(ol);
                rest = tail;
                pos = oo + ol;
                (&lo[io..io + il], out)
            })
    }

    /// Address of input `i` (for tests of the layout).
    #[cfg(test)]
    fn in_addr(&self, i: usize) -> usize {
        self.input(i).as_ptr() as usize
    }

    #[cfg(test)]
    fn out_addr(&self, i: usize) -> usize {
        self.output(i).as_ptr() as usize
    }
}

impl Clone for Buffers {
    /// A copy with the same layout rules (a plain `Vec` clone could change the alignment).
    fn clone(&self) -> Buffers {
        let in_lens: Vec<usize> = self.ins.iter().map(|x| x.1).collect();
        let out_lens: Vec<usize> = self.outs.iter().map(|x| x.1).collect();
        let mut b = Buffers::new(&in_lens, &out_lens);
        for i in 0..self.len() {
            b.input_mut(i).copy_from_slice(self.input(i));
            let (o, l) = b.outs[i];
            b.mem[o..o + l].copy_from_slice(self.output(i));
        }
        b
    }
}

impl PartialEq for Buffers {
    fn eq(&self, other: &Buffers) -> bool {
        self.len() == other.len()
            && (0..self.len())
                .all(|i| self.input(i) == other.input(i) && self.output(i) == other.output(i))
    }
}

impl Eq for Buffers {}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn layout_is_aligned_disjoint_and_skewed() {
        let ins = [0usize, 40, 1500, 2048, 16, 33];
        let outs = [0usize, 48, 1504, 2048, 32, 48];
        let b = Buffers::new(&ins, &outs);
        assert_eq!(b.len(), 6);
        assert_eq!(b.bytes(), ins.iter().sum::<usize>() as u64);
        for i in 0..b.len() {
            assert_eq!(b.in_addr(i) % SLOT_ALIGN, 0);
            assert_eq!(b.out_addr(i) % SLOT_ALIGN, 0);
            assert_eq!((b.out_addr(i) - b.in_addr(i)) % 4096, OUT_SKEW);
            assert_eq!(b.input(i).len(), ins[i]);
            assert_eq!(b.output(i).len(), outs[i]);
        }
        // Outputs start after the last input ends.
        let last_in_end = b.in_addr(5) + 64;
        assert!(b.out_addr(0) >= last_in_end);
    }

    /// Equal lengths never put the lanes on few L1 sets: for every length up to 4 KiB the
    /// stride is not a multiple of 512 bytes, so 16 consecutive slots start in 16 different
    /// sets (64-byte lines, 64 sets).
    #[test]
    fn equal_lengths_spread_over_the_l1_sets() {
        for len in 0..=4096 {
            let s = slot_stride(len);
            assert!(
                s >= len + SLOT_GAP && s.is_multiple_of(SLOT_ALIGN) && !s.is_multiple_of(512),
                "{len}"
            );
            let sets: std::collections::BTreeSet<usize> =
                (0..16).map(|j| (j * s / 64) % 64).collect();
            assert_eq!(sets.len(), 16, "{len}");
        }
        let b = Buffers::new(&[1968; 16], &[1968; 16]);
        assert_eq!(b.in_addr(1) - b.in_addr(0), 2048 + SLOT_ALIGN);
    }

    #[test]
    fn io_pairs_and_clone() {
        let mut b = Buffers::new(&[3, 70], &[3, 80]);
        b.input_mut(0).copy_from_slice(&[1, 2, 3]);
        b.input_mut(1).fill(9);
        for (i, o) in b.io_mut() {
            o[..i.len()].copy_from_slice(i);
        }
        assert_eq!(b.output(0), &[1, 2, 3]);
        assert_eq!(&b.output(1)[..70], &[9; 70][..]);
        assert_eq!(&b.output(1)[70..], &[0; 10][..]);
        let c = b.clone();
        assert_eq!(c, b);
        assert_eq!((c.out_addr(1) - c.in_addr(1)) % 4096, OUT_SKEW);
        assert_eq!(c.inputs().count(), 2);
        let empty = Buffers::new(&[], &[]);
        assert_eq!(empty.len(), 0);
    }
}
