//! `comb bench` and `comb tune`: cycles per byte by the papers' method.
//!
//! * Method (papers/000 §4, papers/004 §5.1; `measure`, `timer`): TSC cycles from serialised
//!   reads; each figure is the median of 91 samples, each sample the average over 200 calls
//!   (`--samples`, `--calls`), after `--warmup` untimed calls; samples are taken round-robin
//!   over all configurations of a run; a quiet-host gate retakes samples taken while the core
//!   was shared (`--no-gate`); optional pinning (`--cpu N`). Results in TSC cycles/byte and
//!   core cycles/byte (TSC ticks per core cycle calibrated with a dependent add chain).
//! * Workloads (`workload`): fixed lengths, the realistic Internet mix, or a lengths file;
//!   `--batch` messages per call; `--lanes auto|N|A..B`.
//! * Engines (`engines`): `sequential` (our single-message path over the same messages),
//!   `comb` (our batch path); anchors (`openssl`, `ipsec-mb`, `rustcrypto`) behind the
//!   `anchors` feature. Every engine's output is checked against `sequential` before timing.
//! * Output (`table`, `output`, `plot`, `report`): terminal tables shaped like the papers',
//!   a progress bar, `--json FILE`, `--plot DIR` (PNG and SVG), and for the main job a
//!   `report/` directory with a Markdown summary.
//! * `comb bench` alone is the main job (≈ 3 minutes): every algorithm, sequential vs comb on
//!   the realistic mix, a lane sweep of the chained modes, cycles/byte against message length
//!   and heat maps of length × lanes for CBC and CMAC. `--quick` does the same in about half a
//!   minute.
//! * `comb bench --paper` (`paper`, `gf`): papers/000 Tables 3 and 4, papers/001 Table 2, with
//!   the papers' figures beside ours, and the shape of papers/000 Fig. 5 (the two GF(2^128)
//!   multiplication variants, one message against eight) and Table 9 (doubling).
//! * `comb tune` (`tune`): the best lane count per chained mode, stored in the library's
//!   tuning file (`comb::Tuning`), which `comb::Engine::new` and so `--lanes auto` apply.

use std::path::PathBuf;
use std::process::ExitCode;

#[cfg(feature = "anchors")]
mod anchors;
mod buffers;
mod engines;
mod gf;
mod job;
mod measure;
mod output;
mod paper;
mod plot;
mod pngtext;
mod report;
mod session;
mod spec;
mod stats;
mod suite;
mod table;
pub(crate) mod timer;
mod tune;
mod workload;

/// Default seed of the workloads (ASCII "comb").
pub const DEFAULT_SEED: u64 = 0x636f_6d62;

/// `comb bench`: measure cycles per byte.
#[derive(clap::Args, Debug)]
#[command(after_help = "\
With no workload options (--alg, --op, --dist, --lengths, --lengths-file, --batch, --lanes) this \
is the main job: every algorithm, sequential vs comb on the realistic mix, a lane sweep, \
cycles/byte against length and length x lanes heat maps (CBC, CMAC), about 3 minutes (--quick: about 20 seconds), \
written to report/ (summary.md, results.json, PNG and SVG plots).

Examples:
  comb bench
  comb bench --quick --json out.json
  comb bench --alg aes-cbc --lanes 1..16 --dist fixed --lengths 2048
  comb bench --alg aes-ctr,aes-ofb --op both --dist file --lengths-file sizes.txt --plot plots
  comb bench --alg aes-gcm,aes-ccm --ad-len 13 --engines sequential,comb,ipsec-mb
  comb bench --paper")]
pub struct Args {
    /// The options, boxed so the subcommand enum stays small.
    #[command(flatten)]
    pub opts: Box<Options>,
}

/// The options of `comb bench`.
#[derive(clap::Args, Debug)]
pub struct Options {
    /// Algorithms: `all` or a comma list of IDs (`comb info` lists them: aes-ecb, aes-cbc,
    /// aes-ctr, aes-cmac, aes-gcm, aes-ccm, aes-ocb3, aes128-otr, aes128-cloc, aes128-poet,
    /// ...). Default: all.
    #[arg(long, value_name = "LIST")]
    pub alg: Option<String>,
    /// Operation: encrypt, decrypt or both (for CMAC: generate / verify the tag). Default:
    /// encrypt.
    #[arg(long, value_name = "OP")]
    pub op: Option<String>,
    /// Message lengths: realistic (the Internet mix of papers/000), fixed (--lengths) or file
    /// (--lengths-file). Default: realistic, or fixed when --lengths is given.
    #[arg(long, value_name = "DIST")]
    pub dist: Option<String>,
    /// Fixed message lengths in bytes, comma separated (default 128,256,512,1024,2048); or a
    /// file of lengths, one per line.
    #[arg(long, value_name = "LIST|FILE")]
    pub lengths: Option<String>,
    /// File of message lengths, one per line (`#` comments allowed); implies --dist file.
    #[arg(long, value_name = "FILE")]
    pub lengths_file: Option<PathBuf>,
    /// Messages per call. Default: 64.
    #[arg(long, value_name = "N")]
    pub batch: Option<usize>,
    /// Bytes of associated data per message for the AEAD modes (random, the same length for
    /// every message; not counted in the bytes of cycles per byte; the other modes take none).
    /// Default: 0, as in the papers, which time the message blocks. At most 1 MiB;
    /// intel-ipsec-mb's CCM takes at most 46.
    #[arg(long, value_name = "BYTES", default_value_t = 0)]
    pub ad_len: usize,
    /// Lanes of the comb engine: auto (tuned value or library default), N, or a range A..B
    /// (inclusive) to sweep; comma lists allowed.
    #[arg(long, value_name = "auto|N|A..B")]
    pub lanes: Option<String>,
    /// Engines, comma separated: sequential, comb; with the anchors feature also openssl,
    /// ipsec-mb, rustcrypto. Default: sequential,comb, and for the main job every anchor
    /// built in.
    #[arg(long, value_name = "LIST")]
    pub engines: Option<String>,
    /// Samples per figure (the median is reported). Default: 91.
    #[arg(long, value_name = "N")]
    pub samples: Option<usize>,
    /// Calls per sample (a sample is their average). Default: 200.
    #[arg(long, value_name = "N")]
    pub calls: Option<usize>,
    /// Untimed calls before every sample. Default: 10.
    #[arg(long, value_name = "N")]
    pub warmup: Option<usize>,
    /// Pin the measuring thread to this CPU.
    #[arg(long, value_name = "N")]
    pub cpu: Option<usize>,
    /// Turn off the quiet-host gate (no probes, no retaken samples).
    #[arg(long)]
    pub no_gate: bool,
    /// Write the results as JSON.
    #[arg(long, value_name = "FILE")]
    pub json: Option<PathBuf>,
    /// Write plots (PNG and SVG) into this directory.
    #[arg(long, value_name = "DIR")]
    pub plot: Option<PathBuf>,
    /// Write a report directory (summary.md, results.json, plots). Default for the main job:
    /// report.
    #[arg(long, value_name = "DIR")]
    pub report: Option<PathBuf>,
    /// Do not write the main job's report directory.
    #[arg(long)]
    pub no_report: bool,
    /// Fewer and shorter samples (31 of 60 calls; 15 of 24 in the sweeps) and coarser sweeps
    /// (lanes 1, 2, 3 and even counts; lengths 32, 128, 512, 2048): the main job in about 20 s.
    #[arg(long)]
    pub quick: bool,
    /// Reproduce the shape of papers/000 Tables 3 and 4, Fig. 5 and Table 9, and papers/001
    /// Table 2.
    #[arg(long, conflicts_with_all = ["alg", "op", "dist", "lengths", "lengths_file", "lanes", "batch", "ad_len"])]
    pub paper: bool,
    /// Seed of the workloads (lengths, data, keys).
    #[arg(long, value_name = "N", default_value_t = DEFAULT_SEED)]
    pub seed: u64,
    /// AES key size in bits: 128, 192 or 256.
    #[arg(long, value_name = "BITS", default_value_t = 128)]
    pub key_bits: usize,
    /// Keys a batch: message `i` of each batch takes key `i mod N` (all from the seed), as
    /// packets of N flows would. Our engines only: the anchors take one key a batch and are
    /// left out. At most 4096.
    #[arg(long, value_name = "N", default_value_t = 1)]
    pub keys: usize,
}

/// `comb tune`: find the best lane count per chained mode and store it.
#[derive(clap::Args, Debug)]
#[command(after_help = "\
Sweeps lanes 1..16 for every chained mode (CBC, CBC-PKCS7 and CFB encryption; OFB and CMAC \
both ways) on the realistic mix, batch 64, and keeps the fastest (the smallest P within 1% of \
the fastest, for latency). Writes the library's tuning file: $COMB_TUNING, else \
$XDG_CONFIG_HOME/comb/lanes.txt, else ~/.config/comb/lanes.txt; one line per mode:
  ni aes-cbc encrypt 9  # 0.485 TSC cycles/byte
comb::Engine::new() applies it (so does `comb bench --lanes auto`); `comb info` shows it.")]
pub struct TuneArgs {
    /// Write the tuning file here instead of the library's location.
    #[arg(long, value_name = "FILE")]
    pub out: Option<PathBuf>,
    /// Largest lane count tried. Default: twice the backend's default lanes (ni 16, vaes256
    /// 32: two lanes per register).
    #[arg(long, value_name = "P")]
    pub max_lanes: Option<usize>,
    /// Messages per call.
    #[arg(long, value_name = "N", default_value_t = 64)]
    pub batch: usize,
    /// Samples per figure. Default: 91 (31 with --quick).
    #[arg(long, value_name = "N")]
    pub samples: Option<usize>,
    /// Calls per sample. Default: 200 (100 with --quick).
    #[arg(long, value_name = "N")]
    pub calls: Option<usize>,
    /// Fewer samples (about 15 s).
    #[arg(long)]
    pub quick: bool,
    /// Pin the measuring thread to this CPU.
    #[arg(long, value_name = "N")]
    pub cpu: Option<usize>,
    /// Turn off the quiet-host gate.
    #[arg(long)]
    pub no_gate: bool,
    /// Print the table but do not write the file.
    #[arg(long)]
    pub dry_run: bool,
    /// Seed of the workload.
    #[arg(long, value_name = "N", default_value_t = DEFAULT_SEED)]
    pub seed: u64,
}

/// Runs `comb bench`.
pub fn run(a: Args) -> Result<ExitCode, String> {
    job::run(a)
}

/// Runs `comb tune`.
pub fn tune(a: TuneArgs) -> Result<ExitCode, String> {
    tune::run(a)
}
