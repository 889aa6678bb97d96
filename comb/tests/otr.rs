//! AES-OTR v3 with parallel AD (`aes128-otr`): the designer's genkat answers, random batches
//! (batch = sequential = one by one, round trips, forgeries), long AD and messages against a
//! block-at-a-time reference written here from the specification, bad input, empty message
//! and AD.

mod common;

use aes::cipher::{BlockCipherEncrypt, KeyInit};
use comb::{AesKey, Algorithm, Engine, Error, Job, Op, Tag};
use common::{bytes, engines, run_jobs, Hold, JobDesc, PathKind, TagDesc};

const OTR: Algorithm = Algorithm::Aes128Otr;

// ---------------------------------------------------------------------------------------
// reference: one block at a time, straight from the specification (RustCrypto AES)

struct Ref(aes::Aes128);

impl Ref {
    fn new(key: &[u8]) -> Ref {
        Ref(aes::Aes128::new_from_slice(key).unwrap())
    }
    fn e(&self, x: u128) -> u128 {
        let mut b = aes::Block::from(x.to_be_bytes());
        self.0.encrypt_block(&mut b);
        u128::from_be_bytes(b.into())
    }
}

fn x2(v: u128) -> u128 {
    let r = v << 1;
    if v >> 127 == 1 {
        r ^ 0x87
    } else {
        r
    }
}

fn x3(v: u128) -> u128 {
    x2(v) ^ v
}

/// A chunk of 1..=16 bytes as a block value, 10*-padded when short.
fn pad(b: &[u8]) -> u128 {
    let mut p = [0u8; 16];
    p[..b.len()].copy_from_slice(b);
    if b.len() < 16 {
        p[b.len()] = 0x80;
    }
    u128::from_be_bytes(p)
}

/// A whole block as a value.
fn val(b: &[u8]) -> u128 {
    u128::from_be_bytes(b.try_into().unwrap())
}

/// `x ^ ks` over `b.len()` bytes.
fn xor_bytes(b: &[u8], ks: u128) -> Vec<u8> {
    b.iter().zip(ks.to_be_bytes()).map(|(x, k)| x ^ k).collect()
}

/// (ciphertext, tag) or (plaintext, tag) of `input`.
fn reference(
    key: &[u8],
    nonce: &[u8],
    ad: &[u8],
    input: &[u8],
    decrypt: bool,
) -> (Vec<u8>, [u8; 16]) {
    let e = Ref::new(key);
    // TA: E(2^i Q ^ A_i) over all AD blocks but the last; the last padded, with 3·2^m·Q
    // (partial) or 3²·2^m·Q (whole).
    let ta = if ad.is_empty() {
        0
    } else {
        let mut q = e.e(0);
        let blocks: Vec<&[u8]> = ad.chunks(16).collect();
        let mut s = 0u128;
        for a in &blocks[..blocks.len() - 1] {
            s ^= e.e(q ^ val(a));
            q = x2(q);
        }
        let a = blocks[blocks.len() - 1];
        s ^= pad(a);
        s ^= if a.len() == 16 { x3(x3(q)) } else { x3(q) };
        e.e(s)
    };
    let mut f = [0u8; 16];
    f[3] = 1; // 16-byte tag: tau mod 128 = 0; 12-byte nonce after the 1 bit
    f[4..].copy_from_slice(nonce);
    let mut l = e.e(u128::from_be_bytes(f));
    let mut out = Vec::new();
    let mut sum = 0u128;
    // Whole pairs while more than 32 bytes remain.
    let mut rest = input;
    while rest.len() > 32 {
        let (a, b) = (val(&rest[..16]), val(&rest[16..32]));
        let ls = x3(l);
        if decrypt {
            let m1 = e.e(ls ^ a) ^ b;
            let m2 = e.e(l ^ m1) ^ a;
            out.extend_from_slice(&m1.to_be_bytes());
            out.extend_from_slice(&m2.to_be_bytes());
            sum ^= m2;
        } else {
            let c1 = e.e(l ^ a) ^ b;
            let c2 = e.e(ls ^ c1) ^ a;
            out.extend_from_slice(&c1.to_be_bytes());
            out.extend_from_slice(&c2.to_be_bytes());
            sum ^= b;
        }
        l = x2(l);
        rest = &rest[32..];
    }
    let ls = x3(l);
    let (la, whole) = if rest.len() <= 16 {
        let z = e.e(l);
        let o = xor_bytes(rest, z);
        let m = if decrypt { &o[..] } else { rest };
        sum ^= pad(m);
        out.extend_from_slice(&o);
        (l, rest.len() == 16)
    } else {
        let (a, b) = (&rest[..16], &rest[16..]);
        if decrypt {
            let pc = pad(b);
            sum ^= pc;
            let m1 = e.e(ls ^ pc) ^ val(a);
            let z = e.e(l ^ m1);
            out.extend_from_slice(&m1.to_be_bytes());
            out.extend_from_slice(&xor_bytes(b, z));
            sum ^= z;
        } else {
            let z = e.e(l ^ val(a));
            let cb = xor_bytes(b, z);
            let pc = pad(&cb);
            sum ^= z ^ pc;
            let ca = e.e(ls ^ pc) ^ val(a);
            out.extend_from_slice(&ca.to_be_bytes());
            out.extend_from_slice(&cb);
        }
        (ls, b.len() == 16)
    };
    let te = e.e(sum ^ if whole { x2(x3(la)) ^ la } else { x3(x3(la)) });
    (out, (te ^ ta).to_be_bytes())
}

/// The reference agrees with the first records of the genkat file (so it is a reference).
#[test]
fn reference_matches_genkat() {
    for r in common::aead::genkat("aes128-otr-v3-n12-t16.txt")
        .iter()
        .step_by(7)
    {
        let (c, t) = reference(&r.key, &r.nonce, &r.ad, &r.pt, false);
        let mut got = c;
        got.extend_from_slice(&t);
        assert_eq!(got, r.ct, "Count {}", r.count);
    }
}

// ---------------------------------------------------------------------------------------

/// The SUPERCOP genkat file of the designer's reference code, both paths, every backend.
#[test]
fn genkat_file() {
    common::aead::check_genkat(OTR, "aes128-otr-v3-n12-t16.txt");
}

/// Batch = sequential = one by one, round trip and forgeries on random mixed batches, up to
/// 1500 bytes: odd and even block counts, partial last blocks, every wide step and pool
/// width and their tails.
#[test]
fn random_batches() {
    for seed in 1..4 {
        common::aead::check_properties(OTR, seed, 41, 1500, &[1, 3, 8, 16]);
    }
    common::aead::check_properties(OTR, 9, 70, 100, &[8]);
}

/// One job of a check against the reference: its key (and the key's bytes, for the
/// reference), nonce, AD and message.
struct Case<'a> {
    key: &'a AesKey,
    key_bytes: &'a [u8],
    nonce: &'a [u8],
    ad: &'a [u8],
    msg: &'a [u8],
}

/// Runs `jobs` (`op`, in one call per path, each buffer copied into or worked in place in
/// turn, 5 bytes of room after it) on `e` through every path of `paths`, and checks each job
/// against the reference: its result, its tag (encrypting; decrypting, the reference's tag is
/// the one to verify, so random bytes decrypt), its output, and the room after it untouched.
fn check_against_reference(e: &Engine, op: Op, jobs: &[Case<'_>], paths: &[PathKind], label: &str) {
    let want: Vec<(Vec<u8>, [u8; 16])> = jobs
        .iter()
        .map(|c| reference(c.key_bytes, c.nonce, c.ad, c.msg, op == Op::Decrypt))
        .collect();
    let tags: Vec<Vec<u8>> = want.iter().map(|w| w.1.to_vec()).collect();
    let descs: Vec<JobDesc<'_>> = jobs
        .iter()
        .enumerate()
        .map(|(i, c)| {
            let tag = match op {
                Op::Encrypt => TagDesc::Out(16),
                Op::Decrypt => TagDesc::In(&tags[i]),
            };
            JobDesc::new(c.key, c.msg, Hold::alternating(i, op), c.msg.len() + 5)
                .iv(c.nonce)
                .ad(c.ad)
                .tag(tag)
        })
        .collect();
    for &path in paths {
        let o = run_jobs(e, OTR, op, path, &descs);
        for (i, (w, c)) in want.iter().zip(jobs).enumerate() {
            let what = format!(
                "{:?} {op:?} {path:?} {label} job {i} ad {} msg {}",
                e.backend(),
                c.ad.len(),
                c.msg.len()
            );
            assert_eq!(o.results[i], Ok(w.0.len()), "{what}");
            if op == Op::Encrypt {
                assert_eq!(o.tags[i], w.1, "{what} tag");
            }
            assert_eq!(o.bufs[i][..w.0.len()], w.0[..], "{what}");
            assert!(
                o.bufs[i][w.0.len()..].iter().all(|&b| b == common::FILL),
                "{what}"
            );
        }
    }
}

/// Long AD and messages crossing the kernels' widths (8 and 16 blocks or pairs, and the
/// pools), every backend, against the reference; in place and copied, single and batch.
#[test]
fn long_inputs_match_the_reference() {
    let kb = bytes(77, 16);
    let key = AesKey::new(&kb).unwrap();
    let kb2 = bytes(78, 16);
    let key2 = AesKey::new(&kb2).unwrap();
    let nonce = bytes(5, 12);
    let ad_lens = [
        0usize, 1, 15, 16, 17, 127, 128, 129, 255, 256, 257, 272, 511, 512, 513, 1000,
    ];
    let msg_lens = [
        0usize, 1, 16, 17, 31, 32, 33, 48, 64, 96, 180, 255, 256, 257, 287, 288, 380, 440, 500,
        511, 512, 513, 527, 528, 543, 544, 900, 1023, 1024, 1025, 1055, 1056, 1500, 2100,
    ];
    let mut cases = Vec::new();
    for (i, &al) in ad_lens.iter().enumerate() {
        for (j, &ml) in msg_lens.iter().enumerate() {
            if (i + j) % 3 == 0 || al == 0 || ml >= 500 && al > 200 {
                cases.push((al, ml, (i * 31 + j) as u64));
            }
        }
    }
    let data: Vec<(Vec<u8>, Vec<u8>, bool)> = cases
        .iter()
        .map(|&(al, ml, s)| (bytes(s + 1000, al), bytes(s + 2000, ml), s % 2 == 0))
        .collect();
    let jobs: Vec<Case<'_>> = data
        .iter()
        .map(|(ad, msg, k2)| Case {
            key: if *k2 { &key2 } else { &key },
            key_bytes: if *k2 { &kb2 } else { &kb },
            nonce: &nonce,
            ad,
            msg,
        })
        .collect();
    let paths = [PathKind::Batch, PathKind::Sequential, PathKind::One];
    for e in engines(None) {
        for op in [Op::Encrypt, Op::Decrypt] {
            check_against_reference(&e, op, &jobs, &paths, "long inputs");
        }
    }
}

/// Batches of 2 to 40 jobs of mixed lengths (every last-chunk kind: empty, odd, even,
/// whole; long and short jobs side by side), some with AD, of one key or of three, against
/// the reference: the batch path where a chunk's jobs run side by side on zmm (Zen 5), and
/// the others.
#[test]
fn chunk_batches_match_the_reference() {
    let kbs: Vec<Vec<u8>> = (0..3).map(|i| bytes(91 + i, 16)).collect();
    let keys: Vec<AesKey> = kbs.iter().map(|k| AesKey::new(k).unwrap()).collect();
    let mut rng = 0x9e37_79b9_7f4a_7c15u64;
    let mut next = |n: u64| {
        rng ^= rng << 13;
        rng ^= rng >> 7;
        rng ^= rng << 17;
        rng % n
    };
    let mut batches: Vec<Vec<(usize, usize)>> = Vec::new();
    // Every length 0..=96 (each last-chunk case beside one to three pairs), in batches of 33.
    let small: Vec<usize> = (0..=96).collect();
    for c in small.chunks(33) {
        batches.push(c.iter().map(|&m| (0, m)).collect());
    }
    // 24 batches of 8 to 40 jobs, then 12 of 2 to 7 (chunks of one or two registers).
    for b in 0..36 {
        let n = if b < 24 { 8 + next(33) } else { 2 + next(6) } as usize;
        let cap = [100, 600, 1600, 2300][b % 4];
        batches.push(
            (0..n)
                .map(|_| {
                    let ad = if next(4) == 0 { next(300) as usize } else { 0 };
                    (ad, next(cap as u64 + 1) as usize)
                })
                .collect(),
        );
    }
    for e in engines(None) {
        for (bi, batch) in batches.iter().enumerate() {
            // Every other batch of three keys, one key per job in turn.
            let nkeys = if bi % 2 == 0 { 1 } else { 3 };
            let data: Vec<(Vec<u8>, Vec<u8>, Vec<u8>)> = batch
                .iter()
                .enumerate()
                .map(|(i, &(al, ml))| {
                    let s = (bi * 1000 + i) as u64;
                    (bytes(s + 7, al), bytes(s + 8, ml), bytes(s + 9, 12))
                })
                .collect();
            let jobs: Vec<Case<'_>> = data
                .iter()
                .enumerate()
                .map(|(i, (ad, msg, nonce))| Case {
                    key: &keys[i % nkeys],
                    key_bytes: &kbs[i % nkeys],
                    nonce,
                    ad,
                    msg,
                })
                .collect();
            let label = format!("batch {bi} keys {nkeys}");
            for op in [Op::Encrypt, Op::Decrypt] {
                check_against_reference(&e, op, &jobs, &[PathKind::Batch, PathKind::One], &label);
            }
        }
    }
}

/// Nonces of 11 and 13 bytes, a 15-byte tag, a 24-byte key: typed errors, nothing written.
#[test]
fn bad_input() {
    let key = AesKey::new(&[7; 16]).unwrap();
    let key24 = AesKey::new(&[7; 24]).unwrap();
    let msg = bytes(1, 40);
    for e in engines(None) {
        for op in [Op::Encrypt, Op::Decrypt] {
            let tag16 = [0u8; 16];
            let tag15 = [0u8; 15];
            let run = |k: &AesKey, nonce: &[u8], tag_len: usize| {
                let mut out = vec![0xEEu8; 40];
                let mut tbuf = vec![0u8; tag_len];
                let tag = match op {
                    Op::Encrypt => Tag::Out(&mut tbuf),
                    Op::Decrypt => Tag::In(if tag_len == 16 {
                        &tag16[..]
                    } else {
                        &tag15[..]
                    }),
                };
                let r = e.process_one(
                    OTR,
                    op,
                    Job::copy(k, &msg, &mut out)
                        .with_iv(nonce)
                        .with_ad(b"hdr")
                        .with_tag(tag),
                );
                assert!(out.iter().all(|&b| b == 0xEE), "{op:?}: output written");
                r
            };
            for n in [11usize, 13] {
                assert!(
                    matches!(
                        run(&key, &vec![1; n], 16),
                        Err(Error::InvalidIvLength { got, .. } | Error::InvalidNonceLength { got, .. }) if got == n
                    ),
                    "{op:?} nonce {n}"
                );
            }
            assert!(
                matches!(
                    run(&key, &[1; 12], 15),
                    Err(Error::InvalidTagLength { got: 15, .. }
                        | Error::TagLengthNotAllowed { got: 15, .. })
                ),
                "{op:?} tag 15"
            );
            assert_eq!(
                run(&key24, &[1; 12], 16),
                Err(Error::InvalidKeyLength { got: 24 }),
                "{op:?} key 24"
            );
        }
    }
}

/// A forged tag, a flipped ciphertext bit and a flipped AD bit fail their jobs only: output
/// zeroed, every other job of the batch decrypted.
#[test]
fn forgeries_fail_alone() {
    let key = AesKey::new(&bytes(3, 16)).unwrap();
    let nonce = bytes(4, 12);
    let n = 24;
    let msgs: Vec<Vec<u8>> = (0..n).map(|i| bytes(i as u64, 17 * i + 3)).collect();
    let ads: Vec<Vec<u8>> = (0..n).map(|i| bytes(i as u64 + 50, i * 5)).collect();
    for e in engines(None) {
        let enc: Vec<JobDesc<'_>> = (0..n)
            .map(|i| {
                JobDesc::new(
                    &key,
                    &msgs[i],
                    Hold::alternating(i, Op::Encrypt),
                    msgs[i].len(),
                )
                .iv(&nonce)
                .ad(&ads[i])
                .tag(TagDesc::Out(16))
            })
            .collect();
        let o = run_jobs(&e, OTR, Op::Encrypt, PathKind::Batch, &enc);
        let mut cts: Vec<Vec<u8>> = o.bufs.clone();
        let mut tags = o.tags.clone();
        let mut ads2 = ads.clone();
        for i in 0..n {
            match i % 6 {
                1 => tags[i][i % 16] ^= 1,
                3 => {
                    let l = cts[i].len();
                    cts[i][(i * 5) % l] ^= 0x10;
                }
                5 if !ads2[i].is_empty() => ads2[i][0] ^= 0x80,
                _ => {}
            }
        }
        let bad = |i: usize| i % 6 == 1 || i % 6 == 3 || (i % 6 == 5 && !ads[i].is_empty());
        let dec: Vec<JobDesc<'_>> = (0..n)
            .map(|i| {
                JobDesc::new(
                    &key,
                    &cts[i],
                    Hold::alternating(i, Op::Decrypt),
                    cts[i].len(),
                )
                .iv(&nonce)
                .ad(&ads2[i])
                .tag(TagDesc::In(&tags[i]))
            })
            .collect();
        for path in [PathKind::Batch, PathKind::Sequential] {
            let o = run_jobs(&e, OTR, Op::Decrypt, path, &dec);
            for (i, msg) in msgs.iter().enumerate().take(n) {
                if bad(i) {
                    assert_eq!(o.results[i], Err(Error::AuthenticationFailed), "job {i}");
                    common::aead::assert_zeroed(&o.bufs[i], msg.len(), "forged");
                } else {
                    assert_eq!(o.results[i], Ok(msg.len()), "job {i}");
                    assert_eq!(&o.bufs[i], msg, "job {i}");
                }
            }
        }
    }
}

/// Empty message with and without AD, empty AD with messages: against the reference, both
/// directions.
#[test]
fn empty_message_and_ad() {
    let kb = bytes(11, 16);
    let key = AesKey::new(&kb).unwrap();
    let nonce = [0x42u8; 12];
    for e in engines(None) {
        for (al, ml) in [
            (0usize, 0usize),
            (1, 0),
            (16, 0),
            (40, 0),
            (0, 1),
            (0, 16),
            (0, 32),
            (0, 33),
        ] {
            let ad = bytes(al as u64, al);
            let m = bytes(ml as u64 + 9, ml);
            let (c, t) = reference(&kb, &nonce, &ad, &m, false);
            let mut out = vec![0u8; ml];
            let mut tag = [0u8; 16];
            let r = e.process_one(
                OTR,
                Op::Encrypt,
                Job::copy(&key, &m, &mut out)
                    .with_iv(&nonce)
                    .with_ad(&ad)
                    .with_tag(Tag::Out(&mut tag)),
            );
            assert_eq!((r, &out, tag), (Ok(ml), &c, t), "ad {al} msg {ml}");
            let mut back = vec![0u8; ml];
            let r = e.process_one(
                OTR,
                Op::Decrypt,
                Job::copy(&key, &c, &mut back)
                    .with_iv(&nonce)
                    .with_ad(&ad)
                    .with_tag(Tag::In(&t)),
            );
            assert_eq!((r, &back), (Ok(ml), &m), "ad {al} msg {ml} decrypt");
        }
    }
}
