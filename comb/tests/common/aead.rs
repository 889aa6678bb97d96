//! Checks every AEAD mode's test file runs: the CAESAR genkat known answers on both paths and
//! every backend, and the properties (batch = single = sequential byte for byte, round trip,
//! forgery rejected with the output zeroed and the rest of the batch intact) on random
//! batches of mixed keys, nonces, AD and lengths at several lane counts.

use super::{bytes, engine, engines, run_jobs, unhex, Hold, JobDesc, PathKind, TagDesc, FILL};
use comb::{AesKey, Algorithm, Error, Op};

/// One genkat record: `CT` is ciphertext ‖ tag as `crypto_aead_encrypt` makes it.
#[derive(Clone, Debug)]
pub struct Genkat {
    pub count: usize,
    pub key: Vec<u8>,
    pub nonce: Vec<u8>,
    pub pt: Vec<u8>,
    pub ad: Vec<u8>,
    pub ct: Vec<u8>,
}

/// Parses the genkat file `testdata/kat/aead/<name>` of the project.
pub fn genkat(name: &str) -> Vec<Genkat> {
    let path = format!("{}/../testdata/kat/aead/{name}", env!("CARGO_MANIFEST_DIR"));
    let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{path}: {e}"));
    let mut out = Vec::new();
    for rec in text.split("\n\n").filter(|r| !r.trim().is_empty()) {
        let field = |name: &str| -> String {
            rec.lines()
                .find_map(|l| {
                    let (k, v) = l.split_once('=')?;
                    (k.trim() == name).then(|| v.trim().to_string())
                })
                .unwrap_or_else(|| panic!("{path}: record without {name}: {rec}"))
        };
        out.push(Genkat {
            count: field("Count").parse().expect("Count"),
            key: unhex(&field("Key")),
            nonce: unhex(&field("Nonce")),
            pt: unhex(&field("PT")),
            ad: unhex(&field("AD")),
            ct: unhex(&field("CT")),
        });
    }
    assert!(!out.is_empty(), "{path}: no records");
    out
}

/// The algorithm's detached tag length (its default; 0 for Julius).
pub fn tag_len(alg: Algorithm) -> usize {
    alg.tag_lens().map_or(0, |(_, _, d)| d)
}

fn tag_desc<'a>(alg: Algorithm, op: Op, tag: &'a [u8]) -> TagDesc<'a> {
    match (tag_len(alg), op) {
        (0, _) => TagDesc::None,
        (n, Op::Encrypt) => TagDesc::Out(n),
        (_, Op::Decrypt) => TagDesc::In(tag),
    }
}

/// Every record of `file` under `alg`: encryption gives `CT`, decryption gives `PT`, a
/// flipped tag bit (or, without a tag, a flipped ciphertext bit) is rejected with the output
/// zeroed. On every backend, on the single-message path and as one batch of the whole file
/// at lane counts 1, 3 and the default, with every third decryption forged.
pub fn check_genkat(alg: Algorithm, file: &str) {
    let recs = genkat(file);
    let t = tag_len(alg);
    let keys: Vec<AesKey> = recs
        .iter()
        .map(|r| AesKey::new(&r.key).expect("key"))
        .collect();
    let split = |r: &Genkat| {
        let n = r.ct.len() - t;
        (r.ct[..n].to_vec(), r.ct[n..].to_vec())
    };
    // Forged inputs: a flipped tag bit, or a flipped ciphertext bit when there is no tag.
    let forged: Vec<(Vec<u8>, Vec<u8>)> = recs
        .iter()
        .map(|r| {
            let (mut c, mut tag) = split(r);
            let i = r.count;
            if t > 0 {
                tag[i % t] ^= 1 << (i % 8);
            } else {
                let n = c.len();
                c[i % n] ^= 1 << (i % 8);
            }
            (c, tag)
        })
        .collect();
    let cts: Vec<(Vec<u8>, Vec<u8>)> = recs.iter().map(split).collect();
    for lanes in [None, Some(1), Some(3)] {
        for engine in engines(lanes) {
            let what = format!("{alg} on {:?}, lanes {lanes:?}", engine.backend());
            for path in [PathKind::One, PathKind::Batch] {
                // Encryption.
                let descs: Vec<JobDesc<'_>> = recs
                    .iter()
                    .zip(&keys)
                    .enumerate()
                    .map(|(i, (r, k))| {
                        let room = alg.output_len(Op::Encrypt, r.pt.len());
                        JobDesc::new(k, &r.pt, Hold::alternating(i, Op::Encrypt), room)
                            .iv(&r.nonce)
                            .ad(&r.ad)
                            .tag(tag_desc(alg, Op::Encrypt, &[]))
                    })
                    .collect();
                let o = run_jobs(&engine, alg, Op::Encrypt, path, &descs);
                for (i, r) in recs.iter().enumerate() {
                    let n = o.results[i]
                        .clone()
                        .unwrap_or_else(|e| panic!("{what} {path:?}: Count {}: {e}", r.count));
                    let mut got = o.bufs[i][..n].to_vec();
                    got.extend_from_slice(&o.tags[i]);
                    assert_eq!(
                        hex(&got),
                        hex(&r.ct),
                        "{what} {path:?}: encrypt Count {}",
                        r.count
                    );
                }
                // Decryption, every third record forged.
                let descs: Vec<JobDesc<'_>> = recs
                    .iter()
                    .zip(&keys)
                    .enumerate()
                    .map(|(i, (r, k))| {
                        let (c, tag) = if i % 3 == 1 { &forged[i] } else { &cts[i] };
                        let room = alg.output_len(Op::Decrypt, c.len()).max(c.len());
                        JobDesc::new(k, c, Hold::alternating(i, Op::Decrypt), room)
                            .iv(&r.nonce)
                            .ad(&r.ad)
                            .tag(tag_desc(alg, Op::Decrypt, tag))
                    })
                    .collect();
                let o = run_jobs(&engine, alg, Op::Decrypt, path, &descs);
                for (i, r) in recs.iter().enumerate() {
                    if i % 3 == 1 {
                        assert_eq!(
                            o.results[i],
                            Err(Error::AuthenticationFailed),
                            "{what} {path:?}: forged Count {}",
                            r.count
                        );
                        assert_zeroed(&o.bufs[i], descs[i].input.len(), &what);
                    } else {
                        let n = o.results[i].clone().unwrap_or_else(|e| {
                            panic!("{what} {path:?}: decrypt Count {}: {e}", r.count)
                        });
                        assert_eq!(
                            hex(&o.bufs[i][..n]),
                            hex(&r.pt),
                            "{what} {path:?}: decrypt Count {}",
                            r.count
                        );
                    }
                }
            }
        }
    }
}

/// After a failed authentication the job's output holds no plaintext: the bytes the
/// decryption could have written (`[..len]`, at most the buffer) are zero or still the
/// filler (out of place, nothing was written).
pub fn assert_zeroed(buf: &[u8], len: usize, what: &str) {
    let n = len.min(buf.len());
    assert!(
        buf[..n].iter().all(|&b| b == 0) || buf[..n].iter().all(|&b| b == FILL),
        "{what}: output not zeroed after a failed authentication"
    );
}

/// Encrypts one message under `alg` (a detached tag of its default length) on every engine
/// and on both paths (`process_one` and a batch of one), checks that all give the same
/// `C ‖ T` and that decrypting it in place gives `pt` back; returns `C ‖ T`.
pub fn seal_everywhere(
    alg: Algorithm,
    key: &AesKey,
    nonce: &[u8],
    ad: &[u8],
    pt: &[u8],
) -> Vec<u8> {
    let room = alg.output_len(Op::Encrypt, pt.len());
    let mut result: Option<Vec<u8>> = None;
    for engine in engines(None) {
        for path in [PathKind::One, PathKind::Batch] {
            let d = [JobDesc::new(key, pt, Hold::Copy, room)
                .iv(nonce)
                .ad(ad)
                .tag(tag_desc(alg, Op::Encrypt, &[]))];
            let o = run_jobs(&engine, alg, Op::Encrypt, path, &d);
            let n = o.results[0].clone().expect("encrypt");
            let mut ct = o.bufs[0][..n].to_vec();
            ct.extend_from_slice(&o.tags[0]);
            match &result {
                None => result = Some(ct.clone()),
                Some(r) => assert_eq!(r, &ct),
            }
            let (c, t) = ct.split_at(n);
            let d = [JobDesc::new(key, c, Hold::InPlace, c.len())
                .iv(nonce)
                .ad(ad)
                .tag(tag_desc(alg, Op::Decrypt, t))];
            let o = run_jobs(&engine, alg, Op::Decrypt, path, &d);
            let n = o.results[0].clone().expect("decrypt");
            assert_eq!(&o.bufs[0][..n], pt);
        }
    }
    result.expect("an engine")
}

/// Decrypts one ciphertext under `alg` on the default engine, in place and copied: both
/// results agree, and a failed authentication leaves the output zeroed. `tag` is the
/// detached tag (ignored for an algorithm without one).
pub fn open_both_ways(
    alg: Algorithm,
    key: &AesKey,
    nonce: &[u8],
    ad: &[u8],
    ct: &[u8],
    tag: &[u8],
) -> Result<Vec<u8>, Error> {
    let e = engine(None);
    let mut out = None;
    for hold in [Hold::InPlace, Hold::Copy] {
        let d = JobDesc::new(key, ct, hold, ct.len())
            .iv(nonce)
            .ad(ad)
            .tag(tag_desc(alg, Op::Decrypt, tag));
        let (r, buf, _) = d.run_one(&e, alg, Op::Decrypt);
        let got = match r {
            Ok(n) => Ok(buf[..n].to_vec()),
            Err(e) => {
                if e == Error::AuthenticationFailed {
                    assert_zeroed(&buf, ct.len(), "open");
                }
                Err(e)
            }
        };
        match &out {
            None => out = Some(got),
            Some(o) => assert_eq!(o, &got, "in place vs copied"),
        }
    }
    out.expect("two holds")
}

/// Decrypts `sealed` (each `C ‖ T` with a 16-byte tag, of `pts[i]` under `key`, `nonce`,
/// `ad`) as one batch on every engine and every path, after forging some jobs: every odd job
/// has byte `7i` of `C ‖ T` flipped (the tag included, for short messages), job 4 gets other
/// AD and job 6 another nonce. Each forged job fails with its output zeroed; the others give
/// their plaintexts back.
pub fn check_forgeries(
    alg: Algorithm,
    key: &AesKey,
    nonce: &[u8],
    ad: &[u8],
    pts: &[Vec<u8>],
    sealed: &[Vec<u8>],
) {
    assert!(sealed.len() > 6, "jobs 4 and 6 are forged too");
    let forged: Vec<Vec<u8>> = sealed
        .iter()
        .enumerate()
        .map(|(i, ct)| {
            let mut c = ct.clone();
            if i % 2 == 1 {
                let at = (7 * i) % c.len();
                c[at] ^= 0x01;
            }
            c
        })
        .collect();
    let wrong_ad: Vec<u8> = ad.iter().map(|b| b ^ 0x5a).chain([0x01]).collect();
    let mut other_nonce = nonce.to_vec();
    other_nonce[0] ^= 0x80;
    for engine in engines(None) {
        for path in [PathKind::One, PathKind::Batch, PathKind::Sequential] {
            let descs: Vec<JobDesc<'_>> = forged
                .iter()
                .enumerate()
                .map(|(i, c)| {
                    let (c, t) = c.split_at(c.len() - 16);
                    JobDesc::new(key, c, Hold::alternating(i, Op::Decrypt), c.len())
                        .iv(if i == 6 { &other_nonce } else { nonce })
                        .ad(if i == 4 { &wrong_ad } else { ad })
                        .tag(TagDesc::In(t))
                })
                .collect();
            let o = run_jobs(&engine, alg, Op::Decrypt, path, &descs);
            for (i, pt) in pts.iter().enumerate() {
                if i % 2 == 1 || i == 4 || i == 6 {
                    assert_eq!(o.results[i], Err(Error::AuthenticationFailed), "job {i}");
                    assert_zeroed(&o.bufs[i], pt.len(), alg.id());
                } else {
                    let n = o.results[i].clone().expect("intact job");
                    assert_eq!(o.bufs[i][..n], pt[..], "job {i}");
                }
            }
        }
    }
}

fn hex(b: &[u8]) -> String {
    b.iter().map(|x| format!("{x:02x}")).collect()
}

/// The ciphertexts and tags of a batch, per job.
type Sealed = (Vec<Vec<u8>>, Vec<Vec<u8>>);

/// A random batch for `alg`: `n` jobs with lengths from `lens`, a few keys (some shared),
/// nonce, AD of 0..40 bytes. `seed` makes it deterministic.
pub struct Batch {
    pub keys: Vec<AesKey>,
    pub key_of: Vec<usize>,
    pub nonces: Vec<Vec<u8>>,
    pub ads: Vec<Vec<u8>>,
    pub pts: Vec<Vec<u8>>,
}

impl Batch {
    pub fn random(alg: Algorithm, seed: u64, n: usize, max_len: usize, max_ad: usize) -> Batch {
        let r = bytes(seed, 8 * n + 8);
        let klen = *alg.key_lens().last().expect("key lengths");
        let klens = alg.key_lens();
        let keys: Vec<AesKey> = (0..3)
            .map(|i| {
                let l = klens[(r[i] as usize) % klens.len()].min(klen);
                AesKey::new(&bytes(seed ^ ((i as u64 + 1) * 0x9E37), l)).expect("key")
            })
            .collect();
        let (nmin, nmax) = alg.iv_lens();
        let mut batch = Batch {
            keys,
            key_of: Vec::new(),
            nonces: Vec::new(),
            ads: Vec::new(),
            pts: Vec::new(),
        };
        for i in 0..n {
            let x = &r[8 * i + 8..8 * i + 16];
            let len = (usize::from(x[0]) << 8 | usize::from(x[1])) % (max_len + 1);
            // COBRA-R takes whole block pairs only.
            let len = if alg == Algorithm::Aes128CobraR {
                len / 32 * 32
            } else {
                len
            };
            let nlen = nmin + usize::from(x[2]) % (nmax.min(nmin + 16) - nmin + 1);
            batch.key_of.push(usize::from(x[3]) % 3);
            batch.nonces.push(bytes(seed * 31 + i as u64, nlen));
            batch.ads.push(bytes(
                seed * 37 + i as u64,
                usize::from(x[4]) % (max_ad + 1),
            ));
            batch.pts.push(bytes(seed * 41 + i as u64, len));
        }
        batch
    }
}

/// The properties on one random batch: for every backend and lane count in `lanes`, the
/// batch path, the sequential path and `process_one` give the same ciphertexts and tags;
/// decryption of them gives the plaintexts back; forging (a flipped tag bit, or a flipped
/// ciphertext bit without a tag) every fourth job fails that job only, with its output
/// zeroed. Associated data of 0 to 40 bytes.
pub fn check_properties(alg: Algorithm, seed: u64, n: usize, max_len: usize, lanes: &[usize]) {
    check_properties_ad(alg, seed, n, max_len, 40, lanes);
}

/// [`check_properties`] with associated data of 0 to `max_ad` bytes per job (a mode may take
/// another path when every job's AD is short or empty).
pub fn check_properties_ad(
    alg: Algorithm,
    seed: u64,
    n: usize,
    max_len: usize,
    max_ad: usize,
    lanes: &[usize],
) {
    let b = Batch::random(alg, seed, n, max_len, max_ad);
    let t = tag_len(alg);
    let mut reference: Option<Sealed> = None;
    for &p in lanes {
        for engine in engines(Some(p)) {
            let what = format!("{alg} seed {seed} on {:?}, P = {p}", engine.backend());
            let descs: Vec<JobDesc<'_>> = (0..n)
                .map(|i| {
                    let room = alg.output_len(Op::Encrypt, b.pts[i].len());
                    JobDesc::new(
                        &b.keys[b.key_of[i]],
                        &b.pts[i],
                        Hold::alternating(i, Op::Encrypt),
                        room,
                    )
                    .iv(&b.nonces[i])
                    .ad(&b.ads[i])
                    .tag(tag_desc(alg, Op::Encrypt, &[]))
                })
                .collect();
            let mut outs: Vec<Sealed> = Vec::new();
            for path in [PathKind::Batch, PathKind::Sequential, PathKind::One] {
                let o = run_jobs(&engine, alg, Op::Encrypt, path, &descs);
                let cts: Vec<Vec<u8>> = (0..n)
                    .map(|i| {
                        let len = o.results[i]
                            .clone()
                            .unwrap_or_else(|e| panic!("{what} {path:?} job {i}: {e}"));
                        assert_eq!(len, alg.output_len(Op::Encrypt, b.pts[i].len()), "{what}");
                        o.bufs[i][..len].to_vec()
                    })
                    .collect();
                outs.push((cts, o.tags.clone()));
            }
            assert_eq!(outs[0], outs[1], "{what}: batch != sequential");
            assert_eq!(outs[0], outs[2], "{what}: batch != process_one");
            match &reference {
                None => reference = Some(outs[0].clone()),
                Some(r) => assert_eq!(r, &outs[0], "{what}: differs from the first run"),
            }
            let (cts, tags) = &outs[0];
            let forged: Vec<(Vec<u8>, Vec<u8>)> = (0..n)
                .map(|i| {
                    let (mut c, mut tag) = (cts[i].clone(), tags[i].clone());
                    if i % 4 == 3 {
                        if t > 0 {
                            tag[i % t] ^= 0x80 >> (i % 8);
                        } else {
                            let l = c.len();
                            c[(i * 7) % l] ^= 1 << (i % 8);
                        }
                    }
                    (c, tag)
                })
                .collect();
            let descs: Vec<JobDesc<'_>> = (0..n)
                .map(|i| {
                    let room = alg
                        .output_len(Op::Decrypt, forged[i].0.len())
                        .max(forged[i].0.len());
                    JobDesc::new(
                        &b.keys[b.key_of[i]],
                        &forged[i].0,
                        Hold::alternating(i, Op::Decrypt),
                        room,
                    )
                    .iv(&b.nonces[i])
                    .ad(&b.ads[i])
                    .tag(tag_desc(alg, Op::Decrypt, &forged[i].1))
                })
                .collect();
            for path in [PathKind::Batch, PathKind::Sequential] {
                let o = run_jobs(&engine, alg, Op::Decrypt, path, &descs);
                for (i, (c, _)) in forged.iter().enumerate() {
                    if i % 4 == 3 {
                        assert_eq!(
                            o.results[i],
                            Err(Error::AuthenticationFailed),
                            "{what} {path:?} forged job {i}"
                        );
                        assert_zeroed(&o.bufs[i], c.len(), &what);
                    } else {
                        let len = o.results[i]
                            .clone()
                            .unwrap_or_else(|e| panic!("{what} {path:?} job {i}: {e}"));
                        assert_eq!(o.bufs[i][..len], b.pts[i][..], "{what} {path:?} job {i}");
                    }
                }
            }
        }
    }
}
