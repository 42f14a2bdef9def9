//! `cargo run -p codegen [-- --check]`: regenerate `generated/` from `spec/`, or check that it
//! is up to date.

// Functions read in one sitting: at most 80 lines (clippy.toml), with no `allow`.
#![warn(clippy::too_many_lines)]

use std::path::{Path, PathBuf};
use std::process::ExitCode;

use clap::Parser;

/// Generate the pmu-regs crate and its documentation from the XML register specs.
#[derive(Parser)]
#[command(version, about, long_about = None)]
struct Args {
    #[command(subcommand)]
    command: Option<Command>,
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

#[derive(clap::Subcommand)]
enum Command {
    /// Import Intel's perfmon event list (JSON) into spec/<processor>/events/: names, codes,
    /// umasks, counters and filters only. Example:
    /// cargo run -p codegen -- import-perfmon ../shared/perfmon/Jaketown_uncore.json
    ImportPerfmon {
        /// The perfmon JSON file; or a main list and its experimental list
        /// (`X_uncore.json X_uncore_experimental.json`), imported together: the
        /// experimental list's events are marked `experimental="1"`.
        #[arg(required = true, num_args = 1..)]
        files: Vec<PathBuf>,
        /// The processor the events belong to; by default the one whose perfmon name
        /// (processors.xml `<identity perfmon="..">`) prefixes the file name.
        #[arg(long)]
        processor: Option<String>,
        /// Succeed even when some records name units the spec does not have.
        #[arg(long)]
        skip_unmapped: bool,
    },
    /// Import Arm's PMU event list for one core (ARM-software/data, `<core>.json`) into
    /// spec/<processor>/events/: event names and numbers only. Example:
    /// cargo run -p codegen -- import-arm ../shared/arm/neoverse-v2.json
    #[command(name = "import-arm")]
    ArmEvents {
        /// Arm's JSON list.
        file: PathBuf,
        /// The processor; by default the list's file name without `.json` (`neoverse-v2`).
        #[arg(long)]
        processor: Option<String>,
    },
    /// Import Intel's perfmon metric list (`*_metrics.json`) into
    /// spec/<processor>/metrics/intel.xml: names, units, categories, levels, events and
    /// formulas; every record left out is listed with its reason. Example:
    /// cargo run -p codegen -- import-metrics ../shared/perfmon/haswellx_metrics.json
    ImportMetrics {
        /// The perfmon metrics JSON file.
        file: PathBuf,
        /// The processor; by default the one whose perfmon name prefixes the file name.
        #[arg(long)]
        processor: Option<String>,
    },
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
    match &args.command {
        Some(Command::ImportPerfmon {
            files,
            processor,
            skip_unmapped,
        }) => import(&args, files, processor.as_deref(), *skip_unmapped),
        Some(Command::ImportMetrics { file, processor }) => {
            import_metrics(&args, file, processor.as_deref())
        }
        Some(Command::ArmEvents { file, processor }) => {
            import_arm(&args, file, processor.as_deref())
        }
        None if args.check => check(&args),
        None => generate(&args),
    }
}

/// `import-perfmon`: the report, and failure when records were left out unless
/// `--skip-unmapped` accepts that.
fn import(
    args: &Args,
    files: &[PathBuf],
    processor: Option<&str>,
    skip_unmapped: bool,
) -> ExitCode {
    let processor = match processor {
        Some(p) => p.to_string(),
        None => match codegen::import::processor_for_file(&files[0], &args.spec) {
            Ok(p) => p,
            Err(e) => {
                eprintln!("{e}");
                return ExitCode::FAILURE;
            }
        },
    };
    match codegen::import::import_perfmon_lists(files, &args.spec, &processor) {
        Ok(report) => {
            print!("{}", report.render());
            if report.errors.is_empty() || skip_unmapped {
                println!("run `cargo run -p codegen` to regenerate the crate");
                ExitCode::SUCCESS
            } else {
                eprintln!("some records were not imported (see above); pass --skip-unmapped to accept that");
                ExitCode::FAILURE
            }
        }
        Err(e) => {
            eprintln!("{e}");
            ExitCode::FAILURE
        }
    }
}

/// `import-arm`: the report (the events imported and the file written).
fn import_arm(args: &Args, file: &Path, processor: Option<&str>) -> ExitCode {
    let stem = file.file_stem().map(|s| s.to_string_lossy().into_owned());
    let Some(processor) = processor.map(str::to_string).or(stem) else {
        eprintln!("{}: name the processor with --processor", file.display());
        return ExitCode::FAILURE;
    };
    match codegen::import_arm::import_arm(file, &args.spec, &processor) {
        Ok(report) => {
            print!("{}", report.render());
            println!("run `cargo run -p codegen` to regenerate the crate");
            ExitCode::SUCCESS
        }
        Err(e) => {
            eprintln!("{e}");
            ExitCode::FAILURE
        }
    }
}

/// `import-metrics`: the report (every record left out, with its reason).
fn import_metrics(args: &Args, file: &Path, processor: Option<&str>) -> ExitCode {
    let processor = match processor {
        Some(p) => p.to_string(),
        None => match codegen::import::processor_for_file(file, &args.spec) {
            Ok(p) => p,
            Err(e) => {
                eprintln!("{e}");
                return ExitCode::FAILURE;
            }
        },
    };
    match codegen::import_metrics::import_metrics(file, &args.spec, &processor) {
        Ok(report) => {
            print!("{}", report.render());
            println!("run `cargo run -p codegen` to regenerate the crate");
            ExitCode::SUCCESS
        }
        Err(e) => {
            eprintln!("{e}");
            ExitCode::FAILURE
        }
    }
}

/// `--check`: names every out-of-date file of the output directory.
fn check(args: &Args) -> ExitCode {
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
}

/// Regenerates the output directory; on a spec error, says it was left unchanged.
fn generate(args: &Args) -> ExitCode {
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
