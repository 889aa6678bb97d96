//! Anchors (feature `anchors`): the reference implementations of crate `comb-anchors`
//! (OpenSSL 3 one message at a time, intel-ipsec-mb's multi-buffer job manager, RustCrypto
//! one message at a time) as bench engines.
//!
//! An anchor copies a batch into its own buffers when it is prepared, so every pool slot of a
//! configuration gets its own prepared anchor ([`Prepared::load`], untimed); a timed call is
//! one `Anchor::run` over the whole batch. Outputs are brought back by [`Prepared::collect`]
//! and compared with the sequential engine's before anything is timed, like every engine's.

use super::engines::{Batch, BenchEngine, KeySet, Prepared};
use comb::{Algorithm, Op};
use comb_anchors::{Anchor, Msg};

/// The anchor called `name` (one of [`super::engines::ANCHORS`]); an error if its library is
/// not available in this build or on this machine.
pub fn by_name(name: &str) -> Result<Box<dyn BenchEngine>, String> {
    let probe = comb_anchors::open(name)?;
    Ok(Box::new(AnchorEngine {
        name: name.to_string(),
        probe,
    }))
}

struct AnchorEngine {
    name: String,
    /// An instance to answer `supports`.
    probe: Box<dyn Anchor>,
}

impl BenchEngine for AnchorEngine {
    fn name(&self) -> &str {
        &self.name
    }

    fn supports(&self, alg: Algorithm, op: Op) -> bool {
        self.probe.supports(alg.id(), op == Op::Encrypt)
    }

    fn has_lanes(&self) -> bool {
        false
    }

    fn default_lanes(&self, _alg: Algorithm, _op: Op) -> Option<usize> {
        None
    }

    fn prepare(
        &self,
        alg: Algorithm,
        op: Op,
        keys: &KeySet,
        _lanes: Option<usize>,
    ) -> Result<Box<dyn Prepared>, String> {
        // One key a batch (the default `takes_keys`): the suite skips the others.
        if keys.count() != 1 {
            return Err(format!("{} takes one key a batch", self.name));
        }
        Ok(Box::new(AnchorPrepared {
            name: self.name.clone(),
            alg,
            op,
            key: keys.of(0).to_vec(),
            slots: Vec::new(),
        }))
    }
}

struct AnchorPrepared {
    name: String,
    alg: Algorithm,
    op: Op,
    key: Vec<u8>,
    /// One prepared anchor per pool slot.
    slots: Vec<Option<Box<dyn Anchor>>>,
}

impl Prepared for AnchorPrepared {
    fn load(&mut self, slot: usize, batch: &Batch) -> Result<(), String> {
        let mut anchor = comb_anchors::open(&self.name)?;
        let msgs: Vec<Msg<'_>> = (0..batch.data.len())
            .map(|i| Msg {
                key: &self.key,
                iv: &batch.ivs[i],
                input: batch.data.input(i),
                ad: batch.ad.get(i),
            })
            .collect();
        anchor
            .prepare(self.alg.id(), self.op == Op::Encrypt, &msgs)
            .map_err(|e| {
                // Most of the anchors' messages already start with their name.
                if e.starts_with(&self.name) {
                    e
                } else {
                    format!("{}: {e}", self.name)
                }
            })?;
        if self.slots.len() <= slot {
            self.slots.resize_with(slot + 1, || None);
        }
        self.slots[slot] = Some(anchor);
        Ok(())
    }

    fn run(&mut self, slot: usize, _batch: &mut Batch) -> bool {
        match self.slots.get_mut(slot) {
            Some(Some(a)) => a.run().is_ok(),
            _ => false,
        }
    }

    fn collect(&self, slot: usize, batch: &mut Batch) {
        let Some(Some(a)) = self.slots.get(slot) else {
            return;
        };
        let outs = a.outputs();
        if self.alg.is_mac() {
            for (t, o) in batch.tags.iter_mut().zip(outs) {
                let n = o.len().min(16);
                t[..n].copy_from_slice(&o[..n]);
            }
            batch.out_lens.iter_mut().for_each(|n| *n = 0);
            return;
        }
        let aead = self.alg.is_aead();
        for ((((_, dst), n), o), t) in batch
            .data
            .io_mut()
            .zip(batch.out_lens.iter_mut())
            .zip(outs)
            .zip(batch.tags.iter_mut())
        {
            // AEAD anchors (GCM, CCM) return ciphertext ‖ 16-byte tag.
            let (o, tag) = if aead && o.len() >= 16 {
                o.split_at(o.len() - 16)
            } else {
                (&o[..], &[][..])
            };
            let k = o.len().min(dst.len());
            dst[..k].copy_from_slice(&o[..k]);
            *n = o.len();
            t[..tag.len()].copy_from_slice(tag);
        }
    }
}
