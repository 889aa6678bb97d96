//! AES-OCB3 (RFC 7253): the CAESAR genkat answers; batch = sequential = single on random
//! batches; RFC 7253 Appendix A (the 17 sample results and the iterative test over 128
//! lengths, every key size and tag length 128/96/64); a differential test against RustCrypto's
//! `ocb3` crate for several (key, nonce, tag) size combinations; every nonce length 1..=15
//! (against the crate where it supports the length, 6..=15, and against an independent
//! bit-level transcription of the RFC, checked against the crate, for all); bad nonce and tag
//! lengths; forgeries of every kind rejected with the output zeroed and the rest of the batch
//! intact.

mod common;

use aes::cipher::consts::{U10, U11, U12, U13, U14, U15, U16, U6, U7, U8, U9};
use aes::cipher::{BlockCipherDecrypt, BlockCipherEncrypt};
use comb::{AesKey, Algorithm, Engine, Error, JobResult, Op};
use common::{bytes, engine, engines, run_jobs, unhex, Hold, JobDesc, PathKind, TagDesc, FILL};
use ocb3::aead::array::ArraySize;
use ocb3::{AeadInOut, KeyInit, Ocb3};

const OCB: Algorithm = Algorithm::AesOcb3;

// ---------------------------------------------------------------------------------------
// an independent reference: RFC 7253 §4 transcribed bit by bit on the `aes` crate

/// The raw block cipher of the `aes` crate for a key of any size.
enum Raw {
    A128(aes::Aes128),
    A192(aes::Aes192),
    A256(aes::Aes256),
}

impl Raw {
    fn new(key: &[u8]) -> Raw {
        match key.len() {
            16 => Raw::A128(aes::cipher::KeyInit::new_from_slice(key).unwrap()),
            24 => Raw::A192(aes::cipher::KeyInit::new_from_slice(key).unwrap()),
            _ => Raw::A256(aes::cipher::KeyInit::new_from_slice(key).unwrap()),
        }
    }

    fn enc(&self, x: [u8; 16]) -> [u8; 16] {
        let mut b = aes::Block::from(x);
        match self {
            Raw::A128(c) => c.encrypt_block(&mut b),
            Raw::A192(c) => c.encrypt_block(&mut b),
            Raw::A256(c) => c.encrypt_block(&mut b),
        }
        b.into()
    }

    fn dec(&self, x: [u8; 16]) -> [u8; 16] {
        let mut b = aes::Block::from(x);
        match self {
            Raw::A128(c) => c.decrypt_block(&mut b),
            Raw::A192(c) => c.decrypt_block(&mut b),
            Raw::A256(c) => c.decrypt_block(&mut b),
        }
        b.into()
    }
}

fn x(a: [u8; 16], b: [u8; 16]) -> [u8; 16] {
    core::array::from_fn(|i| a[i] ^ b[i])
}

/// `double(S)` of RFC 7253 §2, byte by byte.
fn double(s: [u8; 16]) -> [u8; 16] {
    let mut o = [0u8; 16];
    for i in 0..16 {
        o[i] = s[i] << 1 | if i < 15 { s[i + 1] >> 7 } else { 0 };
    }
    if s[0] & 0x80 != 0 {
        o[15] ^= 0x87;
    }
    o
}

/// Bits of a byte string, most significant first.
fn bits(b: &[u8]) -> Vec<u8> {
    b.iter()
        .flat_map(|&v| (0..8).rev().map(move |i| (v >> i) & 1))
        .collect()
}

fn from_bits(b: &[u8]) -> [u8; 16] {
    core::array::from_fn(|i| (0..8).fold(0u8, |acc, k| acc << 1 | b[8 * i + k]))
}

/// `(P || 1 || 0*)` for a partial block.
fn pad10(p: &[u8]) -> [u8; 16] {
    let mut b = [0u8; 16];
    b[..p.len()].copy_from_slice(p);
    b[p.len()] = 0x80;
    b
}

/// The key-dependent values and the offsets of RFC 7253 §4.1 / §4.2 for one key.
struct RefOcb {
    raw: Raw,
    l_star: [u8; 16],
    l_dollar: [u8; 16],
}

impl RefOcb {
    fn new(key: &[u8]) -> RefOcb {
        let raw = Raw::new(key);
        let l_star = raw.enc([0; 16]);
        RefOcb {
            raw,
            l_star,
            l_dollar: double(l_star),
        }
    }

    fn l(&self, i: u32) -> [u8; 16] {
        (0..=i).fold(self.l_dollar, |l, _| double(l))
    }

    fn hash(&self, a: &[u8]) -> [u8; 16] {
        let (mut sum, mut off) = ([0u8; 16], [0u8; 16]);
        for (i, blk) in a.chunks(16).enumerate() {
            if blk.len() == 16 {
                off = x(off, self.l((i as u32 + 1).trailing_zeros()));
                sum = x(sum, self.raw.enc(x(blk.try_into().unwrap(), off)));
            } else {
                off = x(off, self.l_star);
                sum = x(sum, self.raw.enc(x(pad10(blk), off)));
            }
        }
        sum
    }

    /// Offset_0 from the nonce, for a `tag_len`-byte tag, literally as §4.2 writes it.
    fn offset0(&self, nonce: &[u8], tag_len: usize) -> [u8; 16] {
        let taglen = ((8 * tag_len) % 128) as u8;
        let mut nb: Vec<u8> = (0..7).rev().map(|i| (taglen >> i) & 1).collect();
        nb.extend(std::iter::repeat_n(0, 120 - 8 * nonce.len()));
        nb.push(1);
        nb.extend(bits(nonce));
        assert_eq!(nb.len(), 128);
        let bottom = nb[122..]
            .iter()
            .fold(0usize, |a, &b| a << 1 | usize::from(b));
        let mut top = nb.clone();
        top[122..].fill(0);
        let ktop = bits(&self.raw.enc(from_bits(&top)));
        let mut stretch = ktop.clone();
        stretch.extend((0..64).map(|i| ktop[i] ^ ktop[i + 8]));
        from_bits(&stretch[bottom..bottom + 128])
    }

    /// OCB-ENCRYPT (encrypt = true) or the decryption's plaintext and computed tag.
    fn crypt(
        &self,
        encrypt: bool,
        nonce: &[u8],
        ad: &[u8],
        input: &[u8],
        tag_len: usize,
    ) -> (Vec<u8>, Vec<u8>) {
        let mut off = self.offset0(nonce, tag_len);
        let mut check = [0u8; 16];
        let mut out = Vec::new();
        for (i, blk) in input.chunks(16).enumerate() {
            if blk.len() == 16 {
                let b: [u8; 16] = blk.try_into().unwrap();
                off = x(off, self.l((i as u32 + 1).trailing_zeros()));
                let y = if encrypt {
                    x(off, self.raw.enc(x(b, off)))
                } else {
                    x(off, self.raw.dec(x(b, off)))
                };
                check = x(check, if encrypt { b } else { y });
                out.extend_from_slice(&y);
            } else {
                off = x(off, self.l_star);
                let pad = self.raw.enc(off);
                let y: Vec<u8> = blk.iter().zip(pad).map(|(a, b)| a ^ b).collect();
                check = x(check, pad10(if encrypt { blk } else { &y }));
                out.extend_from_slice(&y);
            }
        }
        let tag = x(self.raw.enc(x(x(check, off), self.l_dollar)), self.hash(ad));
        (out, tag[..tag_len].to_vec())
    }
}

/// RFC 7253 OCB-ENCRYPT: (ciphertext, tag).
fn ref_seal(key: &[u8], nonce: &[u8], ad: &[u8], pt: &[u8], tag_len: usize) -> (Vec<u8>, Vec<u8>) {
    RefOcb::new(key).crypt(true, nonce, ad, pt, tag_len)
}

// ---------------------------------------------------------------------------------------
// RustCrypto's ocb3

/// `ocb3::Ocb3<C, N, T>` encryption: (ciphertext, tag).
fn crate_seal<A: AeadInOut + KeyInit>(
    key: &[u8],
    nonce: &[u8],
    ad: &[u8],
    pt: &[u8],
) -> (Vec<u8>, Vec<u8>)
where
    A::NonceSize: ArraySize,
{
    let c = A::new_from_slice(key).expect("key size");
    let n = ocb3::aead::Nonce::<A>::try_from(nonce).expect("nonce size");
    let mut buf = pt.to_vec();
    let tag = c
        .encrypt_inout_detached(&n, ad, buf.as_mut_slice().into())
        .expect("encrypt");
    (buf, tag.to_vec())
}

/// `ocb3::Ocb3<C, N, T>` decryption: the plaintext, or `None` if the tag does not verify.
fn crate_open<A: AeadInOut + KeyInit>(
    key: &[u8],
    nonce: &[u8],
    ad: &[u8],
    ct: &[u8],
    tag: &[u8],
) -> Option<Vec<u8>> {
    let c = A::new_from_slice(key).expect("key size");
    let n = ocb3::aead::Nonce::<A>::try_from(nonce).expect("nonce size");
    let t = ocb3::aead::Tag::<A>::try_from(tag).expect("tag size");
    let mut buf = ct.to_vec();
    c.decrypt_inout_detached(&n, ad, buf.as_mut_slice().into(), &t)
        .ok()
        .map(|()| buf)
}

// ---------------------------------------------------------------------------------------
// running comb

/// A job to run: key index, nonce, AD, input, tag (generation: length; verification: bytes).
struct Spec {
    key: usize,
    nonce: Vec<u8>,
    ad: Vec<u8>,
    input: Vec<u8>,
    tag_len: usize,
    tag_in: Vec<u8>,
}

/// Runs `specs` in direction `op` through `path`; buffers have 7 bytes of room after the
/// message and alternate between copy and in place.
fn run(e: &Engine, op: Op, path: PathKind, keys: &[AesKey], specs: &[Spec]) -> common::Outcome {
    let descs: Vec<JobDesc<'_>> = specs
        .iter()
        .enumerate()
        .map(|(i, s)| {
            let tag = match op {
                Op::Encrypt => TagDesc::Out(s.tag_len),
                Op::Decrypt => TagDesc::In(&s.tag_in),
            };
            JobDesc::new(
                &keys[s.key],
                &s.input,
                Hold::alternating(i, op),
                s.input.len() + 7,
            )
            .iv(&s.nonce)
            .ad(&s.ad)
            .tag(tag)
        })
        .collect();
    run_jobs(e, OCB, op, path, &descs)
}

/// The job's data buffer after a successful run: the output, then untouched room.
fn output(o: &common::Outcome, i: usize, len: usize, what: &str) -> Vec<u8> {
    assert_eq!(o.results[i], Ok(len), "{what}: job {i}");
    assert!(
        o.bufs[i][len..].iter().all(|&b| b == FILL),
        "{what}: job {i} wrote past its message"
    );
    o.bufs[i][..len].to_vec()
}

/// Rejected, with the message bytes zeroed and the room untouched.
fn assert_rejected(r: &JobResult, buf: &[u8], len: usize, what: &str) {
    assert_eq!(r, &Err(Error::AuthenticationFailed), "{what}");
    assert!(
        buf[..len].iter().all(|&b| b == 0),
        "{what}: output not zeroed"
    );
    assert!(
        buf[len..].iter().all(|&b| b == FILL),
        "{what}: wrote past the message"
    );
}

const PATHS: [PathKind; 3] = [PathKind::Batch, PathKind::Sequential, PathKind::One];

/// Every engine (all backends, lane counts default and 3) and path: encryption of `specs`
/// gives `want` (ciphertext, tag), decryption of it gives the input back.
fn check_batch(keys: &[AesKey], specs: &[Spec], want: &[(Vec<u8>, Vec<u8>)], what: &str) {
    let back: Vec<Spec> = specs
        .iter()
        .zip(want)
        .map(|(s, (c, t))| Spec {
            key: s.key,
            nonce: s.nonce.clone(),
            ad: s.ad.clone(),
            input: c.clone(),
            tag_len: t.len(),
            tag_in: t.clone(),
        })
        .collect();
    for lanes in [None, Some(3)] {
        for e in engines(lanes) {
            for path in PATHS {
                let w = format!("{what} on {} lanes {lanes:?} {path:?}", e.backend());
                let o = run(&e, Op::Encrypt, path, keys, specs);
                for (i, (s, (c, t))) in specs.iter().zip(want).enumerate() {
                    assert_eq!(
                        hex(&output(&o, i, s.input.len(), &w)),
                        hex(c),
                        "{w}: ct {i}"
                    );
                    assert_eq!(hex(&o.tags[i]), hex(t), "{w}: tag {i}");
                }
                let o = run(&e, Op::Decrypt, path, keys, &back);
                for (i, s) in specs.iter().enumerate() {
                    assert_eq!(output(&o, i, s.input.len(), &w), s.input, "{w}: pt {i}");
                }
            }
        }
    }
}

fn hex(b: &[u8]) -> String {
    b.iter().map(|v| format!("{v:02x}")).collect()
}

/// The records of a kat-v1 file of `testdata/kat/ciphers/aes/` as (field, value) lists.
fn kat(name: &str) -> Vec<Vec<(String, String)>> {
    let path = format!(
        "{}/../testdata/kat/ciphers/aes/{name}",
        env!("CARGO_MANIFEST_DIR")
    );
    let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{path}: {e}"));
    assert!(text.starts_with("# kat-v1"), "{path}");
    let body: String = text
        .lines()
        .filter(|l| !l.starts_with('#'))
        .map(|l| format!("{l}\n"))
        .collect();
    body.split("\n\n")
        .filter(|r| !r.trim().is_empty())
        .map(|r| {
            r.lines()
                .filter_map(|l| {
                    let (k, v) = l.split_once('=')?;
                    Some((k.trim().to_string(), v.trim().to_string()))
                })
                .collect()
        })
        .collect()
}

fn field<'a>(rec: &'a [(String, String)], name: &str) -> &'a str {
    rec.iter()
        .find(|(k, _)| k == name)
        .map(|(_, v)| v.as_str())
        .unwrap_or_else(|| panic!("record without {name}: {rec:?}"))
}

// ---------------------------------------------------------------------------------------
// tests

#[test]
fn genkat() {
    common::aead::check_genkat(OCB, "aes128-ocb3-n12-t16.txt");
}

#[test]
fn properties() {
    for seed in [1, 2, 3] {
        common::aead::check_properties(OCB, seed, 40, 1500, &[1, 3, 8, 16]);
    }
    // Short messages: many jobs of a few blocks and partial tails.
    common::aead::check_properties(OCB, 4, 64, 120, &[1, 16]);
}

/// RFC 7253 Appendix A, the 17 sample results (one with a 96-bit tag): each alone and all as
/// one batch, both directions, every backend and path; the reference of this file agrees.
#[test]
fn rfc7253_samples() {
    let recs = kat("rfc7253_ocb.kat");
    assert_eq!(recs.len(), 17);
    let mut keys = Vec::new();
    let mut specs = Vec::new();
    let mut want = Vec::new();
    for r in &recs {
        let kb = unhex(field(r, "KEY"));
        let (n, a, p) = (
            unhex(field(r, "NONCE")),
            unhex(field(r, "AAD")),
            unhex(field(r, "PT")),
        );
        let (c, t) = (unhex(field(r, "CT")), unhex(field(r, "TAG")));
        assert_eq!(
            ref_seal(&kb, &n, &a, &p, t.len()),
            (c.clone(), t.clone()),
            "{}",
            field(r, "ID")
        );
        keys.push(AesKey::new(&kb).unwrap());
        specs.push(Spec {
            key: keys.len() - 1,
            nonce: n,
            ad: a,
            input: p,
            tag_len: t.len(),
            tag_in: Vec::new(),
        });
        want.push((c, t));
    }
    assert!(want.iter().any(|(_, t)| t.len() == 12));
    check_batch(&keys, &specs, &want, "RFC 7253 samples");
    for (i, (s, w)) in specs.iter().zip(&want).enumerate() {
        check_batch(
            &keys,
            std::slice::from_ref(s),
            std::slice::from_ref(w),
            &format!("sample {}", i + 1),
        );
    }
}

/// The iterative test of RFC 7253 Appendix A, as the RFC writes it: K = zeros(KEYLEN - 8) ||
/// num2str(TAGLEN, 8); for i = 0..127 three encryptions (nonces 3i+1, 3i+2, 3i+3) of i zero
/// bytes as AD and/or plaintext, their outputs (ciphertext || tag) concatenated into C; the
/// result is the tag of OCB-ENCRYPT(K, num2str(385, 96), C, <empty>). The 384 encryptions run
/// as one batch (and one by one); the last job has 22 400+ bytes of AD.
#[test]
fn rfc7253_iterative() {
    let recs = kat("rfc7253_ocb_iterative.kat");
    assert_eq!(recs.len(), 9);
    let nonce = |v: u64| {
        let mut n = vec![0u8; 4];
        n.extend_from_slice(&v.to_be_bytes());
        n
    };
    for r in &recs {
        let keylen: usize = field(r, "KEYLEN").parse().unwrap();
        let taglen: usize = field(r, "TAGLEN").parse().unwrap();
        let expect = unhex(field(r, "OUTPUT"));
        let mut kb = vec![0u8; keylen / 8];
        *kb.last_mut().unwrap() = taglen as u8;
        let keys = [AesKey::new(&kb).unwrap()];
        let tl = taglen / 8;
        let mut specs = Vec::new();
        for i in 0..128u64 {
            let s = vec![0u8; i as usize];
            for (k, (a, p)) in [(&s, &s), (&Vec::new(), &s), (&s, &Vec::new())]
                .into_iter()
                .enumerate()
            {
                specs.push(Spec {
                    key: 0,
                    nonce: nonce(3 * i + 1 + k as u64),
                    ad: a.clone(),
                    input: p.clone(),
                    tag_len: tl,
                    tag_in: Vec::new(),
                });
            }
        }
        for (e, paths) in engines(None).iter().zip([&PATHS[..], &[PathKind::Batch]]) {
            for &path in paths {
                let o = run(e, Op::Encrypt, path, &keys, &specs);
                let mut c = Vec::new();
                for (i, s) in specs.iter().enumerate() {
                    c.extend(output(&o, i, s.input.len(), "iterative"));
                    c.extend_from_slice(&o.tags[i]);
                }
                let last = [Spec {
                    key: 0,
                    nonce: nonce(385),
                    ad: c,
                    input: Vec::new(),
                    tag_len: tl,
                    tag_in: Vec::new(),
                }];
                let o = run(e, Op::Encrypt, path, &keys, &last);
                assert_eq!(o.results[0], Ok(0));
                assert_eq!(
                    hex(&o.tags[0]),
                    hex(&expect),
                    "{} on {} {path:?}",
                    field(r, "ID"),
                    e.backend()
                );
            }
        }
    }
}

/// Random batches against RustCrypto's `ocb3` for one (cipher, nonce size, tag size): mixed
/// keys of the cipher's size, lengths 0..=2100 with every small length, AD 0..=70 bytes;
/// comb's output decrypts with the crate, on every backend and path.
fn differential<A: AeadInOut + KeyInit>(key_len: usize, nonce_len: usize, tag_len: usize, seed: u64)
where
    A::NonceSize: ArraySize,
{
    let kbs: Vec<Vec<u8>> = (0..3).map(|i| bytes(seed * 10 + i, key_len)).collect();
    let keys: Vec<AesKey> = kbs.iter().map(|k| AesKey::new(k).unwrap()).collect();
    let r = bytes(seed, 4 * 64);
    let mut specs = Vec::new();
    let mut want = Vec::new();
    for i in 0..64usize {
        let len = if i < 36 {
            i
        } else {
            (usize::from(r[4 * i]) << 8 | usize::from(r[4 * i + 1])) % 2101
        };
        let s = Spec {
            key: usize::from(r[4 * i + 2]) % 3,
            nonce: bytes(seed * 1000 + i as u64, nonce_len),
            ad: bytes(seed * 2000 + i as u64, usize::from(r[4 * i + 3]) % 71),
            input: bytes(seed * 3000 + i as u64, len),
            tag_len,
            tag_in: Vec::new(),
        };
        let (c, t) = crate_seal::<A>(&kbs[s.key], &s.nonce, &s.ad, &s.input);
        assert_eq!(t.len(), tag_len);
        if i % 5 == 0 {
            // The crate's decryption accepts its own output; the reference agrees with it.
            let p = crate_open::<A>(&kbs[s.key], &s.nonce, &s.ad, &c, &t);
            assert_eq!(p.as_deref(), Some(&s.input[..]));
            assert_eq!(
                ref_seal(&kbs[s.key], &s.nonce, &s.ad, &s.input, tag_len),
                (c.clone(), t.clone())
            );
        }
        specs.push(s);
        want.push((c, t));
    }
    check_batch(
        &keys,
        &specs,
        &want,
        &format!("vs ocb3 crate: key {key_len} nonce {nonce_len} tag {tag_len}"),
    );
}

#[test]
fn differential_rustcrypto_default_12_16() {
    differential::<Ocb3<aes::Aes128, U12, U16>>(16, 12, 16, 1);
    differential::<Ocb3<aes::Aes192, U12, U16>>(24, 12, 16, 2);
    differential::<Ocb3<aes::Aes256, U12, U16>>(32, 12, 16, 3);
}

#[test]
fn differential_rustcrypto_other_sizes() {
    differential::<Ocb3<aes::Aes128, U15, U8>>(16, 15, 8, 4);
    differential::<Ocb3<aes::Aes256, U6, U12>>(32, 6, 12, 5);
    differential::<Ocb3<aes::Aes192, U8, U13>>(24, 8, 13, 6);
}

/// Every nonce length 1..=15 (every `bottom` of the stretch is reached by some nonce of each
/// length): against the crate for 6..=15 (the lengths it supports) and against this file's
/// RFC transcription for all (checked against the crate on 6..=15 first); one batch mixing
/// all lengths, tag lengths 8..=16 in rotation.
#[test]
fn every_nonce_length() {
    let kb = bytes(77, 16);
    let keys = [AesKey::new(&kb).unwrap()];
    type Seal = fn(&[u8], &[u8], &[u8], &[u8]) -> (Vec<u8>, Vec<u8>);
    macro_rules! with_crate {
        ($nlen:expr, $($n:literal => $U:ty),*) => {
            match $nlen {
                $($n => Some(crate_seal::<Ocb3<aes::Aes128, $U, U16>> as Seal),)*
                _ => None,
            }
        };
    }
    let mut specs = Vec::new();
    let mut want = Vec::new();
    for nlen in 1..=15usize {
        for j in 0..6u64 {
            let nonce = bytes(nlen as u64 * 100 + j, nlen);
            let ad = bytes(j, (j as usize * 13) % 40);
            let pt = bytes(nlen as u64 + 50 * j, (nlen * 37 + j as usize * 101) % 600);
            let tag_len = 8 + (nlen + j as usize) % 9;
            let seal = with_crate!(nlen, 6 => U6, 7 => U7, 8 => U8, 9 => U9, 10 => U10,
                11 => U11, 12 => U12, 13 => U13, 14 => U14, 15 => U15);
            let (c, t) = ref_seal(&kb, &nonce, &ad, &pt, tag_len);
            if let Some(seal) = seal {
                let (c16, t16) = ref_seal(&kb, &nonce, &ad, &pt, 16);
                assert_eq!(
                    seal(&kb, &nonce, &ad, &pt),
                    (c16, t16),
                    "nonce length {nlen}"
                );
            }
            specs.push(Spec {
                key: 0,
                nonce,
                ad,
                input: pt,
                tag_len,
                tag_in: Vec::new(),
            });
            want.push((c, t));
        }
    }
    check_batch(&keys, &specs, &want, "every nonce length");
}

/// Nonces of 0 and 16 bytes and tags of 7 and 17 bytes are typed errors from validation, in
/// both directions, with nothing written; the good jobs of the same batch are unaffected.
#[test]
fn bad_nonce_and_tag_lengths() {
    let kb = bytes(9, 32);
    let key = AesKey::new(&kb).unwrap();
    let pt = bytes(10, 100);
    let ad = bytes(11, 20);
    let good_nonce = bytes(12, 12);
    let (ct, tag) = ref_seal(&kb, &good_nonce, &ad, &pt, 16);
    let nonce0: Vec<u8> = Vec::new();
    let nonce16 = bytes(13, 16);
    let tag7 = vec![0u8; 7];
    let tag17 = vec![0u8; 17];
    for lanes in [None, Some(1)] {
        let e = engine(lanes);
        for op in [Op::Encrypt, Op::Decrypt] {
            let input = if op == Op::Encrypt { &pt } else { &ct };
            let ok_tag = match op {
                Op::Encrypt => TagDesc::Out(16),
                Op::Decrypt => TagDesc::In(&tag),
            };
            let bad_tag = |v: &'static str| match (op, v) {
                (Op::Encrypt, "tag7") => TagDesc::Out(7),
                (Op::Encrypt, _) => TagDesc::Out(17),
                (Op::Decrypt, "tag7") => TagDesc::In(&tag7),
                (Op::Decrypt, _) => TagDesc::In(&tag17),
            };
            let job = |n: &'static str| -> (JobDesc<'_>, Option<Error>) {
                let base = JobDesc::new(&key, input, Hold::alternating(0, op), input.len()).ad(&ad);
                let nonce_err = |got| Error::InvalidNonceLength {
                    got,
                    min: 1,
                    max: 15,
                };
                let tag_err = |got| Error::InvalidTagLength {
                    got,
                    min: 8,
                    max: 16,
                };
                match n {
                    "nonce0" => (base.iv(&nonce0).tag(ok_tag), Some(nonce_err(0))),
                    "nonce16" => (base.iv(&nonce16).tag(ok_tag), Some(nonce_err(16))),
                    "tag7" => (base.iv(&good_nonce).tag(bad_tag(n)), Some(tag_err(7))),
                    "tag17" => (base.iv(&good_nonce).tag(bad_tag(n)), Some(tag_err(17))),
                    _ => (base.iv(&good_nonce).tag(ok_tag), None),
                }
            };
            let names = [
                "good", "nonce0", "good", "nonce16", "tag7", "good", "tag17", "good",
            ];
            let (descs, errs): (Vec<_>, Vec<_>) = names.iter().map(|n| job(n)).unzip();
            for path in PATHS {
                let o = run_jobs(&e, OCB, op, path, &descs);
                for (i, err) in errs.iter().enumerate() {
                    let w = format!("{op:?} {path:?} job {i} ({})", names[i]);
                    match err {
                        Some(err) => {
                            assert_eq!(o.results[i].as_ref(), Err(err), "{w}");
                            assert_eq!(o.bufs[i], descs[i].initial_buf(), "{w}: data written");
                            assert!(o.tags[i].iter().all(|&b| b == FILL), "{w}: tag written");
                        }
                        None => {
                            assert_eq!(o.results[i], Ok(input.len()), "{w}");
                            let want = if op == Op::Encrypt { &ct } else { &pt };
                            assert_eq!(&o.bufs[i], want, "{w}");
                            if op == Op::Encrypt {
                                assert_eq!(o.tags[i], tag, "{w}: tag");
                            }
                        }
                    }
                }
            }
        }
    }
}

/// Forgeries of every kind in one batch of good jobs: a flipped bit in the tag, in the first
/// or the last (partial) ciphertext byte, in the AD; another nonce; a truncated ciphertext;
/// and the 12-byte prefix of a 16-byte tag (OCB binds the tag length into the nonce block,
/// so a prefix is not a valid shorter tag). Each is rejected with its output zeroed; every
/// other job decrypts; the empty message with empty AD included.
#[test]
fn forgeries_fail_alone() {
    let kbs = [bytes(1, 16), bytes(2, 24), bytes(3, 32)];
    let keys: Vec<AesKey> = kbs.iter().map(|k| AesKey::new(k).unwrap()).collect();
    let lens = [
        0usize, 1, 15, 16, 17, 31, 100, 255, 256, 257, 1500, 1409, 48, 64,
    ];
    let mut specs = Vec::new();
    let mut bad = Vec::new();
    let mut pts = Vec::new();
    for (i, &len) in lens.iter().cycle().take(3 * lens.len()).enumerate() {
        let key = i % 3;
        let nonce = bytes(100 + i as u64, 1 + i % 15);
        let ad = bytes(200 + i as u64, if i % 4 == 0 { 0 } else { i * 3 % 50 });
        let pt = bytes(300 + i as u64, len);
        let (mut c, mut t) = ref_seal(&kbs[key], &nonce, &ad, &pt, 16);
        let mut s = Spec {
            key,
            nonce,
            ad,
            input: Vec::new(),
            tag_len: 16,
            tag_in: Vec::new(),
        };
        let kind = i % 8;
        let is_bad = match kind {
            1 => {
                t[i % 16] ^= 0x40;
                true
            }
            2 if !c.is_empty() => {
                c[0] ^= 1;
                true
            }
            3 if !c.is_empty() => {
                let n = c.len();
                c[n - 1] ^= 0x80;
                true
            }
            4 if !s.ad.is_empty() => {
                s.ad[0] ^= 2;
                true
            }
            5 => {
                s.nonce[0] ^= 1;
                true
            }
            6 if !c.is_empty() => {
                c.pop();
                true
            }
            7 => {
                t.truncate(12);
                true
            }
            _ => false,
        };
        s.input = c;
        s.tag_in = t;
        specs.push(s);
        bad.push(is_bad);
        pts.push(pt);
    }
    assert!(bad.iter().filter(|&&b| b).count() >= 20);
    for lanes in [None, Some(1), Some(3), Some(16)] {
        for e in engines(lanes) {
            for path in PATHS {
                let o = run(&e, Op::Decrypt, path, &keys, &specs);
                for (i, s) in specs.iter().enumerate() {
                    let w = format!(
                        "{} lanes {lanes:?} {path:?} job {i} bad={}",
                        e.backend(),
                        bad[i]
                    );
                    if bad[i] {
                        assert_rejected(&o.results[i], &o.bufs[i], s.input.len(), &w);
                    } else {
                        assert_eq!(output(&o, i, s.input.len(), &w), pts[i], "{w}");
                    }
                }
            }
        }
    }
}

/// Every tag length 8..=16 gives its own tag (not a prefix of the 16-byte one: the length is
/// in the nonce block), equal to the reference, and verifies only at its own length.
#[test]
fn tag_lengths_are_bound() {
    let kb = bytes(5, 16);
    let keys = [AesKey::new(&kb).unwrap()];
    let nonce = bytes(6, 12);
    let pt = bytes(7, 40);
    let mut specs = Vec::new();
    let mut want = Vec::new();
    for tl in 8..=16 {
        want.push(ref_seal(&kb, &nonce, &[], &pt, tl));
        specs.push(Spec {
            key: 0,
            nonce: nonce.clone(),
            ad: Vec::new(),
            input: pt.clone(),
            tag_len: tl,
            tag_in: Vec::new(),
        });
    }
    let full = &want[8].1;
    for (c, t) in &want[..8] {
        assert_ne!(&full[..t.len()], &t[..]);
        assert_ne!(
            c, &want[8].0,
            "the ciphertext depends on the tag length too"
        );
    }
    check_batch(&keys, &specs, &want, "tag lengths");
    // Verifying the 16-byte tag's prefixes fails.
    let e = engine(None);
    let forged: Vec<Spec> = (8..16)
        .map(|tl| Spec {
            key: 0,
            nonce: nonce.clone(),
            ad: Vec::new(),
            input: want[8].0.clone(),
            tag_len: tl,
            tag_in: full[..tl].to_vec(),
        })
        .collect();
    let o = run(&e, Op::Decrypt, PathKind::Batch, &keys, &forged);
    for i in 0..forged.len() {
        assert_rejected(
            &o.results[i],
            &o.bufs[i],
            pt.len(),
            &format!("prefix {}", i + 8),
        );
    }
}
