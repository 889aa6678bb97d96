//! `batch_api`: the library's batch API with arbitrary job lists, malformed jobs included.
//!
//! The input decodes (see `decode`) into an algorithm (any of `Algorithm::ALL`), an op, an
//! optional lane count (valid, or 0 / 33 / anything: the `Engine::with_lanes` error path)
//! and 0..=40 jobs. Each job has a key of 16/24/32 bytes or of a bad length (`AesKey::new`
//! error path), an IV of the right or a wrong length, associated data (mostly empty), its data
//! in place (exact room, extra room, `len > buf`, too short), copied (output exact, shorter or
//! longer) or input-only, and a tag that is absent, an output or an input, of the natural or an
//! arbitrary length.
//!
//! The same jobs (rebuilt from the same bytes, since jobs borrow their buffers) run through
//! `Engine::process` (default lanes and the fuzzed lane count), `process_sequential` and
//! `process_one`, on every backend this CPU supports (`Engine::untuned`). Checked:
//!
//! * no panic (and, under the address sanitizer, no out-of-bounds access);
//! * one result per job; every path and backend gives identical results and byte-identical
//!   buffers (outputs, tags, and whatever a failed job left behind);
//! * a job rejected by validation leaves its buffers untouched; a cipher job rejected for its
//!   padding or tag has its output zeroed (no leak); a MAC job never changes its data;
//! * `Ok(n)`: `n` is the mode's output length (for PKCS#7 decryption 1..=16 less than the
//!   input), and fits the output;
//! * ciphers: decrypt(encrypt(x)) == x and encrypt(decrypt(c)) == c, as a batch;
//! * MACs (and AEAD tags): a generated tag verifies, the same tag with one bit flipped gives
//!   `Error::AuthenticationFailed`.

#![no_main]

use arbitrary::Unstructured;
use comb::{AesKey, Algorithm, Backend, CpuFeatures, Data, Engine, Error, Job, JobResult, Op, Tag};
use libfuzzer_sys::fuzz_target;

const MAX_JOBS: usize = 40;

#[derive(Clone, Debug)]
struct Spec {
    alg: Algorithm,
    op: Op,
    lanes: Option<usize>,
    jobs: Vec<JobSpec>,
}

#[derive(Clone, Debug)]
struct JobSpec {
    key: Vec<u8>,
    iv: Vec<u8>,
    ad: Vec<u8>,
    data: Slot,
    tag: TagSpec,
}

/// What the tag of a job is.
#[derive(Clone, Debug, PartialEq, Eq)]
enum TagSpec {
    None,
    /// An output tag of this many bytes (the buffer lives in the slot).
    Out,
    /// An expected tag.
    In(Vec<u8>),
}

/// The buffers of one job: its data and its output tag.
#[derive(Clone, Debug, PartialEq, Eq)]
struct Slot {
    data: DataBufs,
    tag_out: Vec<u8>,
}

#[derive(Clone, Debug, PartialEq, Eq)]
enum DataBufs {
    InPlace { buf: Vec<u8>, len: usize },
    Copy { input: Vec<u8>, out: Vec<u8> },
    Input(Vec<u8>),
}

impl Slot {
    /// The message the job reads (`None` for `len > buf`).
    fn message(&self) -> Option<&[u8]> {
        match &self.data {
            DataBufs::InPlace { buf, len } => buf.get(..*len),
            DataBufs::Copy { input, .. } => Some(input),
            DataBufs::Input(m) => Some(m),
        }
    }

    /// The buffer the job writes.
    fn output(&self) -> &[u8] {
        match &self.data {
            DataBufs::InPlace { buf, .. } => buf,
            DataBufs::Copy { out, .. } => out,
            DataBufs::Input(_) => &[],
        }
    }
}

/// `n` bytes of the input (zeros once it runs out).
fn take(u: &mut Unstructured<'_>, n: usize) -> Vec<u8> {
    let have = n.min(u.len());
    let mut v = u.bytes(have).map(<[u8]>::to_vec).unwrap_or_default();
    v.resize(n, 0);
    v
}

fn int(u: &mut Unstructured<'_>, lo: usize, hi: usize) -> usize {
    u.int_in_range(lo..=hi).unwrap_or(lo)
}

fn decode(data: &[u8]) -> Spec {
    let mut u = Unstructured::new(data);
    let u = &mut u;
    let alg = Algorithm::ALL[int(u, 0, Algorithm::ALL.len() - 1)];
    let op = if int(u, 0, 1) == 0 {
        Op::Encrypt
    } else {
        Op::Decrypt
    };
    let lanes = match int(u, 0, 7) {
        0..=3 => None,
        4 | 5 => Some(int(u, 1, 32)),
        6 => Some(int(u, 0, 255)),
        _ => Some([0, 33, 64, usize::MAX][int(u, 0, 3)]),
    };
    let n = int(u, 0, MAX_JOBS);
    let jobs = (0..n).map(|_| decode_job(u, alg, op)).collect();
    Spec {
        alg,
        op,
        lanes,
        jobs,
    }
}

fn decode_job(u: &mut Unstructured<'_>, alg: Algorithm, op: Op) -> JobSpec {
    let key_len = match int(u, 0, 15) {
        0..=4 => 16,
        5..=9 => 24,
        10..=14 => 32,
        _ => int(u, 0, 40),
    };
    let key = take(u, key_len);
    let iv_len = match int(u, 0, 15) {
        0..=13 => alg.iv_len(),
        14 => 16,
        _ => int(u, 0, 33),
    };
    let iv = take(u, iv_len);
    let ad = match int(u, 0, 15) {
        15 => {
            let n = int(u, 1, 40);
            take(u, n)
        }
        _ => Vec::new(),
    };
    let len = match int(u, 0, 7) {
        0..=2 => int(u, 0, 48),
        3 | 4 => 16 * int(u, 0, 130),
        5 => int(u, 0, 4096 + 33),
        6 => 16 * int(u, 0, 4) + int(u, 0, 15),
        _ => 0,
    };
    let msg = if int(u, 0, 3) == 0 {
        take(u, len)
    } else {
        let seed = int(u, 0, 255);
        (0..len)
            .map(|i| (i * 31 + seed * 7 + (i >> 8)) as u8)
            .collect()
    };
    let needed = alg.output_len(op, len).max(len);
    let mut mode = int(u, 0, 15);
    if alg.is_mac() && mode < 10 {
        mode = 15;
    }
    let data = match mode {
        0..=5 => in_place(msg, needed),
        6 | 7 => in_place(msg, needed + int(u, 0, 32)),
        8 => {
            // len > buf: a little, or far (up to usize::MAX: `len` is a plain field).
            let cut = int(u, 1, 17);
            let mut buf = msg;
            let len = buf.len().max(cut);
            buf.truncate(len - cut);
            let len = match int(u, 0, 7) {
                0 if avoid_len_overflow() => usize::MAX - 16 - int(u, 0, 32),
                0 => usize::MAX - int(u, 0, 32),
                1 => isize::MAX as usize + int(u, 0, 32),
                _ => len,
            };
            DataBufs::InPlace { buf, len }
        }
        9 => {
            // Room for the message but (for PKCS#7 encryption) not for the padding.
            let len = msg.len();
            DataBufs::InPlace { buf: msg, len }
        }
        10..=12 => DataBufs::Copy {
            input: msg,
            out: vec![0xee; needed],
        },
        13 => DataBufs::Copy {
            input: msg,
            out: vec![0xee; needed.saturating_sub(int(u, 1, 17))],
        },
        14 => DataBufs::Copy {
            input: msg,
            out: vec![0xee; needed + int(u, 1, 32)],
        },
        _ => DataBufs::Input(msg),
    };
    let natural = |u: &mut Unstructured<'_>, any_len: bool| -> (TagSpec, usize) {
        let Some((min, max, default)) = alg.tag_lens() else {
            return (TagSpec::None, 0);
        };
        let len = if any_len {
            int(u, 0, 32)
        } else if int(u, 0, 1) == 0 {
            default
        } else {
            int(u, min, max)
        };
        match op {
            Op::Encrypt => (TagSpec::Out, len),
            Op::Decrypt => (TagSpec::In(take(u, len)), 0),
        }
    };
    let (tag, tag_out_len) = match int(u, 0, 15) {
        0..=11 => natural(u, false),
        12 => (TagSpec::None, 0),
        13 => (TagSpec::Out, int(u, 0, 20)),
        14 => {
            let n = int(u, 0, 20);
            (TagSpec::In(take(u, n)), 0)
        }
        _ => natural(u, true),
    };
    JobSpec {
        key,
        iv,
        ad,
        data: Slot {
            data,
            tag_out: vec![0xaa; tag_out_len],
        },
        tag,
    }
}

fn in_place(mut buf: Vec<u8>, room: usize) -> DataBufs {
    let len = buf.len();
    buf.resize(room.max(len), 0xcc);
    DataBufs::InPlace { buf, len }
}

/// Builds the job of `spec` over `slot`.
fn job<'a>(key: &'a AesKey, spec: &'a JobSpec, slot: &'a mut Slot) -> Job<'a> {
    let Slot { data, tag_out } = slot;
    let data = match data {
        DataBufs::InPlace { buf, len } => Data::InPlace { buf, len: *len },
        DataBufs::Copy { input, out } => Data::Copy { input, output: out },
        DataBufs::Input(m) => Data::Input(m),
    };
    let tag = match &spec.tag {
        TagSpec::None => Tag::None,
        TagSpec::Out => Tag::Out(tag_out),
        TagSpec::In(t) => Tag::In(t),
    };
    Job::new(key, data)
        .with_iv(&spec.iv)
        .with_ad(&spec.ad)
        .with_tag(tag)
}

#[derive(Clone, Copy, Debug)]
enum Path {
    Batch,
    Sequential,
    One,
}

/// Runs the jobs (those with a valid key) through `path`; results and the buffers after.
fn run(
    engine: &Engine,
    spec: &Spec,
    jobs: &[(&JobSpec, &AesKey)],
    path: Path,
) -> (Vec<JobResult>, Vec<Slot>) {
    let mut slots: Vec<Slot> = jobs.iter().map(|(j, _)| j.data.clone()).collect();
    let results = {
        let mut js: Vec<Job<'_>> = jobs
            .iter()
            .zip(slots.iter_mut())
            .map(|((j, k), s)| job(k, j, s))
            .collect();
        match path {
            Path::Batch => engine.process(spec.alg, spec.op, &mut js),
            Path::Sequential => engine.process_sequential(spec.alg, spec.op, &mut js),
            Path::One => js
                .into_iter()
                .map(|j| engine.process_one(spec.alg, spec.op, j))
                .collect(),
        }
    };
    assert_eq!(results.len(), jobs.len(), "one result per job ({path:?})");
    (results, slots)
}

/// Checks one job's outcome against what the API promises.
fn check_outcome(spec: &Spec, j: &JobSpec, r: &JobResult, after: &Slot) {
    let alg = spec.alg;
    if alg.is_mac() {
        // A MAC only reads its data, whatever the data variant and the outcome.
        assert_eq!(
            j.data.data, after.data,
            "a MAC job changed its data ({r:?})"
        );
    }
    match r {
        Err(Error::InvalidPadding | Error::AuthenticationFailed) if !alg.is_mac() => {
            let n = j.data.message().map_or(0, <[u8]>::len);
            let out = after.output();
            let out = &out[..n.min(out.len())];
            assert!(
                out.iter().all(|&b| b == 0),
                "{r:?}, but the output was not zeroed"
            );
        }
        Err(e) => assert_eq!(&j.data, after, "rejected ({e}), but the buffers changed"),
        Ok(n) => {
            let msg = j.data.message().expect("accepted a job with len > buf");
            let n = *n;
            if alg.is_mac() {
                assert_eq!(n, 0, "a MAC job wrote {n} bytes");
            } else if alg == Algorithm::AesCbcPkcs7 && spec.op == Op::Decrypt {
                assert!(
                    msg.len() >= 16 && n < msg.len() && msg.len() - n <= 16,
                    "PKCS#7 plaintext of {n} bytes from {} bytes",
                    msg.len()
                );
            } else {
                assert_eq!(n, alg.output_len(spec.op, msg.len()), "output length");
            }
            assert!(
                n <= after.output().len(),
                "{n} bytes written past the output"
            );
        }
    }
}

fn flip(tag: &[u8], salt: usize) -> Vec<u8> {
    let mut t = tag.to_vec();
    if !t.is_empty() {
        let bit = salt % (8 * t.len());
        t[bit / 8] ^= 1 << (bit % 8);
    }
    t
}

/// Runs `reverse` jobs as one batch: (spec, slot, key) each.
fn run_reverse(
    engine: &Engine,
    alg: Algorithm,
    op: Op,
    rev: &mut [(JobSpec, &AesKey)],
) -> (Vec<JobResult>, Vec<Slot>) {
    let mut slots: Vec<Slot> = rev.iter().map(|(j, _)| j.data.clone()).collect();
    let results = {
        let mut js: Vec<Job<'_>> = rev
            .iter()
            .zip(slots.iter_mut())
            .map(|((j, k), s)| job(k, j, s))
            .collect();
        engine.process(alg, op, &mut js)
    };
    assert_eq!(results.len(), rev.len());
    (results, slots)
}

/// decrypt(encrypt(x)) == x, encrypt(decrypt(c)) == c, and tags verify (and, flipped, don't).
fn check_round_trips(
    engine: &Engine,
    spec: &Spec,
    jobs: &[(&JobSpec, &AesKey)],
    results: &[JobResult],
    slots: &[Slot],
) {
    let alg = spec.alg;
    let back = match spec.op {
        Op::Encrypt => Op::Decrypt,
        Op::Decrypt => Op::Encrypt,
    };
    // (reverse job, key, what its output must be, what its tag must be)
    let mut rev: Vec<(JobSpec, &AesKey)> = Vec::new();
    let mut want: Vec<(Vec<u8>, Option<Vec<u8>>, bool)> = Vec::new(); // (out, tag, must fail)
    for (i, (((j, key), r), slot)) in jobs.iter().zip(results).zip(slots).enumerate() {
        let Ok(n) = r else { continue };
        let msg = j.data.message().expect("accepted").to_vec();
        let tag_used: Option<Vec<u8>> = match &j.tag {
            TagSpec::None => None,
            TagSpec::Out => Some(slot.tag_out.clone()),
            TagSpec::In(t) => Some(t.clone()),
        };
        if alg.is_mac() {
            let t = tag_used.expect("a MAC job succeeded without a tag");
            let mk = |tag: Vec<u8>| JobSpec {
                key: j.key.clone(),
                iv: j.iv.clone(),
                ad: j.ad.clone(),
                data: Slot {
                    data: DataBufs::Input(msg.clone()),
                    tag_out: Vec::new(),
                },
                tag: TagSpec::In(tag),
            };
            // Verification runs as a batch of Decrypt jobs; nothing to re-generate for a
            // verified tag other than checking the flipped one fails.
            if spec.op == Op::Encrypt {
                rev.push((mk(t.clone()), *key));
                want.push((Vec::new(), None, false));
            }
            rev.push((mk(flip(&t, i)), *key));
            want.push((Vec::new(), None, true));
            continue;
        }
        let out = slot.output()[..*n].to_vec();
        // AEAD: encryption made a tag, decryption checked one.
        let (tag, tag_out) = match (&tag_used, back) {
            (None, _) => (TagSpec::None, Vec::new()),
            (Some(t), Op::Decrypt) => (TagSpec::In(t.clone()), Vec::new()),
            (Some(t), Op::Encrypt) => (TagSpec::Out, vec![0; t.len()]),
        };
        let room = alg.output_len(back, out.len()).max(out.len());
        rev.push((
            JobSpec {
                key: j.key.clone(),
                iv: j.iv.clone(),
                ad: j.ad.clone(),
                data: Slot {
                    data: DataBufs::Copy {
                        input: out,
                        out: vec![0x55; room],
                    },
                    tag_out,
                },
                tag,
            },
            *key,
        ));
        want.push((
            msg,
            if back == Op::Encrypt { tag_used } else { None },
            false,
        ));
        if back == Op::Decrypt {
            if let Some(t) = tag_used_of(&rev) {
                // The flipped tag must fail too (AEAD).
                let mut bad = rev.last().expect("pushed").0.clone();
                bad.tag = TagSpec::In(flip(&t, i));
                rev.push((bad, *key));
                want.push((Vec::new(), None, true));
            }
        }
    }
    if rev.is_empty() {
        return;
    }
    let verify_op = if alg.is_mac() { Op::Decrypt } else { back };
    let (rr, rs) = run_reverse(engine, alg, verify_op, &mut rev);
    for (((r, s), (out, tag, must_fail)), (j, _)) in rr.iter().zip(&rs).zip(&want).zip(&rev) {
        if *must_fail {
            assert_eq!(
                r,
                &Err(Error::AuthenticationFailed),
                "a flipped tag verified: {j:?}"
            );
            continue;
        }
        let n = match r {
            Ok(n) => *n,
            Err(e) => panic!("the reverse of a successful job failed ({e}): {j:?}"),
        };
        assert_eq!(
            &s.output()[..n],
            &out[..],
            "round trip changed the data: {j:?}"
        );
        if let Some(t) = tag {
            assert_eq!(&s.tag_out, t, "round trip changed the tag: {j:?}");
        }
    }
}

fn tag_used_of(rev: &[(JobSpec, &AesKey)]) -> Option<Vec<u8>> {
    match &rev.last()?.0.tag {
        TagSpec::In(t) => Some(t.clone()),
        _ => None,
    }
}

/// `COMB_FUZZ_AVOID_LEN_OVERFLOW=1`: keep in-place `len` at most `usize::MAX - 16`, below
/// the known overflow of `Algorithm::output_len` for PKCS#7 encryption (fuzz/README.md,
/// "Known crashes"), so that a run can look past it.
fn avoid_len_overflow() -> bool {
    static A: std::sync::OnceLock<bool> = std::sync::OnceLock::new();
    *A.get_or_init(|| std::env::var_os("COMB_FUZZ_AVOID_LEN_OVERFLOW").is_some())
}

/// `COMB_FUZZ_DEBUG=1`: print each decoded batch and its results (for checking seeds).
fn debug() -> bool {
    static D: std::sync::OnceLock<bool> = std::sync::OnceLock::new();
    *D.get_or_init(|| std::env::var_os("COMB_FUZZ_DEBUG").is_some())
}

fn describe(j: &JobSpec, r: &JobResult) -> String {
    let data = match &j.data.data {
        DataBufs::InPlace { buf, len } => format!("in place {len} of {}", buf.len()),
        DataBufs::Copy { input, out } => format!("copy {} -> {}", input.len(), out.len()),
        DataBufs::Input(m) => format!("input {}", m.len()),
    };
    let tag = match &j.tag {
        TagSpec::None => "no tag".to_string(),
        TagSpec::Out => format!("tag out {}", j.data.tag_out.len()),
        TagSpec::In(t) => format!("tag in {}", t.len()),
    };
    format!(
        "key {} iv {} ad {} {data} {tag}: {r:?}",
        j.key.len(),
        j.iv.len(),
        j.ad.len()
    )
}

fuzz_target!(|data: &[u8]| {
    let spec = decode(data);

    // Keys: a bad length is AesKey::new's error, and the job cannot be built.
    let keys: Vec<Result<AesKey, Error>> = spec.jobs.iter().map(|j| AesKey::new(&j.key)).collect();
    for (j, k) in spec.jobs.iter().zip(&keys) {
        match (j.key.len(), k) {
            (16 | 24 | 32, Ok(k)) => assert_eq!(k.key_len(), j.key.len()),
            (got, Err(e)) => assert_eq!(e, &Error::InvalidKeyLength { got }),
            (len, Ok(_)) => panic!("AesKey::new accepted a {len}-byte key"),
        }
    }
    let jobs: Vec<(&JobSpec, &AesKey)> = spec
        .jobs
        .iter()
        .zip(&keys)
        .filter_map(|(j, k)| k.as_ref().ok().map(|k| (j, k)))
        .collect();

    let debug = debug();
    if debug {
        eprintln!(
            "{} {} lanes {:?}, {} jobs ({} with a valid key)",
            spec.alg,
            spec.op,
            spec.lanes,
            spec.jobs.len(),
            jobs.len()
        );
    }

    let backends = Backend::supported(&CpuFeatures::detect());
    assert!(!backends.is_empty(), "no backend on this CPU");
    let mut reference: Option<(Vec<JobResult>, Vec<Slot>)> = None;
    for &backend in &backends {
        let base = Engine::untuned(backend).expect("a supported backend");
        let mut runs: Vec<(&str, Engine, Path)> = vec![
            ("batch", base, Path::Batch),
            ("sequential", base, Path::Sequential),
            ("one", base, Path::One),
        ];
        if let Some(l) = spec.lanes {
            match base.with_lanes(l) {
                Ok(e) => {
                    assert!((1..=32).contains(&l), "with_lanes accepted {l}");
                    assert_eq!(e.lanes(spec.alg, spec.op), l);
                    runs.push(("batch, fuzzed lanes", e, Path::Batch));
                }
                Err(e) => {
                    assert!(!(1..=32).contains(&l), "with_lanes rejected {l}: {e}");
                    assert_eq!(e, Error::InvalidLaneCount { got: l });
                }
            }
        }
        for (name, engine, path) in runs {
            let (results, slots) = run(&engine, &spec, &jobs, path);
            match &reference {
                None => {
                    for (((j, _), r), s) in jobs.iter().zip(&results).zip(&slots) {
                        check_outcome(&spec, j, r, s);
                    }
                    if debug {
                        for ((j, _), r) in jobs.iter().zip(&results) {
                            eprintln!("  {}", describe(j, r));
                        }
                    }
                    check_round_trips(&engine, &spec, &jobs, &results, &slots);
                    reference = Some((results, slots));
                }
                Some((rr, rs)) => {
                    for i in 0..jobs.len() {
                        assert_eq!(
                            results[i], rr[i],
                            "job {i}: {backend} {name} result differs from the reference: {:?}",
                            jobs[i].0
                        );
                        assert_eq!(
                            slots[i], rs[i],
                            "job {i}: {backend} {name} buffers differ from the reference: {:?}",
                            jobs[i].0
                        );
                    }
                }
            }
        }
    }
});
