//! Differential tests: the batch path (comb scheduler), the single-message path and the
//! sequential path against the RustCrypto crates, for every algorithm and both directions,
//! over random batches (lengths, key sizes, shared or distinct keys, IVs, lane counts, in place
//! or out of place, CMAC tag lengths; for AES-GCM also nonce lengths, associated data, tag
//! lengths and corrupted tags, ciphertexts and AD), plus a realistic packet mix and CTR
//! counter carries.

mod common;

use comb::{AesKey, Algorithm, Backend, Engine, Error, Job, JobResult, Op};
use common::{
    backends, bytes, engine_on, engines, reference, reference_cmac, reference_gcm, run_jobs, Hold,
    JobDesc, Outcome, PathKind, TagDesc, FILL, GCM_NONCE_LENS, OPS,
};
use proptest::prelude::*;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum KeyMode {
    /// Every job its own key, random sizes.
    PerJob,
    /// Every job its own key, all of the first job's size.
    SameSize,
    /// All jobs point at one key handle (the shared-key fast path).
    Shared,
    /// Runs of this many consecutive jobs share a key handle (random sizes): chunks and
    /// windows that are partly shared.
    Runs(usize),
}

#[derive(Clone, Debug)]
struct JobSpec {
    key_len: usize,
    key_seed: u64,
    iv_seed: u64,
    len: usize,
    data_seed: u64,
    in_place: bool,
    /// Extra output room past what the mode writes; must stay untouched.
    slack: usize,
    /// CMAC tag length.
    tag_len: usize,
    /// Decrypt direction: corrupt the PKCS#7 ciphertext's last block / flip a CMAC tag bit.
    corrupt: bool,
}

#[derive(Clone, Debug)]
struct BatchSpec {
    jobs: Vec<JobSpec>,
    key_mode: KeyMode,
    /// `None`: the engine's default lane count.
    lanes: Option<usize>,
    /// The kernels under test (a test parameter: every backend the CPU runs).
    backend: Backend,
}

/// Keys, IVs and messages of a batch, materialized from its spec for one algorithm.
struct Batch {
    keys: Vec<AesKey>,
    /// Raw key bytes of each job (for the reference).
    key_bytes: Vec<Vec<u8>>,
    /// Index into `keys` of each job's key handle.
    key_of: Vec<usize>,
    /// IVs (AES-GCM: nonces).
    ivs: Vec<Vec<u8>>,
    /// The plaintexts (already cut to whole blocks where the mode needs them).
    msgs: Vec<Vec<u8>>,
    /// Associated data (empty but for AES-GCM).
    ads: Vec<Vec<u8>>,
    /// Tag lengths (CMAC, AES-GCM).
    tag_lens: Vec<usize>,
    /// How each AES-GCM decryption input is damaged (`None` for the other algorithms).
    damage: Vec<Damage>,
}

fn materialize(alg: Algorithm, spec: &BatchSpec) -> Batch {
    let first_len = spec.jobs[0].key_len;
    let mut keys = Vec::new();
    let mut key_bytes = Vec::new();
    let mut key_of = Vec::new();
    for (i, j) in spec.jobs.iter().enumerate() {
        let (len, seed, new_handle) = match spec.key_mode {
            KeyMode::PerJob => (j.key_len, j.key_seed, true),
            KeyMode::SameSize => (first_len, j.key_seed, true),
            KeyMode::Shared => (first_len, spec.jobs[0].key_seed, i == 0),
            KeyMode::Runs(r) => {
                let head = &spec.jobs[i - i % r];
                (head.key_len, head.key_seed, i % r == 0)
            }
        };
        let kb = bytes(seed, len);
        if new_handle {
            keys.push(AesKey::new(&kb).unwrap());
        }
        key_of.push(keys.len() - 1);
        key_bytes.push(kb);
    }
    let mut batch = Batch {
        keys,
        key_bytes,
        key_of,
        ivs: Vec::new(),
        msgs: Vec::new(),
        ads: Vec::new(),
        tag_lens: Vec::new(),
        damage: Vec::new(),
    };
    for j in &spec.jobs {
        let g = if alg.is_aead() {
            gcm_job(j)
        } else {
            // Whole blocks for the modes that need them in either direction (plaintext and
            // ciphertext lengths are equal for ECB and CBC).
            let whole = matches!(alg, Algorithm::AesEcb | Algorithm::AesCbc);
            let len = if whole { j.len - j.len % 16 } else { j.len };
            JobData {
                iv: bytes(j.iv_seed, alg.iv_len()),
                ad: Vec::new(),
                msg: bytes(j.data_seed, len),
                tag_len: j.tag_len,
                damage: Damage::None,
            }
        };
        batch.ivs.push(g.iv);
        batch.msgs.push(g.msg);
        batch.ads.push(g.ad);
        batch.tag_lens.push(g.tag_len);
        batch.damage.push(g.damage);
    }
    batch
}

/// What to expect of one job, from the reference.
#[derive(Debug)]
enum Expect {
    /// Ok(n): output bytes `[..n]`; `room` bytes of output the job may touch.
    Data { out: Vec<u8>, room: usize },
    /// AES-GCM encryption: the ciphertext (and nothing past it) and the tag.
    Sealed { out: Vec<u8>, tag: Vec<u8> },
    /// Err(err) (bad padding, failed verification): the first `room` bytes zeroed.
    Rejected { err: Error, room: usize },
    /// CMAC generation: the tag.
    TagOut(Vec<u8>),
    /// CMAC verification: Ok or AuthenticationFailed.
    Verify { ok: bool },
}

/// One algorithm's batch under test: the engine, the materialized batch and its spec.
struct Run<'a> {
    engine: &'a Engine,
    alg: Algorithm,
    batch: &'a Batch,
    spec: &'a BatchSpec,
}

/// The per-job inputs of one direction: data (plaintext or ciphertext), associated data, and
/// the tags to verify (decryption of CMAC and AES-GCM; may be empty otherwise).
#[derive(Clone, Copy)]
struct Inputs<'a> {
    data: &'a [Vec<u8>],
    ads: &'a [Vec<u8>],
    tags: &'a [Vec<u8>],
}

impl Batch {
    /// `data` with the batch's AD, and `tags` to verify.
    fn inputs<'a>(&'a self, data: &'a [Vec<u8>], tags: &'a [Vec<u8>]) -> Inputs<'a> {
        Inputs {
            data,
            ads: &self.ads,
            tags,
        }
    }
}

impl Expect {
    /// Decryption: the plaintext `out`, or (`None`) a rejection with `err`.
    fn decrypted(out: Option<Vec<u8>>, room: usize, err: Error) -> Expect {
        match out {
            Some(out) => Expect::Data { out, room },
            None => Expect::Rejected { err, room },
        }
    }
}

impl Run<'_> {
    /// Job `i` of a direction, for failure messages.
    fn ctx(&self, op: Op, inputs: Inputs<'_>, i: usize) -> String {
        let (b, j) = (self.batch, &self.spec.jobs[i]);
        format!(
            "{} {op} {:?} lanes={:?} keys={:?} job {i}/{}: len={} key_len={} iv_len={} \
             ad_len={} tag_len={} in_place={} slack={} corrupt={} damage={:?}",
            self.alg,
            self.spec.backend,
            self.spec.lanes,
            self.spec.key_mode,
            inputs.data.len(),
            inputs.data[i].len(),
            b.key_bytes[i].len(),
            b.ivs[i].len(),
            inputs.ads[i].len(),
            b.tag_lens[i],
            j.in_place,
            j.slack,
            j.corrupt,
            b.damage[i]
        )
    }
}

/// Runs every job of one direction through one path. In place, a job's buffer is its input
/// followed by room; out of place, sentinel bytes (for CMAC, every other copy job is
/// `Data::Input` instead, and a copy's output buffer is ignored: it must stay untouched).
fn run_path(run: &Run<'_>, op: Op, inputs: Inputs<'_>, path: PathKind) -> Outcome {
    let Run {
        engine,
        alg,
        batch,
        spec,
    } = *run;
    let descs: Vec<JobDesc<'_>> = (0..inputs.data.len())
        .map(|i| {
            let (j, input) = (&spec.jobs[i], &inputs.data[i]);
            let room = alg.output_len(op, input.len());
            let (hold, len) = if j.in_place {
                (Hold::InPlace, room.max(input.len()))
            } else if alg.is_mac() && j.slack % 2 == 0 {
                (Hold::Input, room)
            } else {
                (Hold::Copy, room)
            };
            let tag = match (alg.tag_lens(), op) {
                (None, _) => TagDesc::None,
                (Some(_), Op::Encrypt) => TagDesc::Out(batch.tag_lens[i]),
                (Some(_), Op::Decrypt) => TagDesc::In(&inputs.tags[i]),
            };
            let key = &batch.keys[batch.key_of[i]];
            JobDesc::new(key, input, hold, len + j.slack)
                .iv(&batch.ivs[i])
                .ad(&inputs.ads[i])
                .tag(tag)
        })
        .collect();
    run_jobs(engine, alg, op, path, &descs)
}

/// Checks `Ok(out.len())`, the output, and that nothing past `room` was written.
fn check_data(r: &JobResult, buf: &[u8], out: &[u8], room: usize, ctx: &str) {
    assert_eq!(r, &Ok(out.len()), "{ctx}: result");
    assert!(
        buf[..out.len()] == out[..],
        "{ctx}: output differs from RustCrypto (first difference at byte {:?})",
        buf.iter().zip(out).position(|(a, b)| a != b)
    );
    assert!(
        buf[room..].iter().all(|&b| b == FILL),
        "{ctx}: wrote past the {room} bytes of output room"
    );
}

/// Checks one direction of one batch: all three paths agree with each other and with the
/// reference. Returns the batch path's outcome.
fn check_direction(run: &Run<'_>, op: Op, inputs: Inputs<'_>, expect: &[Expect]) -> Outcome {
    let Run { alg, spec, .. } = *run;
    let ctx = |i: usize| run.ctx(op, inputs, i);
    let batch_out = run_path(run, op, inputs, PathKind::Batch);
    assert_eq!(
        batch_out.results.len(),
        inputs.data.len(),
        "{alg} {op}: result count"
    );
    for (i, e) in expect.iter().enumerate() {
        let r = &batch_out.results[i];
        let buf = &batch_out.bufs[i];
        let tag = &batch_out.tags[i];
        match e {
            Expect::Data { out, room } => check_data(r, buf, out, *room, &ctx(i)),
            Expect::Sealed { out, tag: want } => {
                check_data(r, buf, out, out.len(), &ctx(i));
                assert_eq!(tag, want, "{}: tag", ctx(i));
            }
            Expect::Rejected { err, room } => {
                assert_eq!(r, &Err(err.clone()), "{}: result", ctx(i));
                assert!(
                    buf[..*room].iter().all(|&b| b == 0),
                    "{}: output not zeroed after {err}",
                    ctx(i)
                );
                assert!(
                    buf[*room..].iter().all(|&b| b == FILL),
                    "{}: wrote past the output room",
                    ctx(i)
                );
            }
            Expect::TagOut(t) => {
                assert_eq!(r, &Ok(0), "{}: result", ctx(i));
                assert_eq!(tag, t, "{}: CMAC tag", ctx(i));
            }
            Expect::Verify { ok } => {
                let want = if *ok {
                    Ok(0)
                } else {
                    Err(Error::AuthenticationFailed)
                };
                assert_eq!(r, &want, "{}: CMAC verification", ctx(i));
            }
        }
        if alg.is_mac() {
            // A MAC reads its message and writes nothing else.
            let mut untouched = if spec.jobs[i].in_place {
                inputs.data[i].clone()
            } else {
                Vec::new()
            };
            untouched.resize(buf.len(), FILL);
            assert_eq!(buf, &untouched, "{}: CMAC modified its data buffer", ctx(i));
        }
        if op == Op::Decrypt {
            assert!(
                tag.iter().all(|&b| b == FILL),
                "{}: decryption wrote into a tag buffer",
                ctx(i)
            );
        }
    }
    for path in [PathKind::Sequential, PathKind::One] {
        let other = run_path(run, op, inputs, path);
        for i in 0..inputs.data.len() {
            assert_eq!(
                other.results[i],
                batch_out.results[i],
                "{}: {path:?} result differs from the batch path",
                ctx(i)
            );
            assert!(
                other.bufs[i] == batch_out.bufs[i],
                "{}: {path:?} output differs from the batch path",
                ctx(i)
            );
            assert_eq!(
                other.tags[i],
                batch_out.tags[i],
                "{}: {path:?} tag differs from the batch path",
                ctx(i)
            );
        }
    }
    batch_out
}

/// The whole differential check of one algorithm on one batch spec: both directions against
/// the reference and across paths, then decrypt(encrypt(x)) == x through every path with in
/// place and out of place swapped (for CMAC: the batch's own tags verify).
fn check_alg(alg: Algorithm, spec: &BatchSpec) {
    let engine = engine_on(spec.backend, spec.lanes);
    let batch = materialize(alg, spec);
    let run = Run {
        engine: &engine,
        alg,
        batch: &batch,
        spec,
    };
    if alg.is_mac() {
        return check_cmac(&run);
    }
    let enc = if alg.is_aead() {
        check_gcm(&run)
    } else {
        check_cipher(&run)
    };

    // Round trip of the batch's own output (and tags), in place and out of place swapped.
    let n = spec.jobs.len();
    let cts: Vec<Vec<u8>> = (0..n)
        .map(|i| {
            let len = *enc.results[i].as_ref().unwrap();
            enc.bufs[i][..len].to_vec()
        })
        .collect();
    let mut swapped = spec.clone();
    for j in &mut swapped.jobs {
        j.in_place = !j.in_place;
    }
    let swapped_run = Run {
        spec: &swapped,
        ..run
    };
    let expect: Vec<Expect> = (0..n)
        .map(|i| Expect::Data {
            out: batch.msgs[i].clone(),
            room: alg.output_len(Op::Decrypt, cts[i].len()),
        })
        .collect();
    check_direction(
        &swapped_run,
        Op::Decrypt,
        batch.inputs(&cts, &enc.tags),
        &expect,
    );
}

/// CMAC: generation, verification of the reference tags (some with a flipped bit), and
/// verification of the batch's own tags.
fn check_cmac(run: &Run<'_>) {
    let Run { batch, spec, .. } = *run;
    let n = spec.jobs.len();
    let inputs = |tags| batch.inputs(&batch.msgs, tags);
    let full: Vec<[u8; 16]> = (0..n)
        .map(|i| reference_cmac(&batch.key_bytes[i], &batch.msgs[i]))
        .collect();
    // Generation.
    let expect: Vec<Expect> = (0..n)
        .map(|i| Expect::TagOut(full[i][..spec.jobs[i].tag_len].to_vec()))
        .collect();
    let gen = check_direction(run, Op::Encrypt, inputs(&[]), &expect);
    // Verification of the reference tags, some with a flipped bit.
    let verify: Vec<Vec<u8>> = (0..n)
        .map(|i| {
            let j = &spec.jobs[i];
            let mut t = full[i][..j.tag_len].to_vec();
            if j.corrupt {
                let bit = (j.data_seed as usize) % (8 * j.tag_len);
                t[bit / 8] ^= 1 << (bit % 8);
            }
            t
        })
        .collect();
    let expect: Vec<Expect> = (0..n)
        .map(|i| Expect::Verify {
            ok: !spec.jobs[i].corrupt,
        })
        .collect();
    check_direction(run, Op::Decrypt, inputs(&verify), &expect);
    // Round trip: the batch's own tags verify.
    let expect: Vec<Expect> = (0..n).map(|_| Expect::Verify { ok: true }).collect();
    check_direction(run, Op::Decrypt, inputs(&gen.tags), &expect);
}

/// A cipher: encryption, and decryption of random data (of valid, possibly corrupted,
/// ciphertexts for PKCS#7). Returns the encryption's outcome.
fn check_cipher(run: &Run<'_>) -> Outcome {
    let Run {
        alg, batch, spec, ..
    } = *run;
    let n = spec.jobs.len();
    let reference_of = |op: Op, i: usize, input: &[u8]| {
        reference(alg, op, &batch.key_bytes[i], &batch.ivs[i], input)
    };

    // Encryption.
    let expect: Vec<Expect> = (0..n)
        .map(|i| {
            let out = reference_of(Op::Encrypt, i, &batch.msgs[i]).unwrap();
            let room = alg.output_len(Op::Encrypt, batch.msgs[i].len());
            assert_eq!(
                out.len(),
                room,
                "{alg}: output_len disagrees with RustCrypto"
            );
            Expect::Data { out, room }
        })
        .collect();
    let enc = check_direction(run, Op::Encrypt, batch.inputs(&batch.msgs, &[]), &expect);

    // Decryption.
    let cts: Vec<Vec<u8>> = (0..n)
        .map(|i| {
            if alg == Algorithm::AesCbcPkcs7 {
                let mut ct = reference_of(Op::Encrypt, i, &batch.msgs[i]).unwrap();
                let j = &spec.jobs[i];
                if j.corrupt {
                    // A bit of the last block garbles the whole last plaintext block; a bit
                    // of the block before flips exactly that bit of the padding block.
                    let back = if ct.len() >= 32 && j.iv_seed.is_multiple_of(2) {
                        17
                    } else {
                        1
                    };
                    let at = ct.len() - back - (j.data_seed as usize % 16);
                    ct[at] ^= 1 << (j.key_seed % 8);
                }
                ct
            } else {
                bytes(spec.jobs[i].data_seed ^ 0xdec, batch.msgs[i].len())
            }
        })
        .collect();
    let expect: Vec<Expect> = (0..n)
        .map(|i| {
            let room = alg.output_len(Op::Decrypt, cts[i].len());
            let out = reference_of(Op::Decrypt, i, &cts[i]);
            Expect::decrypted(out, room, Error::InvalidPadding)
        })
        .collect();
    check_direction(run, Op::Decrypt, batch.inputs(&cts, &[]), &expect);
    enc
}

fn job_spec() -> impl Strategy<Value = JobSpec> {
    (
        prop_oneof![Just(16usize), Just(24), Just(32)],
        any::<u64>(),
        any::<u64>(),
        prop_oneof![3 => 0usize..3000, 1 => 0usize..80],
        any::<u64>(),
        any::<bool>(),
        prop_oneof![2 => Just(0usize), 1 => 1usize..=17],
        1usize..=16,
        proptest::bool::weighted(0.25),
    )
        .prop_map(
            |(key_len, key_seed, iv_seed, len, data_seed, in_place, slack, tag_len, corrupt)| {
                JobSpec {
                    key_len,
                    key_seed,
                    iv_seed,
                    len,
                    data_seed,
                    in_place,
                    slack,
                    tag_len,
                    corrupt,
                }
            },
        )
}

fn batch_spec() -> impl Strategy<Value = BatchSpec> {
    (
        proptest::collection::vec(job_spec(), 1..40),
        prop_oneof![
            2 => Just(KeyMode::PerJob),
            1 => Just(KeyMode::SameSize),
            1 => Just(KeyMode::Shared),
            2 => (1usize..=12).prop_map(KeyMode::Runs)
        ],
        prop_oneof![
            6 => (1usize..=16).prop_map(Some),
            2 => (1usize..=32).prop_map(Some),
            1 => Just(None)
        ],
        proptest::sample::select(backends()),
    )
        .prop_map(|(jobs, key_mode, lanes, backend)| BatchSpec {
            jobs,
            key_mode,
            lanes,
            backend,
        })
}

proptest! {
    #![proptest_config(ProptestConfig {
        cases: 48,
        failure_persistence: None,
        ..ProptestConfig::default()
    })]

    #[test]
    fn aes_ecb_matches_rustcrypto(spec in batch_spec()) {
        check_alg(Algorithm::AesEcb, &spec);
    }

    #[test]
    fn aes_cbc_matches_rustcrypto(spec in batch_spec()) {
        check_alg(Algorithm::AesCbc, &spec);
    }

    #[test]
    fn aes_cbc_pkcs7_matches_rustcrypto(spec in batch_spec()) {
        check_alg(Algorithm::AesCbcPkcs7, &spec);
    }

    #[test]
    fn aes_ctr_matches_rustcrypto(spec in batch_spec()) {
        check_alg(Algorithm::AesCtr, &spec);
    }

    #[test]
    fn aes_cfb128_matches_rustcrypto(spec in batch_spec()) {
        check_alg(Algorithm::AesCfb128, &spec);
    }

    #[test]
    fn aes_ofb_matches_rustcrypto(spec in batch_spec()) {
        check_alg(Algorithm::AesOfb, &spec);
    }

    #[test]
    fn aes_cmac_matches_rustcrypto(spec in batch_spec()) {
        check_alg(Algorithm::AesCmac, &spec);
    }

    #[test]
    fn aes_gcm_matches_rustcrypto(spec in batch_spec()) {
        check_alg(Algorithm::AesGcm, &spec);
    }
}

/// 64 jobs with a realistic packet-length mix (small 40..100, full-size 1400..1500, medium
/// 101..1399), seeded deterministically.
fn packet_mix(seed: u64, key_mode: KeyMode, lanes: usize, backend: Backend) -> BatchSpec {
    packet_mix_of(64, seed, key_mode, lanes, backend)
}

/// [`packet_mix`] with `n` jobs.
fn packet_mix_of(
    n: usize,
    seed: u64,
    key_mode: KeyMode,
    lanes: usize,
    backend: Backend,
) -> BatchSpec {
    let r = bytes(seed, n * 16);
    let word = |i: usize, k: usize| {
        u64::from_le_bytes(r[16 * i + 8 * (k % 2)..][..8].try_into().unwrap()) >> (k / 2)
    };
    let jobs = (0..n)
        .map(|i| {
            let pick = word(i, 0) as usize;
            let len = match pick % 10 {
                0..=3 => 40 + pick / 10 % 61,    // 40..=100
                4..=7 => 1400 + pick / 10 % 101, // 1400..=1500
                _ => 101 + pick / 10 % 1299,     // 101..=1399
            };
            JobSpec {
                key_len: [16, 24, 32][word(i, 1) as usize % 3],
                key_seed: word(i, 2),
                iv_seed: word(i, 3),
                len,
                data_seed: word(i, 4),
                in_place: i % 3 != 0,
                slack: (i % 4) * 3,
                tag_len: 1 + i % 16,
                corrupt: i % 7 == 3,
            }
        })
        .collect();
    BatchSpec {
        jobs,
        key_mode,
        lanes: Some(lanes),
        backend,
    }
}

#[test]
fn packet_mix_every_algorithm_lanes_1_to_32_every_backend() {
    for backend in backends() {
        packet_mix_every_algorithm(backend);
    }
}

/// Batches on both sides of 64 jobs, where the engine's validated jobs move from the stack
/// to the heap.
#[test]
fn packet_mix_every_algorithm_around_64_jobs() {
    for backend in backends() {
        for &alg in Algorithm::ALL
            .iter()
            .filter(|a| !a.is_aead() || **a == Algorithm::AesGcm)
        {
            for n in [63, 64, 65, 130] {
                let spec = packet_mix_of(n, 0x6464 + n as u64, KeyMode::Runs(5), 16, backend);
                check_alg(alg, &spec);
            }
        }
    }
}

fn packet_mix_every_algorithm(backend: Backend) {
    // Of the AEAD modes, AES-GCM has its RustCrypto reference here; the others are checked
    // in their own test files (known answers, batch = sequential = single at lanes 1..16 on
    // random mixed batches, RustCrypto `ccm`/`ocb3` differentials).
    for &alg in Algorithm::ALL
        .iter()
        .filter(|a| !a.is_aead() || **a == Algorithm::AesGcm)
    {
        for lanes in (1..=18).chain([23, 24, 25, 32]) {
            for key_mode in [
                KeyMode::PerJob,
                KeyMode::SameSize,
                KeyMode::Shared,
                KeyMode::Runs(3),
                KeyMode::Runs(7),
            ] {
                let spec = packet_mix(0x5eed + lanes as u64, key_mode, lanes, backend);
                check_alg(alg, &spec);
            }
        }
    }
}

// ---------------------------------------------------------------------------------------
// CTR counter carries

/// Encrypts `msg` with AES-CTR from initial counter `ctr0` through the batch path (next to
/// other jobs) and the single path; both must equal `ctr::Ctr128BE`.
fn check_ctr(key: &[u8], ctr0: &[u8; 16], len: usize) {
    let k = AesKey::new(key).unwrap();
    let msg = bytes(len as u64, len);
    let want = reference(Algorithm::AesCtr, Op::Encrypt, key, ctr0, &msg).unwrap();
    for e in [1, 4, 8, 16, 32].into_iter().flat_map(|p| engines(Some(p))) {
        let lanes = e.lanes(Algorithm::AesCtr, Op::Encrypt);
        let mut a = msg.clone();
        let mut other = bytes(7, 100);
        let other_iv = [0xffu8; 16];
        let mut jobs = vec![
            Job::in_place(&k, &mut other).with_iv(&other_iv),
            Job::in_place(&k, &mut a).with_iv(ctr0),
        ];
        let r = e.process(Algorithm::AesCtr, Op::Encrypt, &mut jobs);
        assert_eq!(
            r,
            vec![Ok(100), Ok(len)],
            "CTR {ctr0:02x?} len {len} lanes {lanes}"
        );
        assert!(
            a == want,
            "CTR batch path, counter {ctr0:02x?}, key {} bytes, len {len}, lanes {lanes}: \
             first difference at byte {:?}",
            key.len(),
            a.iter().zip(&want).position(|(x, y)| x != y)
        );
    }
    for e in engines(None) {
        let mut b = vec![0u8; len];
        let r = e.process_one(
            Algorithm::AesCtr,
            Op::Encrypt,
            Job::copy(&k, &msg, &mut b).with_iv(ctr0),
        );
        assert_eq!(r, Ok(len));
        assert!(
            b == want,
            "CTR single path ({}), counter {ctr0:02x?}, len {len}: first difference at byte {:?}",
            e.backend(),
            b.iter().zip(&want).position(|(x, y)| x != y)
        );
    }
}

/// A counter block: `prefix` in the high bytes, the low `low_bytes` bytes all 0xff except
/// the last one, which is `last`.
fn counter(prefix: u64, low_bytes: usize, last: u8) -> [u8; 16] {
    let mut c = common::block(prefix);
    for b in &mut c[16 - low_bytes..] {
        *b = 0xff;
    }
    c[15] = last;
    c
}

#[test]
fn ctr_counter_carries_over_32_64_and_128_bits() {
    for key_len in [16, 24, 32] {
        let key = bytes(key_len as u64 * 3, key_len);
        for low_bytes in [4, 8, 16] {
            // Up to 20 blocks before the carry; messages cross it in the wide (8-block) loop,
            // the one-block loop or the partial tail.
            for last in [0xeb, 0xf8, 0xfa, 0xfd, 0xfe, 0xff] {
                let c = counter(0x1234 + low_bytes as u64, low_bytes, last);
                for len in [1, 15, 16, 17, 40, 127, 128, 129, 200, 333, 1024] {
                    check_ctr(&key, &c, len);
                }
            }
        }
    }
}

/// Independent of the `ctr` crate: the keystream of block 1 after the all-ones counter is
/// `E(0)` (a full 128-bit wrap), and after `x || ff..ff` (64 low ones) it is
/// `E((x + 1) || 00..00)`.
#[test]
fn ctr_wraps_whole_block_by_the_block_cipher() {
    let key = AesKey::new(&bytes(99, 16)).unwrap();
    for (e, (ctr0, next)) in engines(None).into_iter().flat_map(|e| {
        [
            ([0xffu8; 16], [0u8; 16]),
            (
                {
                    let mut c = [0xffu8; 16];
                    c[..8].copy_from_slice(&5u64.to_be_bytes());
                    c
                },
                {
                    let mut n = [0u8; 16];
                    n[..8].copy_from_slice(&6u64.to_be_bytes());
                    n
                },
            ),
            (
                {
                    let mut c = [0u8; 16];
                    c[12..].copy_from_slice(&[0xff; 4]);
                    c
                },
                {
                    let mut n = [0u8; 16];
                    n[11] = 1;
                    n
                },
            ),
        ]
        .map(move |c| (e, c))
    }) {
        let mut zeros = vec![0u8; 48];
        let mut jobs = vec![Job::in_place(&key, &mut zeros).with_iv(&ctr0)];
        assert_eq!(
            e.process(Algorithm::AesCtr, Op::Encrypt, &mut jobs),
            vec![Ok(48)]
        );
        let mut e0 = ctr0;
        key.encrypt_block(&mut e0);
        let mut e1 = next;
        key.encrypt_block(&mut e1);
        assert_eq!(zeros[..16], e0, "CTR block 0 from {ctr0:02x?}");
        assert_eq!(
            zeros[16..32],
            e1,
            "CTR block 1 from {ctr0:02x?} must use {next:02x?}"
        );
    }
}

/// In place and out of place agree for every algorithm and direction (also covered by the
/// random batches above, where each job is randomly one or the other; this pins it down
/// for one fixed batch where every job is run both ways).
#[test]
fn in_place_equals_out_of_place_every_algorithm() {
    for (&alg, backend) in Algorithm::ALL
        .iter()
        .flat_map(|a| backends().into_iter().map(move |b| (a, b)))
    {
        for op in OPS {
            if alg.is_aead() {
                // AES-GCM: every job of `check_gcm`'s batches runs both ways (its round trip
                // swaps in place and out of place).
                continue;
            }
            let mut a = packet_mix(42, KeyMode::PerJob, 8, backend);
            for j in &mut a.jobs {
                j.in_place = true;
                j.slack = 0;
                j.corrupt = false;
            }
            let mut b = a.clone();
            for j in &mut b.jobs {
                j.in_place = false;
            }
            let e = engine_on(a.backend, a.lanes);
            let batch = materialize(alg, &a);
            let verify: Vec<Vec<u8>> = (0..a.jobs.len())
                .map(|i| {
                    reference_cmac(&batch.key_bytes[i], &batch.msgs[i])[..a.jobs[i].tag_len]
                        .to_vec()
                })
                .collect();
            let inputs: Vec<Vec<u8>> = if alg == Algorithm::AesCbcPkcs7 && op == Op::Decrypt {
                (0..a.jobs.len())
                    .map(|i| {
                        reference(
                            alg,
                            Op::Encrypt,
                            &batch.key_bytes[i],
                            &batch.ivs[i],
                            &batch.msgs[i],
                        )
                        .unwrap()
                    })
                    .collect()
            } else {
                batch.msgs.clone()
            };
            let run_a = Run {
                engine: &e,
                alg,
                batch: &batch,
                spec: &a,
            };
            let run_b = Run { spec: &b, ..run_a };
            let inputs = batch.inputs(&inputs, &verify);
            let x = run_path(&run_a, op, inputs, PathKind::Batch);
            let y = run_path(&run_b, op, inputs, PathKind::Batch);
            assert_eq!(x.results, y.results, "{alg} {op}: results");
            assert!(
                x.results.iter().all(|r| r.is_ok()),
                "{alg} {op}: {:?}",
                x.results
            );
            for i in 0..inputs.data.len() {
                let n = *x.results[i].as_ref().unwrap();
                assert_eq!(
                    x.bufs[i][..n],
                    y.bufs[i][..n],
                    "{alg} {op} job {i}: in place != out of place"
                );
                assert_eq!(x.tags[i], y.tags[i], "{alg} {op} job {i}: tags");
            }
        }
    }
}

// ---------------------------------------------------------------------------------------
// AES-GCM

/// How a GCM decryption input is damaged.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Damage {
    None,
    TagBit,
    CiphertextBit,
    AdBit,
}

/// One job's IV, AD, message and tag length (for AES-GCM derived from a [`JobSpec`], so the
/// batch strategies, key modes, lane counts and packet mixes serve GCM too).
#[derive(Debug)]
struct JobData {
    iv: Vec<u8>,
    ad: Vec<u8>,
    msg: Vec<u8>,
    tag_len: usize,
    damage: Damage,
}

fn gcm_job(j: &JobSpec) -> JobData {
    // Two thirds 12-byte nonces (the fast path), the rest hashed ones of many lengths.
    let nonce_len = if !j.iv_seed.is_multiple_of(3) {
        12
    } else {
        GCM_NONCE_LENS[(j.iv_seed / 3) as usize % GCM_NONCE_LENS.len()]
    };
    // AD and messages of 0..=300 bytes; a quarter of the messages keep the spec's length (up
    // to 3000 bytes: the wide kernels' main loops and aggregated GHASH).
    let ad_len = if j.data_seed.is_multiple_of(4) {
        0
    } else {
        (j.data_seed >> 8) as usize % 301
    };
    let len = if j.key_seed.is_multiple_of(4) {
        j.len
    } else {
        j.len % 301
    };
    let tags = Algorithm::AesGcm.allowed_tag_lens();
    let damage = if !j.corrupt {
        Damage::None
    } else {
        match (j.key_seed >> 3) % 3 {
            1 if len > 0 => Damage::CiphertextBit,
            2 if ad_len > 0 => Damage::AdBit,
            _ => Damage::TagBit,
        }
    };
    JobData {
        iv: bytes(j.iv_seed, nonce_len),
        ad: bytes(j.data_seed ^ 0xad, ad_len),
        msg: bytes(j.data_seed, len),
        tag_len: tags[j.tag_len % tags.len()],
        damage,
    }
}

/// AES-GCM: encryption against RustCrypto `aes-gcm`, decryption of the reference ciphertexts
/// (some with a flipped bit in the tag, the ciphertext or the AD). Returns the encryption's
/// outcome.
fn check_gcm(run: &Run<'_>) -> Outcome {
    let Run { batch, spec, .. } = *run;
    let n = spec.jobs.len();
    let want: Vec<(Vec<u8>, [u8; 16])> = (0..n)
        .map(|i| {
            reference_gcm(
                &batch.key_bytes[i],
                &batch.ivs[i],
                &batch.ads[i],
                &batch.msgs[i],
            )
        })
        .collect();

    // Encryption.
    let expect: Vec<Expect> = (0..n)
        .map(|i| Expect::Sealed {
            out: want[i].0.clone(),
            tag: want[i].1[..batch.tag_lens[i]].to_vec(),
        })
        .collect();
    let enc = check_direction(run, Op::Encrypt, batch.inputs(&batch.msgs, &[]), &expect);

    // Decryption of the reference ciphertexts, some damaged.
    let mut cts = Vec::new();
    let mut dads = Vec::new();
    let mut dtags = Vec::new();
    for (i, (ct, tag)) in want.iter().enumerate() {
        let (mut ct, mut ad, mut tag) = (
            ct.clone(),
            batch.ads[i].clone(),
            tag[..batch.tag_lens[i]].to_vec(),
        );
        let bit = spec.jobs[i].data_seed as usize;
        match batch.damage[i] {
            Damage::None => {}
            Damage::TagBit => {
                let at = bit / 8 % tag.len();
                tag[at] ^= 1 << (bit % 8);
            }
            Damage::CiphertextBit => {
                let at = bit / 8 % ct.len();
                ct[at] ^= 1 << (bit % 8);
            }
            Damage::AdBit => {
                let at = bit / 8 % ad.len();
                ad[at] ^= 1 << (bit % 8);
            }
        }
        cts.push(ct);
        dads.push(ad);
        dtags.push(tag);
    }
    let expect: Vec<Expect> = (0..n)
        .map(|i| {
            let out = (batch.damage[i] == Damage::None).then(|| batch.msgs[i].clone());
            Expect::decrypted(out, batch.msgs[i].len(), Error::AuthenticationFailed)
        })
        .collect();
    let damaged = Inputs {
        data: &cts,
        ads: &dads,
        tags: &dtags,
    };
    check_direction(run, Op::Decrypt, damaged, &expect);
    enc
}
