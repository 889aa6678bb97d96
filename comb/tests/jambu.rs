//! AES-JAMBU v2 (`aes128-jambu`): the CAESAR genkat known answers of the designers' reference
//! code (every backend, single path and batches at several lane counts, forgeries), the batch
//! properties on random mixed batches, the block-boundary lengths (0, 7, 8, 9, 15, 16, 17)
//! against the known answers in place and out of place, typed errors for bad nonce, tag and
//! key lengths, and forgeries (a tag, ciphertext, AD or nonce bit) failing only their own job
//! with the output zeroed; and against a plain model of the specification, every comb window
//! lane count 1..=16 (and the split calls beyond), message lengths across every window
//! boundary, shared and per-job keys, AD with and without whole blocks.

mod common;

use comb::{AesKey, Algorithm, Engine, Error, Op};
use common::aead::{assert_zeroed, genkat, Genkat};
use common::{engines, run_jobs, Hold, JobDesc, PathKind, TagDesc};

const JAMBU: Algorithm = Algorithm::Aes128Jambu;
const KAT: &str = "aes128-jambu-v2-n8-t8.txt";
const PATHS: [PathKind; 3] = [PathKind::Batch, PathKind::Sequential, PathKind::One];

#[test]
fn genkat_known_answers() {
    common::aead::check_genkat(JAMBU, KAT);
}

#[test]
fn batch_properties() {
    for seed in 1..=4 {
        common::aead::check_properties(JAMBU, seed, 40, 1000, &[1, 3, 8, 16]);
    }
}

/// The genkat records with the given plaintext length, AD lengths spread over the file.
fn records_with_pt_len(recs: &[Genkat], len: usize) -> Vec<&Genkat> {
    let v: Vec<&Genkat> = recs
        .iter()
        .filter(|r| r.pt.len() == len && matches!(r.ad.len(), 0 | 1 | 7 | 8 | 9 | 16 | 17))
        .collect();
    assert!(
        v.len() >= 4,
        "the KAT file has records with {len}-byte messages"
    );
    v
}

/// Messages of 0, 7, 8, 9, 15, 16 and 17 bytes (empty, partial, whole, whole + partial 64-bit
/// blocks) with empty, partial and whole-block AD: the known ciphertext and tag on every path,
/// in place and out of place, and decryption back to the plaintext.
#[test]
fn block_boundary_lengths_match_the_known_answers() {
    let recs = genkat(KAT);
    for len in [0usize, 7, 8, 9, 15, 16, 17] {
        let sel = records_with_pt_len(&recs, len);
        let keys: Vec<AesKey> = sel.iter().map(|r| AesKey::new(&r.key).unwrap()).collect();
        for engine in engines(Some(4)) {
            for hold in [Hold::InPlace, Hold::Copy] {
                let descs: Vec<JobDesc<'_>> = sel
                    .iter()
                    .zip(&keys)
                    .map(|(r, k)| {
                        JobDesc::new(k, &r.pt, hold, len)
                            .iv(&r.nonce)
                            .ad(&r.ad)
                            .tag(TagDesc::Out(8))
                    })
                    .collect();
                for path in PATHS {
                    let o = run_jobs(&engine, JAMBU, Op::Encrypt, path, &descs);
                    for (i, r) in sel.iter().enumerate() {
                        let what = format!("Count {} {hold:?} {path:?}", r.count);
                        assert_eq!(o.results[i], Ok(len), "{what}");
                        assert_eq!(o.bufs[i][..len], r.ct[..len], "{what}: ciphertext");
                        assert_eq!(o.tags[i][..], r.ct[len..], "{what}: tag");
                    }
                }
                let descs: Vec<JobDesc<'_>> = sel
                    .iter()
                    .zip(&keys)
                    .map(|(r, k)| {
                        JobDesc::new(k, &r.ct[..len], hold, len)
                            .iv(&r.nonce)
                            .ad(&r.ad)
                            .tag(TagDesc::In(&r.ct[len..]))
                    })
                    .collect();
                for path in PATHS {
                    let o = run_jobs(&engine, JAMBU, Op::Decrypt, path, &descs);
                    for (i, r) in sel.iter().enumerate() {
                        let what = format!("Count {} {hold:?} {path:?}", r.count);
                        assert_eq!(o.results[i], Ok(len), "{what}");
                        assert_eq!(o.bufs[i][..len], r.pt[..], "{what}: plaintext");
                    }
                }
            }
        }
    }
}

/// Output buffers longer than the message: nothing past `len` is written, on either path.
#[test]
fn nothing_is_written_past_the_message() {
    let key = AesKey::new(&[7; 16]).unwrap();
    let msgs: Vec<Vec<u8>> = (0..40).map(|n| common::bytes(n as u64, n)).collect();
    let nonce = [3u8; 8];
    for engine in engines(Some(8)) {
        let descs: Vec<JobDesc<'_>> = msgs
            .iter()
            .enumerate()
            .map(|(i, m)| {
                JobDesc::new(&key, m, Hold::alternating(i, Op::Encrypt), m.len() + 9)
                    .iv(&nonce)
                    .tag(TagDesc::Out(8))
            })
            .collect();
        for path in PATHS {
            let o = run_jobs(&engine, JAMBU, Op::Encrypt, path, &descs);
            for (i, m) in msgs.iter().enumerate() {
                assert_eq!(o.results[i], Ok(m.len()));
                assert!(
                    o.bufs[i][m.len()..].iter().all(|&b| b == common::FILL),
                    "{path:?} len {}: bytes past the message changed",
                    m.len()
                );
            }
        }
    }
}

/// Bad nonce, tag and key lengths are typed validation errors; the good job of the same
/// batch still gets its known answer.
#[test]
fn bad_lengths_are_typed_errors() {
    let recs = genkat(KAT);
    let good = &recs[33 * 9 + 5]; // 9-byte message, 5-byte AD
    assert_eq!((good.pt.len(), good.ad.len()), (9, 5));
    let key = AesKey::new(&good.key).unwrap();
    let key24 = AesKey::new(&[0x24; 24]).unwrap();
    let n7 = [1u8; 7];
    let n9 = [1u8; 9];
    let n12 = [1u8; 12];
    let tag16 = [0u8; 16];
    let tag8 = good.ct[9..].to_vec();
    let ct = good.ct[..9].to_vec();
    for engine in engines(Some(3)) {
        for op in [Op::Encrypt, Op::Decrypt] {
            let (input, ok_tag, bad_tag) = match op {
                Op::Encrypt => (&good.pt, TagDesc::Out(8), TagDesc::Out(16)),
                Op::Decrypt => (&ct, TagDesc::In(&tag8), TagDesc::In(&tag16)),
            };
            let job = |k: &'static str| {
                let (key, nonce, tag): (&AesKey, &[u8], TagDesc<'_>) = match k {
                    "good" => (&key, &good.nonce, ok_tag),
                    "n7" => (&key, &n7, ok_tag),
                    "n9" => (&key, &n9, ok_tag),
                    "n12" => (&key, &n12, ok_tag),
                    "tag16" => (&key, &good.nonce, bad_tag),
                    _ => (&key24, &good.nonce, ok_tag),
                };
                JobDesc::new(key, input, Hold::Copy, 9)
                    .iv(nonce)
                    .ad(&good.ad)
                    .tag(tag)
            };
            let descs: Vec<JobDesc<'_>> = ["n7", "good", "n9", "n12", "tag16", "key24"]
                .into_iter()
                .map(job)
                .collect();
            for path in PATHS {
                let o = run_jobs(&engine, JAMBU, op, path, &descs);
                let what = format!("{op:?} {path:?}");
                let iv = |got| Err(Error::InvalidIvLength { expected: 8, got });
                assert_eq!(o.results[0], iv(7), "{what}");
                assert_eq!(o.results[2], iv(9), "{what}");
                assert_eq!(o.results[3], iv(12), "{what}");
                assert_eq!(
                    o.results[4],
                    Err(Error::InvalidTagLength {
                        got: 16,
                        min: 8,
                        max: 8
                    }),
                    "{what}"
                );
                assert_eq!(
                    o.results[5],
                    Err(Error::InvalidKeyLength { got: 24 }),
                    "{what}"
                );
                assert_eq!(o.results[1], Ok(9), "{what}");
                match op {
                    Op::Encrypt => {
                        assert_eq!(o.bufs[1], ct, "{what}");
                        assert_eq!(o.tags[1], tag8, "{what}");
                    }
                    Op::Decrypt => assert_eq!(o.bufs[1], good.pt, "{what}"),
                }
            }
        }
    }
}

/// A flipped bit of the tag, the ciphertext (first, middle and partial last block), the AD or
/// the nonce fails that job with its output zeroed (in place and out of place); the other
/// jobs of the batch decrypt correctly.
#[test]
fn forgeries_fail_alone_with_zeroed_output() {
    let recs = genkat(KAT);
    // 17-byte messages with 3-byte AD (two whole blocks and a partial one).
    let r = &recs[33 * 17 + 3];
    assert_eq!((r.pt.len(), r.ad.len()), (17, 3));
    let key = AesKey::new(&r.key).unwrap();
    let (ct, tag) = r.ct.split_at(17);
    // (ciphertext, tag, AD, nonce) of each job: honest and forged alternately.
    type Case = (Vec<u8>, Vec<u8>, Vec<u8>, Vec<u8>);
    let mut cases: Vec<Case> = Vec::new();
    let honest = (ct.to_vec(), tag.to_vec(), r.ad.clone(), r.nonce.clone());
    for i in 0..12 {
        let mut c = honest.clone();
        match i % 6 {
            0 => c.1[i % 8] ^= 1 << (i % 8),
            1 => c.0[0] ^= 0x01,
            2 => c.0[9] ^= 0x40,
            3 => c.0[16] ^= 0x80,
            4 => c.2[i % 3] ^= 0x02,
            _ => c.3[i % 8] ^= 0x10,
        }
        cases.push(honest.clone());
        cases.push(c);
    }
    for engine in engines(Some(5)) {
        let descs: Vec<JobDesc<'_>> = cases
            .iter()
            .enumerate()
            .map(|(i, (c, t, ad, n))| {
                let hold = if i % 4 < 2 { Hold::InPlace } else { Hold::Copy };
                JobDesc::new(&key, c, hold, 17)
                    .iv(n)
                    .ad(ad)
                    .tag(TagDesc::In(t))
            })
            .collect();
        for path in PATHS {
            let o = run_jobs(&engine, JAMBU, Op::Decrypt, path, &descs);
            for (i, d) in descs.iter().enumerate() {
                let what = format!("{path:?} job {i}");
                if i % 2 == 1 {
                    assert_eq!(o.results[i], Err(Error::AuthenticationFailed), "{what}");
                    assert_zeroed(&o.bufs[i], d.input.len(), &what);
                    // In place the buffer held the ciphertext: it must now be all zero.
                    if d.hold == Hold::InPlace {
                        assert!(o.bufs[i].iter().all(|&b| b == 0), "{what}");
                    }
                } else {
                    assert_eq!(o.results[i], Ok(17), "{what}");
                    assert_eq!(o.bufs[i], r.pt, "{what}");
                }
            }
        }
    }
}

/// Empty message and empty AD round trip on their own and inside a batch of long messages
/// (whose lanes outlive them in the comb windows).
#[test]
fn empty_inputs_round_trip_in_mixed_batches() {
    let keys: Vec<AesKey> = (0..3)
        .map(|i| AesKey::new(&common::bytes(100 + i, 16)).unwrap())
        .collect();
    let lens = [0usize, 700, 0, 1, 333, 0, 64, 8];
    let msgs: Vec<Vec<u8>> = lens
        .iter()
        .enumerate()
        .map(|(i, &n)| common::bytes(i as u64, n))
        .collect();
    let ads: Vec<Vec<u8>> = (0..lens.len())
        .map(|i| common::bytes(50 + i as u64, [0, 0, 13, 8, 0, 1, 0, 40][i]))
        .collect();
    let nonces: Vec<Vec<u8>> = (0..lens.len())
        .map(|i| common::bytes(90 + i as u64, 8))
        .collect();
    // The first run's outputs and tags, which every other path and lane count must match.
    type Outputs = (Vec<Vec<u8>>, Vec<Vec<u8>>);
    let mut reference: Option<Outputs> = None;
    for p in [1, 2, 8] {
        for engine in engines(Some(p)) {
            let descs: Vec<JobDesc<'_>> = (0..lens.len())
                .map(|i| {
                    JobDesc::new(
                        &keys[i % 3],
                        &msgs[i],
                        Hold::alternating(i, Op::Encrypt),
                        lens[i],
                    )
                    .iv(&nonces[i])
                    .ad(&ads[i])
                    .tag(TagDesc::Out(8))
                })
                .collect();
            for path in PATHS {
                let o = run_jobs(&engine, JAMBU, Op::Encrypt, path, &descs);
                assert!(o.results.iter().all(Result::is_ok), "{path:?}");
                let got = (o.bufs.clone(), o.tags.clone());
                match &reference {
                    None => reference = Some(got),
                    Some(r) => assert_eq!(r, &got, "P = {p} {path:?}"),
                }
            }
            let (cts, tags) = reference.clone().unwrap();
            let descs: Vec<JobDesc<'_>> = (0..lens.len())
                .map(|i| {
                    JobDesc::new(
                        &keys[i % 3],
                        &cts[i],
                        Hold::alternating(i, Op::Decrypt),
                        lens[i],
                    )
                    .iv(&nonces[i])
                    .ad(&ads[i])
                    .tag(TagDesc::In(&tags[i]))
                })
                .collect();
            for path in PATHS {
                let o = run_jobs(&engine, JAMBU, Op::Decrypt, path, &descs);
                for i in 0..lens.len() {
                    assert_eq!(o.results[i], Ok(lens[i]), "P = {p} {path:?} job {i}");
                    assert_eq!(o.bufs[i], msgs[i], "P = {p} {path:?} job {i}");
                }
            }
        }
    }
    // Distinct inputs give distinct tags (the empty jobs differ in key, nonce or AD).
    let (_, tags) = reference.unwrap();
    for i in 0..tags.len() {
        for j in i + 1..tags.len() {
            assert_ne!(tags[i], tags[j], "jobs {i} and {j}");
        }
    }
}

/// AES-JAMBU v2 straight from the specification, one frame at a time with the raw block
/// cipher: the model the window kernels are checked against (the known answers reach 32-byte
/// messages only, four frames).
fn jambu_model(key: &AesKey, nonce: &[u8], ad: &[u8], pt: &[u8]) -> (Vec<u8>, [u8; 8]) {
    let word = |b: &[u8]| -> u64 {
        let mut w = [0u8; 8];
        w[..b.len()].copy_from_slice(b);
        u64::from_le_bytes(w)
    };
    // One frame: S = E(S), U ^= R ^ c, then the caller absorbs X into V and R ^= V.
    let e = |u: &mut u64, v: &mut u64| {
        let mut b = [0u8; 16];
        b[..8].copy_from_slice(&u.to_le_bytes());
        b[8..].copy_from_slice(&v.to_le_bytes());
        key.encrypt_block(&mut b);
        *u = word(&b[..8]);
        *v = word(&b[8..]);
    };
    let (mut u, mut v, mut r) = (word(nonce), 0u64, 0u64);
    e(&mut u, &mut v);
    u ^= 5;
    r ^= v;
    let mut ad_blocks = ad.chunks_exact(8);
    for x in &mut ad_blocks {
        e(&mut u, &mut v);
        u ^= r ^ 1;
        v ^= word(x);
        r ^= v;
    }
    let rest = ad_blocks.remainder();
    e(&mut u, &mut v);
    u ^= r ^ 1;
    v ^= word(rest) ^ (0x80 << (8 * rest.len()));
    r ^= v;
    let mut ct = Vec::with_capacity(pt.len());
    let mut blocks = pt.chunks_exact(8);
    for x in &mut blocks {
        e(&mut u, &mut v);
        u ^= r;
        let p = word(x);
        ct.extend_from_slice(&(u ^ p).to_le_bytes());
        v ^= p;
        r ^= v;
    }
    let rest = blocks.remainder();
    e(&mut u, &mut v);
    u ^= r;
    let p = word(rest);
    ct.extend_from_slice(&(u ^ p).to_le_bytes()[..rest.len()]);
    v ^= p ^ (0x80 << (8 * rest.len()));
    r ^= v;
    e(&mut u, &mut v);
    u ^= r ^ 3;
    r ^= v;
    e(&mut u, &mut v);
    (ct, (u ^ v ^ r).to_le_bytes())
}

/// The model reproduces the designers' known answers (so it is a model worth checking
/// against).
#[test]
fn model_matches_the_known_answers() {
    for r in genkat(KAT).iter().step_by(7) {
        let key = AesKey::new(&r.key).unwrap();
        let (ct, tag) = jambu_model(&key, &r.nonce, &r.ad, &r.pt);
        assert_eq!([&ct[..], &tag[..]].concat(), r.ct, "Count {}", r.count);
    }
}

/// Every window lane count the comb plan makes, on every backend: for each `P` in 1..=16
/// (every window width of the xmm and ymm kernels, odd ones with the ghost half) and 17, 24,
/// 32 (windows split into several calls), batches whose groups hold messages of pairwise
/// distinct whole-block counts (so every group's windows run P, P - 1, ..., 1 lanes), with
/// every partial-block length 0..=7, some equal lengths, empty messages, shared and per-job
/// keys, and AD with and without whole blocks (the AD runs in other orders than the
/// message). Batch, sequential and one-by-one output equals the model byte for byte,
/// encryption and decryption, in place and out of place.
#[test]
fn every_window_lane_count_matches_the_model() {
    let keys: Vec<AesKey> = (0..3)
        .map(|i| AesKey::new(&common::bytes(700 + i, 16)).unwrap())
        .collect();
    let n = 48;
    // Whole blocks 0..=47 in a scrambled order (distinct within any group), two equal pairs,
    // partial lengths cycling 0..=7.
    let lens: Vec<usize> = (0..n)
        .map(|i| {
            let blocks = (i * 29 + 5) % n;
            let blocks = if i % 17 == 3 {
                (blocks + 1) % n
            } else {
                blocks
            };
            8 * blocks + i % 8
        })
        .collect();
    let msgs: Vec<Vec<u8>> = lens
        .iter()
        .enumerate()
        .map(|(i, &l)| common::bytes(800 + i as u64, l))
        .collect();
    let nonces: Vec<Vec<u8>> = (0..n).map(|i| common::bytes(900 + i as u64, 8)).collect();
    // Two AD layouts: short AD only (the fused initialisation), and mixed whole-block AD.
    let ad_sets: [Vec<Vec<u8>>; 2] = [
        (0..n)
            .map(|i| common::bytes(1000 + i as u64, i % 8))
            .collect(),
        (0..n)
            .map(|i| common::bytes(1100 + i as u64, (i * 13) % 41))
            .collect(),
    ];
    for (a, ads) in ad_sets.iter().enumerate() {
        for shared in [true, false] {
            let key_of = |i: usize| if shared { &keys[0] } else { &keys[i % 3] };
            let jobs = ModelJobs::new(&key_of, &msgs, &nonces, ads);
            for p in (1..=17).chain([24, 32]) {
                for engine in engines(Some(p)) {
                    let what = |path: PathKind, i: usize| {
                        format!(
                            "{:?} P={p} AD set {a} shared {shared} {path:?} job {i} len {}",
                            engine.backend(),
                            lens[i]
                        )
                    };
                    for path in PATHS {
                        if path != PathKind::Batch && p > 1 {
                            continue; // the single path does not depend on P
                        }
                        jobs.check(&engine, path, p, |i| what(path, i));
                    }
                }
            }
        }
    }
}

/// The edge passes (initialisation, AD padding, message padding, tag) run 8 lanes per call
/// on xmm and 16 on ymm, two per register, the last register's high half a ghost for an
/// odd count: batches of 1..=33 jobs make every call width of both backends (and a split
/// pass), with shared and per-job keys, every partial-block length, and AD with and without
/// whole blocks. Batch output equals the model, encryption and decryption.
#[test]
fn every_edge_call_width_matches_the_model() {
    let keys: Vec<AesKey> = (0..3)
        .map(|i| AesKey::new(&common::bytes(1200 + i, 16)).unwrap())
        .collect();
    for n in 1..=33usize {
        let lens: Vec<usize> = (0..n)
            .map(|i| 8 * ((i * 7 + n) % 5) + (i + n) % 8)
            .collect();
        let msgs: Vec<Vec<u8>> = (0..n)
            .map(|i| common::bytes(1300 + (n * 40 + i) as u64, lens[i]))
            .collect();
        let nonces: Vec<Vec<u8>> = (0..n)
            .map(|i| common::bytes(1400 + (n * 40 + i) as u64, 8))
            .collect();
        for whole_ad in [false, true] {
            let ads: Vec<Vec<u8>> = (0..n)
                .map(|i| {
                    let len = if whole_ad {
                        (i * 5 + n) % 19
                    } else {
                        (i + n) % 8
                    };
                    common::bytes(1500 + (n * 40 + i) as u64, len)
                })
                .collect();
            for shared in [true, false] {
                let key_of = |i: usize| if shared { &keys[0] } else { &keys[(i + n) % 3] };
                let jobs = ModelJobs::new(&key_of, &msgs, &nonces, &ads);
                for engine in engines(None) {
                    let what = |i: usize| {
                        format!(
                            "{:?} n={n} AD whole {whole_ad} shared {shared} job {i} len {}",
                            engine.backend(),
                            lens[i]
                        )
                    };
                    jobs.check(&engine, PathKind::Batch, 0, what);
                }
            }
        }
    }
}

/// Jobs with a model answer each: the key of job `i`, its message, nonce and AD, and the
/// model's ciphertext and tag.
struct ModelJobs<'a> {
    key_of: &'a dyn Fn(usize) -> &'a AesKey,
    msgs: &'a [Vec<u8>],
    nonces: &'a [Vec<u8>],
    ads: &'a [Vec<u8>],
    model: Vec<(Vec<u8>, [u8; 8])>,
}

impl<'a> ModelJobs<'a> {
    /// The jobs and their answers from [`jambu_model`].
    fn new(
        key_of: &'a dyn Fn(usize) -> &'a AesKey,
        msgs: &'a [Vec<u8>],
        nonces: &'a [Vec<u8>],
        ads: &'a [Vec<u8>],
    ) -> ModelJobs<'a> {
        let model = (0..msgs.len())
            .map(|i| jambu_model(key_of(i), &nonces[i], &ads[i], &msgs[i]))
            .collect();
        ModelJobs {
            key_of,
            msgs,
            nonces,
            ads,
            model,
        }
    }

    /// The jobs of `op`: encryption of the messages, decryption of the model's ciphertexts
    /// against its tags; buffer layouts by `Hold::alternating(i + shift, op)`.
    fn descs<'s>(&'s self, op: Op, shift: usize) -> Vec<JobDesc<'s>> {
        let (msgs, model) = (self.msgs, &self.model);
        (0..msgs.len())
            .map(|i| {
                let input: &'s [u8] = match op {
                    Op::Encrypt => &msgs[i],
                    Op::Decrypt => &model[i].0,
                };
                let d = JobDesc::new(
                    (self.key_of)(i),
                    input,
                    Hold::alternating(i + shift, op),
                    msgs[i].len(),
                )
                .iv(&self.nonces[i])
                .ad(&self.ads[i]);
                match op {
                    Op::Encrypt => d.tag(TagDesc::Out(8)),
                    Op::Decrypt => d.tag(TagDesc::In(&model[i].1)),
                }
            })
            .collect()
    }

    /// Encrypts the messages and decrypts the model's ciphertexts on `path` of `engine`:
    /// every job succeeds, and the ciphertexts, tags and plaintexts equal the model's;
    /// `what(i)` names job `i` in a failure.
    fn check(&self, engine: &Engine, path: PathKind, shift: usize, what: impl Fn(usize) -> String) {
        for op in [Op::Encrypt, Op::Decrypt] {
            let o = run_jobs(engine, JAMBU, op, path, &self.descs(op, shift));
            for (i, msg) in self.msgs.iter().enumerate() {
                assert_eq!(o.results[i], Ok(msg.len()), "{}", what(i));
                if op == Op::Encrypt {
                    assert_eq!(o.bufs[i], self.model[i].0, "{}: ciphertext", what(i));
                    assert_eq!(o.tags[i], self.model[i].1, "{}: tag", what(i));
                } else {
                    assert_eq!(&o.bufs[i], msg, "{}: plaintext", what(i));
                }
            }
        }
    }
}
