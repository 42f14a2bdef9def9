//! `cargo run -p codegen [-- --check]`: regenerate `generated/` from `spec/`, or check that it
//! is up to date.

use std::path::PathBuf;
use std::process::ExitCode;

use clap::Parser;

/// Generate the pmu-regs crate and its documentation from the XML register specs.
#[derive(Parser)]
#[command(version, about, long_about = None)]
struct Args {
    /// Write nothing; exit 1 and name every file of the output directory that is out of date.
    #[arg(long)]
    check: bool,
    /// The spec directory (holds processors.xml).
    #[arg(long, default_value_os_t = workspace_path("spec"))]
    spec: PathBuf,
    /// The output directory (the generated crate).
    #[arg(long, default_value_os_t = workspace_path("generated"))]
    out: PathBuf,
}

/// A path in the workspace, wherever cargo is run from.
fn workspace_path(name: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .map(|root| root.join(name))
        .unwrap_or_else(|| PathBuf::from(name))
}

fn main() -> ExitCode {
    let args = Args::parse();
    if args.check {
        match codegen::check(&args.spec, &args.out) {
            Ok(stale) if stale.is_empty() => {
                println!(
                    "{} is up to date with {}",
                    args.out.display(),
                    args.spec.display()
                );
                ExitCode::SUCCESS
            }
            Ok(stale) => {
                eprintln!(
                    "{} is out of date with {} ({} file{}):",
                    args.out.display(),
                    args.spec.display(),
                    stale.len(),
                    if stale.len() == 1 { "" } else { "s" }
                );
                for s in &stale {
                    eprintln!("  {s}");
                }
                eprintln!("run `cargo run -p codegen` and commit the result");
                ExitCode::FAILURE
            }
            Err(e) => {
                eprint!("{e}");
                ExitCode::FAILURE
            }
        }
    } else {
        match codegen::generate(&args.spec, &args.out) {
            Ok(codegen::Outcome::UpToDate) => {
                println!("{} is up to date", args.out.display());
                ExitCode::SUCCESS
            }
            Ok(codegen::Outcome::Written { changed }) => {
                println!(
                    "wrote {} ({} files changed)",
                    args.out.display(),
                    changed.len()
                );
                ExitCode::SUCCESS
            }
            Err(e) => {
                eprint!("{e}");
                if matches!(e, codegen::Error::Spec(_)) {
                    eprintln!("{} was not changed", args.out.display());
                } else {
                    eprintln!();
                }
                ExitCode::FAILURE
            }
        }
    }
}
