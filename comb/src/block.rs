//! The 16-byte block and the raw view of one message's input and output.

use core::marker::PhantomData;

/// AES block size in bytes.
pub const BLOCK: usize = 16;

/// A 16-byte block.
pub type Block = [u8; BLOCK];

/// Doubling in GF(2^128) with the CMAC polynomial x^128 + x^7 + x^2 + x + 1, big-endian bit
/// order (SP 800-38B). Constant time: the reduction is a mask, not a branch.
#[inline]
pub fn dbl(b: &Block) -> Block {
    dbl_u128(u128::from_be_bytes(*b)).to_be_bytes()
}

/// [`dbl`] of a block read as a big-endian integer (byte 0 most significant): a chain of
/// masks kept in this form needs no byte swaps between its doublings.
#[inline]
pub(crate) fn dbl_u128(v: u128) -> u128 {
    let carry = 0u128.wrapping_sub(v >> 127); // all ones iff the top bit was set
    (v << 1) ^ (carry & 0x87)
}

/// `7·v = 4·v ⊕ 2·v ⊕ v` on the integer form of [`dbl_u128`].
#[inline]
pub(crate) fn mul7_u128(v: u128) -> u128 {
    let d = dbl_u128(v);
    dbl_u128(d) ^ d ^ v
}

/// Overwrites a block with zeros in one volatile 16-byte write that the optimiser may not
/// remove (`zeroize` writes a `[u8; 16]` byte by byte: 16 stores, measured at about a fifth
/// of the per-job cost of a batch of 128-byte CBC messages, where every job's chaining
/// value is wiped).
#[inline]
pub(crate) fn wipe(b: &mut Block) {
    // SAFETY: `b` is a valid reference to a `[u8; 16]` (alignment 1); volatile keeps the
    // store although `b` may never be read again. LLVM (Rust 1.95) stores a zero block to the
    // stack, loads it back and stores it here: three instructions, still one 16-byte write to
    // `b`. A single `movups` in `asm!` measured no faster (realistic mix and 64-byte CBC and
    // OCB3 batches on a Zen 3 VM), so this stays free of inline assembly.
    unsafe { core::ptr::write_volatile(b, [0u8; BLOCK]) };
    core::sync::atomic::compiler_fence(core::sync::atomic::Ordering::SeqCst);
}

/// A vector of secret blocks, every block of its allocation wiped on drop with [`wipe`] (one
/// 16-byte write each): `zeroize` on a `Vec<[u8; 16]>` writes it byte by byte, which took
/// 5-9% of the samples of `cloc::run` (CLOC's code outside the kernels) on the realistic mix
/// (Zen 3, `perf annotate`). The spare capacity is wiped too, as `zeroize` does: a vector
/// reused after `clear` keeps old blocks there.
pub(crate) struct SecretBlocks(pub(crate) Vec<Block>);

impl Drop for SecretBlocks {
    fn drop(&mut self) {
        wipe_capacity(&mut self.0);
    }
}

/// Zeroes every block of `v`'s allocation, its length and its spare capacity, with volatile
/// 16-byte writes.
fn wipe_capacity(v: &mut Vec<Block>) {
    let p = v.as_mut_ptr();
    for i in 0..v.capacity() {
        // SAFETY: `i` is within the allocation (capacity), which is valid for writes of whole
        // blocks whether or not they are initialised; `Block` has no drop glue.
        unsafe { core::ptr::write_volatile(p.add(i), [0u8; BLOCK]) };
    }
    core::sync::atomic::compiler_fence(core::sync::atomic::Ordering::SeqCst);
}

impl core::ops::Deref for SecretBlocks {
    type Target = Vec<Block>;
    fn deref(&self) -> &Vec<Block> {
        &self.0
    }
}

impl core::ops::DerefMut for SecretBlocks {
    fn deref_mut(&mut self) -> &mut Vec<Block> {
        &mut self.0
    }
}

/// Scratch blocks that [`with_scratch`] keeps on the stack: up to 32 KiB, a comb group of 16
/// messages of 2 KiB.
const STACK_SCRATCH_BLOCKS: usize = 2048;

/// Runs `f` on `n` zeroed scratch blocks and wipes them ([`wipe`], also when `f` unwinds):
/// on the stack up to [`STACK_SCRATCH_BLOCKS`] (in arrays of 1, 4 or 32 KiB, so that one
/// short message does not zero 32 KiB), else a heap [`SecretBlocks`].
///
/// A fresh heap buffer of tens of KiB per call costs page faults whenever the allocator has
/// given its memory back between calls. In-place CLOC decryption, whose keystream waits in
/// scratch until the tag is checked, had a heap buffer for the whole batch: 14 more page
/// faults per batch of 64 messages of 1440 bytes than out of place, and 1596-1701 TSC ticks
/// per message against 653-733 (Intel AVX-512 VM, fastest of 100 calls). With one comb
/// group's scratch here (23 KiB), as many page faults as out of place, and 635-842 ticks
/// (four runs alternated with the old build, which took 1215-1666 in them; out of place
/// 604-639 there).
pub(crate) fn with_scratch<R>(n: usize, f: impl FnOnce(&mut [Block]) -> R) -> R {
    /// Wipes its blocks on drop.
    struct Wiped<'a>(&'a mut [Block]);
    impl Drop for Wiped<'_> {
        fn drop(&mut self) {
            self.0.iter_mut().for_each(wipe);
        }
    }
    fn on_stack<const N: usize, R>(n: usize, f: impl FnOnce(&mut [Block]) -> R) -> R {
        let mut buf = [[0u8; BLOCK]; N];
        let scratch = Wiped(&mut buf[..n]);
        f(&mut *scratch.0)
    }
    match n {
        0 => f(&mut []),
        1..=64 => on_stack::<64, R>(n, f),
        65..=256 => on_stack::<256, R>(n, f),
        257..=STACK_SCRATCH_BLOCKS => on_stack::<STACK_SCRATCH_BLOCKS, R>(n, f),
        _ => f(&mut SecretBlocks(vec![[0u8; BLOCK]; n])),
    }
}

/// Whether the first `expected.len()` (1..=16) bytes of `computed` equal `expected`, in
/// constant time: both sides masked to those bytes in one 128-bit word and compared with
/// `subtle`'s word comparison (a xor and a mask, no data-dependent branch or early exit).
/// Only the tag length, which is public, steers the mask.
pub(crate) fn tag_matches(computed: &Block, expected: &[u8]) -> bool {
    use subtle::ConstantTimeEq;
    let n = expected.len().min(BLOCK);
    // A 16-byte tag is one load; a shorter one word loads (`load_short`), not a `memcpy`
    // call into a block read back at once.
    let mut e = expected
        .first_chunk::<BLOCK>()
        .copied()
        .unwrap_or_else(|| load_short(expected));
    let mask = prefix_mask(n);
    let equal = (u128::from_le_bytes(*computed) & mask).ct_eq(&(u128::from_le_bytes(e) & mask));
    wipe(&mut e);
    bool::from(equal)
}

// Byte-granular block surgery in 128-bit integer arithmetic. A variable-length byte copy
// into a block followed by a 16-byte load of it stalls store forwarding (measured: the
// costliest instruction of POET's and McOE-G's batch glue) and calls `memcpy`; these are a
// few register operations. Blocks are read as little-endian integers, so that byte `k` is
// bits `8k..8k+8` and no byte swap is needed (with big-endian words the compiler assembled
// every `to_be_bytes` byte by byte: measured the costliest line of McOE-G's glue). Lengths
// are public (message lengths), never secret.

/// Sixteen `0xFF` bytes then sixteen zeros: the 16 bytes from `16 - l` are the mask of a
/// block's first `l` bytes ([`prefix_mask`]).
static MASK_WINDOW: [u8; 2 * BLOCK] = {
    let mut w = [0u8; 2 * BLOCK];
    let mut i = 0;
    while i < BLOCK {
        w[i] = 0xFF;
        i += 1;
    }
    w
};

/// Sixteen zeros, `0x80`, fifteen zeros: the 16 bytes from `16 - n` have `0x80` at byte `n`
/// (none for `n = 16`), the `10*` padding bit of [`pad10`].
static PAD_WINDOW: [u8; 2 * BLOCK] = {
    let mut w = [0u8; 2 * BLOCK];
    w[BLOCK] = 0x80;
    w
};

/// The 16 bytes of `window` from `16 - min(l, 16)`: one unaligned load from a constant.
/// Shifting a `u128` instead computed the mask in a pair of general registers, and a block
/// combined with it went through the stack as two 8-byte halves that a 16-byte load of the
/// block then waited on (store forwarding fails from two stores to one load): seen on
/// OCB3's checksum of a partial last block (see `modes::ocb3::run_chunk`).
#[inline(always)]
fn window(window: &'static [u8; 2 * BLOCK], l: usize) -> u128 {
    u128::from_le_bytes(*window_block(window, l))
}

/// The block of `window` from `16 - min(l, 16)`, in place.
#[inline(always)]
fn window_block(window: &'static [u8; 2 * BLOCK], l: usize) -> &'static Block {
    let at = BLOCK - l.min(BLOCK);
    window[at..]
        .first_chunk()
        .expect("at <= 16 leaves 16 bytes of a 32-byte window")
}

/// The first `l` (0..=16) bytes of a block, as a mask on its little-endian integer.
#[inline]
fn prefix_mask(l: usize) -> u128 {
    window(&MASK_WINDOW, l)
}

/// The constant blocks of a cut after `l` bytes (l <= 16, larger means 16): the mask of the
/// first `l` bytes and the `10*` pad byte at `l` (all ones and zero for a whole block), as
/// references into the constant windows, for kernels that load them into vector registers.
#[inline]
pub(crate) fn cut_windows(l: usize) -> (&'static Block, &'static Block) {
    (window_block(&MASK_WINDOW, l), window_block(&PAD_WINDOW, l))
}

/// `a[..l] ‖ b[l..]` (l <= 16).
#[inline]
pub(crate) fn merge(a: &Block, b: &Block, l: usize) -> Block {
    let keep = prefix_mask(l);
    ((u128::from_le_bytes(*a) & keep) | (u128::from_le_bytes(*b) & !keep)).to_le_bytes()
}

/// `b[..n] ‖ 0^(16-n)` (n <= 16, larger means 16): the first `n` bytes, the rest zero.
#[inline]
pub(crate) fn truncate(b: &Block, n: usize) -> Block {
    merge(b, &[0; BLOCK], n)
}

/// `a ^ b`.
#[inline(always)]
pub(crate) fn xor(a: &Block, b: &Block) -> Block {
    (u128::from_ne_bytes(*a) ^ u128::from_ne_bytes(*b)).to_ne_bytes()
}

/// `a ^= b`.
#[inline(always)]
pub(crate) fn xor_into(a: &mut Block, b: &Block) {
    *a = xor(a, b);
}

/// `b` with byte `n` set to `0x80`: the `10*` padding of a block whose bytes from `n` on
/// are zero (`n` = 16, a whole block: unchanged). An `or` with a constant block, not a byte
/// store: a byte store into the block followed by its 16-byte load cannot be forwarded and
/// stalls the load (OCB3's and CMAC's padded last blocks). `n` is a public length.
#[inline]
pub(crate) fn pad10(b: &Block, n: usize) -> Block {
    (u128::from_le_bytes(*b) | window(&PAD_WINDOW, n)).to_le_bytes()
}

/// `a[n..] ‖ 0ⁿ` (n <= 16): the block moved `n` bytes towards its start.
#[inline]
pub(crate) fn shift_to_front(a: &Block, n: usize) -> Block {
    u128::from_le_bytes(*a)
        .checked_shr(8 * n as u32)
        .unwrap_or(0)
        .to_le_bytes()
}

/// `0ⁿ ‖ a[..16-n]` (n <= 16): the block moved `n` bytes towards its end.
#[inline]
pub(crate) fn shift_to_back(a: &Block, n: usize) -> Block {
    u128::from_le_bytes(*a)
        .checked_shl(8 * n as u32)
        .unwrap_or(0)
        .to_le_bytes()
}

/// `head[..l] ‖ tail[..16 - l]` (l <= 16, `tail` at least `16 - l` bytes): a block cut at
/// `l` and completed from another.
#[inline]
pub(crate) fn splice(head: &Block, l: usize, tail: &[u8]) -> Block {
    let t: Block = tail
        .first_chunk::<BLOCK>()
        .copied()
        .unwrap_or_else(|| load_short(&tail[..BLOCK - l]));
    merge(head, &shift_to_back(&t, l), l)
}

/// Writes `b[..n]` to `out[..n]`, `n = min(out.len(), 16)`, as one block store when `n` is
/// 16, else at most two overlapping word stores (both write the same bytes where they
/// overlap): the store-side counterpart of [`load_short`], for tags of 4..=16 bytes. A
/// `copy_from_slice` of a variable length is a `memcpy` call per message.
#[inline]
pub(crate) fn store_short(out: &mut [u8], b: &Block) {
    // A whole 16-byte tag (OTR's, GCM's, OCB3's, ...): one store, not two with a variable
    // shift between them.
    if let Some(o) = out.first_chunk_mut::<BLOCK>() {
        *o = *b;
        return;
    }
    let n = out.len().min(BLOCK);
    let v = u128::from_le_bytes(*b);
    match n {
        8..=16 => {
            if let Some(lo) = out.first_chunk_mut::<8>() {
                *lo = (v as u64).to_le_bytes();
            }
            if let Some(hi) = out[n - 8..].first_chunk_mut::<8>() {
                *hi = ((v >> (8 * (n - 8))) as u64).to_le_bytes();
            }
        }
        4..=7 => {
            if let Some(lo) = out.first_chunk_mut::<4>() {
                *lo = (v as u32).to_le_bytes();
            }
            if let Some(hi) = out[n - 4..].first_chunk_mut::<4>() {
                *hi = ((v >> (8 * (n - 4))) as u32).to_le_bytes();
            }
        }
        // 0..=3 bytes, one at a time.
        _ => {
            for (k, o) in out[..n].iter_mut().enumerate() {
                *o = (v >> (8 * k)) as u8;
            }
        }
    }
}

/// `bytes ‖ 0^(16-n)` for a slice of `n` <= 16 bytes (more: its first 16), read as at most
/// two overlapping word loads (the bytes both words hold land on the same bits, so an `or`
/// joins them): no `memcpy` call, and no byte stores for a following 16-byte load to wait on.
#[inline]
pub(crate) fn load_short(bytes: &[u8]) -> Block {
    let n = bytes.len().min(BLOCK);
    let v = match n {
        // A fixed-width little-endian read compiles to one load each.
        8..=16 => {
            let lo = u64::from_le_bytes(bytes[..8].try_into().unwrap_or([0; 8]));
            let hi = u64::from_le_bytes(bytes[n - 8..n].try_into().unwrap_or([0; 8]));
            u128::from(lo) | u128::from(hi) << (8 * (n - 8))
        }
        4..=7 => {
            let lo = u32::from_le_bytes(bytes[..4].try_into().unwrap_or([0; 4]));
            let hi = u32::from_le_bytes(bytes[n - 4..n].try_into().unwrap_or([0; 4]));
            u128::from(lo) | u128::from(hi) << (8 * (n - 4))
        }
        // 0..=3 bytes, one at a time.
        _ => bytes[..n]
            .iter()
            .enumerate()
            .fold(0, |v, (k, &b)| v | u128::from(b) << (8 * k)),
    };
    v.to_le_bytes()
}

/// Where one message is read from and written to: the same memory (in place) or two
/// distinct buffers. Kernels take this instead of slices because Rust slices cannot express
/// "`dst` may be `src`".
///
/// Invariant (established by the constructors, relied on by every kernel): `src` is valid for
/// reads of `len` bytes and, unless `dst` is null, `dst` is valid for writes of `out_cap`
/// bytes, for the lifetime `'a`. When `src == dst` the memory is one `&mut [u8]`.
#[derive(Clone, Copy, Debug)]
pub(crate) struct IoPtrs<'a> {
    pub(crate) src: *const u8,
    pub(crate) dst: *mut u8,
    pub(crate) len: usize,
    pub(crate) out_cap: usize,
    _life: PhantomData<&'a mut [u8]>,
}

impl<'a> IoPtrs<'a> {
    /// Read `buf[..len]`, write results back into `buf`.
    pub(crate) fn in_place(buf: &'a mut [u8], len: usize) -> IoPtrs<'a> {
        let len = len.min(buf.len());
        IoPtrs {
            src: buf.as_ptr(),
            dst: buf.as_mut_ptr(),
            len,
            out_cap: buf.len(),
            _life: PhantomData,
        }
    }

    /// Read `src`, write `dst`.
    pub(crate) fn copy(src: &'a [u8], dst: &'a mut [u8]) -> IoPtrs<'a> {
        IoPtrs {
            src: src.as_ptr(),
            dst: dst.as_mut_ptr(),
            len: src.len(),
            out_cap: dst.len(),
            _life: PhantomData,
        }
    }

    /// Read `src`; nothing is written (MACs).
    pub(crate) fn read_only(src: &'a [u8]) -> IoPtrs<'a> {
        IoPtrs {
            src: src.as_ptr(),
            dst: core::ptr::null_mut(),
            len: src.len(),
            out_cap: 0,
            _life: PhantomData,
        }
    }

    /// The input bytes `[off, len)` (at most 16) at the start of a zero-padded block.
    ///
    /// With AVX-512BW/VL, one byte-masked load of exactly those bytes; otherwise at most two
    /// overlapping word loads of them ([`load_short`]). Neither is a variable-length copy (a
    /// `memcpy` call per message cost ~20 cycles, a quarter of a short packet's budget), and
    /// neither reads a byte outside the range: a 16-byte window ending at `len` would start
    /// in the last whole block, which in place the kernel has just stored, and a load partly
    /// over a pending store is not forwarded but waits for the store to commit.
    // Inlined for the same reason as `xor_tail`.
    #[inline]
    pub(crate) fn read_from(&self, off: usize) -> Block {
        assert!(off <= self.len && self.len - off <= BLOCK);
        let n = self.len - off;
        if n == 0 {
            return [0; BLOCK];
        }
        #[cfg(any(target_arch = "x86", target_arch = "x86_64"))]
        if masked_bytes() {
            // SAFETY: the features were just detected; [off, off + n) = [off, len) lies
            // inside the readable input and the masked load touches only those n bytes.
            return unsafe { load_masked(self.src.add(off), n) };
        }
        self.read_from_words(off)
    }

    /// [`IoPtrs::read_from`] without AVX-512 (`off < len`, `len - off <= 16`, checked).
    #[inline]
    fn read_from_words(&self, off: usize) -> Block {
        debug_assert!(off < self.len && self.len - off <= BLOCK);
        // SAFETY: [off, len) lies inside the readable input; the slice ends with this read.
        load_short(unsafe { core::slice::from_raw_parts(self.src.add(off), self.len - off) })
    }

    /// Output bytes of the partial last block: for `n = len % 16 > 0`, output
    /// `[len - n, len)` = input `[len - n, len)` xor `ks[..n]` (CTR, CFB, OFB tails).
    /// Returns those input bytes at the start of a zero block (all zeros when `n` is 0), as
    /// [`IoPtrs::read_from`] would before the write: modes that also need them (a checksum
    /// over the plaintext, a MAC over the ciphertext) get them from the same load.
    ///
    /// Only those `n` bytes are read and written: with AVX-512BW/VL by byte-masked accesses,
    /// otherwise as at most two overlapping words each.
    // Inlined into each mode's tail code: left to the partition of the crate into codegen
    // units, it became a call after unrelated changes (CTR 0.248 -> 0.261 TSC cycles/byte).
    // Always: with `#[inline]` alone it stayed a call in the stream modes' batched tails
    // (`keystream_tails`), returning the input block through memory; forced, `perf` samples
    // of comb CFB on the realistic mix fell 1-5%, OFB's 1-2% (three alternated pairs each).
    #[inline(always)]
    pub(crate) fn xor_tail(&self, ks: &Block) -> Block {
        let n = self.len % BLOCK;
        if n == 0 {
            return [0; BLOCK];
        }
        assert!(!self.dst.is_null() && self.len <= self.out_cap);
        #[cfg(any(target_arch = "x86", target_arch = "x86_64"))]
        if masked_bytes() {
            let at = self.len - n;
            // The input comes back in a register, stored into a block here, where the
            // store is dead code for the callers that ignore it.
            let mut input = [0u8; BLOCK];
            // SAFETY: the features were just detected; [at, len) lies inside the readable
            // input and the writable output (len <= out_cap), and the masked load and store
            // touch only those n bytes; `input` is 16 writable bytes.
            unsafe {
                let x = xor_tail_masked(self.src.add(at), self.dst.add(at), n, ks);
                _mm_storeu_si128(input.as_mut_ptr().cast(), x);
            }
            return input;
        }
        self.xor_tail_words(ks, n)
    }

    /// [`IoPtrs::xor_tail`] without AVX-512 (`n = len % 16`, non-zero; output checked): the
    /// `n` tail bytes read and written as at most two overlapping words each
    /// ([`load_short`], [`store_short`]), touching no other byte. (A 16-byte window ending at
    /// `len` starts in the block the kernel has just stored; its load cannot be forwarded
    /// from that pending store and waits for it to commit.)
    #[inline]
    fn xor_tail_words(&self, ks: &Block, n: usize) -> Block {
        debug_assert!(n == self.len % BLOCK && n > 0 && !self.dst.is_null());
        let at = self.len - n;
        // SAFETY: [at, len) lies inside the readable input; the slice ends with this read,
        // before the output (in place, the same bytes) is written.
        let input = load_short(unsafe { core::slice::from_raw_parts(self.src.add(at), n) });
        // SAFETY: [at, len) lies inside the writable output (len <= out_cap), and no other
        // reference to it is live.
        let out = unsafe { core::slice::from_raw_parts_mut(self.dst.add(at), n) };
        store_short(out, &xor(&input, ks));
        input
    }

    /// Writes `data[..len - off]` to output `[off, len)` (`len - 16 <= off <= len`): the
    /// write-side counterpart of [`IoPtrs::read_from`]. With AVX-512BW/VL one byte-masked
    /// store of exactly those bytes; otherwise at most two overlapping word stores of them:
    /// no variable-length copy.
    #[inline]
    pub(crate) fn write_tail(&self, off: usize, data: &Block) {
        assert!(off <= self.len && self.len - off <= BLOCK);
        let n = self.len - off;
        if n == 0 {
            return;
        }
        assert!(!self.dst.is_null() && self.len <= self.out_cap);
        #[cfg(any(target_arch = "x86", target_arch = "x86_64"))]
        if masked_bytes() {
            // SAFETY: the features were just detected; [off, len) lies inside the writable
            // output (len <= out_cap) and the masked store touches only those n bytes.
            unsafe { store_masked(self.dst.add(off), n, data) };
            return;
        }
        self.write_tail_words(off, data);
    }

    /// [`IoPtrs::write_tail`] without AVX-512 (`off < len`, output checked): the `n` bytes
    /// written as at most two overlapping words ([`store_short`]), no other byte touched
    /// (see [`IoPtrs::xor_tail_words`]).
    #[inline]
    fn write_tail_words(&self, off: usize, data: &Block) {
        debug_assert!(off < self.len && self.len - off <= BLOCK && !self.dst.is_null());
        let n = self.len - off;
        // SAFETY: [off, len) lies inside the writable output (len <= out_cap), and no other
        // reference to it is live; `data` is a separate block.
        let out = unsafe { core::slice::from_raw_parts_mut(self.dst.add(off), n) };
        store_short(out, data);
    }

    /// The whole input block at byte offset `off` (`off + 16 <= len`, asserted): the
    /// read-side counterpart of [`IoPtrs::write_block`].
    #[inline]
    pub(crate) fn read_block(&self, off: usize) -> Block {
        assert!(off <= self.len && BLOCK <= self.len - off);
        // SAFETY: `src` is readable for `len` bytes (invariant) and the assertion keeps
        // `[off, off + 16)` inside. A by-value unaligned read: no reference into the buffer
        // (in place, also the output) outlives it.
        unsafe { self.src.add(off).cast::<Block>().read_unaligned() }
    }

    /// Writes a whole block at output offset `off` (off + 16 <= out_cap).
    pub(crate) fn write_block(&self, off: usize, data: &Block) {
        assert!(!self.dst.is_null() && off <= self.out_cap && BLOCK <= self.out_cap - off);
        // SAFETY: range checked against `out_cap`, for which `dst` is writable.
        unsafe { self.dst.add(off).cast::<Block>().write_unaligned(*data) };
    }

    /// Zeroes the first `n` output bytes (authentication failure, bad padding): `zeroize`,
    /// since 1.9.2 one `memset` behind an optimisation barrier. 1.9.1 wrote byte by byte,
    /// and a forged message cost about three valid ones: decrypting batches of 64 forged
    /// 1440-byte messages took 941-1421 TSC ticks per message with 1.9.1 against 285-417
    /// with 1.9.2 for GCM, 818-1536 against 327-431 for OCB3, 1170-1763 against 728-874 for
    /// CLOC (Intel AVX-512 VM, fastest of 100 calls, three alternated runs).
    pub(crate) fn zero_output(&self, n: usize) {
        if self.dst.is_null() {
            return;
        }
        let n = n.min(self.out_cap);
        // SAFETY: `dst` is writable for `out_cap >= n` bytes.
        let out = unsafe { core::slice::from_raw_parts_mut(self.dst, n) };
        zeroize::Zeroize::zeroize(out);
    }

    /// Reads this input, writes `out` instead of this output: a job's input with a scratch
    /// output (CLOC's and SILC's keystream of an in-place job, which must not overwrite the
    /// ciphertext before its tag is checked).
    pub(crate) fn with_output<'b>(&self, out: &'b mut [u8]) -> IoPtrs<'b>
    where
        'a: 'b,
    {
        IoPtrs {
            src: self.src,
            dst: out.as_mut_ptr(),
            len: self.len,
            out_cap: out.len(),
            _life: PhantomData,
        }
    }

    /// Whether the output is the input (in place).
    pub(crate) fn in_place_io(&self) -> bool {
        core::ptr::eq(self.src, self.dst)
    }

    /// The first `len` output bytes become the input's xor the first `len` output bytes of
    /// `ks` (a keystream written there: this job's own output, or a scratch buffer when in
    /// place), each byte read before it is written, so the keystream may be this output and
    /// the input may be this output: with AVX-512 ([`xor_bytes_masked`]), else
    /// [`IoPtrs::xor_raw_words`].
    pub(crate) fn xor_to_output(&self, ks: &IoPtrs<'_>) {
        assert!(!ks.dst.is_null() && self.len <= ks.out_cap);
        assert!(!self.dst.is_null() && self.len <= self.out_cap);
        #[cfg(any(target_arch = "x86", target_arch = "x86_64"))]
        if masked_bytes() {
            // SAFETY: the CPU has AVX-512BW and VL; `src` readable, `dst` writable (asserted)
            // and `ks.dst` readable (its invariant, `out_cap >= len` asserted) for `len` bytes,
            // each 32 bytes read before they are written.
            unsafe { xor_bytes_masked(self.dst, self.src, ks.dst, self.len) };
            return;
        }
        // SAFETY: `ks.dst` is valid for `ks.out_cap >= len` bytes (its invariant).
        unsafe { self.xor_raw_words(ks.dst) }
    }

    /// [`IoPtrs::xor_to_output`] without AVX-512: 64 bytes at a time (all loaded before any is
    /// stored), then 16, then single bytes.
    ///
    /// # Safety
    /// `ks` is readable for `len` bytes.
    unsafe fn xor_raw_words(&self, ks: *const u8) {
        assert!(!self.dst.is_null() && self.len <= self.out_cap);
        let n = self.len;
        let word = |p: *const u8, i: usize| {
            // SAFETY: callers below keep `i + 16 <= len`: inside the input, the output and `ks`.
            unsafe { p.add(i).cast::<u128>().read_unaligned() }
        };
        let mut i = 0;
        while i + 4 * BLOCK <= n {
            let x: [u128; 4] =
                core::array::from_fn(|j| word(self.src, i + BLOCK * j) ^ word(ks, i + BLOCK * j));
            for (j, x) in x.into_iter().enumerate() {
                // SAFETY: `i + 64 <= len <= out_cap`.
                unsafe {
                    self.dst
                        .add(i + BLOCK * j)
                        .cast::<u128>()
                        .write_unaligned(x)
                };
            }
            i += 4 * BLOCK;
        }
        while i + BLOCK <= n {
            let x = word(self.src, i) ^ word(ks, i);
            // SAFETY: `i + 16 <= len <= out_cap`.
            unsafe { self.dst.add(i).cast::<u128>().write_unaligned(x) };
            i += BLOCK;
        }
        while i < n {
            // SAFETY: `i < len`, as above.
            unsafe { *self.dst.add(i) = *self.src.add(i) ^ *ks.add(i) };
            i += 1;
        }
    }

    /// The output bytes `[0, n)` as a slice (n <= out_cap), for post-processing such as the
    /// PKCS#7 check. Only call when no other view of the output is alive.
    pub(crate) fn output(&mut self, n: usize) -> &mut [u8] {
        assert!(!self.dst.is_null() && n <= self.out_cap);
        // SAFETY: `dst` is writable for `out_cap` bytes for 'a and `&mut self` keeps this the
        // only live view created through this value.
        unsafe { core::slice::from_raw_parts_mut(self.dst, n) }
    }
}

#[cfg(target_arch = "x86")]
use core::arch::x86::{__m128i, _mm_storeu_si128};
#[cfg(target_arch = "x86_64")]
use core::arch::x86_64::{__m128i, _mm_storeu_si128};

/// Whether this CPU has byte-masked loads and stores on xmm registers (AVX-512BW and
/// AVX-512VL), used for the partial blocks of [`IoPtrs`]. A cached detection: one load.
#[cfg(any(target_arch = "x86", target_arch = "x86_64"))]
#[inline(always)]
fn masked_bytes() -> bool {
    std::is_x86_feature_detected!("avx512bw") && std::is_x86_feature_detected!("avx512vl")
}

/// `dst[..n] = src[..n] ^ ks[..n]`, 32 bytes at a time (both loaded before the store, so
/// `dst` may be `src` or `ks`), the last 1..=31 bytes under a byte mask: no byte past `n`
/// read or written, no byte loop. (CLOC's and SILC's decryption: a verified message's
/// keystream into its plaintext.)
///
/// # Safety
/// AVX-512BW and AVX-512VL; `src` and `ks` readable and `dst` writable for `n` bytes.
#[cfg(any(target_arch = "x86", target_arch = "x86_64"))]
#[target_feature(enable = "avx2,avx512f,avx512bw,avx512vl")]
unsafe fn xor_bytes_masked(dst: *mut u8, src: *const u8, ks: *const u8, n: usize) {
    #[cfg(target_arch = "x86")]
    use core::arch::x86::*;
    #[cfg(target_arch = "x86_64")]
    use core::arch::x86_64::*;
    let mut i = 0;
    while i + 32 <= n {
        // SAFETY: `i + 32 <= n`: inside all three (caller).
        unsafe {
            let x = _mm256_loadu_si256(src.add(i).cast());
            let k = _mm256_loadu_si256(ks.add(i).cast());
            _mm256_storeu_si256(dst.add(i).cast(), _mm256_xor_si256(x, k));
        }
        i += 32;
    }
    if i < n {
        let mask: __mmask32 = (1u32 << (n - i)) - 1;
        // SAFETY: masked-off bytes are neither read nor written (nor can they fault); the
        // `n - i` others are inside all three (caller).
        unsafe {
            let x = _mm256_maskz_loadu_epi8(mask, src.add(i).cast());
            let k = _mm256_maskz_loadu_epi8(mask, ks.add(i).cast());
            _mm256_mask_storeu_epi8(dst.add(i).cast(), mask, _mm256_xor_si256(x, k));
        }
    }
}

/// `p[..n]` (`n` <= 16) at the start of a zero block, by one byte-masked load: the other
/// bytes are not read (and cannot fault).
///
/// # Safety
/// AVX-512BW and AVX-512VL; `p` readable for `n` bytes.
#[cfg(any(target_arch = "x86", target_arch = "x86_64"))]
#[target_feature(enable = "avx512f,avx512bw,avx512vl")]
unsafe fn load_masked(p: *const u8, n: usize) -> Block {
    #[cfg(target_arch = "x86")]
    use core::arch::x86::*;
    #[cfg(target_arch = "x86_64")]
    use core::arch::x86_64::*;
    debug_assert!(n <= BLOCK);
    let mask = ((1u32 << n) - 1) as __mmask16;
    let mut b = [0u8; BLOCK];
    // SAFETY: masked-off bytes are neither read nor can they fault; the n others are
    // readable (caller); `b` is 16 writable bytes.
    unsafe { _mm_storeu_si128(b.as_mut_ptr().cast(), _mm_maskz_loadu_epi8(mask, p.cast())) };
    b
}

/// `p[..n] = data[..n]` (`n` <= 16) by one byte-masked store: no other byte is written.
///
/// # Safety
/// AVX-512BW and AVX-512VL; `p` writable for `n` bytes.
#[cfg(any(target_arch = "x86", target_arch = "x86_64"))]
#[target_feature(enable = "avx512f,avx512bw,avx512vl")]
unsafe fn store_masked(p: *mut u8, n: usize, data: &Block) {
    #[cfg(target_arch = "x86")]
    use core::arch::x86::*;
    #[cfg(target_arch = "x86_64")]
    use core::arch::x86_64::*;
    debug_assert!(n <= BLOCK);
    let mask = ((1u32 << n) - 1) as __mmask16;
    // SAFETY: masked-off bytes are not written; the n others are writable (caller); `data`
    // is 16 readable bytes.
    unsafe { _mm_mask_storeu_epi8(p.cast(), mask, _mm_loadu_si128(data.as_ptr().cast())) };
}

/// `dst[..n] = src[..n] ^ ks[..n]` (`n` < 16) with a byte-masked load and store: only those
/// `n` bytes are read and written; returns `src[..n]` in the low bytes of a zero register.
/// (A 16-byte window ending at the message's end would start in the output the kernel has
/// just stored, and a load partly over a pending store cannot be forwarded: it waits for the
/// store to commit, about a tenth of CTR's samples.)
///
/// # Safety
/// AVX-512BW and AVX-512VL; `src` readable and `dst` writable for `n` bytes (the same memory
/// or not overlapping).
#[cfg(any(target_arch = "x86", target_arch = "x86_64"))]
#[target_feature(enable = "avx512f,avx512bw,avx512vl")]
unsafe fn xor_tail_masked(src: *const u8, dst: *mut u8, n: usize, ks: &Block) -> __m128i {
    #[cfg(target_arch = "x86")]
    use core::arch::x86::*;
    #[cfg(target_arch = "x86_64")]
    use core::arch::x86_64::*;
    debug_assert!(n < BLOCK);
    let mask = ((1u32 << n) - 1) as __mmask16;
    // SAFETY: masked-off bytes are neither read nor written (nor can they fault); the n
    // others are inside the caller's ranges; `ks` is 16 readable bytes.
    unsafe {
        let x = _mm_maskz_loadu_epi8(mask, src.cast());
        let k = _mm_loadu_si128(ks.as_ptr().cast());
        _mm_mask_storeu_epi8(dst.cast(), mask, _mm_xor_si128(x, k));
        x
    }
}

/// Deterministic pseudo-random test bytes (xorshift), for the crate's unit tests.
#[cfg(test)]
pub(crate) fn test_bytes(seed: u64, n: usize) -> Vec<u8> {
    let mut s = seed.wrapping_mul(0x9e37_79b9_7f4a_7c15) | 1;
    (0..n)
        .map(|_| {
            s ^= s << 13;
            s ^= s >> 7;
            s ^= s << 17;
            (s >> 24) as u8
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `SecretBlocks` zero the blocks past their length too.
    #[test]
    fn secret_blocks_wipe_their_spare_capacity_too() {
        let mut v: Vec<Block> = Vec::with_capacity(8);
        v.resize(v.capacity(), [0xa5; BLOCK]);
        let cap = v.capacity();
        v.truncate(3);
        wipe_capacity(&mut v);
        // SAFETY: every block of the allocation was written (0xa5, then zero), so all `cap`
        // of them are initialised.
        unsafe { v.set_len(cap) };
        assert!(v.iter().all(|b| *b == [0; BLOCK]));
        // The drop path runs the same function.
        drop(SecretBlocks(v));
    }

    /// `wipe` zeroes exactly its 16 bytes, at any alignment.
    #[test]
    fn wipe_zeroes_the_block_only() {
        for at in 0..16 {
            let mut buf = [0xa5u8; 48];
            let b: &mut Block = (&mut buf[at..at + BLOCK]).try_into().unwrap();
            wipe(b);
            for (i, &x) in buf.iter().enumerate() {
                let inside = (at..at + BLOCK).contains(&i);
                assert_eq!(x, if inside { 0 } else { 0xa5 }, "offset {at}, byte {i}");
            }
        }
    }

    /// The block surgery helpers against byte-by-byte models, at every cut.
    #[test]
    fn merge_shift_and_splice_match_byte_models() {
        let a: Block = core::array::from_fn(|i| i as u8 + 1);
        let b: Block = core::array::from_fn(|i| 0xa0 + i as u8);
        for l in 0..=BLOCK {
            let mut m = b;
            m[..l].copy_from_slice(&a[..l]);
            assert_eq!(merge(&a, &b, l), m, "merge, l = {l}");
            let mut t = [0u8; BLOCK];
            t[..l].copy_from_slice(&a[..l]);
            assert_eq!(truncate(&a, l), t, "truncate, n = {l}");
            let mut f = [0u8; BLOCK];
            f[..BLOCK - l].copy_from_slice(&a[l..]);
            assert_eq!(shift_to_front(&a, l), f, "to front, n = {l}");
            let mut k = [0u8; BLOCK];
            k[l..].copy_from_slice(&a[..BLOCK - l]);
            assert_eq!(shift_to_back(&a, l), k, "to back, n = {l}");
            let mut want = a;
            want[l..].copy_from_slice(&b[..BLOCK - l]);
            assert_eq!(splice(&a, l, &b), want, "splice, l = {l}");
            assert_eq!(splice(&a, l, &b[..BLOCK - l]), want, "short tail, l = {l}");
            let mut z = [0u8; BLOCK];
            z[..l].copy_from_slice(&a[..l]);
            assert_eq!(load_short(&a[..l]), z, "load_short, n = {l}");
            let mut p = z;
            if l < BLOCK {
                p[l] = 0x80;
            }
            assert_eq!(pad10(&z, l), p, "pad10, n = {l}");
        }
        // Past a whole block the masks saturate: all of `a`, no padding bit.
        for l in [17, 31, 32, 100, usize::MAX] {
            assert_eq!(merge(&a, &b, l), a, "merge, l = {l}");
            assert_eq!(truncate(&a, l), a, "truncate, n = {l}");
            assert_eq!(pad10(&a, l), a, "pad10, n = {l}");
        }
        for n in 0..=20usize {
            let mut out = vec![0xEEu8; n + 2];
            store_short(&mut out[..n], &a);
            let m = n.min(BLOCK);
            let mut want = vec![0xEEu8; n + 2];
            want[..m].copy_from_slice(&a[..m]);
            assert_eq!(out, want, "store_short, n = {n}");
        }
        assert_eq!(
            load_short(&[7u8; 20]),
            [7u8; BLOCK],
            "first 16 of a longer slice"
        );
    }

    /// Tags of every length compare equal on their bytes only, and any one flipped bit
    /// among them fails.
    #[test]
    fn tag_matches_compares_the_prefix_only() {
        let c: Block = core::array::from_fn(|i| (i as u8).wrapping_mul(0x31).wrapping_add(7));
        for n in 1..=BLOCK {
            assert!(tag_matches(&c, &c[..n]), "n = {n}");
            let mut other = c;
            other[n..].iter_mut().for_each(|x| *x ^= 0xff);
            assert!(
                tag_matches(&other, &c[..n]),
                "bytes past n ignored, n = {n}"
            );
            for bit in 0..8 * n {
                let mut e = c[..n].to_vec();
                e[bit / 8] ^= 1 << (bit % 8);
                assert!(!tag_matches(&c, &e), "n = {n}, bit {bit}");
            }
        }
    }

    /// The tail read (masked and by words) and merge against a byte-by-byte model, in place
    /// and out of place, for every length 0..=40 and offset.
    #[test]
    fn tails_match_a_bytewise_model() {
        let ks: Block = core::array::from_fn(|i| 0xA0 ^ i as u8);
        for len in 0..=40usize {
            let input: Vec<u8> = (0..len).map(|i| i as u8 ^ 0x5C).collect();
            for off in len.saturating_sub(16)..=len {
                let io = IoPtrs::read_only(&input);
                let mut want = [0u8; 16];
                want[..len - off].copy_from_slice(&input[off..]);
                assert_eq!(io.read_from(off), want, "len {len} off {off}");
                if off < len {
                    // The word path too, where the dispatching one took the masked load.
                    assert_eq!(io.read_from_words(off), want, "words, len {len} off {off}");
                }
            }
            let n = len % 16;
            let mut expect: Vec<u8> = vec![0xEE; len + 3];
            for i in len - n..len {
                expect[i] = input[i] ^ ks[i - (len - n)];
            }
            let mut expect_in = input.clone();
            for i in len - n..len {
                expect_in[i] = input[i] ^ ks[i - (len - n)];
            }
            // The input's tail as it was before the write, which both paths return.
            let mut tail_in = [0u8; 16];
            tail_in[..n].copy_from_slice(&input[len - n..]);
            // Both paths where the CPU runs both (the masked one needs AVX-512BW/VL): the
            // dispatching entry, then the word path on its own.
            for words in [false, true] {
                let run = |io: IoPtrs<'_>| match (words, n) {
                    (false, _) => io.xor_tail(&ks),
                    (true, 0) => [0; 16],
                    (true, _) => io.xor_tail_words(&ks, n),
                };
                let mut out = vec![0xEEu8; len + 3];
                let got = run(IoPtrs::copy(&input, &mut out));
                assert_eq!(out, expect, "copy, len {len}, words {words}");
                assert_eq!(got, tail_in, "copy, len {len}, words {words}: input");
                let mut buf = input.clone();
                let got = run(IoPtrs::in_place(&mut buf, len));
                assert_eq!(buf, expect_in, "in place, len {len}, words {words}");
                assert_eq!(got, tail_in, "in place, len {len}, words {words}: input");
            }
        }
    }

    /// `zero_output` zeroes exactly the first `n` output bytes (at most `out_cap`), in place
    /// and copying, and nothing of a read-only view.
    #[test]
    fn zero_output_zeroes_exactly_n_bytes() {
        for cap in [0usize, 1, 15, 16, 17, 47, 48, 70] {
            for n in 0..=cap + 3 {
                let input = vec![0x11u8; cap];
                let mut out = vec![0xEEu8; cap + 2];
                IoPtrs::copy(&input, &mut out[..cap]).zero_output(n);
                let z = n.min(cap);
                assert!(out[..z].iter().all(|&b| b == 0), "cap {cap}, n {n}");
                assert!(
                    out[z..].iter().all(|&b| b == 0xEE),
                    "cap {cap}, n {n}: past n"
                );
                let mut buf = vec![0x22u8; cap];
                IoPtrs::in_place(&mut buf, cap).zero_output(n);
                assert!(buf[..z].iter().all(|&b| b == 0) && buf[z..].iter().all(|&b| b == 0x22));
                IoPtrs::read_only(&input).zero_output(n);
                assert!(input.iter().all(|&b| b == 0x11));
            }
        }
    }

    /// Every size, at each edge of the stack arrays and past them, gets exactly `n` zeroed
    /// blocks, also after an earlier call wrote its scratch.
    #[test]
    fn with_scratch_gives_n_zeroed_blocks() {
        for n in [0, 1, 63, 64, 65, 256, 257, 2047, 2048, 2049, 5000] {
            for _ in 0..2 {
                let sum = with_scratch(n, |s| {
                    assert_eq!(s.len(), n);
                    assert!(s.iter().all(|b| *b == [0; BLOCK]), "{n}: not zeroed");
                    s.iter_mut().for_each(|b| *b = [0xA5; BLOCK]);
                    s.len()
                });
                assert_eq!(sum, n);
            }
        }
    }

    /// `xor_to_output` makes output `[0, len)` the input xor a keystream, on both paths (the
    /// dispatching entry, then the word path on its own): the keystream in the job's own output
    /// (out of place) or in another buffer (in place, or out of place), nothing past `len`
    /// touched.
    #[test]
    fn xor_to_output_matches_a_bytewise_model() {
        for len in 0..=140usize {
            let input: Vec<u8> = (0..len)
                .map(|i| (i as u8).wrapping_mul(29) ^ 0x5C)
                .collect();
            let ks: Vec<u8> = (0..len + 3)
                .map(|i| (i as u8).wrapping_mul(71) ^ 0xA3)
                .collect();
            let mut want: Vec<u8> = input.iter().zip(&ks).map(|(a, b)| a ^ b).collect();
            want.extend_from_slice(&ks[len..]);
            for words in [false, true] {
                let run = |io: IoPtrs<'_>, from: &IoPtrs<'_>| {
                    if words {
                        // SAFETY: `from`'s output holds `len` readable bytes.
                        unsafe { io.xor_raw_words(from.dst) }
                    } else {
                        io.xor_to_output(from)
                    }
                };
                let what = format!("len {len}, words {words}");
                // Out of place, the keystream in the output itself.
                let mut out = ks.clone();
                let io = IoPtrs::copy(&input, &mut out);
                run(io, &io);
                assert_eq!(out, want, "{what}: in the output");
                // In place, the keystream in a scratch buffer.
                let mut buf = input.clone();
                buf.extend_from_slice(&ks[len..]);
                let mut scratch = ks[..len].to_vec();
                let io = IoPtrs::in_place(&mut buf, len);
                run(io, &io.with_output(&mut scratch));
                assert_eq!(buf, want, "{what}: in place");
            }
        }
    }

    /// `write_tail` writes exactly output `[off, len)` from the block's first bytes, on both
    /// paths: the output before `off` is left as it was, and nothing past `len` (the
    /// buffer's spare capacity) is touched.
    #[test]
    fn write_tail_matches_a_bytewise_model() {
        let data: Block = core::array::from_fn(|i| 0xB0 ^ i as u8);
        for len in 0..=40usize {
            let input: Vec<u8> = (0..len).map(|i| i as u8 ^ 0x5C).collect();
            for off in len.saturating_sub(16)..=len {
                let old: Vec<u8> = (0..len + 3).map(|i| 0x11u8.wrapping_mul(i as u8)).collect();
                let mut want = old.clone();
                want[off..len].copy_from_slice(&data[..len - off]);
                // The dispatching entry (masked store with AVX-512BW/VL), then the word path
                // on its own.
                for words in [false, true] {
                    let run = |io: IoPtrs<'_>| match (words, off < len) {
                        (false, _) => io.write_tail(off, &data),
                        (true, true) => io.write_tail_words(off, &data),
                        (true, false) => {}
                    };
                    let mut out = old.clone();
                    run(IoPtrs::copy(&input, &mut out));
                    assert_eq!(out, want, "copy, len {len} off {off}, words {words}");
                    let mut buf = old.clone();
                    run(IoPtrs::in_place(&mut buf, len));
                    assert_eq!(buf, want, "in place, len {len} off {off}, words {words}");
                }
            }
        }
    }

    #[test]
    fn dbl_matches_rfc4493_subkeys() {
        // RFC 4493 §4: L = E(K, 0) for K = 2b7e1516..., K1, K2.
        let l: Block = [
            0x7d, 0xf7, 0x6b, 0x0c, 0x1a, 0xb8, 0x99, 0xb3, 0x3e, 0x42, 0xf0, 0x47, 0xb9, 0x1b,
            0x54, 0x6f,
        ];
        let k1 = dbl(&l);
        let k2 = dbl(&k1);
        assert_eq!(
            k1,
            [
                0xfb, 0xee, 0xd6, 0x18, 0x35, 0x71, 0x33, 0x66, 0x7c, 0x85, 0xe0, 0x8f, 0x72, 0x36,
                0xa8, 0xde
            ]
        );
        assert_eq!(
            k2,
            [
                0xf7, 0xdd, 0xac, 0x30, 0x6a, 0xe2, 0x66, 0xcc, 0xf9, 0x0b, 0xc1, 0x1e, 0xe4, 0x6d,
                0x51, 0x3b
            ]
        );
    }
}
