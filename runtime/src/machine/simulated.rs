//! The simulator as a [`MachineBackend`]: its registers, topology, devices, CPUID and
//! discovery table, and the workload it runs on a session's clock.

use std::any::Any;
use std::time::Duration;

use pmu_regs::ProcessorInfo;

use crate::access::{Topology, UncoreDevices};
use crate::boxes::CountedBox;
use crate::discovery::{locate, read_table};
use crate::error::Result;
use crate::ownership::{Lease, Ownership, Pmu, Registry};
use crate::sim::{Rate, Sim, StreamId};

use super::seam::{DiscoveryTables, MachineBackend, TableAccess, Workload};

impl MachineBackend for Sim {
    fn topology(&self) -> Result<Topology> {
        Ok(Sim::topology(self))
    }

    fn devices(&self, _processor: &'static ProcessorInfo) -> Result<UncoreDevices> {
        Ok(self.uncore_devices())
    }

    /// The one it publishes ([`Sim::discovery_table`]), read out of the published table
    /// itself, located through its device's capability.
    fn discovery_tables(&self, _registers: &dyn TableAccess) -> DiscoveryTables {
        self.discovery_table()
            .map(|t| {
                let read = locate(&t, t.device)
                    .and_then(|at| read_table(&t, at.first().map_or(t.base, |l| l.address)));
                (t.device, read)
            })
            .into_iter()
            .collect()
    }

    fn cpuid(&self, leaf: u32) -> Option<[u32; 4]> {
        Sim::cpuid(self, leaf)
    }

    fn workload(&self) -> Option<&dyn Workload> {
        Some(self)
    }

    fn as_any(&self) -> &dyn Any {
        self
    }
}

impl Workload for Sim {
    fn run(
        &self,
        counted: &[CountedBox<'_>],
        rate: &dyn Fn(usize) -> Rate,
        topdown_cpus: &[u32],
    ) -> Vec<StreamId> {
        self.run_counted(counted, rate, topdown_cpus)
    }

    fn run_named(&self, workload: &'static crate::sim::NamedWorkload) -> Option<Vec<StreamId>> {
        Some(vec![Sim::run_named(self, workload)])
    }

    fn advance(&self, running: &[StreamId], to: Duration) -> Result<()> {
        Sim::advance(self, running, to)
    }

    fn stop(&self, running: &[StreamId]) {
        self.stop_streams(running)
    }
}

/// Claims on the simulator are in-process: one simulator, one registry, kept in the
/// simulator's slot for it.
impl Ownership for Sim {
    fn claim(&self, pmu: &Pmu) -> Result<Lease> {
        self.claims()
            .get_or_init(|| Box::new(Registry::new()))
            .downcast_ref::<Registry>()
            .expect("only this module fills the simulator's claims slot, with a Registry")
            .claim(pmu)
    }
}
