//! `comb ct`: a dudect-style statistical timing-leak test of the AES paths and of tag and
//! padding checks (Reparaz, Balasch and Verbauwhede, "Dude, is my code constant time?",
//! DATE 2017).
//!
//! For each test, two classes of inputs are prepared in advance (class 0 usually fixed,
//! class 1 random, or two secrets that a leaky implementation would treat differently); the
//! operation is timed with serialised TSC reads on inputs of a randomly chosen class, the
//! classes interleaved so that host noise hits both alike. Welch's t statistic of the two
//! timing distributions is computed on all samples and on samples cropped at several
//! percentiles of a warm-up run (the long tail is mostly interrupts); the largest |t| is
//! reported. |t| above 4.5 is dudect's threshold for "probably leaks", above 10 "leaks".
//!
//! This is evidence, not proof, and not a CI gate: a result depends on the machine, the
//! backend and the sample count. The constant-time design (no secret-dependent branches or
//! table indices in AES-NI/VAES code, `subtle` for tags, mask arithmetic for padding) is the
//! guarantee; this tool looks for regressions in it.

use crate::bench::timer;
use clap::Parser;
use comb::{AesKey, Algorithm, Backend, CpuFeatures, Engine, Job, Op, Tag};
use std::process::ExitCode;

/// dudect's threshold: |t| above it means the timings of the two classes differ.
const T_THRESHOLD: f64 = 4.5;
/// Percentiles of the warm-up timings at which the samples are also cropped.
const CROPS: [f64; 5] = [0.50, 0.75, 0.90, 0.95, 0.99];

#[derive(Parser, Debug)]
#[command(
    about = "Look for timing leaks (dudect's method: fixed vs random inputs, Welch's t-test)",
    after_help = "Tests: aes-block (block encryption, fixed vs random plaintext), aes-key \
(key expansion, fixed vs random key), ecb-<backend> and cbc-<backend> (a batch of 8 messages \
through each backend, fixed vs random data), cmac-verify (a wrong tag differing in its first \
vs its last byte), pkcs7-check (CBC-PKCS7 decryption with invalid padding of two different \
shapes), and for every AEAD mode and backend <alg>-<backend> (a batch of 8 messages encrypted, \
fixed vs random plaintext), <alg>-keys-<backend> (the same under two keys, alternating), \
<alg>-dec-<backend> (the batch decrypted, valid tags, fixed vs random plaintext) and \
<alg>-tag-<backend> (every tag wrong, in its first vs its last byte). |t| > 4.5: the classes' \
timings differ (dudect's threshold); the exit code is 1 if any test crosses it. Not a proof: \
the verdict depends on the machine and the sample count. Run `--fixed random` first: both \
classes are then random (the AEAD tag tests flip random bytes in both; the CMAC and padding \
tests keep their classes), so any DIFFERS they report is the machine's or the harness's, and \
the same test's verdicts are not evidence at that sample count. On a shared machine, repeat \
with other seeds: a leak differs every time."
)]
pub struct Args {
    /// Timed operations per class and test.
    #[arg(long, value_name = "N", default_value_t = 200_000)]
    pub samples: usize,
    /// Run only these tests (comma list).
    #[arg(long, value_name = "LIST", value_delimiter = ',')]
    pub tests: Vec<String>,
    /// Pin the measuring thread to this CPU.
    #[arg(long, value_name = "N")]
    pub cpu: Option<usize>,
    /// The fixed class: `zero` (all-zero inputs, dudect's classic choice; also the extreme
    /// of Hamming weight, so data-dependent power and clock effects show most), `constant`
    /// (one pseudo-random value, the same every time), or `random` (class 0 random too: a
    /// sanity check of the harness and the machine, which must not find a difference).
    #[arg(long, value_name = "KIND", default_value = "zero", value_parser = ["zero", "constant", "random"])]
    pub fixed: String,
    /// Seed of the inputs and of the class sequence.
    #[arg(long, default_value_t = 0x00c0_ffee)]
    pub seed: u64,
}

/// Welford's online mean and variance of one class.
#[derive(Clone, Copy, Default)]
struct Moments {
    n: f64,
    mean: f64,
    m2: f64,
}

impl Moments {
    fn push(&mut self, x: f64) {
        self.n += 1.0;
        let d = x - self.mean;
        self.mean += d / self.n;
        self.m2 += d * (x - self.mean);
    }

    fn var(&self) -> f64 {
        if self.n > 1.0 {
            self.m2 / (self.n - 1.0)
        } else {
            0.0
        }
    }
}

/// Welch's t statistic of two classes (0 when either is too small to say anything).
fn welch_t(a: &Moments, b: &Moments) -> f64 {
    let se = (a.var() / a.n + b.var() / b.n).sqrt();
    if a.n < 2.0 || b.n < 2.0 || se == 0.0 {
        0.0
    } else {
        (a.mean - b.mean) / se
    }
}

/// Deterministic pseudo-random numbers (xorshift64*): inputs and class choices.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_f491_4f6c_dd1d)
    }

    fn fill(&mut self, b: &mut [u8]) {
        for c in b.chunks_mut(8) {
            let r = self.next().to_le_bytes();
            c.copy_from_slice(&r[..c.len()]);
        }
    }
}

/// One timing test: `run(class, i)` copies input `i` of `class` into the test's one staging
/// buffer (untimed), performs the operation on it and returns its TSC ticks. The timed
/// operation always touches the same memory whatever the class: when each class read its
/// own buffers, their addresses alone made two classes of identically distributed random
/// inputs "differ" (|t| up to 26 with a million samples). Where the inputs copied in lie
/// matters too: the batch tests keep them in shuffled aligned slots ([`Inputs`]).
struct Test<'a> {
    name: String,
    what: &'static str,
    run: Box<dyn FnMut(usize, usize) -> u64 + 'a>,
}

/// Ticks of `op`, serialised TSC reads around it.
#[inline(always)]
fn timed(op: impl FnOnce()) -> u64 {
    let t0 = timer::start();
    op();
    timer::stop().wrapping_sub(t0)
}

/// The verdict of one test.
struct Verdict {
    name: String,
    what: &'static str,
    n: usize,
    t: f64,
}

/// Number of distinct prepared inputs per class (cycled through). Both classes' inputs live
/// interleaved in one array (`2 * i + class`), so the harness touches memory the same way for
/// either class: with the fixed input a constant and the random ones in a table, the table's
/// loads alone gave |t| > 100 on AES-NI block encryption.
const INPUTS: usize = 256;

fn measure(test: &mut Test<'_>, samples: usize, rng: &mut Rng) -> Verdict {
    // Warm-up: caches, branch predictors, clock; and the crop thresholds.
    let mut warm: Vec<u64> = Vec::with_capacity(20_000);
    for k in 0..20_000 {
        let class = (rng.next() & 1) as usize;
        warm.push((test.run)(class, k % INPUTS));
    }
    warm.sort_unstable();
    let crops: Vec<u64> = CROPS
        .iter()
        .map(|&q| warm[((warm.len() - 1) as f64 * q) as usize])
        .collect();
    let mut all = [Moments::default(); 2];
    let mut cropped = vec![[Moments::default(); 2]; crops.len()];
    let mut n = [0usize; 2];
    while n[0] < samples || n[1] < samples {
        let class = (rng.next() & 1) as usize;
        if n[class] >= samples {
            continue;
        }
        let i = n[class] % INPUTS;
        let dt = (test.run)(class, i);
        n[class] += 1;
        all[class].push(dt as f64);
        for (c, m) in crops.iter().zip(cropped.iter_mut()) {
            if dt <= *c {
                m[class].push(dt as f64);
            }
        }
    }
    let t = std::iter::once(welch_t(&all[0], &all[1]))
        .chain(cropped.iter().map(|m| welch_t(&m[0], &m[1])))
        .fold(0.0f64, |acc, t| if t.abs() > acc.abs() { t } else { acc });
    Verdict {
        name: test.name.clone(),
        what: test.what,
        n: samples,
        t,
    }
}

/// Blocks for both classes, interleaved (`2 * i + class`): class 0 one fixed value (`fixed`,
/// or random too when `fixed` is `None`), class 1 random.
fn blocks(rng: &mut Rng, fixed: Option<[u8; 16]>) -> Vec<[u8; 16]> {
    (0..2 * INPUTS)
        .map(|k| {
            let mut b = fixed.unwrap_or_default();
            if k % 2 == 1 || fixed.is_none() {
                rng.fill(&mut b);
            }
            b
        })
        .collect()
}

/// Message sets of `len` bytes for both classes, interleaved (`2 * i + class`, [`SETS`] per
/// class): class 0 one fixed set (zero, or one pseudo-random set with `constant`: its bytes
/// differ from each other, as in the random class), the same every time; class 1 random (both
/// random with `random`).
fn message_sets(rng: &mut Rng, fixed: &str, len: usize) -> Vec<Vec<u8>> {
    let mut fixed_data = vec![0u8; len];
    if fixed == "constant" {
        rng.fill(&mut fixed_data);
    }
    (0..2 * SETS)
        .map(|k| {
            let mut d = fixed_data.clone();
            if k % 2 == 1 || fixed == "random" {
                rng.fill(&mut d);
            }
            d
        })
        .collect()
}

/// Inputs of one length in one allocation, each in a 64-byte-aligned slot, the slots in a
/// random order: where an input sits (its alignment, its cache sets, its neighbours) is
/// independent of its class.
struct Inputs {
    mem: Vec<u8>,
    start: usize,
    stride: usize,
    len: usize,
    slot: Vec<usize>,
}

impl Inputs {
    /// `entries` (all of one length), input `k` in slot `slot[k]`.
    fn new(entries: &[Vec<u8>], rng: &mut Rng) -> Inputs {
        let len = entries.first().map_or(0, Vec::len);
        let stride = len.div_ceil(64).max(1) * 64;
        let mut mem = vec![0u8; entries.len() * stride + 64];
        let start = mem.as_ptr().align_offset(64).min(63);
        let mut slot: Vec<usize> = (0..entries.len()).collect();
        for k in (1..slot.len()).rev() {
            slot.swap(k, rng.next() as usize % (k + 1));
        }
        for (e, &at) in entries.iter().zip(&slot) {
            mem[start + at * stride..][..len].copy_from_slice(e);
        }
        Inputs {
            mem,
            start,
            stride,
            len,
            slot,
        }
    }

    fn get(&self, k: usize) -> &[u8] {
        &self.mem[self.start + self.slot[k] * self.stride..][..self.len]
    }
}

/// Message sets per class of the batch tests: 32 sets of 8 x 64 bytes keep the whole table
/// (64 x 512 bytes) in L2 for both classes alike.
const SETS: usize = 32;
/// Messages per batch of the batch tests, and their length: whole blocks, an even count of
/// them (as AES-COBRA-R needs). Where the CPU has them, eight jobs take OTR's zmm comb path
/// (chunks of 2 to 32 jobs) and CLOC's and SILC's zmm kernel (groups of 2 lanes or more).
const BATCH_JOBS: usize = 8;
const BATCH_LEN: usize = 64;

/// A batch of [`BATCH_JOBS`] messages of one AEAD mode: job `j` under `keys[j % keys.len()]`
/// with nonce `nonces[j]` (distinct, the same for both classes: nonces are public), no AD,
/// detached tags of `tag_len` bytes (0: the mode's tag is in its ciphertext).
struct AeadBatch {
    alg: Algorithm,
    engine: Engine,
    keys: Vec<AesKey>,
    nonces: Vec<Vec<u8>>,
    tag_len: usize,
    /// Ciphertext bytes per message; `pt_len` the decryption's output room per message.
    ct_len: usize,
    pt_len: usize,
}

impl AeadBatch {
    fn new(
        alg: Algorithm,
        engine: Engine,
        key_count: usize,
        rng: &mut Rng,
    ) -> Result<AeadBatch, String> {
        let key_len = alg.key_lens()[0];
        let keys = (0..key_count)
            .map(|_| {
                let mut k = vec![0u8; key_len];
                rng.fill(&mut k);
                AesKey::new(&k).map_err(|e| format!("{alg}: {e}"))
            })
            .collect::<Result<Vec<_>, _>>()?;
        let nonces = (0..BATCH_JOBS)
            .map(|_| {
                let mut n = vec![0u8; alg.iv_len()];
                rng.fill(&mut n);
                n
            })
            .collect();
        let ct_len = alg.output_len(Op::Encrypt, BATCH_LEN);
        Ok(AeadBatch {
            alg,
            engine,
            keys,
            nonces,
            tag_len: alg.tag_lens().map_or(0, |(_, _, default)| default),
            ct_len,
            pt_len: alg.output_len(Op::Decrypt, ct_len),
        })
    }

    /// The jobs of one batch call: inputs `input` (`in_len` bytes each), outputs `output`
    /// (`out_len` each), tags `tags` (`tag_len` each: written on encryption, expected on
    /// decryption).
    fn jobs<'a>(
        &'a self,
        op: Op,
        input: &'a [u8],
        in_len: usize,
        output: &'a mut [u8],
        out_len: usize,
        tags: &'a mut [u8],
    ) -> Vec<Job<'a>> {
        let mut tag_slots = tags.chunks_mut(self.tag_len.max(1));
        input
            .chunks(in_len)
            .zip(output.chunks_mut(out_len))
            .enumerate()
            .map(|(j, (m, o))| {
                let job = Job::copy(&self.keys[j % self.keys.len()], m, o).with_iv(&self.nonces[j]);
                match (self.tag_len, tag_slots.next()) {
                    (1.., Some(t)) if op == Op::Encrypt => job.with_tag(Tag::Out(t)),
                    (1.., Some(t)) => job.with_tag(Tag::In(t)),
                    _ => job,
                }
            })
            .collect()
    }

    /// Encrypts the batch `msgs` into ciphertexts and tags (untimed set-up).
    fn seal(&self, msgs: &[u8]) -> Result<(Vec<u8>, Vec<u8>), String> {
        let mut ct = vec![0u8; BATCH_JOBS * self.ct_len];
        let mut tags = vec![0u8; BATCH_JOBS * self.tag_len];
        let mut jobs = self.jobs(
            Op::Encrypt,
            msgs,
            BATCH_LEN,
            &mut ct,
            self.ct_len,
            &mut tags,
        );
        let r = self.engine.process(self.alg, Op::Encrypt, &mut jobs);
        drop(jobs);
        match r.iter().find_map(|r| r.as_ref().err()) {
            Some(e) => Err(format!("{}: set-up encryption failed: {e}", self.alg)),
            None => Ok((ct, tags)),
        }
    }

    /// Checks (untimed set-up) that decrypting `sealed` authenticates every job (`valid`) or
    /// none: a test that meant to time failures must not time successes, nor the reverse.
    fn expect_open(&self, sealed: &(Vec<u8>, Vec<u8>), valid: bool) -> Result<(), String> {
        let (ct, mut tags) = (sealed.0.clone(), sealed.1.clone());
        let mut out = vec![0u8; BATCH_JOBS * self.pt_len];
        let mut jobs = self.jobs(
            Op::Decrypt,
            &ct,
            self.ct_len,
            &mut out,
            self.pt_len,
            &mut tags,
        );
        let r = self.engine.process(self.alg, Op::Decrypt, &mut jobs);
        if r.iter().all(|r| r.is_ok() == valid) {
            Ok(())
        } else {
            let what = if valid { "authenticate" } else { "reject" };
            Err(format!(
                "{}: set-up decryption did not {what} every job",
                self.alg
            ))
        }
    }
}

/// The four tests of one AEAD mode on one backend (see the help text).
fn aead_tests(
    alg: Algorithm,
    e: Engine,
    backend: &str,
    fixed: &str,
    rng: &mut Rng,
) -> Result<Vec<Test<'static>>, String> {
    let mut tests = Vec::new();
    let sets = message_sets(rng, fixed, BATCH_JOBS * BATCH_LEN);
    // Encryption, under one key and under two.
    for (keys, name, what) in [
        (
            1,
            format!("{alg}-{backend}"),
            "batch of 8 x 64 bytes, encryption: fixed vs random plaintext",
        ),
        (
            2,
            format!("{alg}-keys-{backend}"),
            "batch of 8 x 64 bytes under two keys, encryption: fixed vs random plaintext",
        ),
    ] {
        let batch = AeadBatch::new(alg, e, keys, rng)?;
        tests.push(batch_test(batch, Op::Encrypt, name, what, &sets, rng));
    }
    // Decryption with valid tags: the sets sealed in advance.
    {
        let batch = AeadBatch::new(alg, e, 1, rng)?;
        let sealed = sets
            .iter()
            .map(|m| batch.seal(m))
            .collect::<Result<Vec<_>, _>>()?;
        for s in &sealed[..2] {
            batch.expect_open(s, true)?;
        }
        tests.push(batch_test(
            batch,
            Op::Decrypt,
            format!("{alg}-dec-{backend}"),
            "batch of 8 x 64 bytes, decryption (tags valid): fixed vs random plaintext",
            &joined(&sealed),
            rng,
        ));
    }
    // Decryption with every tag wrong: in its first byte (class 0) or its last (class 1), for
    // each random message set the same batch both ways. A mode without a detached tag (Julius:
    // its redundancy is inside the ciphertext) gets its ciphertext's first or last byte flipped
    // instead. With `--fixed random` the control: random bytes flipped in both classes.
    {
        let batch = AeadBatch::new(alg, e, 1, rng)?;
        let control = fixed == "random";
        let mut wrong = Vec::with_capacity(2 * SETS);
        for j in 0..SETS {
            let sealed = batch.seal(&sets[2 * j + 1])?;
            for class in [0, 1] {
                let (mut ct, mut tags) = sealed.clone();
                let (buf, width) = if batch.tag_len > 0 {
                    (&mut tags, batch.tag_len)
                } else {
                    (&mut ct, batch.ct_len)
                };
                for m in buf.chunks_mut(width) {
                    let at = match (control, class) {
                        (true, _) => rng.next() as usize % m.len(),
                        (false, 0) => 0,
                        (false, _) => m.len() - 1,
                    };
                    m[at] ^= 1;
                }
                batch.expect_open(&(ct.clone(), tags.clone()), false)?;
                wrong.push((ct, tags));
            }
        }
        tests.push(batch_test(
            batch,
            Op::Decrypt,
            format!("{alg}-tag-{backend}"),
            if control {
                "batch of 8 x 64 bytes, decryption, every tag wrong: random bytes in both"
            } else {
                "batch of 8 x 64 bytes, decryption, every tag wrong: first vs last byte"
            },
            &joined(&wrong),
            rng,
        ));
    }
    Ok(tests)
}

/// Each sealed batch as one input: its ciphertexts, then its tags.
fn joined(sealed: &[(Vec<u8>, Vec<u8>)]) -> Vec<Vec<u8>> {
    sealed
        .iter()
        .map(|(ct, tags)| [&ct[..], tags].concat())
        .collect()
}

/// A test timing `op` on the batch `inputs[2 * (i % SETS) + class]` (its input bytes, then on
/// decryption its expected tags), staged untimed into the same buffers for every input;
/// encryption writes its tags into a buffer of their own.
fn batch_test(
    batch: AeadBatch,
    op: Op,
    name: String,
    what: &'static str,
    inputs: &[Vec<u8>],
    rng: &mut Rng,
) -> Test<'static> {
    let (in_len, out_len) = match op {
        Op::Encrypt => (BATCH_LEN, batch.ct_len),
        Op::Decrypt => (batch.ct_len, batch.pt_len),
    };
    let inputs = Inputs::new(inputs, rng);
    let mut stage = vec![0u8; BATCH_JOBS * in_len];
    let mut tags = vec![0u8; BATCH_JOBS * batch.tag_len];
    let mut out = vec![0u8; BATCH_JOBS * out_len];
    Test {
        name,
        what,
        run: Box::new(move |class, i| {
            let (input, expected) = inputs.get(2 * (i % SETS) + class).split_at(stage.len());
            stage.copy_from_slice(input);
            if op == Op::Decrypt {
                tags.copy_from_slice(expected);
            }
            let mut jobs = batch.jobs(op, &stage, in_len, &mut out, out_len, &mut tags);
            let mut r = Vec::new();
            let dt = timed(|| r = batch.engine.process(batch.alg, op, &mut jobs));
            std::hint::black_box(&r);
            dt
        }),
    }
}

/// `comb ct`.
pub fn run(a: Args) -> Result<ExitCode, String> {
    if a.samples < 1000 {
        return Err("--samples must be at least 1000".into());
    }
    timer::check_clock()?;
    if let Some(c) = a.cpu {
        timer::pin_to_cpu(c)?;
    }
    let mut rng = Rng(a.seed | 1);
    let engine = Engine::new().map_err(|e| e.to_string())?;
    let backends = Backend::supported(&CpuFeatures::detect());

    // Shared inputs.
    let mut kbytes = [0u8; 16];
    rng.fill(&mut kbytes);
    let key = AesKey::new(&kbytes).map_err(|e| e.to_string())?;
    let both_random = a.fixed == "random";
    let mut fixed_block = [0u8; 16];
    if a.fixed == "constant" {
        rng.fill(&mut fixed_block);
    }
    let fixed = (!both_random).then_some(fixed_block);
    let random_blocks = blocks(&mut rng, fixed);
    let random_keys = blocks(&mut rng, fixed);
    let iv = [0x24u8; 16];

    let mut tests: Vec<Test<'_>> = Vec::new();

    // The raw block cipher: fixed (zero) vs random plaintext under one key.
    {
        let (key, random) = (&key, &random_blocks);
        tests.push(Test {
            name: "aes-block".into(),
            what: "AES-128 block encryption: fixed vs random plaintext",
            run: Box::new(move |class, i| {
                let mut b = std::hint::black_box(random[2 * i + class]);
                let dt = timed(|| key.encrypt_block(&mut b));
                std::hint::black_box(&b);
                dt
            }),
        });
    }
    // Key expansion: fixed (zero) vs random key.
    {
        let random = &random_keys;
        tests.push(Test {
            name: "aes-key".into(),
            what: "AES-128 key expansion: fixed vs random key",
            run: Box::new(move |class, i| {
                let k = std::hint::black_box(random[2 * i + class]);
                let mut key = None;
                let dt = timed(|| key = AesKey::new(&k).ok());
                std::hint::black_box(&key);
                dt
            }),
        });
    }
    // Batches through every backend: fixed vs random data.
    for &b in &backends {
        let e = Engine::untuned(b).map_err(|e| e.to_string())?;
        for (alg, label) in [(Algorithm::AesEcb, "ecb"), (Algorithm::AesCbc, "cbc")] {
            let key = &key;
            let data = message_sets(&mut rng, &a.fixed, BATCH_JOBS * BATCH_LEN);
            let data = Inputs::new(&data, &mut rng);
            let mut stage = vec![0u8; BATCH_JOBS * BATCH_LEN];
            let mut out = vec![0u8; BATCH_JOBS * BATCH_LEN];
            let iv_used: &[u8] = if alg.iv_len() == 0 { &[] } else { &iv };
            tests.push(Test {
                name: format!("{label}-{}", b.name()),
                what: if alg == Algorithm::AesEcb {
                    "batch of 8 x 64 bytes, ECB: fixed vs random data"
                } else {
                    "batch of 8 x 64 bytes, CBC encryption (comb): fixed vs random data"
                },
                run: Box::new(move |class, i| {
                    stage.copy_from_slice(data.get(2 * (i % SETS) + class));
                    let mut jobs: Vec<Job<'_>> = stage
                        .chunks(BATCH_LEN)
                        .zip(out.chunks_mut(BATCH_LEN))
                        .map(|(m, o)| Job::copy(key, m, o).with_iv(iv_used))
                        .collect();
                    let mut r = Vec::new();
                    let dt = timed(|| r = e.process(alg, Op::Encrypt, &mut jobs));
                    std::hint::black_box(&r);
                    dt
                }),
            });
        }
    }
    // CMAC verification: the expected tag differs from the true one in its first vs its last
    // byte (an early-exit comparison would return sooner for class 0).
    {
        let msg = [0x61u8; 64];
        let mut tag = [0u8; 16];
        engine
            .process_one(
                Algorithm::AesCmac,
                Op::Encrypt,
                Job::mac(&key, &msg).with_tag(Tag::Out(&mut tag)),
            )
            .map_err(|e| e.to_string())?;
        let mut wrong = [tag; 2];
        wrong[0][0] ^= 1;
        wrong[1][15] ^= 1;
        let (key, engine) = (&key, &engine);
        tests.push(Test {
            name: "cmac-verify".into(),
            what: "CMAC tag check: wrong first byte vs wrong last byte",
            run: Box::new(move |class, _| {
                let expected = std::hint::black_box(wrong[class]);
                let mut r = Ok(0);
                let dt = timed(|| {
                    r = engine.process_one(
                        Algorithm::AesCmac,
                        Op::Decrypt,
                        Job::mac(key, &msg).with_tag(Tag::In(&expected)),
                    )
                });
                std::hint::black_box(r.is_err());
                dt
            }),
        });
    }
    // PKCS#7: two invalid paddings of different shapes (last byte 0x05 with a wrong byte
    // before it, last byte 0x10 with the first byte wrong): the check must not tell them
    // apart by time.
    {
        let mut cts = [[0u8; 32]; 2];
        for (class, ct) in cts.iter_mut().enumerate() {
            let mut pt = [0x41u8; 32];
            if class == 0 {
                pt[27..].copy_from_slice(&[5, 5, 5, 4, 5]);
            } else {
                pt[16..].copy_from_slice(&[0x11; 16]);
                pt[31] = 0x10;
            }
            let mut c = pt;
            engine
                .process_one(
                    Algorithm::AesCbc,
                    Op::Encrypt,
                    Job::in_place(&key, &mut c).with_iv(&iv),
                )
                .map_err(|e| e.to_string())?;
            *ct = c;
        }
        let (key, engine) = (&key, &engine);
        tests.push(Test {
            name: "pkcs7-check".into(),
            what: "CBC-PKCS7 decryption, invalid padding: short vs long pad",
            run: Box::new(move |class, _| {
                let mut buf = std::hint::black_box(cts[class]);
                let mut r = Ok(0);
                let dt = timed(|| {
                    r = engine.process_one(
                        Algorithm::AesCbcPkcs7,
                        Op::Decrypt,
                        Job::in_place(key, &mut buf).with_iv(&iv),
                    )
                });
                std::hint::black_box(r.is_err());
                dt
            }),
        });
    }

    // The AEAD modes' batches through every backend.
    for &b in &backends {
        let e = Engine::untuned(b).map_err(|e| e.to_string())?;
        for &alg in Algorithm::ALL.iter().filter(|a| a.is_aead()) {
            tests.extend(aead_tests(alg, e, b.name(), &a.fixed, &mut rng)?);
        }
    }

    if !a.tests.is_empty() {
        for t in &a.tests {
            if !tests.iter().any(|x| &x.name == t) {
                let names: Vec<&str> = tests.iter().map(|x| x.name.as_str()).collect();
                return Err(format!("unknown test {t:?} (tests: {})", names.join(", ")));
            }
        }
        tests.retain(|x| a.tests.contains(&x.name));
    }

    println!(
        "comb ct: {} samples per class, backend {} (batches through every backend), |t| > {T_THRESHOLD} means the classes' timings differ",
        a.samples,
        engine.backend()
    );
    println!(
        "{:<27} {:>10} {:>8}  verdict  what",
        "test", "per class", "max |t|"
    );
    let mut leaks = 0;
    for test in &mut tests {
        let v = measure(test, a.samples, &mut rng);
        let verdict = if v.t.abs() > T_THRESHOLD {
            leaks += 1;
            "DIFFERS"
        } else {
            "ok     "
        };
        println!(
            "{:<27} {:>10} {:>8.2}  {verdict}  {}",
            v.name,
            v.n,
            v.t.abs(),
            v.what
        );
    }
    Ok(if leaks == 0 {
        ExitCode::SUCCESS
    } else {
        ExitCode::from(1)
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every AEAD mode's four tests set up on every backend of this CPU (their set-up checks
    /// that the valid batches authenticate and the wrong tags fail), and each runs once for
    /// either class; the message table holds the fixed class at even entries.
    #[test]
    fn aead_tests_set_up_and_run_for_every_mode_and_backend() {
        let mut rng = Rng(3);
        for b in Backend::supported(&CpuFeatures::detect()) {
            let e = Engine::untuned(b).expect("a supported backend");
            for &alg in Algorithm::ALL.iter().filter(|a| a.is_aead()) {
                let mut tests = aead_tests(alg, e, b.name(), "zero", &mut rng)
                    .unwrap_or_else(|err| panic!("{alg} on {}: {err}", b.name()));
                let names: Vec<&str> = tests.iter().map(|t| t.name.as_str()).collect();
                let n = b.name();
                assert_eq!(
                    names,
                    [
                        format!("{alg}-{n}"),
                        format!("{alg}-keys-{n}"),
                        format!("{alg}-dec-{n}"),
                        format!("{alg}-tag-{n}")
                    ]
                );
                for t in &mut tests {
                    for class in [0, 1] {
                        assert!((t.run)(class, 5) > 0, "{}", t.name);
                    }
                }
            }
            // The control: tags wrong at random bytes in both classes, a detached tag and
            // Julius's in-band one (its set-up checks that every one fails).
            for alg in [Algorithm::Aes128Otr, Algorithm::Aes128Julius] {
                let mut tests = aead_tests(alg, e, b.name(), "random", &mut rng)
                    .unwrap_or_else(|err| panic!("{alg} on {}: {err}", b.name()));
                let tag = &mut tests[3];
                assert!(tag.what.contains("random bytes in both"), "{}", tag.what);
                for i in [0, SETS - 1, SETS] {
                    assert!((tag.run)(1, i) > 0);
                }
            }
        }
        let sets = message_sets(&mut rng, "zero", 64);
        assert_eq!(sets.len(), 2 * SETS);
        assert!(sets.iter().step_by(2).all(|s| s.iter().all(|&x| x == 0)));
        assert!(sets
            .iter()
            .skip(1)
            .step_by(2)
            .all(|s| s.iter().any(|&x| x != 0)));
        let sets = message_sets(&mut rng, "random", 64);
        assert!(sets.iter().all(|s| s.iter().any(|&x| x != 0)));
    }

    /// Every input comes back as it went in, from its own 64-byte-aligned slot, and the slots
    /// are a shuffle (neither the identity nor in class order).
    #[test]
    fn inputs_keep_their_bytes_in_shuffled_aligned_slots() {
        let mut rng = Rng(9);
        let entries: Vec<Vec<u8>> = (0..2 * SETS).map(|k| vec![k as u8; 72]).collect();
        let inputs = Inputs::new(&entries, &mut rng);
        let mut slots = inputs.slot.clone();
        for (k, e) in entries.iter().enumerate() {
            assert_eq!(inputs.get(k), &e[..]);
            assert_eq!(inputs.get(k).as_ptr() as usize % 64, 0);
        }
        assert_ne!(slots, (0..2 * SETS).collect::<Vec<_>>());
        assert!(slots.iter().step_by(2).any(|&s| s % 2 == 1));
        slots.sort_unstable();
        assert_eq!(slots, (0..2 * SETS).collect::<Vec<_>>());
    }

    #[test]
    fn welch_t_separates_shifted_classes_and_not_equal_ones() {
        let mut rng = Rng(7);
        let (mut a, mut b, mut c) = (Moments::default(), Moments::default(), Moments::default());
        for _ in 0..10_000 {
            let x = (rng.next() % 100) as f64;
            a.push(x);
            b.push((rng.next() % 100) as f64);
            c.push(x + 5.0);
        }
        assert!(welch_t(&a, &b).abs() < T_THRESHOLD);
        assert!(welch_t(&a, &c).abs() > 10.0);
        assert_eq!(welch_t(&Moments::default(), &a), 0.0);
    }
}
