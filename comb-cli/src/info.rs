//! `comb info [--json]`: the CPU features the library looks at, the backend it chooses (and
//! whether `COMB_BACKEND` forced it), and the default lane count P per algorithm and
//! operation, with whether the operation is chained (comb-scheduled) or parallel inside a
//! message.

use comb::{Algorithm, Backend, CpuFeatures, Engine, Op, Tuning};
use serde::Serialize;
use std::process::ExitCode;

/// Arguments of `comb info`.
#[derive(clap::Args, Debug)]
pub struct Args {
    /// Print one JSON object instead of text.
    #[arg(long)]
    pub json: bool,
}

/// Everything `comb info` reports.
#[derive(Serialize, Debug)]
struct Info {
    cpu_features: Vec<Feature>,
    /// The chosen backend, or `None` if no engine could be made.
    backend: Option<String>,
    /// Why the backend was chosen: `"auto"` (also for `COMB_BACKEND=auto`) or
    /// `"COMB_BACKEND=<value>"`.
    backend_source: String,
    /// The engine error, when there is no backend.
    backend_error: Option<String>,
    /// Every backend this build knows.
    backends: Vec<BackendInfo>,
    /// The `comb tune` file the engine reads lane counts from, and its state.
    tuning_file: Option<String>,
    /// `"absent"`, `"loaded"` or `"ignored: <reason>"`.
    tuning_state: String,
    algorithms: Vec<AlgInfo>,
}

#[derive(Serialize, Debug)]
struct Feature {
    name: &'static str,
    present: bool,
}

#[derive(Serialize, Debug)]
struct BackendInfo {
    name: &'static str,
    supported: bool,
}

#[derive(Serialize, Debug)]
struct AlgInfo {
    id: &'static str,
    encrypt: OpInfo,
    decrypt: OpInfo,
}

#[derive(Serialize, Debug)]
struct OpInfo {
    lanes: usize,
    chained: bool,
}

/// Collects the report.
fn gather() -> Info {
    let features = CpuFeatures::detect();
    let source = match std::env::var("COMB_BACKEND") {
        Ok(v) if !v.is_empty() && v != "auto" => format!("COMB_BACKEND={v}"),
        _ => "auto".to_string(),
    };
    let engine = Engine::new();
    let algorithms = match &engine {
        Ok(e) => Algorithm::ALL
            .iter()
            .map(|&alg| {
                let op = |op: Op| OpInfo {
                    lanes: e.lanes(alg, op),
                    chained: alg.is_chained(op),
                };
                AlgInfo {
                    id: alg.id(),
                    encrypt: op(Op::Encrypt),
                    decrypt: op(Op::Decrypt),
                }
            })
            .collect(),
        Err(_) => Vec::new(),
    };
    Info {
        cpu_features: features
            .list()
            .iter()
            .map(|&(name, present)| Feature { name, present })
            .collect(),
        backend: engine.as_ref().ok().map(|e| e.backend().to_string()),
        backend_source: source,
        backend_error: engine.as_ref().err().map(|e| e.to_string()),
        backends: Backend::ALL
            .iter()
            .map(|b| BackendInfo {
                name: b.name(),
                supported: b.is_supported(&features),
            })
            .collect(),
        tuning_file: Tuning::path().map(|p| p.display().to_string()),
        tuning_state: match Tuning::load() {
            Ok(None) => "absent".to_string(),
            Ok(Some(_)) => "loaded".to_string(),
            Err(e) => format!("ignored: {e}"),
        },
        algorithms,
    }
}

/// Writes the report as text.
fn print_text(info: &Info) {
    println!("CPU features:");
    for f in &info.cpu_features {
        println!("  {:<11} {}", f.name, if f.present { "yes" } else { "no" });
    }
    let known: Vec<String> = info
        .backends
        .iter()
        .map(|b| {
            let s = if b.supported {
                "supported"
            } else {
                "not supported here"
            };
            format!("{} ({s})", b.name)
        })
        .collect();
    println!("backends: {}", known.join(", "));
    match (&info.backend, &info.backend_error) {
        (Some(b), _) if info.backend_source == "auto" => {
            let names: Vec<&str> = comb::Backend::ALL.iter().map(|b| b.name()).collect();
            println!(
                "backend: {b} (best for this CPU; set COMB_BACKEND=auto|{} to override)",
                names.join("|")
            )
        }
        (Some(b), _) => println!(
            "backend: {b} (forced by {}; unset it for automatic choice)",
            info.backend_source
        ),
        (None, e) => println!(
            "backend: none ({}; {})",
            e.as_deref().unwrap_or("unknown error"),
            info.backend_source
        ),
    }
    if info.algorithms.is_empty() {
        return;
    }
    match &info.tuning_file {
        Some(p) => println!("tuning file: {p} ({})", info.tuning_state),
        None => println!("tuning file: none (no home directory)"),
    }
    println!("lanes (P) per algorithm and operation:");
    println!("  {:<15} {:<22} decrypt", "algorithm", "encrypt");
    let cell = |o: &OpInfo| {
        format!(
            "{} {}",
            o.lanes,
            if o.chained {
                "chained (comb)"
            } else {
                "parallel"
            }
        )
    };
    for a in &info.algorithms {
        println!(
            "  {:<15} {:<22} {}",
            a.id,
            cell(&a.encrypt),
            cell(&a.decrypt)
        );
    }
    println!("  (for aes-cmac, encrypt = compute the tag, decrypt = verify it)");
}

/// Runs `comb info`. Exit status 0; 2 (after printing the features) when no backend can run.
pub fn run(a: Args) -> Result<ExitCode, String> {
    let info = gather();
    if a.json {
        let s = serde_json::to_string_pretty(&info).map_err(|e| format!("writing JSON: {e}"))?;
        println!("{s}");
    } else {
        print_text(&info);
    }
    match info.backend_error {
        Some(e) => Err(format!("no usable backend: {e}")),
        None => Ok(ExitCode::SUCCESS),
    }
}
