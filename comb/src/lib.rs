//! # Comb: batched AES modes of operation
//!
//! Comb encrypts and authenticates **batches of independent messages** (packets, records)
//! and keeps the CPU's AES pipeline full even for modes that are sequential inside one
//! message (CBC encryption, CFB encryption, OFB, CMAC). It sorts the batch by length,
//! processes up to `P` messages side by side in *windows* of equal progress (the comb
//! scheduler of Bogdanov, Lauridsen and Tischhauser), and batches the messages' final blocks
//! (padding, tails, tags) too.
//!
//! ```
//! # fn main() -> Result<(), comb::Error> {
//! use comb::{AesKey, Algorithm, Engine, Job, Op};
//!
//! let engine = Engine::new()?; // the best backend (VAES, AES-NI), or COMB_BACKEND
//! let key = AesKey::new(&[0x42; 16])?;
//! let iv = [0u8; 16];
//! let mut packets: Vec<Vec<u8>> = vec![vec![1; 48], vec![2; 1440], vec![3; 0]];
//! let original = packets.clone();
//!
//! let mut jobs: Vec<Job> = packets
//!     .iter_mut()
//!     .map(|p| Job::in_place(&key, p).with_iv(&iv))
//!     .collect();
//! let results = engine.process(Algorithm::AesCbc, Op::Encrypt, &mut jobs);
//! assert!(results.iter().all(|r| r.is_ok()));
//!
//! // The batch path gives the same bytes as the single-message path.
//! let mut one = original[1].clone();
//! engine.process_one(Algorithm::AesCbc, Op::Encrypt, Job::in_place(&key, &mut one).with_iv(&iv))?;
//! assert_eq!(one, packets[1]);
//! # Ok(()) }
//! ```
//!
//! Layers: [`cpu`] (feature detection, backend choice), `aes` (key schedules and lane
//! kernels), [`sched`] (the pure planner and the executor), `modes` (one file per mode),
//! and the batch API ([`Engine`], [`Job`]).

#![deny(unsafe_op_in_unsafe_fn)]
#![warn(missing_debug_implementations)]

mod aes;
mod alg;
mod batch;
pub mod block;
pub mod cpu;
mod error;
pub mod gf128;
mod modes;
pub mod sched;
mod tune;

pub use aes::AesKey;
pub use alg::{Algorithm, Op};
pub use batch::{Data, Engine, Job, JobResult, Tag};
pub use cpu::{Backend, CpuFeatures};
pub use error::Error;
pub use tune::Tuning;

/// The README's Rust example, compiled and run as a doc test.
#[cfg(doctest)]
#[doc = include_str!("../../README.md")]
pub struct ReadmeDoctests;
