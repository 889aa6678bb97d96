//! `comb info` (to be written).

use std::process::ExitCode;

#[derive(clap::Args, Debug)]
pub struct Args {}

pub fn run(_a: Args) -> Result<ExitCode, String> {
    Err("not implemented yet".into())
}
