//! Dynamic shell completion: the shell asks `pmu` itself (`PMU_COMPLETE=bash pmu -- ...`), so
//! register, unit, event and processor names complete from the spec this binary carries, not
//! only the options a static script knows. `pmu completions SHELL` prints the script that
//! registers it.

use clap::CommandFactory;
use clap_complete::engine::CompletionCandidate;
use clap_complete::env::Shells;
use pmu_regs::{Addresses, PROCESSORS};
use pmu_runtime::boxes::Boxes;

use crate::failure::Failure;

/// The environment variable the shell sets when it asks for completions.
pub const VAR: &str = "PMU_COMPLETE";

/// Answers a completion request and exits, when the shell made one; otherwise returns.
pub fn answer_if_asked() {
    clap_complete::CompleteEnv::with_factory(crate::Cli::command)
        .var(VAR)
        .complete();
}

/// The script that makes `shell` ask `pmu` for completions.
pub fn registration(shell: clap_complete::Shell) -> Result<String, Failure> {
    let name = shell.to_string();
    let shells = Shells::builtins();
    let completer = shells.completer(&name).ok_or_else(|| {
        Failure::usage(format!(
            "{name} has no dynamic completion; use bash, zsh, fish, elvish or powershell"
        ))
    })?;
    let mut buf = Vec::new();
    completer
        .write_registration(VAR, "pmu", "pmu", "pmu", &mut buf)
        .map_err(|e| Failure::operation(format!("cannot write the {name} script: {e}")))?;
    Ok(String::from_utf8_lossy(&buf).into_owned())
}

fn candidates(names: impl IntoIterator<Item = String>) -> Vec<CompletionCandidate> {
    let mut names: Vec<String> = names.into_iter().collect();
    names.sort();
    names.dedup();
    names.into_iter().map(CompletionCandidate::new).collect()
}

/// Processor ids (`--processor`).
pub fn processors() -> Vec<CompletionCandidate> {
    PROCESSORS
        .iter()
        .map(|p| CompletionCandidate::new(p.id).help(Some(p.name.into())))
        .collect()
}

/// Register instance names and layout names (`read`, `write`, `decode`, `encode`).
pub fn registers() -> Vec<CompletionCandidate> {
    candidates(
        PROCESSORS
            .iter()
            .flat_map(|p| p.units.iter())
            .flat_map(|u| {
                u.registers.iter().flat_map(|r| {
                    let instances: Vec<String> = match r.addresses {
                        Addresses::Known(a) => a.iter().map(|a| a.name.to_string()).collect(),
                        Addresses::Unknown(_) | Addresses::FromTable(_) => Vec::new(),
                    };
                    instances.into_iter().chain([r.name.to_string()])
                })
            }),
    )
}

/// Box names (`--unit`), bare and with their processor (`xeon-e5-2600:C3`).
pub fn units() -> Vec<CompletionCandidate> {
    candidates(PROCESSORS.iter().flat_map(|p| {
        Boxes::of(p)
            .boxes
            .iter()
            .flat_map(|b| b.names())
            .flat_map(move |n| [format!("{}:{n}", p.id), n])
    }))
}

/// Events by name (`--event event=NAME`), every processor's.
pub fn events() -> Vec<CompletionCandidate> {
    let core = PROCESSORS.iter().filter_map(|p| p.core_events);
    candidates(
        PROCESSORS
            .iter()
            .flat_map(|p| p.units.iter())
            .flat_map(|u| u.events.iter())
            .chain(core.flat_map(|c| c.events.iter()))
            .map(|e| format!("event={}", e.name)),
    )
}
