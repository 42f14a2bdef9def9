//! `--cpu`, `--socket`, `--device`, `--root`, `--sim` and `--inject-fault`: where a command
//! reaches the hardware, shared by `read`, `write`, `watch` and `serve`.

use std::path::PathBuf;

use clap::Args;
use pmu_regs::ProcessorInfo;
use pmu_runtime::check::simulated;
use pmu_runtime::fault;
use pmu_runtime::machine::{Machine, Where};
use pmu_runtime::session::{Route, SessionBackend, Sockets};
use pmu_runtime::{Bdf, Error, UsageError};

use crate::perf_cli;

/// Where to reach the hardware.
#[derive(Args, Clone)]
pub struct PlaceArgs {
    /// The logical CPU for an MSR (default: 0, or the first CPU of --socket).
    #[arg(long, conflicts_with_all = ["device", "socket"])]
    pub cpu: Option<u32>,
    /// The socket: picks a CPU of it for MSRs, or its uncore device for PCI registers.
    #[arg(long)]
    pub socket: Option<u32>,
    /// The PCI device (e.g. 0000:3f:0e.1) for a PCI register.
    #[arg(long)]
    pub device: Option<String>,
    /// Use this directory as the filesystem root: ROOT/dev/cpu/N/msr,
    /// ROOT/sys/bus/pci/devices, ROOT/sys/devices/system/cpu.
    #[arg(long, conflicts_with = "sim")]
    pub root: Option<PathBuf>,
    /// Use the simulated PMU instead of hardware (a fresh one each run).
    #[arg(long)]
    pub sim: bool,
    /// With --sim: what the simulated machine runs (`pmu list --workloads`; default
    /// compute-bound).
    #[arg(long, value_name = "NAME", requires = "sim")]
    pub workload: Option<String>,
    /// Fail one register access (without performing it) to see how a command copes:
    /// read:N:KIND, write:N:KIND or writes-from:N:KIND, KIND one of eio, eacces, enoent,
    /// short. N counts reads or writes from 1. With --sim also broken:BOX (a box that does
    /// not count) or no-reset:BOX.
    #[arg(long, value_name = "OP:N:KIND", hide_short_help = true)]
    pub inject_fault: Option<String>,
}

impl PlaceArgs {
    /// The machine these options name for `processor`'s registers: `--sim` (a simulator of
    /// that processor), or the hardware under `--root` (default `/`), with `--inject-fault`
    /// applied.
    pub fn machine_for(&self, processor: &'static ProcessorInfo) -> Result<Machine, Error> {
        let machine = if self.sim {
            Machine::simulating(processor)
        } else {
            Machine::hardware(self.root.clone().unwrap_or_else(|| PathBuf::from("/")))
        };
        Ok(match &self.inject_fault {
            Some(text) if self.sim => simulated::session_machine(processor, text)?,
            Some(text) => {
                let (when, fault) = fault::parse(text)?;
                machine.with_fault(when, fault)
            }
            None => machine,
        })
    }

    /// What a session on `machine` reaches its counters through: `route` (`--backend`), with
    /// the kernel's perf PMUs under `--root`.
    pub fn backend<'m>(&self, machine: &'m Machine, route: Route) -> SessionBackend<'m> {
        SessionBackend::new(machine, route, perf_cli::sources(self.root.as_deref()))
    }

    /// What a session on the simulator runs: `--workload`'s, or the default.
    pub fn pace(&self) -> Result<pmu_runtime::session::Pace, Error> {
        Ok(match &self.workload {
            Some(name) => {
                pmu_runtime::session::Pace::Workload(pmu_runtime::machine::workload_named(name)?)
            }
            None => pmu_runtime::session::Pace::default(),
        })
    }

    /// The processor `named` (`--processor`; a name that matches none is ignored here, and
    /// refused where it is checked), else the one this machine's /proc/cpuinfo names.
    pub fn processor(&self, named: Option<&str>) -> Option<&'static str> {
        let named = pmu_runtime::lookup::processor_named(named).ok().flatten();
        named.or_else(|| crate::detect::detected(self.sim, self.root.as_deref()))
    }

    /// The sockets to count on: every one with `all` (-a), else `--socket` (default 0).
    pub fn sockets(&self, all: bool) -> Sockets {
        match all {
            true => Sockets::All,
            false => Sockets::One(self.socket.unwrap_or(0)),
        }
    }

    /// Where `--cpu`, `--socket` and `--device` say a register is.
    pub fn at(&self) -> Result<Where, Error> {
        let device = match &self.device {
            Some(d) => Some(d.parse::<Bdf>().map_err(|e| UsageError::BadValue {
                text: d.clone(),
                expected: e.to_string(),
            })?),
            None => None,
        };
        Ok(Where {
            cpu: self.cpu,
            socket: self.socket,
            device,
        })
    }
}
