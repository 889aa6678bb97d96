//! The public batch API: jobs, the engine, per-job results in input order.

use crate::aes::AesKey;
use crate::aes::{ChainLane, Kernels};
use crate::block::{Block, IoPtrs, BLOCK};
use crate::cpu::{Backend, CpuFeatures};
use crate::modes::{self, Prepared, TagIo};
use crate::sched::exec::Path;
use crate::sched::plan::MAX_LANES;
use crate::tune::Tuning;
use crate::{Algorithm, Error, Op};

/// Where a job reads its input and writes its output.
#[derive(Debug)]
pub enum Data<'a> {
    /// The message is `buf[..len]`; the output overwrites `buf` from the start (and may grow
    /// into `buf[len..]`, as PKCS#7 encryption does).
    InPlace { buf: &'a mut [u8], len: usize },
    /// Read `input`, write `output` (which must be long enough; see
    /// [`Algorithm::output_len`]).
    Copy {
        input: &'a [u8],
        output: &'a mut [u8],
    },
    /// Read only: the message of a MAC.
    Input(&'a [u8]),
}

/// The detached tag of a MAC or AEAD job.
///
/// AEAD (AES-GCM): encryption takes `Out` (the ciphertext goes to the job's output, as long
/// as the plaintext, the tag here), decryption takes `In` (the received tag; the plaintext is
/// written only if it verifies).
#[derive(Debug)]
pub enum Tag<'a> {
    /// No tag: plain encryption modes.
    None,
    /// Generation: the tag is written here; the slice length is the tag length.
    Out(&'a mut [u8]),
    /// Verification: the expected tag; its length is the tag length.
    In(&'a [u8]),
}

/// One message of a batch: a key handle, an IV or nonce, associated data (AEAD), the data
/// and (for MACs and AEAD) the tag.
///
/// ```
/// # fn main() -> Result<(), comb::Error> {
/// use comb::{AesKey, Job};
/// let key = AesKey::new(&[7; 16])?;
/// let iv = [0u8; 16];
/// let mut packet = *b"sixteen byte msg";
/// let job = Job::in_place(&key, &mut packet).with_iv(&iv);
/// # let _ = job; Ok(()) }
/// ```
///
/// AES-GCM, encryption then decryption in place with a detached 16-byte tag:
///
/// ```
/// # fn main() -> Result<(), comb::Error> {
/// use comb::{AesKey, Algorithm, Engine, Job, Op, Tag};
/// let engine = Engine::new()?;
/// let key = AesKey::new(&[7; 32])?;
/// let nonce = [1u8; 12];
/// let mut packet = b"attack at dawn".to_vec();
/// let mut tag = [0u8; 16];
/// let job = Job::in_place(&key, &mut packet)
///     .with_iv(&nonce)
///     .with_ad(b"header")
///     .with_tag(Tag::Out(&mut tag));
/// assert_eq!(engine.process_one(Algorithm::AesGcm, Op::Encrypt, job), Ok(14));
///
/// let job = Job::in_place(&key, &mut packet)
///     .with_iv(&nonce)
///     .with_ad(b"header")
///     .with_tag(Tag::In(&tag));
/// assert_eq!(engine.process_one(Algorithm::AesGcm, Op::Decrypt, job), Ok(14));
/// assert_eq!(packet, b"attack at dawn");
///
/// // Other AD: the tag does not verify, nothing is decrypted, the buffer is zeroed.
/// let job = Job::in_place(&key, &mut packet)
///     .with_iv(&nonce)
///     .with_tag(Tag::In(&tag));
/// let r = engine.process_one(Algorithm::AesGcm, Op::Decrypt, job);
/// assert_eq!(r, Err(comb::Error::AuthenticationFailed));
/// # Ok(()) }
/// ```
#[derive(Debug)]
pub struct Job<'a> {
    key: &'a AesKey,
    iv: &'a [u8],
    ad: &'a [u8],
    data: Data<'a>,
    tag: Tag<'a>,
}

impl<'a> Job<'a> {
    /// A job on explicit [`Data`].
    pub fn new(key: &'a AesKey, data: Data<'a>) -> Job<'a> {
        Job {
            key,
            iv: &[],
            ad: &[],
            data,
            tag: Tag::None,
        }
    }

    /// Encrypt or decrypt `buf` in place.
    pub fn in_place(key: &'a AesKey, buf: &'a mut [u8]) -> Job<'a> {
        let len = buf.len();
        Job::new(key, Data::InPlace { buf, len })
    }

    /// Read `input`, write `output`.
    pub fn copy(key: &'a AesKey, input: &'a [u8], output: &'a mut [u8]) -> Job<'a> {
        Job::new(key, Data::Copy { input, output })
    }

    /// A MAC job over `message`; add the tag with [`Job::with_tag`].
    pub fn mac(key: &'a AesKey, message: &'a [u8]) -> Job<'a> {
        Job::new(key, Data::Input(message))
    }

    /// Sets the IV (initial counter block for CTR, nonce for AES-GCM: see
    /// [`Algorithm::iv_lens`]).
    pub fn with_iv(mut self, iv: &'a [u8]) -> Job<'a> {
        self.iv = iv;
        self
    }

    /// Sets associated data (AEAD modes only: authenticated, not encrypted; other modes
    /// reject a non-empty AD with [`Error::AdNotSupported`]).
    pub fn with_ad(mut self, ad: &'a [u8]) -> Job<'a> {
        self.ad = ad;
        self
    }

    /// Sets the tag buffer.
    pub fn with_tag(mut self, tag: Tag<'a>) -> Job<'a> {
        self.tag = tag;
        self
    }
}

/// The result of one job: bytes written to its output (the plaintext length for PKCS#7
/// decryption, 0 for MACs), or the job's error.
pub type JobResult = Result<usize, Error>;

/// Chooses a backend and lane counts, and runs jobs. Cheap to copy; holds no mutable state,
/// so one engine can serve many threads and batches on different threads never contend.
///
/// ```
/// # fn main() -> Result<(), comb::Error> {
/// use comb::{AesKey, Algorithm, Engine, Job, Op};
/// let engine = Engine::new()?;
/// let keys = [AesKey::new(&[1; 16])?, AesKey::new(&[2; 32])?];
/// let iv = [9u8; 16];
/// let mut a = vec![0u8; 64];
/// let mut b = vec![0u8; 1504];
/// let mut bad = vec![0u8; 15]; // not a whole block: an error for this job only
/// let mut jobs = vec![
///     Job::in_place(&keys[0], &mut a).with_iv(&iv),
///     Job::in_place(&keys[1], &mut b).with_iv(&iv),
///     Job::in_place(&keys[0], &mut bad).with_iv(&iv),
/// ];
/// let results = engine.process(Algorithm::AesCbc, Op::Encrypt, &mut jobs);
/// assert_eq!(results[0], Ok(64));
/// assert_eq!(results[1], Ok(1504));
/// assert_eq!(results[2], Err(comb::Error::NotBlockMultiple { len: 15 }));
/// # Ok(()) }
/// ```
#[derive(Clone, Copy, Debug)]
pub struct Engine {
    backend: Backend,
    /// Lane count per algorithm (`Algorithm as usize`) and op (encrypt, decrypt).
    lanes: [[u8; 2]; N_ALGS],
    kernels: Kernels,
}

const N_ALGS: usize = Algorithm::ALL.len();

impl Engine {
    /// The best backend of this CPU, or the one `COMB_BACKEND` names (`auto`, `vaes256`, `ni`).
    ///
    /// Errors: [`Error::Unsupported`] without AES-NI (or when the forced backend cannot run
    /// here), [`Error::UnknownBackend`] for a bad `COMB_BACKEND`.
    pub fn new() -> Result<Engine, Error> {
        match std::env::var("COMB_BACKEND") {
            Ok(name) if !name.is_empty() && name != "auto" => {
                Engine::with_backend(Backend::from_name(&name)?)
            }
            _ => Engine::with_backend(Backend::best(&CpuFeatures::detect())?),
        }
    }

    /// A specific backend; [`Error::Unsupported`] if this CPU cannot run it. Lane counts
    /// come from the tuning file written by `comb tune` (see [`Tuning`]) where it has them,
    /// else from built-in defaults.
    pub fn with_backend(backend: Backend) -> Result<Engine, Error> {
        let mut engine = Engine::untuned(backend)?;
        if let Ok(Some(t)) = Tuning::load() {
            engine = engine.with_tuning(&t);
        }
        Ok(engine)
    }

    /// A specific backend with the built-in default lane counts (no tuning file).
    pub fn untuned(backend: Backend) -> Result<Engine, Error> {
        // Making the kernels is the support check (each backend's token tests is_supported).
        let kernels = Kernels::new(backend).ok_or(Error::Unsupported(
            "the requested backend needs instructions this CPU lacks",
        ))?;
        let mut lanes = [[0u8; 2]; N_ALGS];
        for &alg in Algorithm::ALL {
            for op in [Op::Encrypt, Op::Decrypt] {
                lanes[alg as usize][op as usize] = default_lanes(backend, alg, op) as u8;
            }
        }
        Ok(Engine {
            backend,
            lanes,
            kernels,
        })
    }

    /// Applies the entries of `tuning` that are for this engine's backend.
    pub fn with_tuning(mut self, tuning: &Tuning) -> Engine {
        for &alg in Algorithm::ALL {
            for op in [Op::Encrypt, Op::Decrypt] {
                if let Some(p) = tuning.lanes(self.backend, alg, op) {
                    self.lanes[alg as usize][op as usize] = p.clamp(1, MAX_LANES) as u8;
                }
            }
        }
        self
    }

    /// Overrides the parallelism degree `P` (lanes) for every algorithm: 1..=32.
    pub fn with_lanes(mut self, lanes: usize) -> Result<Engine, Error> {
        if !(1..=MAX_LANES).contains(&lanes) {
            return Err(Error::InvalidLaneCount { got: lanes });
        }
        self.lanes = [[lanes as u8; 2]; N_ALGS];
        Ok(self)
    }

    /// The backend in use.
    pub fn backend(&self) -> Backend {
        self.backend
    }

    /// The lane count (parallelism degree `P`) the batch path uses for `alg`/`op`. For modes
    /// that are parallel inside a message it is the width of the wide kernel.
    pub fn lanes(&self, alg: Algorithm, op: Op) -> usize {
        usize::from(self.lanes[alg as usize][op as usize])
    }

    /// Runs a batch. Results come back by input index; a job that fails validation (or
    /// authentication) gets its error and never affects the others. Chained work goes
    /// through the comb scheduler; initialisation and finalisation are batched across jobs.
    pub fn process(&self, alg: Algorithm, op: Op, jobs: &mut [Job<'_>]) -> Vec<JobResult> {
        let lanes = self.lanes(alg, op);
        self.run(alg, op, jobs, Path::Comb { lanes })
    }

    /// Runs the jobs one after another, each through the single-message path (the honest
    /// sequential baseline of the benchmark).
    pub fn process_sequential(
        &self,
        alg: Algorithm,
        op: Op,
        jobs: &mut [Job<'_>],
    ) -> Vec<JobResult> {
        self.run(alg, op, jobs, Path::Single)
    }

    /// The single-message path: one job, one dependent chain.
    ///
    /// ```
    /// # fn main() -> Result<(), comb::Error> {
    /// use comb::{AesKey, Algorithm, Engine, Job, Op, Tag};
    /// let engine = Engine::new()?;
    /// let key = AesKey::new(&hex16("2b7e151628aed2a6abf7158809cf4f3c"))?;
    /// let mut tag = [0u8; 16];
    /// let job = Job::mac(&key, b"").with_tag(Tag::Out(&mut tag));
    /// engine.process_one(Algorithm::AesCmac, Op::Encrypt, job)?;
    /// assert_eq!(tag, hex16("bb1d6929e95937287fa37d129b756746")); // RFC 4493, example 1
    /// # Ok(()) }
    /// # fn hex16(s: &str) -> [u8; 16] {
    /// #     core::array::from_fn(|i| u8::from_str_radix(&s[2 * i..2 * i + 2], 16).unwrap())
    /// # }
    /// ```
    pub fn process_one(&self, alg: Algorithm, op: Op, mut job: Job<'_>) -> JobResult {
        let mut r = self.run(alg, op, core::slice::from_mut(&mut job), Path::Single);
        r.pop().unwrap_or(Ok(0))
    }

    fn run(&self, alg: Algorithm, op: Op, jobs: &mut [Job<'_>], path: Path) -> Vec<JobResult> {
        // Filled with `Ok(0)` up front and overwritten only for failed jobs: pushing each
        // job's freshly built 32-byte result reloaded it with 16-byte loads straight after
        // its narrower stores (a store-forwarding stall, 10% of a batch of 64-byte GCM jobs).
        // Filled by a closure, not `vec![Ok(0); n]`, whose `Clone` of the enum jumps through a
        // table for every element: 64 one-block CBC jobs per call (in-process loop, median
        // TSC ticks per call, four alternated runs) 2458-2540 -> 2307-2437.
        let mut results: Vec<JobResult> = Vec::with_capacity(jobs.len());
        results.resize_with(jobs.len(), || Ok(0));
        if jobs.len() <= STACK_JOBS {
            let mut prepared = arrayvec::ArrayVec::<Prepared<'_>, STACK_JOBS>::new();
            self.validate_and_run(alg, op, jobs, &mut results, &mut prepared, path);
        } else {
            let mut prepared: Vec<Prepared<'_>> = Vec::with_capacity(jobs.len());
            self.validate_and_run(alg, op, jobs, &mut results, &mut prepared, path);
        }
        results
    }

    /// Validates every job into `prepared` (a failed one's error into its slot of `results`)
    /// and runs the mode over the valid ones.
    #[inline(always)]
    fn validate_and_run<'b, S: PreparedStore<'b>>(
        &self,
        alg: Algorithm,
        op: Op,
        jobs: &'b mut [Job<'_>],
        results: &mut [JobResult],
        prepared: &mut S,
        path: Path,
    ) {
        // Validation with `alg` a constant: one copy of the loop per algorithm (the match is
        // exhaustive, so none is missing), in each of which every `match alg` of `prepare`
        // folds away. Over a runtime `alg` those matches were jump tables and branches on
        // every job, some 15 TSC ticks of it per job on a Zen 3 VM (in-process loop, ticks per
        // call of 64 empty jobs, 8 alternated runs): ECB 3985-4102 against 2995-3105 now, CBC
        // 4757-4942 against 3762-3995.
        macro_rules! prepare_each {
            ($($a:ident)*) => {
                match alg {
                    $(Algorithm::$a => {
                        prepare_all(Algorithm::$a, op, jobs, results, prepared)
                    })*
                }
            };
        }
        prepare_each!(
            AesEcb AesCbc AesCbcPkcs7 AesCtr AesCfb128 AesOfb AesCmac AesGcm AesCcm AesOcb3
            Aes128Otr Aes128Cloc Aes128Silc Aes128Jambu Aes128McoeG Aes128Copa Aes128Poet
            Aes128PoetGf Aes128Julius Aes128CobraR
        );
        modes::run(
            self.kernels,
            alg,
            op,
            prepared.as_mut_slice(),
            results,
            path,
        );
    }
}

/// Batches of up to this many jobs keep their validated views on the stack (8 KiB). A vector
/// of them was a heap allocation and free of some 8 KiB per call, too large for glibc's
/// per-thread cache; together with the benchmark's own job vector, also moved to the stack,
/// that was about 4% of a realistic-mix CBC batch (perf samples, four alternated runs).
const STACK_JOBS: usize = 64;

/// Where `prepare` appends validated jobs: a vector, or a stack array for small batches.
pub(crate) trait PreparedStore<'b> {
    /// Writes `p` after the last element, without the store-forwarding stall of `prepare`'s
    /// comment, and returns it.
    fn push_in_place(&mut self, p: Prepared<'b>) -> &mut Prepared<'b>;
    /// The jobs written so far, in order.
    fn as_mut_slice(&mut self) -> &mut [Prepared<'b>];
}

impl<'b> PreparedStore<'b> for Vec<Prepared<'b>> {
    #[inline(always)]
    fn push_in_place(&mut self, p: Prepared<'b>) -> &mut Prepared<'b> {
        if self.len() == self.capacity() {
            self.reserve(1);
        }
        let len = self.len();
        self.spare_capacity_mut()[0].write(p);
        // SAFETY: capacity > len (reserved above), and the element at index len was just
        // initialised by `write`.
        unsafe { self.set_len(len + 1) };
        &mut self[len]
    }
    fn as_mut_slice(&mut self) -> &mut [Prepared<'b>] {
        self
    }
}

impl<'b> PreparedStore<'b> for arrayvec::ArrayVec<Prepared<'b>, STACK_JOBS> {
    #[inline(always)]
    fn push_in_place(&mut self, p: Prepared<'b>) -> &mut Prepared<'b> {
        // A plain push (it panics past the capacity, which `Engine::run` never reaches):
        // measured as fast as writing the slot through a raw pointer, so no unsafe block for
        // it (raw write against push, alternated: 64 one-block CBC jobs per call, TSC ticks
        // per call, 2308-2391 against 2330-2415; 64-byte GCM jobs, perf samples, 1066-1077
        // against 1055-1059; the realistic mix, CBC, 1616-1686 against 1620-1665).
        let len = self.len();
        self.push(p);
        &mut self[len]
    }
    fn as_mut_slice(&mut self) -> &mut [Prepared<'b>] {
        self
    }
}

/// Default lanes per mode for a backend. Chained modes need L·T blocks in flight to fill the
/// xmm AES unit (AESENC latency L, T per cycle: 3·2 = 6 on the Intel CPU of DESIGN.md, 4·2 =
/// 8 on the AMD Zen 3 VM we measured on); 8 was within 5% of the best lane count there on
/// 2 KiB and realistic-mix batches (`comb bench --lanes 1..16`; `comb tune` stores a
/// machine's own best). Parallel modes run 8-block wide kernels inside each message.
///
/// JAMBU on ymm takes 10 lanes, measured faster than 16 (why is not established). On the
/// Intel AVX-512 VM (realistic mix, batch 64, `comb bench --lanes P` one lane count per run,
/// TSC cycles/byte) encryption ran 0.470-0.472 at 10 against 0.518-0.686 at 16 (five runs
/// each), decryption 0.578-0.582 against 0.597-0.615 (four); `comb tune` had found 10-11
/// best there in an earlier session. The other chained modes measured best at 16 there (at 12,
/// three alternated runs: CBC, CFB, CMAC and CCM 2-7% slower, CLOC and SILC -1% to +3.5%).
/// More lanes than 16 did not pay either: on the realistic mix every count from 17 to 32 ran
/// CBC at 0.252-0.269 and CMAC at 0.247-0.294 against 0.244 and 0.238 at 16 (one sweep,
/// `--lanes 16..32`). By 16 the ymm chain kernel is bound by AES throughput rather than by
/// the chain's latency. CBC at 2 KiB ran 0.353 TSC cycles/byte at 4 lanes and 0.195 at 8
/// (latency-bound, nearly halved), but only 0.158-0.169 at 13 to 16 (`--lanes 4..16`).
fn default_lanes(backend: Backend, alg: Algorithm, _op: Op) -> usize {
    match (backend, alg) {
        (Backend::Ni, _) => 8,
        (Backend::Vaes256, Algorithm::Aes128Jambu) => 10,
        (Backend::Vaes256, _) => 16,
    }
}

/// [`prepare`] for every job: the valid ones appended to `prepared`, each invalid one's error
/// in its slot of `results`. Inlined into each arm of `Engine::run`'s match, where `alg` is a
/// constant.
#[inline(always)]
pub(crate) fn prepare_all<'b, S: PreparedStore<'b>>(
    alg: Algorithm,
    op: Op,
    jobs: &'b mut [Job<'_>],
    results: &mut [JobResult],
    prepared: &mut S,
) {
    for (index, job) in jobs.iter_mut().enumerate() {
        if let Err(e) = prepare(alg, op, job, index, prepared) {
            results[index] = Err(e);
        }
    }
}

/// Validates one job for `alg`/`op` and appends the mode's view of it to `out`.
#[inline(always)]
fn prepare<'b, S: PreparedStore<'b>>(
    alg: Algorithm,
    op: Op,
    job: &'b mut Job<'_>,
    index: usize,
    out: &mut S,
) -> Result<(), Error> {
    // Checks that read no data come first (lengths, tag direction), then the length limits
    // (before any message byte is touched), then the buffers.
    if !alg.key_len_allowed(job.key.key_len()) {
        return Err(Error::InvalidKeyLength {
            got: job.key.key_len(),
        });
    }
    let (iv_min, iv_max) = alg.iv_lens();
    let got = job.iv.len();
    if got < iv_min || got > iv_max {
        return Err(if iv_min == iv_max {
            Error::InvalidIvLength {
                expected: iv_min,
                got,
            }
        } else {
            Error::InvalidNonceLength {
                got,
                min: iv_min,
                max: iv_max,
            }
        });
    }
    if !job.ad.is_empty() {
        if !alg.is_aead() {
            return Err(Error::AdNotSupported);
        }
        if job.ad.len() > alg.max_ad_len() {
            return Err(Error::MessageTooLong {
                len: job.ad.len(),
                max: alg.max_ad_len(),
            });
        }
    }
    let tag_len = match &job.tag {
        Tag::None => None,
        Tag::Out(t) => Some(t.len()),
        Tag::In(t) => Some(t.len()),
    };
    if let (Some((min, max, _)), Some(got)) = (alg.tag_lens(), tag_len) {
        if !alg.tag_len_allowed(got) {
            // A range of lengths (CMAC) or a set with holes (GCM: 4, 8, 12..=16).
            let allowed = alg.allowed_tag_lens();
            return Err(if allowed.len() == max - min + 1 {
                Error::InvalidTagLength { got, min, max }
            } else {
                Error::TagLengthNotAllowed { got, allowed }
            });
        }
    }
    let tag = match (alg.tag_lens(), op, &mut job.tag) {
        (None, _, Tag::None) => TagIo::None,
        (None, _, _) => return Err(Error::TagMisuse),
        (Some(_), Op::Encrypt, Tag::Out(t)) => TagIo::Out(t),
        (Some(_), Op::Decrypt, Tag::In(t)) => TagIo::In(t),
        (Some(_), _, _) => return Err(Error::TagMisuse),
    };
    // The algorithm's length limit (AES-GCM: 2^36 - 32 bytes), on the declared length alone:
    // an `InPlace` whose `len` is past its buffer and the limit fails here, before the buffer
    // is looked at.
    let declared = match &job.data {
        Data::InPlace { len, .. } => *len,
        Data::Copy { input, .. } => input.len(),
        Data::Input(m) => m.len(),
    };
    let max_len = alg.max_input_len_for_nonce(job.iv.len());
    if declared > max_len {
        return Err(Error::MessageTooLong {
            len: declared,
            max: max_len,
        });
    }
    // A message length beyond its buffer is an error for every mode (never a silent prefix).
    if let Data::InPlace { buf, len } = &job.data {
        if *len > buf.len() {
            return Err(Error::OutputTooShort {
                needed: alg.output_len(op, *len).max(*len),
                got: buf.len(),
            });
        }
    }
    let io = if alg.is_mac() {
        match &job.data {
            Data::Input(m) | Data::Copy { input: m, .. } => IoPtrs::read_only(m),
            Data::InPlace { buf, len } => IoPtrs::read_only(&buf[..*len]),
        }
    } else {
        match &mut job.data {
            Data::Input(m) => {
                return Err(Error::OutputTooShort {
                    needed: alg.output_len(op, m.len()),
                    got: 0,
                });
            }
            Data::InPlace { buf, len } => IoPtrs::in_place(buf, *len),
            Data::Copy { input, output } => IoPtrs::copy(input, output),
        }
    };
    let len = io.len;
    if alg.needs_whole_blocks(op) && len % 16 != 0 {
        return Err(Error::NotBlockMultiple { len });
    }
    if let Err(rule) = alg.check_shape(op, len) {
        return Err(Error::InvalidMessageLength { len, rule });
    }
    if alg == Algorithm::AesCbcPkcs7 && op == Op::Decrypt && len == 0 {
        return Err(Error::InvalidPadding);
    }
    let needed = alg.output_len(op, len);
    if needed > io.out_cap && !alg.is_mac() {
        return Err(Error::OutputTooShort {
            needed,
            got: io.out_cap,
        });
    }
    // The chaining value: the 16-byte IV / initial counter block (or zeros where the mode has
    // none or a nonce of another length; lengths validated above). GCM's pre-counter block
    // J0 is written into the job below.
    let iv: Block = job.iv.try_into().unwrap_or([0; 16]);
    // Written in place into the store's next slot: built as a temporary and pushed, the
    // ~100-byte struct was copied with 16-byte loads straight after its 8-byte field stores,
    // a store-forwarding stall that measured 15% of a batch of 48-byte CBC messages.
    let p = out.push_in_place(Prepared {
        lane: ChainLane {
            io,
            chain: iv,
            key: job.key,
            blocks: len / BLOCK,
        },
        tag,
        ad: job.ad,
        nonce: job.iv,
        index,
    });
    if alg == Algorithm::AesGcm {
        // J0 (which for a hashed nonce depends on H) lives only in the job, wiped when the
        // job is dropped.
        modes::gcm::j0_into(&mut p.lane.chain, job.key, job.iv);
    }
    Ok(())
}
