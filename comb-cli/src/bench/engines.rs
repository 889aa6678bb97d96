//! What gets measured: an *engine* runs one call (a whole batch) of one algorithm.
//!
//! [`BenchEngine`] is the plug-in point. `sequential` (our single-message path, message after
//! message) and `comb` (our batch path) live here; the anchors `openssl`, `ipsec-mb` and
//! `rustcrypto` plug in behind the cargo feature `anchors` (see `anchors.rs`). An engine sees
//! only plain bytes ([`Batch`]), so an implementation on top of a C library needs nothing of
//! ours but the algorithm ID.
//!
//! Before anything is timed every engine's output is compared byte for byte with the
//! `sequential` engine's ([`verify`]).

use super::buffers::Buffers;
use super::workload::{round_len, Rng};
use comb::{AesKey, Algorithm, Engine, Job, Op, Tag};

/// Engines built into every `comb`.
pub const BUILTIN: &[&str] = &["sequential", "comb"];

/// Engines provided by the `anchors` feature (crate `comb-anchors`).
pub const ANCHORS: &[&str] = &["openssl", "ipsec-mb", "rustcrypto"];

/// The keys of a configuration: message `i` of every batch takes key `i mod n` (`--keys n`),
/// as a batch of packets of `n` flows would.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct KeySet(Vec<Vec<u8>>);

impl KeySet {
    /// One key for every message.
    #[cfg(test)]
    pub fn one(key: &[u8]) -> KeySet {
        KeySet(vec![key.to_vec()])
    }

    /// `keys` in turn, message by message (at least one, all of one length).
    pub fn cycle(keys: Vec<Vec<u8>>) -> KeySet {
        assert!(!keys.is_empty(), "at least one key");
        assert!(
            keys.iter().all(|k| k.len() == keys[0].len()),
            "keys of one length"
        );
        KeySet(keys)
    }

    /// How many keys.
    pub fn count(&self) -> usize {
        self.0.len()
    }

    /// The key of message `i`.
    #[cfg(any(test, feature = "anchors"))]
    pub fn of(&self, i: usize) -> &[u8] {
        &self.0[i % self.0.len()]
    }

    /// The keys in turn order.
    pub fn all(&self) -> &[Vec<u8>] {
        &self.0
    }
}

/// The data of one call: input `i` of `data` (with `ivs[i]`, and for AEAD modes the associated
/// data `ad.get(i)`) is processed into output `i` (cipher modes) or `tags[i]` (MACs:
/// written on encrypt, checked on decrypt).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Batch {
    pub data: Buffers,
    pub ivs: Vec<[u8; 16]>,
    pub tags: Vec<[u8; 16]>,
    /// Bytes written per message (the plaintext length for PKCS#7 decryption).
    pub out_lens: Vec<usize>,
    /// Every message's associated data (AEAD modes).
    pub ad: AssociatedData,
}

/// The associated data of a batch's messages: the same number of bytes each, back to back.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct AssociatedData {
    bytes: Vec<u8>,
    len: usize,
}

impl AssociatedData {
    /// The associated data of message `i` (empty unless the run gives AEAD modes some).
    pub fn get(&self, i: usize) -> &[u8] {
        &self.bytes[i * self.len..(i + 1) * self.len]
    }
}

impl Batch {
    /// A zeroed batch with inputs of `in_lens` bytes, outputs of `out_lens` bytes and
    /// `ad_len` bytes of associated data per message.
    pub fn new(in_lens: &[usize], out_lens: &[usize], ad_len: usize) -> Batch {
        let n = in_lens.len();
        Batch {
            data: Buffers::new(in_lens, out_lens),
            ivs: vec![[0u8; 16]; n],
            tags: vec![[0u8; 16]; n],
            out_lens: vec![0; n],
            ad: AssociatedData {
                bytes: vec![0u8; n * ad_len],
                len: ad_len,
            },
        }
    }

    /// Input bytes of one call: the denominator of cycles per byte. The associated data is
    /// not counted, as in intel-ipsec-mb's and OpenSSL's own benchmarks.
    pub fn bytes(&self) -> u64 {
        self.data.bytes()
    }
}

/// A way to run batches of an algorithm (`--engines NAME`).
pub trait BenchEngine {
    /// The name used on the command line and in the results.
    fn name(&self) -> &str;

    /// Whether this engine implements `alg`/`op` (an anchor may lack some modes).
    fn supports(&self, alg: Algorithm, op: Op) -> bool;

    /// Whether a lane count means something for this engine (sweeps skip it otherwise).
    fn has_lanes(&self) -> bool;

    /// The lane count used for `alg`/`op` when `lanes` is `None` (its default).
    fn default_lanes(&self, alg: Algorithm, op: Op) -> Option<usize>;

    /// Whether this engine takes batches of `n` keys ([`KeySet`]); by default only one.
    fn takes_keys(&self, n: usize) -> bool {
        n == 1
    }

    /// Untimed setup for one configuration: key expansion, contexts, the lane count.
    fn prepare(
        &self,
        alg: Algorithm,
        op: Op,
        keys: &KeySet,
        lanes: Option<usize>,
    ) -> Result<Box<dyn Prepared>, String>;
}

/// A configured engine: one [`Prepared::run`] is one timed call.
///
/// A configuration cycles through a small pool of batches; `slot` says which one a call is
/// for, so an engine that keeps its own copy of each batch (an anchor library with its own
/// buffers) can set it up once in [`Prepared::load`], outside the timed region.
pub trait Prepared {
    /// Untimed: get ready to process `batch` as pool slot `slot` (nothing by default).
    fn load(&mut self, _slot: usize, _batch: &Batch) -> Result<(), String> {
        Ok(())
    }

    /// One timed call: processes every message of slot `slot` (whose data is `batch`);
    /// `false` if any message failed.
    fn run(&mut self, slot: usize, batch: &mut Batch) -> bool;

    /// Untimed: puts slot `slot`'s results into `batch` (outputs, tags, output lengths) for
    /// verification; nothing to do for engines that write into `batch` directly.
    fn collect(&self, _slot: usize, _batch: &mut Batch) {}
}

/// Looks an engine up by name.
pub fn by_name(name: &str) -> Result<Box<dyn BenchEngine>, String> {
    match name {
        "sequential" => Ok(Box::new(Ours::new(false)?)),
        "comb" => Ok(Box::new(Ours::new(true)?)),
        anchor if ANCHORS.contains(&anchor) => anchor_by_name(anchor),
        other => Err(format!(
            "unknown engine {other:?} (engines: {}, and with the anchors feature: {})",
            BUILTIN.join(", "),
            ANCHORS.join(", ")
        )),
    }
}

#[cfg(feature = "anchors")]
fn anchor_by_name(name: &str) -> Result<Box<dyn BenchEngine>, String> {
    super::anchors::by_name(name)
}

#[cfg(not(feature = "anchors"))]
fn anchor_by_name(name: &str) -> Result<Box<dyn BenchEngine>, String> {
    Err(format!(
        "engine {name:?} is an anchor, and this comb was built without the anchors feature \
         (rebuild with `cargo build --release -p comb-cli --features anchors`)"
    ))
}

/// Our two engines: the single-message path over the batch, or the batch path.
struct Ours {
    engine: Engine,
    batch_path: bool,
}

impl Ours {
    fn new(batch_path: bool) -> Result<Ours, String> {
        Ok(Ours {
            engine: Engine::new().map_err(|e| e.to_string())?,
            batch_path,
        })
    }
}

impl BenchEngine for Ours {
    fn name(&self) -> &str {
        if self.batch_path {
            "comb"
        } else {
            "sequential"
        }
    }

    fn supports(&self, _alg: Algorithm, _op: Op) -> bool {
        true
    }

    fn has_lanes(&self) -> bool {
        self.batch_path
    }

    fn default_lanes(&self, alg: Algorithm, op: Op) -> Option<usize> {
        self.batch_path.then(|| self.engine.lanes(alg, op))
    }

    fn takes_keys(&self, _n: usize) -> bool {
        true
    }

    fn prepare(
        &self,
        alg: Algorithm,
        op: Op,
        keys: &KeySet,
        lanes: Option<usize>,
    ) -> Result<Box<dyn Prepared>, String> {
        let engine = match lanes {
            Some(p) if self.batch_path => self.engine.with_lanes(p).map_err(|e| e.to_string())?,
            _ => self.engine,
        };
        let mut keys = keys
            .all()
            .iter()
            .map(|k| AesKey::new(k).map_err(|e| e.to_string()));
        let key = keys
            .next()
            .unwrap_or_else(|| unreachable!("a KeySet has a key"))?;
        Ok(Box::new(OursPrepared {
            engine,
            key,
            more: keys.collect::<Result<Vec<_>, _>>()?,
            alg,
            op,
            batch_path: self.batch_path,
        }))
    }
}

struct OursPrepared {
    engine: Engine,
    /// The first key: the one-key jobs take it as they did before `--keys` existed (see
    /// [`OursPrepared::build_jobs`]).
    key: AesKey,
    /// The other keys: message `i` takes key `i mod (1 + more.len())`, the first one `key`.
    more: Vec<AesKey>,
    alg: Algorithm,
    op: Op,
    batch_path: bool,
}

impl Prepared for OursPrepared {
    fn run(&mut self, _slot: usize, b: &mut Batch) -> bool {
        // The jobs of a batch of up to 64 go on the stack, as a caller on a hot path would
        // keep them: a vector of them was a heap allocation and free per call.
        let results = if b.data.len() <= STACK_JOBS {
            let mut jobs = arrayvec::ArrayVec::<Job<'_>, STACK_JOBS>::new();
            self.jobs_of(b, &mut jobs);
            self.process(&mut jobs)
        } else {
            let mut jobs = Vec::with_capacity(b.data.len());
            self.jobs_of(b, &mut jobs);
            self.process(&mut jobs)
        };
        let mut ok = true;
        for (r, n) in results.iter().zip(b.out_lens.iter_mut()) {
            match r {
                Ok(len) => *n = *len,
                Err(_) => ok = false,
            }
        }
        ok
    }
}

/// Batches of up to this many messages build their jobs on the stack.
const STACK_JOBS: usize = 64;

impl OursPrepared {
    /// One job per message of `b`, appended to `jobs`: under the one key, or the keys in turn.
    fn jobs_of<'a>(&'a self, b: &'a mut Batch, jobs: &mut impl Extend<Job<'a>>) {
        if self.more.is_empty() {
            self.build_jobs(b, jobs);
            return;
        }
        let n = b.data.len();
        let keys = core::iter::once(&self.key)
            .chain(&self.more)
            .cycle()
            .take(n);
        if n <= STACK_JOBS {
            let turn: arrayvec::ArrayVec<&AesKey, STACK_JOBS> = keys.collect();
            self.build_keyed_jobs(b, jobs, &turn);
        } else {
            let turn: Vec<&AesKey> = keys.collect();
            self.build_keyed_jobs(b, jobs, &turn);
        }
    }

    /// One job per message of `b` under `key`, appended to `jobs`.
    ///
    /// [`OursPrepared::build_keyed_jobs`] does the same with a key per message; the one-key
    /// jobs are not built through it. With each message's key picked beside the messages (by a
    /// closure of its index, from a slice, or from a repeating iterator), the timed calls of
    /// 64-byte GCM, OCB3 and CCM batches ran 11-42% slower (Zen 5, three alternated pairs
    /// each), though the jobs were the same.
    fn build_jobs<'a>(&'a self, b: &'a mut Batch, jobs: &mut impl Extend<Job<'a>>) {
        let key = &self.key;
        if self.alg.is_mac() {
            for (m, t) in b.data.inputs().zip(b.tags.iter_mut()) {
                jobs.extend(Some(Job::mac(key, m).with_tag(self.mac_tag(t))));
            }
        } else {
            let (iv_len, tag_len) = self.iv_and_tag_lens();
            let ad = &b.ad;
            let ads = (0..b.ivs.len()).map(|i| ad.get(i));
            let io = b.data.io_mut().zip(&b.ivs).zip(ads);
            let base =
                io.map(|(((m, o), iv), a)| Job::copy(key, m, o).with_ad(a).with_iv(&iv[..iv_len]));
            self.extend_tagged(jobs, base, &mut b.tags, tag_len);
        }
    }

    /// [`OursPrepared::build_jobs`] with message `i` under `keys[i]`.
    fn build_keyed_jobs<'a>(
        &'a self,
        b: &'a mut Batch,
        jobs: &mut impl Extend<Job<'a>>,
        keys: &[&'a AesKey],
    ) {
        if self.alg.is_mac() {
            for ((m, t), &key) in b.data.inputs().zip(b.tags.iter_mut()).zip(keys) {
                jobs.extend(Some(Job::mac(key, m).with_tag(self.mac_tag(t))));
            }
        } else {
            let (iv_len, tag_len) = self.iv_and_tag_lens();
            let ad = &b.ad;
            let ads = (0..b.ivs.len()).map(|i| ad.get(i));
            let io = b.data.io_mut().zip(&b.ivs).zip(ads).zip(keys);
            let base = io.map(|((((m, o), iv), a), &key)| {
                Job::copy(key, m, o).with_ad(a).with_iv(&iv[..iv_len])
            });
            self.extend_tagged(jobs, base, &mut b.tags, tag_len);
        }
    }

    /// A MAC's tag: written on encrypt, checked on decrypt.
    fn mac_tag<'a>(&self, t: &'a mut [u8; 16]) -> Tag<'a> {
        match self.op {
            Op::Encrypt => Tag::Out(&mut t[..]),
            Op::Decrypt => Tag::In(&t[..]),
        }
    }

    /// The algorithm's usual IV length (16; AES-GCM's 12-byte nonce) from the 16 bytes, and
    /// for AEAD modes the detached tag's (the algorithm's default length; Julius has none; 0
    /// for the others). Settled once per call: inside the loop it was a branch or table
    /// lookup per message.
    fn iv_and_tag_lens(&self) -> (usize, usize) {
        let tag_len = match self.alg.tag_lens() {
            Some((_, _, d)) if self.alg.is_aead() => d,
            _ => 0,
        };
        (self.alg.iv_len(), tag_len)
    }

    /// Appends the jobs of `base` to `jobs`, each with its detached tag (`tag_len` bytes of
    /// `tags`, written on encrypt, checked on decrypt), or none when `tag_len` is 0.
    fn extend_tagged<'a>(
        &self,
        jobs: &mut impl Extend<Job<'a>>,
        base: impl Iterator<Item = Job<'a>>,
        tags: &'a mut [[u8; 16]],
        tag_len: usize,
    ) {
        match (tag_len, self.op) {
            (0, _) => jobs.extend(base),
            (_, Op::Encrypt) => jobs.extend(
                base.zip(tags.iter_mut())
                    .map(|(job, t)| job.with_tag(Tag::Out(&mut t[..tag_len]))),
            ),
            (_, Op::Decrypt) => jobs.extend(
                base.zip(tags.iter())
                    .map(|(job, t)| job.with_tag(Tag::In(&t[..tag_len]))),
            ),
        }
    }

    fn process(&self, jobs: &mut [Job<'_>]) -> Vec<comb::JobResult> {
        if self.batch_path {
            self.engine.process(self.alg, self.op, jobs)
        } else {
            self.engine.process_sequential(self.alg, self.op, jobs)
        }
    }
}

/// The associated data each message of `alg` gets when the run asks for `ad_len` bytes: all
/// of it for an AEAD mode, none for the others.
pub fn ad_len_for(alg: Algorithm, ad_len: usize) -> usize {
    if alg.is_aead() {
        ad_len
    } else {
        0
    }
}

/// Builds the batches of one configuration from raw lengths: lengths rounded for the mode,
/// random data, IVs and (AEAD modes, [`ad_len_for`]) `ad_len` bytes of associated data per
/// message from `seed`. Decryption inputs are made valid where validity matters: PKCS#7
/// ciphertexts are encryptions of random plaintexts one byte shorter, and CMAC verification
/// and AEAD decryption get the right tags (message `i` under key `keys.of(i)`).
pub fn build_batches(
    alg: Algorithm,
    op: Op,
    keys: &KeySet,
    raw: &[Vec<usize>],
    seed: u64,
    ad_len: usize,
) -> Result<Vec<Batch>, String> {
    let ad_len = ad_len_for(alg, ad_len);
    if ad_len > alg.max_ad_len() {
        return Err(format!(
            "{}: {ad_len} bytes of associated data, more than its {}",
            alg.id(),
            alg.max_ad_len()
        ));
    }
    let mut rng = Rng::new(seed ^ 0x6461_7461); // "data"
    let mut out = Vec::with_capacity(raw.len());
    for lens in raw {
        let lens: Vec<usize> = lens.iter().map(|&l| round_len(alg, op, l)).collect();
        // AEAD decryption reads the ciphertexts of plaintexts of these lengths (longer for
        // AES-COPA and Julius).
        let plain = lens.clone();
        let lens: Vec<usize> = if alg.is_aead() && op == Op::Decrypt {
            lens.iter()
                .map(|&l| alg.output_len(Op::Encrypt, l))
                .collect()
        } else {
            lens
        };
        let outs: Vec<usize> = lens.iter().map(|&l| alg.output_len(op, l)).collect();
        let mut b = Batch::new(&lens, &outs, ad_len);
        for i in 0..lens.len() {
            rng.fill(b.data.input_mut(i));
            rng.fill(&mut b.ivs[i]);
            if alg == Algorithm::AesCtr {
                // Keep the low 32 bits of the counter from wrapping inside a message: the
                // 128-bit counter does not care, but intel-ipsec-mb increments 32 bits only.
                b.ivs[i][12] &= 0x7f;
            }
        }
        // After the data, so a batch's messages and IVs are the same whatever `ad_len`.
        rng.fill(&mut b.ad.bytes);
        let needs_valid_input =
            (alg == Algorithm::AesCbcPkcs7 || alg.is_mac() || alg.is_aead()) && op == Op::Decrypt;
        if needs_valid_input {
            // Make the inputs with the encrypt direction of the sequential engine: PKCS#7 of
            // len - 1 bytes is exactly len bytes.
            let plain: Vec<usize> = if alg.is_mac() || alg.is_aead() {
                plain
            } else {
                lens.iter().map(|&l| l - 1).collect()
            };
            let ct: Vec<usize> = plain
                .iter()
                .map(|&l| alg.output_len(Op::Encrypt, l))
                .collect();
            let mut enc = Batch::new(&plain, &ct, ad_len);
            for (i, &n) in plain.iter().enumerate() {
                enc.data.input_mut(i).copy_from_slice(&b.data.input(i)[..n]);
            }
            enc.ivs.clone_from(&b.ivs);
            enc.ad.clone_from(&b.ad);
            let mut p = Ours::new(false)?.prepare(alg, Op::Encrypt, keys, None)?;
            if !p.run(0, &mut enc) {
                return Err(format!("{}: preparing decryption inputs failed", alg.id()));
            }
            if alg.is_mac() {
                b.tags = enc.tags;
            } else {
                for i in 0..lens.len() {
                    b.data.input_mut(i).copy_from_slice(enc.data.output(i));
                }
                if alg.is_aead() {
                    b.tags = enc.tags;
                }
            }
        }
        out.push(b);
    }
    Ok(out)
}

/// Loads every batch of a configuration's pool into `engine`, slot `i` for `pool[i]`
/// (untimed). An error is the engine refusing the workload (an anchor's library limit, such as
/// intel-ipsec-mb's 46 bytes of CCM associated data), not a wrong result.
pub fn load_pool(engine: &mut dyn Prepared, pool: &[Batch]) -> Result<(), String> {
    for (slot, b) in pool.iter().enumerate() {
        engine.load(slot, b)?;
    }
    Ok(())
}

/// Runs `engine`, with `batches` loaded ([`load_pool`]), once over copies of them and compares
/// every output byte, output length and tag with the `sequential` engine's. Errors name the
/// first difference.
pub fn verify(
    engine: &mut dyn Prepared,
    engine_name: &str,
    alg: Algorithm,
    op: Op,
    keys: &KeySet,
    batches: &[Batch],
) -> Result<(), String> {
    let mut reference = Ours::new(false)?.prepare(alg, op, keys, None)?;
    for (bi, b) in batches.iter().enumerate() {
        let mut want = b.clone();
        if !reference.run(bi, &mut want) {
            return Err(format!(
                "{}/{op}: the sequential engine rejected a message of the workload",
                alg.id()
            ));
        }
        let mut got = b.clone();
        if !engine.run(bi, &mut got) {
            return Err(format!(
                "{}/{op}: engine {engine_name} reported an error",
                alg.id()
            ));
        }
        engine.collect(bi, &mut got);
        for i in 0..b.data.len() {
            let n = want.out_lens[i];
            let (g, w) = (got.data.output(i), want.data.output(i));
            let same = got.out_lens[i] == n
                && g[..n.min(g.len())] == w[..n.min(w.len())]
                && got.tags[i] == want.tags[i];
            if !same {
                return Err(format!(
                    "{}/{op}: engine {engine_name} differs from sequential on message {i} of \
                     batch {bi} ({} bytes); nothing was timed",
                    alg.id(),
                    b.data.input(i).len()
                ));
            }
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn unknown_and_anchor_names() {
        assert!(by_name("nope").err().unwrap().contains("unknown engine"));
        #[cfg(not(feature = "anchors"))]
        for a in ANCHORS {
            let e = by_name(a).err().unwrap();
            assert!(e.contains("built without the anchors feature"), "{e}");
        }
    }

    // Correctness of the comparison only; nothing is timed.
    #[test]
    fn comb_agrees_with_sequential_on_every_mode() {
        let raw = vec![vec![0, 16, 40, 100, 1400, 33], vec![1500, 1, 2, 3]];
        let comb = by_name("comb").unwrap();
        for &alg in Algorithm::ALL {
            let key = vec![7u8; alg.key_lens()[0]];
            let keys = KeySet::one(&key);
            for op in [Op::Encrypt, Op::Decrypt] {
                for ad_len in [0, 13] {
                    let batches = build_batches(alg, op, &keys, &raw, 1, ad_len).unwrap();
                    for (b, r) in batches.iter().zip(&raw) {
                        assert_eq!(b.data.len(), r.len());
                        if alg.needs_whole_blocks(op) {
                            assert!(b.data.inputs().all(|m| m.len() % 16 == 0));
                        }
                        let want = ad_len_for(alg, ad_len);
                        assert!((0..r.len()).all(|i| b.ad.get(i).len() == want));
                    }
                    let mut p = comb.prepare(alg, op, &keys, Some(3)).unwrap();
                    load_pool(p.as_mut(), &batches).unwrap();
                    verify(p.as_mut(), "comb", alg, op, &keys, &batches).unwrap();
                }
            }
        }
    }

    /// `--keys`: with three keys in turn, every mode's batch path agrees with the sequential
    /// engine (decryption inputs made under the same keys), and the keys reach the jobs:
    /// message 0 is as under the first key alone, messages 1 and 2 are not.
    #[test]
    fn several_keys_reach_the_jobs() {
        let raw = vec![vec![40, 100, 1400, 33, 0]];
        let comb = by_name("comb").unwrap();
        for &alg in Algorithm::ALL {
            let n = alg.key_lens()[0];
            let keys = KeySet::cycle((1..=3).map(|k| vec![k as u8; n]).collect());
            let first = KeySet::one(keys.of(0));
            assert_eq!((keys.count(), keys.of(4)), (3, keys.of(1)));
            for op in [Op::Encrypt, Op::Decrypt] {
                let batches = build_batches(alg, op, &keys, &raw, 3, 0).unwrap();
                let mut p = comb.prepare(alg, op, &keys, None).unwrap();
                load_pool(p.as_mut(), &batches).unwrap();
                verify(p.as_mut(), "comb", alg, op, &keys, &batches).unwrap();
            }
            let run = |k: &KeySet| {
                let mut b = build_batches(alg, Op::Encrypt, &keys, &raw, 3, 0)
                    .unwrap()
                    .remove(0);
                let mut p = by_name("sequential")
                    .unwrap()
                    .prepare(alg, Op::Encrypt, k, None)
                    .unwrap();
                assert!(p.run(0, &mut b), "{}", alg.id());
                b
            };
            let (all, one) = (run(&keys), run(&first));
            let out = |b: &Batch, i: usize| (b.tags[i], b.data.output(i).to_vec());
            assert_eq!(out(&all, 0), out(&one, 0), "{}", alg.id());
            for i in 1..3 {
                assert_ne!(out(&all, i), out(&one, i), "{} message {i}", alg.id());
            }
        }
    }

    /// `--ad-len` reaches the jobs: an AEAD mode's tags change with the associated data (the
    /// messages and IVs do not), and decryption inputs made with it verify.
    #[test]
    fn associated_data_is_authenticated() {
        let raw = vec![vec![0, 40, 1400]];
        for &alg in Algorithm::ALL.iter().filter(|a| a.is_aead()) {
            let key = vec![3u8; alg.key_lens()[0]];
            let keys = KeySet::one(&key);
            let run = |ad_len: usize| {
                let mut b = build_batches(alg, Op::Encrypt, &keys, &raw, 5, ad_len)
                    .unwrap()
                    .remove(0);
                let mut p = by_name("sequential")
                    .unwrap()
                    .prepare(alg, Op::Encrypt, &keys, None)
                    .unwrap();
                assert!(p.run(0, &mut b), "{}", alg.id());
                b
            };
            let (plain, with_ad) = (run(0), run(13));
            assert_eq!(plain.data.input(2), with_ad.data.input(2));
            assert_eq!(plain.ivs, with_ad.ivs);
            // The tag (Julius has none: its ciphertext carries the authentication).
            let auth = |b: &Batch, i: usize| (b.tags[i], b.data.output(i).to_vec());
            for i in 0..3 {
                assert_ne!(
                    auth(&plain, i),
                    auth(&with_ad, i),
                    "{} message {i}",
                    alg.id()
                );
            }
            let dec = build_batches(alg, Op::Decrypt, &keys, &raw, 5, 13).unwrap();
            let mut p = by_name("comb")
                .unwrap()
                .prepare(alg, Op::Decrypt, &keys, None)
                .unwrap();
            let mut b = dec[0].clone();
            assert!(p.run(0, &mut b), "{}: decryption with AD", alg.id());
        }
        assert!(build_batches(
            Algorithm::AesCbc,
            Op::Encrypt,
            &KeySet::one(&[0; 16]),
            &raw,
            5,
            13
        )
        .unwrap()[0]
            .ad
            .get(1)
            .is_empty());
    }

    // With the anchors feature: every anchor agrees with the sequential engine wherever it
    // implements a mode (the same check `comb bench` makes before timing).
    #[cfg(feature = "anchors")]
    #[test]
    fn anchors_agree_with_sequential() {
        let raw = vec![vec![16, 48, 1504, 96], vec![64]];
        for name in ANCHORS {
            let Ok(engine) = by_name(name) else { continue };
            for &alg in Algorithm::ALL {
                let key = vec![9u8; alg.key_lens()[0]];
                let keys = KeySet::one(&key);
                for op in [Op::Encrypt, Op::Decrypt] {
                    if !engine.supports(alg, op) {
                        continue;
                    }
                    for ad_len in [0, 13] {
                        let batches = build_batches(alg, op, &keys, &raw, 2, ad_len).unwrap();
                        let mut p = engine.prepare(alg, op, &keys, None).unwrap();
                        load_pool(p.as_mut(), &batches).unwrap_or_else(|e| panic!("{name}: {e}"));
                        verify(p.as_mut(), name, alg, op, &keys, &batches)
                            .unwrap_or_else(|e| panic!("{name}: {e}"));
                    }
                }
            }
        }
    }

    #[test]
    fn verify_catches_a_wrong_engine() {
        struct Broken;
        impl Prepared for Broken {
            fn run(&mut self, _slot: usize, b: &mut Batch) -> bool {
                for ((_, o), n) in b.data.io_mut().zip(b.out_lens.iter_mut()) {
                    o.fill(0xaa);
                    *n = o.len();
                }
                true
            }
        }
        let key = [1u8; 16];
        let keys = KeySet::one(&key);
        let batches =
            build_batches(Algorithm::AesCtr, Op::Encrypt, &keys, &[vec![32]], 0, 0).unwrap();
        let e = verify(
            &mut Broken,
            "broken",
            Algorithm::AesCtr,
            Op::Encrypt,
            &keys,
            &batches,
        )
        .unwrap_err();
        assert!(e.contains("differs"), "{e}");
    }
}
