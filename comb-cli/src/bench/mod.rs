//! `comb bench` and `comb tune` (to be written).

use std::process::ExitCode;

#[derive(clap::Args, Debug)]
pub struct Args {}

#[derive(clap::Args, Debug)]
pub struct TuneArgs {}

pub fn run(_a: Args) -> Result<ExitCode, String> {
    Err("not implemented yet".into())
}

pub fn tune(_a: TuneArgs) -> Result<ExitCode, String> {
    Err("not implemented yet".into())
}
