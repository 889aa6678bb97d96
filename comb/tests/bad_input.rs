//! Bad (and edge-case) input: every bad input is a typed error for that job only, while the
//! other jobs of the same batch still come out right (equal to RustCrypto and to the
//! single-message path). Each special job is run at several lane counts and positions of a
//! batch of good jobs, through the sequential path and through the single path.

mod common;

use comb::{AesKey, Algorithm, Data, Engine, Error, Job, JobResult, Op, Tag};
use common::{
    bytes, cbc_raw_encrypt, engine, engines, reference, reference_aead, reference_cmac,
    reference_gcm, unhex, OPS,
};

/// Bytes the library must not write.
const SENTINEL: u8 = 0xA5;

// ---------------------------------------------------------------------------------------
// the good jobs around a special one

/// Lengths of the good jobs (cut to whole blocks where the mode needs them).
const GOOD_LENS: [usize; 8] = [0, 16, 37, 100, 1500, 64, 257, 1400];

/// A batch of good jobs for `alg`/`op`, with what they must produce.
struct Good {
    keys: Vec<AesKey>,
    key_bytes: Vec<Vec<u8>>,
    ivs: Vec<Vec<u8>>,
    /// Associated data (AEAD; empty otherwise).
    ads: Vec<Vec<u8>>,
    inputs: Vec<Vec<u8>>,
    /// CMAC and AEAD: expected tag for verification.
    tags_in: Vec<Vec<u8>>,
    /// CMAC and AEAD generation: tag lengths.
    tag_lens: Vec<usize>,
    /// Expected output bytes (non-MAC) or tag (CMAC generation); empty for verification.
    want: Vec<Vec<u8>>,
    /// AEAD encryption: the expected tags.
    want_tags: Vec<Vec<u8>>,
}

fn good(alg: Algorithm, op: Op) -> Good {
    let n = GOOD_LENS.len();
    let key_lens = alg.key_lens();
    let key_bytes: Vec<Vec<u8>> = (0..n)
        .map(|i| bytes(1000 + i as u64, key_lens[i % key_lens.len()]))
        .collect();
    let keys = key_bytes.iter().map(|k| AesKey::new(k).unwrap()).collect();
    // AEAD: the usual nonce length and some others where the algorithm takes a range (GCM
    // hashes them), AD of a few lengths.
    let (iv_min, iv_max) = alg.iv_lens();
    let ivs: Vec<Vec<u8>> = (0..n)
        .map(|i| {
            let len = if alg == Algorithm::AesGcm && i % 3 == 2 {
                [1, 8, 16, 60][i % 4]
            } else if iv_min < iv_max && i % 3 == 2 {
                iv_min + (5 * i) % (iv_max - iv_min + 1)
            } else {
                alg.iv_len()
            };
            bytes(2000 + i as u64, len)
        })
        .collect();
    let ads: Vec<Vec<u8>> = (0..n)
        .map(|i| {
            let len = if alg.is_aead() {
                [0, 1, 20, 300][i % 4]
            } else {
                0
            };
            bytes(4000 + i as u64, len)
        })
        .collect();
    let msgs: Vec<Vec<u8>> = GOOD_LENS
        .iter()
        .enumerate()
        .map(|(i, &l)| {
            let l = if alg == Algorithm::Aes128CobraR {
                l - l % 32
            } else if alg.needs_whole_blocks(Op::Encrypt) {
                l - l % 16
            } else {
                l
            };
            bytes(3000 + i as u64, l)
        })
        .collect();
    let tag_lens: Vec<usize> = if alg.is_aead() {
        let allowed = alg.allowed_tag_lens();
        (0..n)
            .map(|i| match allowed.len() {
                0 => 0, // Julius: no detached tag
                l => allowed[(3 * i + 6) % l],
            })
            .collect()
    } else {
        (0..n).map(|i| 1 + (5 * i + 15) % 16).collect()
    };
    let mut inputs = Vec::new();
    let mut tags_in = Vec::new();
    let mut want = Vec::new();
    let mut want_tags = Vec::new();
    for i in 0..n {
        if alg.is_aead() {
            let (ct, tag) =
                reference_aead(alg, &key_bytes[i], &ivs[i], &ads[i], &msgs[i], tag_lens[i]);
            match op {
                Op::Encrypt => {
                    inputs.push(msgs[i].clone());
                    want.push(ct);
                }
                Op::Decrypt => {
                    inputs.push(ct);
                    want.push(msgs[i].clone());
                }
            }
            tags_in.push(tag.clone());
            want_tags.push(tag);
            continue;
        }
        want_tags.push(Vec::new());
        if alg.is_mac() {
            let t = reference_cmac(&key_bytes[i], &msgs[i]);
            tags_in.push(t[..tag_lens[i]].to_vec());
            want.push(match op {
                Op::Encrypt => t[..tag_lens[i]].to_vec(),
                Op::Decrypt => Vec::new(),
            });
            inputs.push(msgs[i].clone());
            continue;
        }
        let input = if alg == Algorithm::AesCbcPkcs7 && op == Op::Decrypt {
            reference(alg, Op::Encrypt, &key_bytes[i], &ivs[i], &msgs[i]).unwrap()
        } else {
            msgs[i].clone()
        };
        want.push(reference(alg, op, &key_bytes[i], &ivs[i], &input).unwrap());
        inputs.push(input);
        tags_in.push(Vec::new());
    }
    Good {
        keys,
        key_bytes,
        ivs,
        ads,
        inputs,
        tags_in,
        tag_lens,
        want,
        want_tags,
    }
}

/// Fresh buffers of good job `i`: (data buffer, tag buffer). Odd jobs run in place.
fn good_buffers(alg: Algorithm, op: Op, g: &Good, i: usize) -> (Vec<u8>, Vec<u8>) {
    let input = &g.inputs[i];
    let room = alg.output_len(op, input.len());
    let buf = if alg.is_mac() {
        Vec::new()
    } else if i % 2 == 1 {
        let mut b = input.clone();
        b.resize(room.max(input.len()), SENTINEL);
        b
    } else {
        vec![SENTINEL; room]
    };
    (buf, vec![0; g.tag_lens[i]])
}

fn good_job<'a>(
    alg: Algorithm,
    op: Op,
    g: &'a Good,
    i: usize,
    buf: &'a mut [u8],
    tag: &'a mut [u8],
) -> Job<'a> {
    let key = &g.keys[i];
    let input = &g.inputs[i];
    if alg.is_mac() {
        let t = match op {
            Op::Encrypt => Tag::Out(tag),
            Op::Decrypt => Tag::In(&g.tags_in[i]),
        };
        return Job::mac(key, input).with_tag(t);
    }
    let job = if i % 2 == 1 {
        Job::new(
            key,
            Data::InPlace {
                buf,
                len: input.len(),
            },
        )
    } else {
        Job::copy(key, input, buf)
    };
    let job = job.with_iv(&g.ivs[i]);
    if !alg.is_aead() {
        return job;
    }
    let t = match op {
        _ if g.tag_lens[i] == 0 => Tag::None, // Julius
        Op::Encrypt => Tag::Out(tag),
        Op::Decrypt => Tag::In(&g.tags_in[i]),
    };
    job.with_ad(&g.ads[i]).with_tag(t)
}

/// Checks good job `i` after a run: its result and output equal the reference.
fn check_good(c: &Case<'_>, i: usize, r: &JobResult, buf: &[u8], tag: &[u8], what: &str) {
    let Case {
        alg, op, good: g, ..
    } = *c;
    let ctx = format!(
        "{what}: good job {i} ({alg} {op}, len {}, key {} B) next to the special job",
        g.inputs[i].len(),
        g.key_bytes[i].len()
    );
    if alg.is_mac() {
        assert_eq!(r, &Ok(0), "{ctx}: result");
        if op == Op::Encrypt {
            assert_eq!(tag, &g.want[i][..], "{ctx}: tag");
        }
        return;
    }
    assert_eq!(r, &Ok(g.want[i].len()), "{ctx}: result");
    assert!(buf[..g.want[i].len()] == g.want[i][..], "{ctx}: output");
    if alg.is_aead() && op == Op::Encrypt {
        assert_eq!(tag, &g.want_tags[i][..], "{ctx}: tag");
    }
    // Past the output: the filler, or in place the rest of the input (an AES-COPA ciphertext
    // is a byte longer than the room its plaintext needs).
    let room = alg.output_len(op, g.inputs[i].len());
    let (initial, _) = good_buffers(alg, op, g, i);
    assert!(
        buf[room..] == initial[room..],
        "{ctx}: wrote past its output"
    );
}

// ---------------------------------------------------------------------------------------
// the special job

#[derive(Clone, Debug)]
enum SData {
    /// `Data::InPlace { buf, len }`.
    InPlace { buf: Vec<u8>, len: usize },
    /// `Data::Copy` from `input` into `out` sentinel bytes.
    Copy { input: Vec<u8>, out: usize },
    /// `Data::Input` (read only).
    Input(Vec<u8>),
}

#[derive(Clone, Debug)]
enum STag {
    None,
    Out(usize),
    In(Vec<u8>),
}

/// A declaratively described job, so that it can be built again for every run.
#[derive(Clone, Debug)]
struct Special {
    key: Vec<u8>,
    iv: Vec<u8>,
    ad: Vec<u8>,
    data: SData,
    tag: STag,
}

impl Special {
    /// A job that is valid for `alg`/`op` (message of `len` bytes, in place, with room for
    /// PKCS#7, a matching tag for CMAC verification); tests then break one thing.
    fn valid(alg: Algorithm, op: Op, len: usize) -> Special {
        let key = bytes(77, alg.key_lens()[0]);
        let iv = bytes(78, alg.iv_len());
        let len = if alg == Algorithm::Aes128CobraR {
            len - len % 32
        } else {
            len
        };
        let msg = bytes(79, len);
        if alg.is_aead() {
            let ad = bytes(80, 21);
            let t = alg.tag_lens().map_or(0, |(_, _, d)| d);
            let (ct, full) = reference_aead(alg, &key, &iv, &ad, &msg, t);
            let (input, tag) = match op {
                _ if t == 0 => (if op == Op::Encrypt { msg } else { ct }, STag::None),
                Op::Encrypt => (msg, STag::Out(t)),
                Op::Decrypt => (ct, STag::In(full)),
            };
            let mut buf = input.clone();
            buf.resize(alg.output_len(op, input.len()).max(input.len()), SENTINEL);
            return Special {
                key,
                iv,
                ad,
                data: SData::InPlace {
                    len: input.len(),
                    buf,
                },
                tag,
            };
        }
        let (data, tag) = if alg.is_mac() {
            let t = reference_cmac(&key, &msg);
            let tag = match op {
                Op::Encrypt => STag::Out(16),
                Op::Decrypt => STag::In(t.to_vec()),
            };
            (SData::Input(msg), tag)
        } else {
            let input = if alg == Algorithm::AesCbcPkcs7 && op == Op::Decrypt {
                reference(alg, Op::Encrypt, &key, &iv, &msg).unwrap()
            } else {
                msg
            };
            let mut buf = input.clone();
            buf.resize(alg.output_len(op, input.len()).max(input.len()), SENTINEL);
            (
                SData::InPlace {
                    buf,
                    len: input.len(),
                },
                STag::None,
            )
        };
        Special {
            key,
            iv,
            ad: Vec::new(),
            data,
            tag,
        }
    }

    /// The job's data buffer (in-place buffer or copy output) and tag buffer, as they are
    /// before a run.
    fn buffers(&self) -> (Vec<u8>, Vec<u8>) {
        let buf = match &self.data {
            SData::InPlace { buf, .. } => buf.clone(),
            SData::Copy { out, .. } => vec![SENTINEL; *out],
            SData::Input(_) => Vec::new(),
        };
        let tag = match &self.tag {
            STag::Out(n) => vec![0; *n],
            _ => Vec::new(),
        };
        (buf, tag)
    }

    fn job<'a>(&'a self, key: &'a AesKey, buf: &'a mut [u8], tag: &'a mut [u8]) -> Job<'a> {
        let data = match &self.data {
            SData::InPlace { len, .. } => Data::InPlace { buf, len: *len },
            SData::Copy { input, .. } => Data::Copy { input, output: buf },
            SData::Input(m) => Data::Input(m),
        };
        let t = match &self.tag {
            STag::None => Tag::None,
            STag::Out(_) => Tag::Out(tag),
            STag::In(t) => Tag::In(t),
        };
        Job::new(key, data)
            .with_iv(&self.iv)
            .with_ad(&self.ad)
            .with_tag(t)
    }
}

/// What the special job must give.
struct Want {
    result: JobResult,
    /// Its data buffer afterwards (`None`: unchanged).
    buf: Option<Vec<u8>>,
    /// Its output tag afterwards (`None`: not checked).
    tag: Option<Vec<u8>>,
}

impl Want {
    /// A typed error that leaves the job's buffers untouched (validation).
    fn err(e: Error) -> Want {
        Want {
            result: Err(e),
            buf: None,
            tag: None,
        }
    }
}

/// (lanes, position of the special job among the good ones) of the batch runs.
const RUNS: [(Option<usize>, usize); 7] = [
    (Some(1), 0),
    (Some(3), 4),
    (Some(8), 8),
    (Some(16), 2),
    (Some(32), 5),
    (Some(5), 7),
    (None, 3),
];

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum How {
    Batch,
    Sequential,
}

/// One special job under test, with its surroundings.
struct Case<'a> {
    alg: Algorithm,
    op: Op,
    good: &'a Good,
    special: &'a Special,
    key: &'a AesKey,
    want: &'a Want,
    what: &'a str,
}

fn run_special_in_batch(c: &Case<'_>, e: &Engine, pos: usize, how: How) {
    let Case {
        alg, op, good: g, ..
    } = *c;
    let n = GOOD_LENS.len();
    let mut bufs: Vec<(Vec<u8>, Vec<u8>)> = (0..n).map(|i| good_buffers(alg, op, g, i)).collect();
    let (mut sbuf, mut stag) = c.special.buffers();
    let initial = sbuf.clone();
    let mut jobs: Vec<Job<'_>> = bufs
        .iter_mut()
        .enumerate()
        .map(|(i, (b, t))| good_job(alg, op, g, i, b, t))
        .collect();
    jobs.insert(pos, c.special.job(c.key, &mut sbuf, &mut stag));
    let results = match how {
        How::Batch => e.process(alg, op, &mut jobs),
        How::Sequential => e.process_sequential(alg, op, &mut jobs),
    };
    drop(jobs);
    let ctx = format!(
        "{} ({alg} {op}, {how:?}, lanes {}, at position {pos} of {})",
        c.what,
        e.lanes(alg, op),
        n + 1
    );
    assert_eq!(results.len(), n + 1, "{ctx}: result count");
    check_special(&results[pos], &sbuf, &initial, &stag, c.want, &ctx);
    for (i, (b, t)) in bufs.iter().enumerate() {
        let r = &results[if i < pos { i } else { i + 1 }];
        check_good(c, i, r, b, t, &ctx);
    }
}

fn check_special(r: &JobResult, buf: &[u8], initial: &[u8], tag: &[u8], want: &Want, ctx: &str) {
    assert_eq!(r, &want.result, "{ctx}: the special job's result");
    match &want.buf {
        None => assert!(buf == initial, "{ctx}: the job's buffer was modified"),
        Some(b) => assert!(
            buf == &b[..],
            "{ctx}: the job's buffer afterwards: first difference at byte {:?}",
            buf.iter().zip(b).position(|(x, y)| x != y)
        ),
    }
    if let Some(t) = &want.tag {
        assert_eq!(tag, &t[..], "{ctx}: the job's tag");
    }
}

/// Runs the special job `s` inside batches of good jobs (several lane counts and positions,
/// the batch and the sequential path) and alone through the single path: it must give `want`
/// every time, and every good job its reference output.
fn check_in_batch(alg: Algorithm, op: Op, s: &Special, want: &Want, what: &str) {
    let g = good(alg, op);
    let key = AesKey::new(&s.key).unwrap();
    let case = Case {
        alg,
        op,
        good: &g,
        special: s,
        key: &key,
        want,
        what,
    };
    for (lanes, pos) in RUNS {
        for e in engines(lanes) {
            run_special_in_batch(&case, &e, pos, How::Batch);
        }
    }
    for e in engines(Some(4)) {
        run_special_in_batch(&case, &e, 3, How::Sequential);
        let (mut sbuf, mut stag) = s.buffers();
        let initial = sbuf.clone();
        let r = e.process_one(alg, op, s.job(&key, &mut sbuf, &mut stag));
        let ctx = format!("{what} ({alg} {op}, single path, {})", e.backend());
        check_special(&r, &sbuf, &initial, &stag, want, &ctx);
    }
}

/// Decryption of `input` (otherwise as `s`) fails with `err` in place, with `room` bytes
/// after the message, and out of place into a buffer as long: the message's bytes are zeroed,
/// the room is untouched.
fn check_rejected(alg: Algorithm, s: &Special, input: &[u8], room: usize, err: Error, what: &str) {
    let mut zeroed = vec![0u8; input.len()];
    zeroed.resize(input.len() + room, SENTINEL);
    let want = Want {
        result: Err(err),
        buf: Some(zeroed),
        tag: None,
    };
    let mut s = s.clone();
    let mut buf = input.to_vec();
    buf.resize(input.len() + room, SENTINEL);
    s.data = SData::InPlace {
        buf,
        len: input.len(),
    };
    check_in_batch(alg, Op::Decrypt, &s, &want, &format!("{what}, in place"));
    s.data = SData::Copy {
        input: input.to_vec(),
        out: input.len() + room,
    };
    check_in_batch(alg, Op::Decrypt, &s, &want, &format!("{what}, copy"));
}

// ---------------------------------------------------------------------------------------
// the tests

#[test]
fn wrong_iv_length() {
    for &alg in Algorithm::ALL {
        for op in OPS {
            let (min, max) = alg.iv_lens();
            if min != max {
                // A range of nonce lengths: one byte short and one byte long (AES-GCM: only
                // an empty nonce, lengths past 2^61 - 1 cannot be allocated).
                let bad = if alg == Algorithm::AesGcm {
                    vec![0]
                } else {
                    vec![min - 1, max + 1]
                };
                for got in bad {
                    let mut s = Special::valid(alg, op, 48);
                    s.iv = bytes(5, got);
                    let want = Want::err(Error::InvalidNonceLength { got, min, max });
                    check_in_batch(alg, op, &s, &want, &format!("nonce of {got} bytes"));
                }
                continue;
            }
            let lens: Vec<usize> = [0, 1, 7, 8, 9, 11, 12, 13, 15, 16, 17, 24, 32]
                .into_iter()
                .filter(|&l| l != alg.iv_len() && (alg.iv_len() > 0 || l > 0))
                .collect();
            for got in lens {
                let mut s = Special::valid(alg, op, 48);
                s.iv = bytes(5, got);
                let want = Want::err(Error::InvalidIvLength {
                    expected: alg.iv_len(),
                    got,
                });
                check_in_batch(alg, op, &s, &want, &format!("IV of {got} bytes"));
            }
        }
    }
}

#[test]
fn not_a_whole_number_of_blocks() {
    let cases = [
        (Algorithm::AesEcb, Op::Encrypt),
        (Algorithm::AesEcb, Op::Decrypt),
        (Algorithm::AesCbc, Op::Encrypt),
        (Algorithm::AesCbc, Op::Decrypt),
        (Algorithm::AesCbcPkcs7, Op::Decrypt),
    ];
    for (alg, op) in cases {
        assert!(alg.needs_whole_blocks(op));
        for len in [1, 15, 17, 31, 33, 1501] {
            let mut s = Special::valid(alg, op, 0);
            // In place.
            s.data = SData::InPlace {
                buf: bytes(6, len),
                len,
            };
            let want = Want::err(Error::NotBlockMultiple { len });
            check_in_batch(alg, op, &s, &want, &format!("{len}-byte input, in place"));
            // In place, message shorter than the buffer.
            s.data = SData::InPlace {
                buf: bytes(6, len + 40),
                len,
            };
            check_in_batch(
                alg,
                op,
                &s,
                &want,
                &format!("{len}-byte input in a bigger buffer"),
            );
            // Out of place, with plenty of output room.
            s.data = SData::Copy {
                input: bytes(6, len),
                out: len + 32,
            };
            check_in_batch(alg, op, &s, &want, &format!("{len}-byte input, copy"));
        }
    }
    // The modes that take any length accept the same inputs.
    for alg in [
        Algorithm::AesCtr,
        Algorithm::AesCfb128,
        Algorithm::AesOfb,
        Algorithm::AesCbcPkcs7,
    ] {
        assert!(!alg.needs_whole_blocks(Op::Encrypt), "{alg}");
    }
}

#[test]
fn output_buffer_too_short() {
    for &alg in Algorithm::ALL {
        if alg.is_mac() {
            continue;
        }
        for op in OPS {
            for len in [16usize, 48, 50, 1500] {
                if alg.needs_whole_blocks(op) && len % 16 != 0 {
                    continue;
                }
                let base = Special::valid(alg, op, len);
                let SData::InPlace { buf, len: in_len } = &base.data else {
                    unreachable!()
                };
                let input = buf[..*in_len].to_vec();
                let needed = alg.output_len(op, input.len());
                if needed == 0 {
                    continue; // COBRA-R rounds 16 bytes down to an empty message
                }
                // Out of place: one byte short, and no output at all.
                for got in [needed - 1, 0] {
                    let mut s = base.clone();
                    s.data = SData::Copy {
                        input: input.clone(),
                        out: got,
                    };
                    let want = Want::err(Error::OutputTooShort { needed, got });
                    check_in_batch(alg, op, &s, &want, &format!("copy into {got} of {needed}"));
                }
                // PKCS#7 encryption: an output as long as the input has no room for padding.
                if alg == Algorithm::AesCbcPkcs7 && op == Op::Encrypt {
                    let mut s = base.clone();
                    s.data = SData::Copy {
                        input: input.clone(),
                        out: input.len(),
                    };
                    let want = Want::err(Error::OutputTooShort {
                        needed,
                        got: input.len(),
                    });
                    check_in_batch(alg, op, &s, &want, "PKCS#7 copy without padding room");
                }
                // In place with len > buf.len(): the message is not even there. (PKCS#7
                // encryption, whose `needed` differs from `len`, has its own test below.)
                if alg == Algorithm::AesCbcPkcs7 && op == Op::Encrypt {
                    continue;
                }
                let mut s = base.clone();
                s.data = SData::InPlace {
                    buf: input[..input.len() - 1].to_vec(),
                    len: input.len(),
                };
                let want = Want::err(Error::OutputTooShort {
                    needed: needed.max(input.len()),
                    got: input.len() - 1,
                });
                check_in_batch(alg, op, &s, &want, "in place, len > buf.len()");
                // Data::Input has no output at all.
                let mut s = base.clone();
                s.data = SData::Input(input.clone());
                let want = Want::err(Error::OutputTooShort { needed, got: 0 });
                check_in_batch(alg, op, &s, &want, "Data::Input for a cipher");
            }
        }
    }
}

/// `Error::OutputTooShort::needed` is documented as what "the mode produces for this input";
/// for PKCS#7 encryption in place with `len > buf.len()` that is the padded length.
#[test]
fn output_too_short_in_place_pkcs7_reports_padded_length() {
    let alg = Algorithm::AesCbcPkcs7;
    let mut s = Special::valid(alg, Op::Encrypt, 48);
    s.data = SData::InPlace {
        buf: bytes(8, 32),
        len: 48,
    };
    let want = Want::err(Error::OutputTooShort {
        needed: alg.output_len(Op::Encrypt, 48),
        got: 32,
    });
    check_in_batch(
        alg,
        Op::Encrypt,
        &s,
        &want,
        "PKCS#7 in place, len 48 > buf 32",
    );
}

/// A MAC's message is `buf[..len]` for `Data::InPlace`; with `len > buf.len()` the message
/// is not there, so the job must fail rather than authenticate a prefix of it.
#[test]
fn cmac_in_place_len_past_buffer_is_an_error() {
    let key = AesKey::new(&bytes(1, 16)).unwrap();
    let e = engine(None);
    let mut buf = bytes(2, 32);
    let mut tag = [0u8; 16];
    let r = e.process_one(
        Algorithm::AesCmac,
        Op::Encrypt,
        Job::new(
            &key,
            Data::InPlace {
                buf: &mut buf,
                len: 48,
            },
        )
        .with_tag(Tag::Out(&mut tag)),
    );
    assert!(
        r.is_err(),
        "CMAC over Data::InPlace {{ 32-byte buf, len: 48 }} gave {r:?} (tag {}, which is the \
         tag of the 32-byte prefix: {})",
        hex::encode(tag),
        tag == reference_cmac(&bytes(1, 16), &buf)
    );
    // Verification must not accept the prefix's tag for the longer message either.
    let prefix_tag = reference_cmac(&bytes(1, 16), &buf);
    let r = e.process_one(
        Algorithm::AesCmac,
        Op::Decrypt,
        Job::new(
            &key,
            Data::InPlace {
                buf: &mut buf,
                len: 48,
            },
        )
        .with_tag(Tag::In(&prefix_tag)),
    );
    assert!(
        r.is_err(),
        "CMAC verify of a 48-byte message in a 32-byte buffer gave {r:?}"
    );
}

/// Ciphertexts whose PKCS#7 padding is wrong in every way: all give `InvalidPadding` (one
/// kind, no detail) with the output zeroed, in place and out of place.
#[test]
fn bad_pkcs7_padding() {
    let alg = Algorithm::AesCbcPkcs7;
    let key = bytes(11, 24);
    let iv = bytes(12, 16);
    // (description, full padded plaintext).
    let mut cases: Vec<(String, Vec<u8>)> = Vec::new();
    for blocks in [1usize, 2, 5] {
        let body = bytes(13 + blocks as u64, 16 * blocks);
        let with_last = |f: &dyn Fn(&mut [u8])| {
            let mut p = body.clone();
            let n = p.len();
            f(&mut p[n - 16..]);
            p
        };
        for v in [0u8, 17, 0x20, 0x80, 0xff] {
            cases.push((
                format!("{blocks} blocks, last byte {v:#04x}"),
                with_last(&|b| b[15] = v),
            ));
        }
        // Inconsistent padding bytes: the count is in range but a padding byte differs.
        for (v, at, other) in [
            (2u8, 14usize, 3u8),
            (2, 14, 0),
            (5, 11, 4),
            (8, 9, 0),
            (16, 0, 15),
            (16, 7, 0x10 ^ 0x80),
            (15, 1, 14),
        ] {
            cases.push((
                format!("{blocks} blocks, pad {v} with byte {at} = {other}"),
                with_last(&|b| {
                    for x in &mut b[16 - v as usize..] {
                        *x = v;
                    }
                    b[at] = other;
                }),
            ));
        }
        // ANSI X.923 / ISO 7816-4 style paddings.
        cases.push((
            format!("{blocks} blocks, X.923 padding"),
            with_last(&|b| {
                b[10..15].fill(0);
                b[15] = 6;
            }),
        ));
        cases.push((
            format!("{blocks} blocks, ISO 7816-4 padding"),
            with_last(&|b| {
                b[10] = 0x80;
                b[11..].fill(0);
            }),
        ));
    }
    for (what, padded) in &cases {
        let ct = cbc_raw_encrypt(&key, &iv, padded);
        assert!(
            reference(alg, Op::Decrypt, &key, &iv, &ct).is_none(),
            "{what}: RustCrypto agrees the padding is bad"
        );
        let mut s = Special::valid(alg, Op::Decrypt, 0);
        s.key = key.clone();
        s.iv = iv.clone();
        check_rejected(alg, &s, &ct, 7, Error::InvalidPadding, what);
    }
    // An empty ciphertext has no padding at all.
    let mut s = Special::valid(alg, Op::Decrypt, 0);
    s.data = SData::InPlace {
        buf: Vec::new(),
        len: 0,
    };
    let want = Want::err(Error::InvalidPadding);
    check_in_batch(alg, Op::Decrypt, &s, &want, "empty ciphertext");
    s.data = SData::Copy {
        input: Vec::new(),
        out: 16,
    };
    check_in_batch(alg, Op::Decrypt, &s, &want, "empty ciphertext, copy");

    // Sanity: the boundary paddings are accepted (1 and 16 bytes, in one and two blocks).
    for (pt_len, blocks) in [(15usize, 1usize), (0, 1), (31, 2), (16, 2)] {
        let msg = bytes(20, pt_len);
        let ct = reference(alg, Op::Encrypt, &key, &iv, &msg).unwrap();
        assert_eq!(ct.len(), 16 * blocks);
        let mut s = Special::valid(alg, Op::Decrypt, 0);
        s.key = key.clone();
        s.iv = iv.clone();
        s.data = SData::Copy {
            input: ct.clone(),
            out: ct.len(),
        };
        let k = AesKey::new(&key).unwrap();
        let (mut buf, mut tag) = s.buffers();
        let r = engine(None).process_one(alg, Op::Decrypt, s.job(&k, &mut buf, &mut tag));
        assert_eq!(
            r,
            Ok(pt_len),
            "valid padding of {} bytes",
            ct.len() - pt_len
        );
        assert_eq!(
            buf[..pt_len],
            msg[..],
            "valid padding of {} bytes",
            ct.len() - pt_len
        );
    }
}

#[test]
fn zero_length_messages_are_valid_for_every_mode() {
    for &alg in Algorithm::ALL {
        for op in OPS {
            let s = Special::valid(alg, op, 0);
            let key = s.key.clone();
            let want = match (alg, op) {
                // The ciphertext of an empty AES-COPA message is a padded block and the flag,
                // Julius's a block: decryption returns 0 bytes (COPA writes the padded block
                // into its room); an empty ciphertext is malformed.
                (Algorithm::Aes128Copa | Algorithm::Aes128Julius, Op::Decrypt) => {
                    let e = engine(None).process_one(
                        alg,
                        op,
                        Job::copy(&AesKey::new(&key).unwrap(), &[], &mut [0u8; 16])
                            .with_iv(&s.iv)
                            .with_ad(&s.ad)
                            .with_tag(match &s.tag {
                                STag::In(t) => Tag::In(t),
                                _ => Tag::None,
                            }),
                    );
                    assert!(
                        matches!(e, Err(Error::InvalidMessageLength { len: 0, .. })),
                        "{alg}: empty ciphertext: {e:?}"
                    );
                    let SData::InPlace { buf, len } = &s.data else {
                        unreachable!("valid() is in place")
                    };
                    let mut b = buf.clone();
                    let r = engine(None).process_one(
                        alg,
                        op,
                        Job::new(
                            &AesKey::new(&key).unwrap(),
                            Data::InPlace {
                                buf: &mut b,
                                len: *len,
                            },
                        )
                        .with_iv(&s.iv)
                        .with_ad(&s.ad)
                        .with_tag(match &s.tag {
                            STag::In(t) => Tag::In(t),
                            _ => Tag::None,
                        }),
                    );
                    assert_eq!(r, Ok(0), "{alg} {op}: empty message");
                    continue;
                }
                (Algorithm::AesCmac, Op::Encrypt) => Want {
                    result: Ok(0),
                    buf: None,
                    tag: Some(reference_cmac(&key, &[]).to_vec()),
                },
                (Algorithm::AesCmac, Op::Decrypt) => Want {
                    result: Ok(0),
                    buf: None,
                    tag: None,
                },
                (a, Op::Encrypt) if a.is_aead() => {
                    let t = a.tag_lens().map_or(0, |(_, _, d)| d);
                    let (ct, tag) = reference_aead(a, &key, &s.iv, &s.ad, &[], t);
                    Want {
                        result: Ok(ct.len()),
                        buf: (!ct.is_empty()).then_some(ct),
                        tag: (t > 0).then_some(tag),
                    }
                }
                (Algorithm::AesCbcPkcs7, Op::Encrypt) => Want {
                    result: Ok(16),
                    buf: Some(reference(alg, op, &key, &s.iv, &[]).unwrap()),
                    tag: None,
                },
                // No ciphertext is no padding: the one documented rejection.
                (Algorithm::AesCbcPkcs7, Op::Decrypt) => {
                    let mut s = s.clone();
                    s.data = SData::InPlace {
                        buf: Vec::new(),
                        len: 0,
                    };
                    let want = Want::err(Error::InvalidPadding);
                    check_in_batch(alg, op, &s, &want, "empty PKCS#7 ciphertext");
                    continue;
                }
                _ => Want {
                    result: Ok(0),
                    buf: None,
                    tag: None,
                },
            };
            check_in_batch(alg, op, &s, &want, "empty message, in place");
            if !alg.is_mac() {
                let mut c = s.clone();
                c.data = SData::Copy {
                    input: Vec::new(),
                    out: alg.output_len(op, 0),
                };
                check_in_batch(alg, op, &c, &want, "empty message, copy");
            }
        }
    }
    // A batch of nothing but empty messages (CTR as the parallel case, CBC-PKCS7 as a chained
    // one whose output is still a whole block).
    let key = AesKey::new(&bytes(3, 32)).unwrap();
    let iv = bytes(4, 16);
    for e in [1, 2, 8, 32].into_iter().flat_map(|p| engines(Some(p))) {
        let lanes = e.lanes(Algorithm::AesCbcPkcs7, Op::Encrypt);
        let mut bufs = [[0u8; 16]; 10];
        let mut jobs: Vec<Job<'_>> = bufs
            .iter_mut()
            .map(|b| Job::new(&key, Data::InPlace { buf: b, len: 0 }).with_iv(&iv))
            .collect();
        let r = e.process(Algorithm::AesCbcPkcs7, Op::Encrypt, &mut jobs);
        drop(jobs);
        assert_eq!(r, vec![Ok(16); 10], "lanes {lanes}");
        let want = reference(Algorithm::AesCbcPkcs7, Op::Encrypt, &bytes(3, 32), &iv, &[]);
        assert!(
            bufs.iter().all(|b| Some(b.to_vec()) == want),
            "lanes {lanes}"
        );
        let mut empties = vec![Vec::<u8>::new(); 10];
        let mut jobs: Vec<Job<'_>> = empties
            .iter_mut()
            .map(|b| Job::in_place(&key, b).with_iv(&iv))
            .collect();
        let r = e.process(Algorithm::AesCtr, Op::Encrypt, &mut jobs);
        assert_eq!(r, vec![Ok(0); 10], "lanes {lanes}");
    }
}

/// RFC 4493 example 1: CMAC of the empty message, in a batch and alone.
#[test]
fn cmac_of_empty_message_matches_rfc4493() {
    let key_bytes = unhex("2b7e151628aed2a6abf7158809cf4f3c");
    let tag = unhex("bb1d6929e95937287fa37d129b756746");
    let mut s = Special::valid(Algorithm::AesCmac, Op::Encrypt, 0);
    s.key = key_bytes.clone();
    let want = Want {
        result: Ok(0),
        buf: None,
        tag: Some(tag.clone()),
    };
    check_in_batch(
        Algorithm::AesCmac,
        Op::Encrypt,
        &s,
        &want,
        "RFC 4493 example 1",
    );
    // Truncated to 8 bytes, and verification of the full and the truncated tag.
    s.tag = STag::Out(8);
    let want = Want {
        result: Ok(0),
        buf: None,
        tag: Some(tag[..8].to_vec()),
    };
    check_in_batch(
        Algorithm::AesCmac,
        Op::Encrypt,
        &s,
        &want,
        "RFC 4493 ex. 1, 8 bytes",
    );
    for n in [16, 8, 1] {
        s.tag = STag::In(tag[..n].to_vec());
        let want = Want {
            result: Ok(0),
            buf: None,
            tag: None,
        };
        check_in_batch(
            Algorithm::AesCmac,
            Op::Decrypt,
            &s,
            &want,
            "RFC 4493 ex. 1 verify",
        );
    }
    // RFC 4493 examples 2-4 through the single path.
    let msg = unhex(
        "6bc1bee22e409f96e93d7e117393172aae2d8a571e03ac9c9eb76fac45af8e51\
         30c81c46a35ce411e5fbc1191a0a52eff69f2445df4f9b17ad2b417be66c3710",
    );
    let key = AesKey::new(&key_bytes).unwrap();
    for (len, want) in [
        (16, "070a16b46b4d4144f79bdd9dd04a287c"),
        (40, "dfa66747de9ae63030ca32611497c827"),
        (64, "51f0bebf7e3b9d92fc49741779363cfe"),
    ] {
        let mut t = [0u8; 16];
        let r = engine(None).process_one(
            Algorithm::AesCmac,
            Op::Encrypt,
            Job::mac(&key, &msg[..len]).with_tag(Tag::Out(&mut t)),
        );
        assert_eq!(r, Ok(0));
        assert_eq!(hex::encode(t), want, "RFC 4493 example with {len} bytes");
    }
}

#[test]
fn empty_batch_returns_empty_vec() {
    for &alg in Algorithm::ALL {
        for op in OPS {
            for e in [None, Some(1), Some(32)].into_iter().flat_map(engines) {
                let mut none: Vec<Job<'_>> = Vec::new();
                assert!(e.process(alg, op, &mut none).is_empty(), "{alg} {op}");
                assert!(e.process(alg, op, &mut []).is_empty(), "{alg} {op}");
                assert!(
                    e.process_sequential(alg, op, &mut []).is_empty(),
                    "{alg} {op}"
                );
            }
        }
    }
}

#[test]
fn cmac_tag_length_out_of_range() {
    for op in OPS {
        for got in [0usize, 17, 32] {
            let mut s = Special::valid(Algorithm::AesCmac, op, 40);
            s.tag = match op {
                Op::Encrypt => STag::Out(got),
                Op::Decrypt => STag::In(vec![0x5a; got]),
            };
            let want = Want {
                result: Err(Error::InvalidTagLength {
                    got,
                    min: 1,
                    max: 16,
                }),
                buf: None,
                tag: Some(vec![0; if op == Op::Encrypt { got } else { 0 }]),
            };
            check_in_batch(
                Algorithm::AesCmac,
                op,
                &s,
                &want,
                &format!("{got}-byte tag"),
            );
        }
    }
    assert_eq!(Algorithm::AesCmac.tag_lens(), Some((1, 16, 16)));
}

#[test]
fn tag_misuse() {
    // `TagMisuse`, and an output tag left as it was.
    let check = |alg: Algorithm, op: Op, len: usize, tag: STag| {
        let what = format!("{alg} {op} with {tag:?}");
        let mut want = Want::err(Error::TagMisuse);
        if let STag::Out(n) = tag {
            want.tag = Some(vec![0; n]); // nothing written
        }
        let mut s = Special::valid(alg, op, len);
        s.tag = tag;
        check_in_batch(alg, op, &s, &want, &what);
    };
    // MACs and AEAD: no tag, or a tag of the wrong direction.
    for &alg in Algorithm::ALL.iter().filter(|a| a.tag_lens().is_some()) {
        let t = alg.tag_lens().map_or(16, |(_, _, d)| d);
        for (op, tag) in [
            (Op::Encrypt, STag::None),
            (Op::Decrypt, STag::None),
            (Op::Encrypt, STag::In(vec![0; t])),
            (Op::Decrypt, STag::Out(t)),
        ] {
            check(alg, op, 33, tag);
        }
    }
    // Plain encryption modes take no tag, in either direction.
    for &alg in Algorithm::ALL {
        if alg.tag_lens().is_some() {
            continue;
        }
        for op in OPS {
            for tag in [STag::Out(16), STag::In(vec![1; 16]), STag::Out(0)] {
                check(alg, op, 32, tag);
            }
        }
    }
}

#[test]
fn associated_data_is_not_supported() {
    for &alg in Algorithm::ALL {
        if alg.is_aead() {
            continue; // takes AD: see the AEAD tests
        }
        for op in OPS {
            for ad_len in [1usize, 16, 100] {
                let mut s = Special::valid(alg, op, 32);
                s.ad = bytes(9, ad_len);
                let want = Want::err(Error::AdNotSupported);
                check_in_batch(alg, op, &s, &want, &format!("{ad_len} bytes of AD"));
            }
        }
    }
    // An empty AD is no AD.
    let key = AesKey::new(&bytes(1, 16)).unwrap();
    let mut buf = bytes(2, 32);
    let r = engine(None).process_one(
        Algorithm::AesCtr,
        Op::Encrypt,
        Job::in_place(&key, &mut buf).with_iv(&[0; 16]).with_ad(&[]),
    );
    assert_eq!(r, Ok(32));
}

#[test]
fn wrong_key_length() {
    for got in [0usize, 1, 8, 15, 17, 20, 23, 25, 31, 33, 40, 48, 64] {
        let r = AesKey::new(&vec![0x11; got]);
        assert_eq!(
            r.as_ref().err(),
            Some(&Error::InvalidKeyLength { got }),
            "AesKey::new with {got} bytes"
        );
    }
    for (len, rounds) in [(16, 10), (24, 12), (32, 14)] {
        let k = AesKey::new(&vec![0x11; len]).unwrap();
        assert_eq!((k.key_len(), k.rounds()), (len, rounds));
    }
}

#[test]
fn lane_count_out_of_range() {
    let e = engine(None);
    for got in [0usize, 33, 64, usize::MAX] {
        assert_eq!(
            e.with_lanes(got).err(),
            Some(Error::InvalidLaneCount { got }),
            "with_lanes({got})"
        );
    }
    for p in [1, 2, 12, 13, 31, 32] {
        let e = e.with_lanes(p).unwrap();
        for &alg in Algorithm::ALL {
            for op in OPS {
                assert_eq!(e.lanes(alg, op), p, "{alg} {op}");
            }
        }
    }
}

/// PKCS#7 encryption in place: `Data::InPlace { buf, len }` with `len < buf.len()` grows the
/// output into the room; exactly the padded length is enough, one byte less is not.
#[test]
fn pkcs7_in_place_needs_room() {
    let alg = Algorithm::AesCbcPkcs7;
    for len in [0usize, 1, 15, 16, 17, 31, 32, 47, 100] {
        let padded = alg.output_len(Op::Encrypt, len);
        assert_eq!(padded, (len / 16 + 1) * 16);
        let base = Special::valid(alg, Op::Encrypt, len);
        let msg = bytes(79, len); // Special::valid's message
        let ct = reference(alg, Op::Encrypt, &base.key, &base.iv, &msg).unwrap();
        for extra in [0usize, 1, 16] {
            let mut s = base.clone();
            let mut buf = msg.clone();
            buf.resize(padded + extra, SENTINEL);
            s.data = SData::InPlace { buf, len };
            let mut after = ct.clone();
            after.resize(padded + extra, SENTINEL);
            let want = Want {
                result: Ok(padded),
                buf: Some(after),
                tag: None,
            };
            check_in_batch(alg, Op::Encrypt, &s, &want, &format!("{extra} spare bytes"));
        }
        let mut s = base.clone();
        let mut buf = msg.clone();
        buf.resize(padded - 1, SENTINEL);
        s.data = SData::InPlace { buf, len };
        let want = Want::err(Error::OutputTooShort {
            needed: padded,
            got: padded - 1,
        });
        check_in_batch(alg, Op::Encrypt, &s, &want, "room one byte short");
    }
}

/// One wrong tag in the middle of a verification batch fails only that job.
#[test]
fn cmac_verification_failure_in_a_batch() {
    for len in [0usize, 1, 16, 17, 64, 1000] {
        for tag_len in [1usize, 4, 12, 16] {
            let base = Special::valid(Algorithm::AesCmac, Op::Decrypt, len);
            let STag::In(full) = &base.tag else {
                unreachable!()
            };
            for bit in [0, 7, 8 * tag_len - 1] {
                let mut s = base.clone();
                let mut t = full[..tag_len].to_vec();
                t[bit / 8] ^= 1 << (bit % 8);
                s.tag = STag::In(t);
                let want = Want::err(Error::AuthenticationFailed);
                let what = format!("{len}-byte message, {tag_len}-byte tag, bit {bit} flipped");
                check_in_batch(Algorithm::AesCmac, Op::Decrypt, &s, &want, &what);
            }
            // The tag of another message, and the truncated correct tag (which verifies).
            let mut s = base.clone();
            s.tag = STag::In(reference_cmac(&s.key, &bytes(1, len + 1))[..tag_len].to_vec());
            if s.tag_differs(&full[..tag_len]) {
                let want = Want::err(Error::AuthenticationFailed);
                check_in_batch(Algorithm::AesCmac, Op::Decrypt, &s, &want, "other message");
            }
            s.tag = STag::In(full[..tag_len].to_vec());
            let want = Want {
                result: Ok(0),
                buf: None,
                tag: None,
            };
            check_in_batch(Algorithm::AesCmac, Op::Decrypt, &s, &want, "truncated tag");
        }
    }
}

impl Special {
    fn tag_differs(&self, t: &[u8]) -> bool {
        !matches!(&self.tag, STag::In(x) if x[..] == t[..])
    }
}

// ---------------------------------------------------------------------------------------
// AES-GCM

const GCM: Algorithm = Algorithm::AesGcm;

/// Nonces: an empty one is rejected (see `wrong_iv_length`), every other length is taken
/// (12 bytes directly, the others hashed into J0), next to good jobs.
#[test]
fn gcm_nonce_lengths() {
    for op in OPS {
        for len in [1usize, 7, 8, 13, 16, 17, 60, 128] {
            let mut s = Special::valid(GCM, op, 40);
            s.iv = bytes(31, len);
            let msg = bytes(79, 40);
            let (ct, tag) = reference_gcm(&s.key, &s.iv, &s.ad, &msg);
            let (input, out) = match op {
                Op::Encrypt => (msg, ct),
                Op::Decrypt => (ct, msg),
            };
            s.data = SData::InPlace {
                buf: input,
                len: 40,
            };
            s.tag = match op {
                Op::Encrypt => STag::Out(16),
                Op::Decrypt => STag::In(tag.to_vec()),
            };
            let want = Want {
                result: Ok(40),
                buf: Some(out),
                tag: (op == Op::Encrypt).then(|| tag.to_vec()),
            };
            check_in_batch(GCM, op, &s, &want, &format!("{len}-byte nonce"));
        }
    }
}

/// Tag lengths outside {4, 8, 12, 13, 14, 15, 16}: a typed error naming the allowed set, in
/// both directions, with nothing written (not even the output tag buffer).
#[test]
fn gcm_tag_length_not_allowed() {
    let allowed = GCM.allowed_tag_lens();
    assert_eq!(allowed, &[4, 8, 12, 13, 14, 15, 16]);
    for op in OPS {
        for got in [0usize, 1, 2, 3, 5, 6, 7, 9, 10, 11, 17, 32] {
            let mut s = Special::valid(GCM, op, 40);
            s.tag = match op {
                Op::Encrypt => STag::Out(got),
                Op::Decrypt => STag::In(bytes(5, got)),
            };
            let want = Want {
                result: Err(Error::TagLengthNotAllowed { got, allowed }),
                buf: None,
                tag: Some(vec![0; if op == Op::Encrypt { got } else { 0 }]),
            };
            check_in_batch(GCM, op, &s, &want, &format!("{got}-byte tag"));
        }
        // Every allowed length works (generation gives the prefix of the full tag).
        for &n in allowed {
            let mut s = Special::valid(GCM, op, 40);
            let msg = bytes(79, 40);
            let (ct, full) = reference_gcm(&s.key, &s.iv, &s.ad, &msg);
            let want = match op {
                Op::Encrypt => {
                    s.tag = STag::Out(n);
                    Want {
                        result: Ok(40),
                        buf: Some(ct),
                        tag: Some(full[..n].to_vec()),
                    }
                }
                Op::Decrypt => {
                    s.tag = STag::In(full[..n].to_vec());
                    Want {
                        result: Ok(40),
                        buf: Some(msg),
                        tag: None,
                    }
                }
            };
            check_in_batch(GCM, op, &s, &want, &format!("allowed {n}-byte tag"));
        }
    }
    let e = Error::TagLengthNotAllowed { got: 5, allowed };
    assert_eq!(
        e.to_string(),
        "invalid tag length 5 bytes (allowed: 4, 8, 12, 13, 14, 15, 16)"
    );
}

/// Ciphertext and tag that do not belong together (a flipped bit anywhere, another message's
/// tag, a truncated or extended ciphertext, other AD, other nonce): `AuthenticationFailed`,
/// and no plaintext: the message bytes of the output are zeroed (in place: the ciphertext),
/// the room after them untouched. The good jobs of the batch are unaffected.
#[test]
fn gcm_ciphertext_and_tag_mismatch() {
    let base = Special::valid(GCM, Op::Decrypt, 50);
    let SData::InPlace { buf: ct, .. } = &base.data else {
        unreachable!()
    };
    let STag::In(tag) = &base.tag else {
        unreachable!()
    };
    let (ct, tag) = (ct.clone(), tag.clone());
    let mut variants: Vec<(String, Special)> = Vec::new();
    for bit in [0usize, 7, 100, 399] {
        let mut s = base.clone();
        let mut c = ct.clone();
        c[bit / 8] ^= 1 << (bit % 8);
        s.data = SData::InPlace { buf: c, len: 50 };
        variants.push((format!("ciphertext bit {bit}"), s));
    }
    for bit in [0usize, 64, 127] {
        let mut s = base.clone();
        let mut t = tag.clone();
        t[bit / 8] ^= 1 << (bit % 8);
        s.tag = STag::In(t);
        variants.push((format!("tag bit {bit}"), s));
    }
    let mut s = base.clone();
    s.tag = STag::In(
        reference_gcm(&s.key, &s.iv, &s.ad, &bytes(1, 50))
            .1
            .to_vec(),
    );
    variants.push(("another message's tag".into(), s));
    for len in [49usize, 0] {
        let mut s = base.clone();
        s.data = SData::InPlace {
            buf: ct[..len].to_vec(),
            len,
        };
        variants.push((format!("ciphertext cut to {len} bytes"), s));
    }
    let mut s = base.clone();
    s.data = SData::InPlace {
        buf: [&ct[..], &[0]].concat(),
        len: 51,
    };
    variants.push(("ciphertext one byte longer".into(), s));
    let mut s = base.clone();
    s.ad.push(0);
    variants.push(("AD one byte longer".into(), s));
    let mut s = base.clone();
    s.ad.clear();
    variants.push(("no AD".into(), s));
    let mut s = base.clone();
    s.iv[11] ^= 1;
    variants.push(("another nonce".into(), s));
    let mut s = base.clone();
    s.key[0] ^= 1;
    variants.push(("another key".into(), s));
    for (what, s) in variants {
        let SData::InPlace { buf, len } = &s.data else {
            unreachable!()
        };
        assert_eq!(buf.len(), *len, "{what}");
        check_rejected(GCM, &s, buf, 5, Error::AuthenticationFailed, &what);
    }
}

/// The output must hold the whole message (the tag is detached): one byte less is
/// `OutputTooShort`, in both directions, with nothing written.
#[test]
fn gcm_output_too_short() {
    for op in OPS {
        for len in [1usize, 16, 17, 300] {
            let s0 = Special::valid(GCM, op, len);
            let SData::InPlace { buf, .. } = &s0.data else {
                unreachable!()
            };
            for got in [len - 1, 0] {
                let mut s = s0.clone();
                s.data = SData::Copy {
                    input: buf.clone(),
                    out: got,
                };
                let mut want = Want::err(Error::OutputTooShort { needed: len, got });
                if op == Op::Encrypt {
                    want.tag = Some(vec![0; 16]); // no tag written either
                }
                check_in_batch(GCM, op, &s, &want, &format!("{len} bytes into {got}"));
            }
        }
    }
}

/// Plaintexts are limited to 2^36 - 32 bytes (SP 800-38D). The limit is checked on the
/// declared length before any data is read, so it is testable without 64 GiB: an in-place
/// job whose `len` is past its (small) buffer fails with `MessageTooLong` above the limit and
/// with `OutputTooShort` at it (the limit passed, then the buffer check failed). On 64-bit
/// Linux also with a real 2^36 - 31-byte input: a read-only, never-touched, unreserved
/// mapping (no memory is committed).
#[test]
fn gcm_message_over_the_length_limit() {
    let max = GCM.max_input_len();
    #[cfg(target_pointer_width = "64")]
    assert_eq!(max, (1usize << 36) - 32);
    if max == usize::MAX {
        return; // 32-bit: the limit is past the address space
    }
    for op in OPS {
        for len in [max + 1, max + 32, usize::MAX] {
            let mut s = Special::valid(GCM, op, 40);
            s.data = SData::InPlace {
                buf: bytes(3, 40),
                len,
            };
            let mut want = Want::err(Error::MessageTooLong { len, max });
            if op == Op::Encrypt {
                want.tag = Some(vec![0; 16]);
            }
            check_in_batch(GCM, op, &s, &want, &format!("in place, len {len}"));
        }
        let mut s = Special::valid(GCM, op, 40);
        s.data = SData::InPlace {
            buf: bytes(3, 40),
            len: max,
        };
        let want = Want::err(Error::OutputTooShort {
            needed: max,
            got: 40,
        });
        check_in_batch(GCM, op, &s, &want, "in place, len at the limit");
    }
    // Other modes have no such limit: the same job is only too long for its buffer.
    let mut s = Special::valid(Algorithm::AesCtr, Op::Encrypt, 40);
    s.data = SData::InPlace {
        buf: bytes(3, 40),
        len: max + 1,
    };
    let want = Want::err(Error::OutputTooShort {
        needed: max + 1,
        got: 40,
    });
    check_in_batch(Algorithm::AesCtr, Op::Encrypt, &s, &want, "CTR, no limit");

    #[cfg(all(target_os = "linux", target_pointer_width = "64"))]
    huge_copy_input(max + 1);
}

/// `Data::Copy` from a `len`-byte input that exists (a read-only anonymous mapping with
/// `MAP_NORESERVE`: address space only, never touched) into a small output: `MessageTooLong`.
#[cfg(all(target_os = "linux", target_pointer_width = "64"))]
fn huge_copy_input(len: usize) {
    // SAFETY: an anonymous private mapping with no address hint; checked below.
    let p = unsafe {
        libc::mmap(
            core::ptr::null_mut(),
            len,
            libc::PROT_READ,
            libc::MAP_PRIVATE | libc::MAP_ANONYMOUS | libc::MAP_NORESERVE,
            -1,
            0,
        )
    };
    if p == libc::MAP_FAILED {
        eprintln!("skipping the mapped {len}-byte input: mmap failed");
        return;
    }
    // SAFETY: the mapping is `len` readable bytes (zero pages on first read) and lives until
    // the munmap below; nothing writes it.
    let input = unsafe { core::slice::from_raw_parts(p.cast::<u8>().cast_const(), len) };
    let key = AesKey::new(&bytes(1, 16)).unwrap();
    let max = GCM.max_input_len();
    for e in engines(None) {
        for op in OPS {
            let mut out = [SENTINEL; 64];
            let mut tag_out = [0u8; 16];
            let tag_in = [0u8; 16];
            let tag = match op {
                Op::Encrypt => Tag::Out(&mut tag_out),
                Op::Decrypt => Tag::In(&tag_in),
            };
            let job = Job::copy(&key, input, &mut out)
                .with_iv(&[0; 12])
                .with_tag(tag);
            let r = e.process_one(GCM, op, job);
            assert_eq!(r, Err(Error::MessageTooLong { len, max }), "{op}");
            assert_eq!(out, [SENTINEL; 64]);
            assert_eq!(tag_out, [0; 16]);
        }
    }
    // SAFETY: exactly the mapping made above; `input` is not used after this.
    unsafe { libc::munmap(p, len) };
}

/// A declared length near `usize::MAX` is an ordinary validation error on every path and
/// every algorithm (found by fuzzing: PKCS#7's output length `(len / 16 + 1) * 16`
/// overflowed, a panic where overflow checks are on). The input is never touched: the buffer
/// is 9 bytes.
#[test]
fn declared_length_near_usize_max_is_an_error_not_an_overflow() {
    for e in engines(Some(4)) {
        for &alg in Algorithm::ALL {
            let key = AesKey::new(&bytes(1, alg.key_lens()[0])).unwrap();
            let t = alg.tag_lens().map_or(16, |(_, _, d)| d);
            for op in OPS {
                for len in [usize::MAX, usize::MAX - 15, usize::MAX - 16, usize::MAX / 2] {
                    let mut buf = [0u8; 9];
                    let mut tag = vec![0u8; t];
                    let iv = vec![0u8; alg.iv_len()];
                    let mut job = Job::new(&key, Data::InPlace { buf: &mut buf, len });
                    if alg.iv_len() > 0 {
                        job = job.with_iv(&iv);
                    }
                    if alg.tag_lens().is_some() {
                        job = job.with_tag(match op {
                            Op::Encrypt => Tag::Out(&mut tag),
                            Op::Decrypt => Tag::In(&[0u8; 16][..t]),
                        });
                    }
                    let r = e.process(alg, op, &mut [job]);
                    assert!(
                        matches!(
                            r[..],
                            [Err(
                                Error::OutputTooShort { .. } | Error::MessageTooLong { .. }
                            )]
                        ),
                        "{alg} {op} len {len}: {r:?}"
                    );
                }
            }
        }
    }
}
