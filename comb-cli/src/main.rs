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

fn main() -> ExitCode {
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
