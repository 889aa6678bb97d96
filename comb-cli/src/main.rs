//! `comb`: known-answer vectors, JSON-lines batches, CPU information and benchmarks for the
//! Comb library.

use clap::{Parser, Subcommand};
use std::process::ExitCode;

mod batch;
mod bench;
mod ct;
mod info;
mod kat;
mod vectors;

#[derive(Parser, Debug)]
#[command(
    name = "comb",
    version,
    about = "Batched AES modes of operation (comb scheduler)"
)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand, Debug)]
enum Command {
    /// Check known-answer files through the single-message and the batch path.
    Vectors(vectors::Args),
    /// Process JSON Lines jobs from stdin as one batch; results on stdout in the same order.
    Batch(batch::Args),
    /// Show CPU features, the chosen backend and default lane counts.
    Info(info::Args),
    /// Measure cycles per byte (papers' method); with no arguments, the realistic packet mix.
    Bench(bench::Args),
    /// Measure the best lane count per mode on this CPU and store it.
    Tune(bench::TuneArgs),
    /// Look for timing leaks (dudect's method: fixed vs random inputs, Welch's t-test).
    Ct(ct::Args),
}

/// Restores the default action of SIGPIPE (terminate quietly), which the Rust runtime sets to
/// "ignore": otherwise `comb info | head` makes the next `println!` fail with EPIPE and panic,
/// where a Unix tool is expected to stop without a message.
#[cfg(target_os = "linux")]
fn default_sigpipe() {
    // SAFETY: `signal` with SIG_DFL installs no handler code; it runs before any thread is
    // started, and only changes what a write to a closed pipe does to this process.
    unsafe {
        libc::signal(libc::SIGPIPE, libc::SIG_DFL);
    }
}

#[cfg(not(target_os = "linux"))]
fn default_sigpipe() {}

fn main() -> ExitCode {
    default_sigpipe();
    let cli = Cli::parse();
    let result = match cli.command {
        Command::Vectors(a) => vectors::run(a),
        Command::Batch(a) => batch::run(a),
        Command::Info(a) => info::run(a),
        Command::Bench(a) => bench::run(a),
        Command::Tune(a) => bench::tune(a),
        Command::Ct(a) => ct::run(a),
    };
    match result {
        Ok(code) => code,
        Err(e) => {
            eprintln!("comb: {e}");
            ExitCode::from(2)
        }
    }
}
