//! Memory safety at the edges of buffers: every input, output and tag is placed right against
//! an inaccessible (PROT_NONE) page, once ending at the page after it and once starting at
//! the page before it, and every algorithm, direction, backend and path (batch with several
//! lane counts, sequential, single) runs over lengths around every block boundary. A read or
//! write one byte past (or before) a buffer faults and kills the test. Those openings fail
//! their tags; `aead_openings_stay_inside_their_buffers` repeats them with the right tags, so
//! the code that writes a verified plaintext runs at the guards too.
//!
//! `guard_faults_when_touched` proves the guard is real: a child process that reads one byte
//! past a guarded buffer must die by a signal.

mod common;

use comb::{AesKey, Algorithm, Data, Error, Job, Op, Tag};
use common::{backends, bytes, engine_on, OPS};

/// An anonymous mapping `[guard][data pages][guard]`, both guards PROT_NONE.
struct Guarded {
    base: *mut u8,
    page: usize,
    data_pages: usize,
}

impl Guarded {
    fn new(data_len: usize) -> Guarded {
        // SAFETY: sysconf has no preconditions.
        let page = usize::try_from(unsafe { libc::sysconf(libc::_SC_PAGESIZE) }).unwrap();
        let data_pages = data_len.div_ceil(page).max(1);
        let size = (data_pages + 2) * page;
        // SAFETY: an anonymous private mapping with no address hint; checked below.
        let base = unsafe {
            libc::mmap(
                core::ptr::null_mut(),
                size,
                libc::PROT_READ | libc::PROT_WRITE,
                libc::MAP_PRIVATE | libc::MAP_ANONYMOUS,
                -1,
                0,
            )
        };
        assert_ne!(base, libc::MAP_FAILED, "mmap");
        let base = base.cast::<u8>();
        // SAFETY: both ranges are whole pages inside the mapping just made.
        unsafe {
            assert_eq!(libc::mprotect(base.cast(), page, libc::PROT_NONE), 0);
            let hi = base.add((1 + data_pages) * page);
            assert_eq!(libc::mprotect(hi.cast(), page, libc::PROT_NONE), 0);
        }
        Guarded {
            base,
            page,
            data_pages,
        }
    }

    /// `len` accessible bytes ending exactly at the upper guard (`at_end`) or starting
    /// exactly at the lower guard, filled with `fill`.
    fn slice(&mut self, len: usize, at_end: bool, fill: &[u8]) -> &mut [u8] {
        let data = self.data_pages * self.page;
        assert!(len <= data);
        let off = if at_end { data - len } else { 0 };
        // SAFETY: [page + off, page + off + len) lies in the read-write data pages of the
        // mapping, which lives as long as `self` (the borrow).
        let s = unsafe { core::slice::from_raw_parts_mut(self.base.add(self.page + off), len) };
        for (d, f) in s.iter_mut().zip(fill.iter().cycle()) {
            *d = *f;
        }
        s
    }
}

impl Guarded {
    /// The bytes [`Guarded::slice`] of the same `len` and `at_end` gives, as they are now.
    fn contents(&self, len: usize, at_end: bool) -> &[u8] {
        let data = self.data_pages * self.page;
        assert!(len <= data);
        let off = if at_end { data - len } else { 0 };
        // SAFETY: as in `slice`: inside the read-write data pages, alive with `self`.
        unsafe { core::slice::from_raw_parts(self.base.add(self.page + off), len) }
    }
}

impl Drop for Guarded {
    fn drop(&mut self) {
        // SAFETY: exactly the mapping made in `new`.
        unsafe { libc::munmap(self.base.cast(), (self.data_pages + 2) * self.page) };
    }
}

/// Lengths around every block boundary up to 80 bytes, and a few larger ones (a whole page
/// included, so a page-sized buffer has guards on both sides).
fn lengths(alg: Algorithm, op: Op) -> Vec<usize> {
    let all = (0..=80).chain([127, 128, 129, 1023, 1024, 1500, 4095, 4096]);
    if alg.needs_whole_blocks(op) {
        all.filter(|l| l % 16 == 0).collect()
    } else {
        all.collect()
    }
}

/// How a job's buffers are laid out.
#[derive(Clone, Copy, Debug)]
enum Layout {
    InPlace,
    Copy,
}

/// The guarded buffers of one job; the `Job` borrows them.
struct JobBuffers {
    input: Guarded,
    output: Guarded,
    tag: Guarded,
    /// Associated data (AEAD).
    ad: Guarded,
    len: usize,
}

impl JobBuffers {
    fn new(alg: Algorithm, op: Op, len: usize) -> JobBuffers {
        let out = alg.output_len(op, len).max(len);
        JobBuffers {
            input: Guarded::new(len.max(1)),
            output: Guarded::new(out.max(1)),
            tag: Guarded::new(16),
            ad: Guarded::new(64),
            len,
        }
    }

    fn job<'a>(
        &'a mut self,
        alg: Algorithm,
        op: Op,
        key: &'a AesKey,
        iv: &'a [u8],
        layout: Layout,
        at_end: bool,
    ) -> Job<'a> {
        let len = self.len;
        let data = bytes(len as u64 + 1, len.max(1));
        let out_len = alg.output_len(op, len);
        // MACs: tags of 1..=16 bytes; AEAD: the allowed lengths. Almost surely wrong for
        // verification: the verification path still reads only the tag (AEAD: the failure
        // zeroes the output).
        let tag = if alg.tag_lens().is_some() {
            let allowed = alg.allowed_tag_lens();
            let t = self
                .tag
                .slice(allowed[len % allowed.len()], at_end, &[0x5a]);
            Some(match op {
                Op::Encrypt => Tag::Out(t),
                Op::Decrypt => Tag::In(&*t),
            })
        } else {
            None
        };
        let job = if alg.is_mac() {
            let msg = self.input.slice(len, at_end, &data);
            Job::mac(key, msg)
        } else {
            match layout {
                Layout::InPlace => {
                    // Room for the output (PKCS#7 grows the message), no more.
                    let buf = self.output.slice(out_len.max(len), at_end, &data);
                    Job::new(key, Data::InPlace { buf, len })
                }
                Layout::Copy => {
                    let input = self.input.slice(len, at_end, &data);
                    let output = self.output.slice(out_len, at_end, &[0]);
                    Job::copy(key, input, output)
                }
            }
        };
        let job = match tag {
            Some(t) => job.with_tag(t),
            None => job,
        };
        if alg.is_aead() {
            // AD against the guards too; nonces of 12 bytes (the fast path) and 16 (hashed).
            let ad = &*self.ad.slice(len % 41, at_end, &data);
            let nonce = if len.is_multiple_of(2) { &iv[..12] } else { iv };
            return job.with_iv(nonce).with_ad(ad);
        }
        if alg.iv_len() > 0 {
            job.with_iv(iv)
        } else {
            job
        }
    }
}

#[test]
fn every_algorithm_stays_inside_its_buffers() {
    let keys: Vec<AesKey> = [16, 24, 32]
        .iter()
        .map(|&n| AesKey::new(&bytes(n as u64, n)).unwrap())
        .collect();
    let iv = bytes(99, 16);
    let mut runs = 0;
    for backend in backends() {
        for &alg in Algorithm::ALL {
            for op in OPS {
                let lens = lengths(alg, op);
                for layout in [Layout::InPlace, Layout::Copy] {
                    for at_end in [true, false] {
                        // The whole set of lengths as one batch (several lane counts, the
                        // sequential path), then each job alone (the single path).
                        for lanes in [None, Some(3), Some(16), Some(32)] {
                            let engine = engine_on(backend, lanes);
                            let mut bufs: Vec<JobBuffers> =
                                lens.iter().map(|&l| JobBuffers::new(alg, op, l)).collect();
                            let mut jobs: Vec<Job<'_>> = bufs
                                .iter_mut()
                                .enumerate()
                                .map(|(i, b)| b.job(alg, op, &keys[i % 3], &iv, layout, at_end))
                                .collect();
                            let r = engine.process(alg, op, &mut jobs);
                            assert_eq!(r.len(), lens.len());
                            let r = engine.process_sequential(alg, op, &mut jobs);
                            assert_eq!(r.len(), lens.len());
                            runs += 2 * lens.len();
                        }
                        let engine = engine_on(backend, None);
                        for (i, &len) in lens.iter().enumerate() {
                            let mut b = JobBuffers::new(alg, op, len);
                            let job = b.job(alg, op, &keys[i % 3], &iv, layout, at_end);
                            let _ = engine.process_one(alg, op, job);
                            runs += 1;
                        }
                    }
                }
            }
        }
    }
    assert!(runs > 10_000, "{runs} jobs");
}

/// The guard is real: a child process reading one byte past a guarded buffer dies by a
/// signal (and reading the last byte inside it does not).
#[test]
fn guard_faults_when_touched() {
    const CHILD: &str = "COMB_GUARD_CHILD";
    if let Ok(what) = std::env::var(CHILD) {
        let mut g = Guarded::new(100);
        let s = g.slice(100, true, &[7]);
        let last = s.as_ptr().wrapping_add(99);
        // SAFETY: inside the buffer.
        assert_eq!(unsafe { core::ptr::read_volatile(last) }, 7);
        if what == "past" {
            // SAFETY: deliberately not: the byte after the buffer is on the PROT_NONE page,
            // and this child process is meant to die here.
            let _ = unsafe { core::ptr::read_volatile(last.wrapping_add(1)) };
        }
        std::process::exit(0);
    }
    let exe = std::env::current_exe().unwrap();
    let run = |what: &str| {
        std::process::Command::new(&exe)
            .args(["--exact", "guard_faults_when_touched", "--nocapture"])
            .env(CHILD, what)
            .output()
            .expect("run the test binary")
    };
    let inside = run("inside");
    assert!(inside.status.success(), "{inside:?}");
    let past = run("past");
    assert!(
        !past.status.success(),
        "reading past the guard did not fault"
    );
    #[cfg(unix)]
    {
        use std::os::unix::process::ExitStatusExt;
        assert_eq!(past.status.signal(), Some(libc::SIGSEGV), "{past:?}");
    }
}

/// Successful openings against the guards: every AEAD mode seals messages of lengths around
/// every block boundary (ordinary buffers), then opens them with the right tag as one batch
/// and one by one, the ciphertext, the plaintext output and the tag each ending at the upper
/// guard or starting at the lower one, in place and copied. (The test above opens with wrong
/// tags, so it never reaches the code that writes a verified plaintext: CLOC's and SILC's
/// keystream xor, for one.) Every opening must succeed and give the message back.
#[test]
fn aead_openings_stay_inside_their_buffers() {
    let iv = bytes(98, 16);
    let ad = bytes(97, 20);
    let mut runs = 0;
    for backend in backends() {
        for &alg in Algorithm::ALL.iter().filter(|a| a.is_aead()) {
            let key = AesKey::new(&bytes(7, alg.key_lens()[0])).unwrap();
            let tag_len = alg.tag_lens().map_or(0, |(_, _, d)| d);
            let nonce = &iv[..alg.iv_len()];
            // The output room an opening needs (the mode's own rule, at least the message).
            let out_room = |c: &Vec<u8>| alg.output_len(Op::Decrypt, c.len());
            let sealer = engine_on(backend, None);
            // (message, ciphertext, tag) per length the mode takes (COBRA-R: whole block
            // pairs only).
            let sealed: Vec<(Vec<u8>, Vec<u8>, Vec<u8>)> = lengths(alg, Op::Encrypt)
                .into_iter()
                .filter_map(|len| {
                    let msg = bytes(len as u64 + 3, len);
                    let mut ct = vec![0u8; alg.output_len(Op::Encrypt, len)];
                    let mut tag = vec![0u8; tag_len];
                    let mut job = Job::copy(&key, &msg, &mut ct).with_iv(nonce).with_ad(&ad);
                    if tag_len > 0 {
                        job = job.with_tag(Tag::Out(&mut tag));
                    }
                    match &sealer.process(alg, Op::Encrypt, &mut [job])[0] {
                        Ok(_) => Some((msg, ct, tag)),
                        Err(Error::InvalidMessageLength { .. }) => None,
                        Err(e) => panic!("{alg}: seal {len}: {e:?}"),
                    }
                })
                .collect();
            assert!(sealed.len() >= 6, "{alg}: {} lengths", sealed.len());
            for layout in [Layout::InPlace, Layout::Copy] {
                for at_end in [true, false] {
                    // The batch path at several lane counts, and the sequential path.
                    for (lanes, sequential) in [
                        (None, false),
                        (Some(3), false),
                        (Some(16), false),
                        (None, true),
                    ] {
                        let engine = engine_on(backend, lanes);
                        let mut bufs: Vec<(Guarded, Guarded, Guarded)> = sealed
                            .iter()
                            .map(|(_, c, _)| {
                                (
                                    Guarded::new(c.len().max(1)),
                                    Guarded::new(c.len().max(out_room(c)).max(1)),
                                    Guarded::new(16),
                                )
                            })
                            .collect();
                        let mut jobs: Vec<Job<'_>> = bufs
                            .iter_mut()
                            .zip(&sealed)
                            .map(|((input, output, tag), (_, c, t))| {
                                let job = match layout {
                                    Layout::InPlace => {
                                        let buf = output.slice(c.len(), at_end, c);
                                        Job::new(&key, Data::InPlace { buf, len: c.len() })
                                    }
                                    Layout::Copy => Job::copy(
                                        &key,
                                        input.slice(c.len(), at_end, c),
                                        output.slice(out_room(c), at_end, &[0]),
                                    ),
                                };
                                let job = job.with_iv(nonce).with_ad(&ad);
                                if t.is_empty() {
                                    job
                                } else {
                                    job.with_tag(Tag::In(&*tag.slice(t.len(), at_end, t)))
                                }
                            })
                            .collect();
                        let what = format!(
                            "{alg} {backend:?} {layout:?} at_end {at_end} lanes {lanes:?} \
                             sequential {sequential}"
                        );
                        let r = if sequential {
                            engine.process_sequential(alg, Op::Decrypt, &mut jobs)
                        } else {
                            engine.process(alg, Op::Decrypt, &mut jobs)
                        };
                        drop(jobs);
                        for (i, ((m, _, _), res)) in sealed.iter().zip(&r).enumerate() {
                            assert_eq!(*res, Ok(m.len()), "{what}: job {i}");
                        }
                        for ((_, output, _), (m, c, _)) in bufs.iter_mut().zip(&sealed) {
                            let n = match layout {
                                Layout::InPlace => c.len(),
                                Layout::Copy => out_room(c),
                            };
                            let got = output.contents(n, at_end);
                            assert_eq!(&got[..m.len()], &m[..], "{what}: len {}", m.len());
                        }
                        runs += sealed.len();
                    }
                }
            }
        }
    }
    assert!(runs > 1000, "{runs} openings");
}
