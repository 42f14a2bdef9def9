//! ARCHITECTURE.md's "Add a backend", followed step by step by a backend that exists only in
//! this test: a PMU whose registers live in a register space of its own, addressed by an
//! encoding (as system registers are), which serves the spec's MSRs from that space. It is
//! registered with one call, counts a box through the library's counting session, and its
//! own space is reached through the machine, fault injection included.

use std::any::Any;
use std::collections::HashMap;
use std::sync::Mutex;
use std::time::Duration;

use pmu_regs::Role;
use pmu_runtime::access::{
    AccessError, BackendError, BackendResult, Bdf, MmioAccess, MsrAccess, Op, PciAccess,
    RegisterSpace, SpaceError, Target, Topology, UncoreDevices, UncoreSummary,
};
use pmu_runtime::boxes::{Boxes, CountedBox, EventSelect, PmuBox};
use pmu_runtime::fault::{Fault, When};
use pmu_runtime::machine::{Machine, MachineBackend, Rate, StreamId, Workload};
use pmu_runtime::ownership::{Lease, Ownership, Pmu, Registry};
use pmu_runtime::session::{Options, Pace, Selection, Session, SessionBackend};

const PROCESSOR: &pmu_regs::ProcessorInfo = &pmu_regs::xeon_7500::PROCESSOR;

/// Step 1: the register space. An encoding packs the five fields of a system register's
/// name (op0, op1, CRn, CRm, op2), as the Arm architecture numbers them.
fn encoding(op0: u64, op1: u64, crn: u64, crm: u64, op2: u64) -> u64 {
    op0 << 14 | op1 << 11 | crn << 7 | crm << 3 | op2
}

/// The spec's MSR `address` in this backend's space: the implementation-defined block
/// (op0 3, CRn 15), the MSR number spread over op1, CRm and op2, and the bits above in a
/// field of their own above the five. A translation of this test's, not the architecture's.
fn msr_encoding(address: u32) -> u64 {
    let a = u64::from(address);
    (a >> 10) << 17 | encoding(3, (a >> 7) & 7, 15, (a >> 3) & 15, a & 7)
}

/// A PMU whose registers are kept by encoding and CPU.
#[derive(Default)]
struct SystemRegisters {
    values: Mutex<HashMap<(u32, u64), u64>>,
    claims: Registry,
    /// The workload's streams: the event select each counts, its rate, the events it has had.
    streams: Mutex<Vec<(StreamId, u16, Rate, u64)>>,
    /// The box a session counts, for the workload to find its counters.
    counted: Mutex<Option<&'static PmuBox>>,
}

impl RegisterSpace for SystemRegisters {
    fn space(&self) -> &'static str {
        "system register"
    }
    fn read_register(&self, place: u32, address: u64) -> Result<u64, SpaceError> {
        let values = self.values.lock().unwrap();
        Ok(values.get(&(place, address)).copied().unwrap_or(0))
    }
    fn write_register(&self, place: u32, address: u64, value: u64) -> Result<(), SpaceError> {
        self.values.lock().unwrap().insert((place, address), value);
        Ok(())
    }
}

/// Step 2: the access traits. The MSRs are the space's registers; there is no PCI or
/// memory-mapped register, and an access to one is refused as hardware refuses it.
impl MsrAccess for SystemRegisters {
    fn read_msr(&self, cpu: u32, address: u32) -> BackendResult<u64> {
        self.read_register(cpu, msr_encoding(address))
            .map_err(|_| unreachable_space(Op::Read, cpu, address))
    }
    fn write_msr(&self, cpu: u32, address: u32, value: u64) -> BackendResult<()> {
        self.write_register(cpu, msr_encoding(address), value)
            .map_err(|_| unreachable_space(Op::Write, cpu, address))
    }
}

fn unreachable_space(op: Op, cpu: u32, address: u32) -> BackendError {
    BackendError::access(op, Target::Msr { cpu, address }, AccessError::Rejected)
}

impl PciAccess for SystemRegisters {
    fn read_dword(&self, bdf: Bdf, offset: u16) -> BackendResult<u32> {
        let target = Target::Pci { bdf, offset };
        Err(BackendError::access(
            Op::Read,
            target,
            AccessError::Rejected,
        ))
    }
    fn write_dword(&self, bdf: Bdf, offset: u16, _value: u32) -> BackendResult<()> {
        let target = Target::Pci { bdf, offset };
        Err(BackendError::access(
            Op::Write,
            target,
            AccessError::Rejected,
        ))
    }
}

impl MmioAccess for SystemRegisters {
    fn read_mmio(&self, address: u64, _width: u32) -> BackendResult<u64> {
        let target = Target::Mmio { address };
        Err(BackendError::access(
            Op::Read,
            target,
            AccessError::Rejected,
        ))
    }
    fn write_mmio(&self, address: u64, _width: u32, _value: u64) -> BackendResult<()> {
        let target = Target::Mmio { address };
        Err(BackendError::access(
            Op::Write,
            target,
            AccessError::Rejected,
        ))
    }
}

/// Nothing to say about summary bits no address reaches: every answer is "unknown".
impl UncoreSummary for SystemRegisters {}

/// One session per PMU, within this process.
impl Ownership for SystemRegisters {
    fn claim(&self, pmu: &Pmu) -> pmu_runtime::Result<Lease> {
        self.claims.claim(pmu)
    }
}

/// Step 3: the seam. One socket of one CPU; its own time, on which each counted event
/// happens at the session's rate in every counter enabled to count it.
impl MachineBackend for SystemRegisters {
    fn topology(&self) -> pmu_runtime::Result<Topology> {
        Ok(Topology::from_sockets([(0, vec![0])]))
    }
    fn devices(
        &self,
        processor: &'static pmu_regs::ProcessorInfo,
    ) -> pmu_runtime::Result<UncoreDevices> {
        Ok(UncoreDevices::complete(processor, &[]))
    }
    fn workload(&self) -> Option<&dyn Workload> {
        Some(self)
    }
    fn register_space(&self) -> Option<&dyn RegisterSpace> {
        Some(self)
    }
    fn as_any(&self) -> &dyn Any {
        self
    }
}

impl Workload for SystemRegisters {
    fn run(
        &self,
        counted: &[CountedBox<'_>],
        rate: &dyn Fn(usize) -> Rate,
        _topdown_cpus: &[u32],
    ) -> Vec<StreamId> {
        let boxes = Boxes::of(PROCESSOR);
        let mut streams = self.streams.lock().unwrap();
        for b in counted {
            *self.counted.lock().unwrap() = boxes.find(b.pmu_box.instance);
            for (i, sel) in b.events.iter().enumerate() {
                let id = StreamId::new(streams.len() as u64);
                streams.push((id, sel.ev_sel, rate(i), 0));
            }
        }
        streams.iter().map(|s| s.0).collect()
    }

    fn advance(&self, running: &[StreamId], to: Duration) -> pmu_runtime::Result<()> {
        let Some(pmu_box) = *self.counted.lock().unwrap() else {
            return Ok(());
        };
        for (id, ev_sel, rate, done) in self.streams.lock().unwrap().iter_mut() {
            if !running.contains(id) {
                continue;
            }
            let due = rate.events_until(to) - *done;
            *done += due;
            for c in &pmu_box.counters {
                let (Some(control), Some(event), Some(enable)) = (
                    c.control,
                    c.control_bits(Role::Event),
                    c.control_bits(Role::Enable),
                ) else {
                    continue;
                };
                let value = self.read_msr(0, control.msr().unwrap())?;
                if enable.extract(value) == 1 && event.extract(value) == u64::from(*ev_sel) {
                    let at = c.counter.msr().unwrap();
                    let now = self.read_msr(0, at)?;
                    self.write_msr(0, at, now + due)?;
                }
            }
        }
        Ok(())
    }

    fn stop(&self, running: &[StreamId]) {
        self.streams
            .lock()
            .unwrap()
            .retain(|(id, ..)| !running.contains(id));
    }
}

fn w_box_selection() -> Selection {
    let boxes = Boxes::of(PROCESSOR);
    let w = boxes.find("W").unwrap();
    let events = [EventSelect::event(0x02), EventSelect::event(0x03)];
    Selection::of_boxes(&[(boxes, w)], &["ev_sel=0x02", "ev_sel=0x03"], &events).unwrap()
}

/// Step 4: one registration, and the backend counts a box through a session.
#[test]
fn a_backend_of_its_own_counts_a_box_through_a_session() {
    let machine = Machine::with_backend(SystemRegisters::default());
    assert!(machine.sim().is_none());
    assert!(machine.backend::<SystemRegisters>().is_some());
    let backend = SessionBackend::Registers(&machine);
    let period = Duration::from_millis(10);
    let options = Options {
        clock: backend.clock(period),
        pace: Pace::Ladder(1000),
        ..Options::default()
    };
    let mut session = Session::open(&backend, &w_box_selection(), options).unwrap();
    // The W box's first event select, enabled, in the backend's own space.
    let space = machine.register_space().unwrap();
    let boxes = Boxes::of(PROCESSOR);
    let first = &boxes.find("W").unwrap().counters[0];
    let control = msr_encoding(first.control.unwrap().msr().unwrap());
    let enable = first.control_bits(Role::Enable).unwrap();
    assert_eq!(enable.extract(space.read_register(0, control).unwrap()), 1);
    for _ in 0..3 {
        let interval = session.interval().unwrap();
        let deltas: Vec<u64> = interval.counts.iter().map(|c| c.delta).collect();
        // Pace::Ladder(1000): event i at 1000 x (i + 1) per second, for 10 ms.
        assert_eq!(deltas, [10, 20]);
    }
    session.close().unwrap();
    assert_eq!(space.read_register(0, control).unwrap(), 0, "put back");
}

/// Step 5: the backend's accesses go through the fault injector like any other's, its own
/// space's included.
#[test]
fn the_fault_injector_reaches_the_backends_own_space() {
    let machine =
        Machine::with_backend(SystemRegisters::default()).with_fault(When::Read(1), Fault::Eio);
    let space = machine.register_space().unwrap();
    let at = encoding(3, 3, 9, 12, 0);
    let e = space.read_register(0, at).unwrap_err();
    let os = e.downcast_ref::<std::io::Error>().unwrap();
    assert_eq!(os.raw_os_error(), None, "{e}");
    assert_eq!(os.kind(), std::io::Error::from_raw_os_error(5).kind());
    assert!(e.to_string().contains("system register"), "{e}");
    assert_eq!(space.read_register(0, at).unwrap(), 0);
    assert_eq!(machine.access_counts(), (2, 0));
    // And the session refuses to open when a read of the backend's MSRs fails.
    let machine =
        Machine::with_backend(SystemRegisters::default()).with_fault(When::Read(1), Fault::Eio);
    let backend = SessionBackend::Registers(&machine);
    assert!(Session::open(&backend, &w_box_selection(), Options::default()).is_err());
    assert_eq!(machine.access_counts().1, 0, "nothing written");
}
