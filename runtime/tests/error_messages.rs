//! Every error the runtime can show a user, one of each variant and access kind, kept as a
//! snapshot so wording changes are reviewed, and each says what to do next. The match in
//! `variant` has no wildcard: a new variant does not compile until it is added here.

use std::io;
use std::path::PathBuf;

use pmu_runtime::perf::{FormatWayOut, PerfError};
use pmu_runtime::{AccessError, BackendError, Bdf, Error, Op, SamplingError, Target, UsageError};

fn variant(e: &Error) -> &'static str {
    match e {
        Error::Backend(b) => match b {
            BackendError::Access { kind, .. } => match kind {
                AccessError::NoMsrDevice { .. } => "Backend/Access/NoMsrDevice",
                AccessError::NoPciDevice { .. } => "Backend/Access/NoPciDevice",
                AccessError::PermissionDenied { .. } => "Backend/Access/PermissionDenied",
                AccessError::Rejected => "Backend/Access/Rejected",
                AccessError::Short { .. } => "Backend/Access/Short",
                AccessError::ReservedBits { .. } => "Backend/Access/ReservedBits",
                AccessError::TooWide { .. } => "Backend/Access/TooWide",
                AccessError::ReadOnly => "Backend/Access/ReadOnly",
                AccessError::Unstable { .. } => "Backend/Access/Unstable",
                AccessError::BadWidth { .. } => "Backend/Access/BadWidth",
                AccessError::Misaligned { .. } => "Backend/Access/Misaligned",
                AccessError::NoMemDevice { .. } => "Backend/Access/NoMemDevice",
                AccessError::MapRefused { .. } => "Backend/Access/MapRefused",
                AccessError::Os => "Backend/Access/Os",
            },
            BackendError::Unwound { .. } => "Backend/Unwound",
            BackendError::Misplaced { .. } => "Backend/Misplaced",
            BackendError::AddressUnknown { .. } => "Backend/AddressUnknown",
            BackendError::TablePlaced { .. } => "Backend/TablePlaced",
            BackendError::NoUncoreDevices { .. } => "Backend/NoUncoreDevices",
            BackendError::DeviceNotFound { .. } => "Backend/DeviceNotFound",
            BackendError::BusOwner { .. } => "Backend/BusOwner",
            BackendError::Topology { .. } => "Backend/Topology",
            BackendError::NoCpuForSocket { .. } => "Backend/NoCpuForSocket",
        },
        Error::Usage(u) => match u {
            UsageError::UnknownRegister { .. } => "Usage/UnknownRegister",
            UsageError::UnknownField { .. } => "Usage/UnknownField",
            UsageError::ReadOnlyField { .. } => "Usage/ReadOnlyField",
            UsageError::BadValue { .. } => "Usage/BadValue",
            UsageError::NeedsInstance { .. } => "Usage/NeedsInstance",
            UsageError::UnsupportedField { .. } => "Usage/UnsupportedField",
            UsageError::FieldTooWide(_) => "Usage/FieldTooWide",
            UsageError::NoSuchCounter { .. } => "Usage/NoSuchCounter",
            UsageError::NoSuchBox { .. } => "Usage/NoSuchBox",
            UsageError::NoSuchPlace { .. } => "Usage/NoSuchPlace",
            UsageError::UnknownBox { .. } => "Usage/UnknownBox",
            UsageError::UnknownProcessor { .. } => "Usage/UnknownProcessor",
            UsageError::DuplicateCounter { .. } => "Usage/DuplicateCounter",
            UsageError::NotAsDiscovered { .. } => "Usage/NotAsDiscovered",
            UsageError::AuxMsr { .. } => "Usage/AuxMsr",
            UsageError::Refused(_) => "Usage/Refused",
        },
        Error::Sampling(s) => match s {
            SamplingError::BadInterval { .. } => "Sampling/BadInterval",
            SamplingError::NotFrozen { .. } => "Sampling/NotFrozen",
            SamplingError::InUse { .. } => "Sampling/InUse",
            SamplingError::NotRepresentable { .. } => "Sampling/NotRepresentable",
            SamplingError::Owned { .. } => "Sampling/Owned",
            SamplingError::Lock { .. } => "Sampling/Lock",
            SamplingError::Enabled { .. } => "Sampling/Enabled",
            SamplingError::UnsafeLock { .. } => "Sampling/UnsafeLock",
        },
        Error::Cleanup { .. } => "Cleanup",
        Error::RestoreFailed(_) => "RestoreFailed",
        Error::Broken(_) => "Broken",
        Error::Driver(d) => match d
            .downcast_ref::<PerfError>()
            .expect("the only driver error")
        {
            PerfError::PmuAbsent { .. } => "Perf/PmuAbsent",
            PerfError::Sysfs { .. } => "Perf/Sysfs",
            PerfError::BadSysfs { .. } => "Perf/BadSysfs",
            PerfError::FieldNotInFormat {
                way_out: FormatWayOut::RawBackend,
                ..
            } => "Perf/FieldNotInFormat",
            PerfError::FieldNotInFormat {
                way_out: FormatWayOut::PerfModifiers,
                ..
            } => "Perf/FieldNotInFormat/PerfModifiers",
            PerfError::ValueTooWide { .. } => "Perf/ValueTooWide",
            PerfError::FormatMismatch { .. } => "Perf/FormatMismatch",
            PerfError::NotForCounting { .. } => "Perf/NotForCounting",
            PerfError::UnknownEvent { .. } => "Perf/UnknownEvent",
            PerfError::BadEventSyntax { .. } => "Perf/BadEventSyntax",
            PerfError::UnknownName { .. } => "Perf/UnknownName",
            PerfError::NoHardwareEvents { .. } => "Perf/NoHardwareEvents",
            PerfError::NoPermission { .. } => "Perf/NoPermission",
            PerfError::Busy { .. } => "Perf/Busy",
            PerfError::TooManyEvents { .. } => "Perf/TooManyEvents",
            PerfError::Rejected { .. } => "Perf/Rejected",
            PerfError::Io { .. } => "Perf/Io",
            PerfError::NoPmuName { .. } => "Perf/NoPmuName",
        },
    }
}

const MSR: Target = Target::Msr {
    cpu: 2,
    address: 0xC90,
};

fn backend(op: Op, kind: AccessError, source: Option<io::Error>) -> BackendError {
    BackendError::Access {
        op,
        target: MSR,
        register: Some("W_MSR_PMON_EVT_SEL0"),
        kind,
        source,
    }
}

/// An access to a memory-mapped register (Ice Lake-SP's iMC channel 0 box control).
fn mmio(op: Op, kind: AccessError, source: Option<io::Error>) -> Error {
    BackendError::Access {
        op,
        target: Target::Mmio {
            address: 0x2_0002_2800,
        },
        register: Some("MC0_MMIO_PMON_BOX_CTL"),
        kind,
        source,
    }
    .into()
}

fn access(op: Op, kind: AccessError, source: Option<io::Error>) -> Error {
    backend(op, kind, source).into()
}

fn every_error() -> Vec<Error> {
    let pci = Target::Pci {
        bdf: Bdf {
            segment: 0,
            bus: 0x3f,
            device: 14,
            function: 1,
        },
        offset: 0xD8,
    };
    vec![
        access(
            Op::Read,
            AccessError::NoMsrDevice {
                path: "/dev/cpu/2/msr".into(),
            },
            Some(io::Error::from_raw_os_error(2)),
        ),
        BackendError::Access {
            op: Op::Read,
            target: pci,
            register: Some("HA_PCI_PMON_CTL0"),
            kind: AccessError::NoPciDevice {
                path: "/sys/bus/pci/devices/0000:3f:0e.1/config".into(),
            },
            source: Some(io::Error::from_raw_os_error(2)),
        }
        .into(),
        access(
            Op::Write,
            AccessError::PermissionDenied {
                path: "/dev/cpu/2/msr".into(),
            },
            Some(io::Error::from_raw_os_error(13)),
        ),
        access(
            Op::Write,
            AccessError::Rejected,
            Some(io::Error::from_raw_os_error(5)),
        ),
        access(Op::Read, AccessError::Short { done: 3, wanted: 8 }, None),
        access(
            Op::Write,
            AccessError::ReservedBits {
                value: 0x1_0040_0001,
                bits: 0x1_0000_0000,
            },
            None,
        ),
        access(
            Op::Write,
            AccessError::TooWide {
                value: 0x1_0000_0000,
                width: 32,
            },
            None,
        ),
        access(Op::Write, AccessError::ReadOnly, None),
        access(Op::Read, AccessError::Unstable { reads: 3 }, None),
        access(
            Op::Read,
            AccessError::Os,
            Some(io::Error::from_raw_os_error(16)),
        ),
        mmio(Op::Read, AccessError::BadWidth { width: 16 }, None),
        mmio(Op::Write, AccessError::Misaligned { bytes: 8 }, None),
        mmio(
            Op::Read,
            AccessError::NoMemDevice {
                path: "/dev/mem".into(),
            },
            Some(io::Error::from_raw_os_error(2)),
        ),
        mmio(
            Op::Write,
            AccessError::MapRefused {
                path: "/dev/mem".into(),
            },
            Some(io::Error::from_raw_os_error(1)),
        ),
        BackendError::AddressUnknown {
            register: "U_MSR_PMON_GLOBAL_SUMMARY",
            reason: "no public source gives it",
        }
        .into(),
        BackendError::TablePlaced {
            register: "PCU_PMON_CTL{n}",
        }
        .into(),
        BackendError::NoUncoreDevices {
            root: "/sys/bus/pci/devices".into(),
            looked_for: vec!["8086:3c46".into(), "8086:3c44".into()],
        }
        .into(),
        BackendError::BusOwner {
            bus: "0000:7f".into(),
            problem: "node id 2 read at 0000:7f:0b.0 offset 0x40 is in no slot of the node map 0x00000008 read beside it".into(),
        }
        .into(),
        BackendError::DeviceNotFound {
            register: "HA_PCI_PMON_CTL0",
            socket: 1,
            device: "8086:3c46".into(),
        }
        .into(),
        BackendError::Topology {
            path: PathBuf::from("/sys/devices/system/cpu"),
            problem:
                "no cpuN directories; is sysfs mounted, or does --root point at the right tree?"
                    .into(),
        }
        .into(),
        BackendError::NoCpuForSocket {
            socket: 3,
            present: vec![0, 1],
        }
        .into(),
        UsageError::UnknownRegister {
            name: "W_MSR_PMON_EVT_SEL9".into(),
            suggestions: vec!["W_MSR_PMON_EVT_SEL0".into()],
        }
        .into(),
        UsageError::UnknownField {
            register: "W_MSR_PMON_EVT_SEL{n}",
            field: "evsel".into(),
            suggestions: vec!["ev_sel".into()],
            fields: "ev_sel, umask".into(),
        }
        .into(),
        UsageError::ReadOnlyField {
            register: "IA32_PERF_GLOBAL_STATUS",
            field: "PMC0_OVF",
            access: "RO",
        }
        .into(),
        UsageError::BadValue {
            text: "0xZZ".into(),
            expected: "a number: hex (0x1f), decimal (31) or binary (0b11111)".into(),
        }
        .into(),
        UsageError::NeedsInstance {
            name: "W_MSR_PMON_EVT_SEL{n}".into(),
            instances: "W_MSR_PMON_EVT_SEL0..3".into(),
        }
        .into(),
        Error::Cleanup {
            error: Box::new(access(Op::Write, AccessError::Rejected, None)),
            cleanup: Box::new(access(
                Op::Write,
                AccessError::PermissionDenied {
                    path: "/dev/cpu/2/msr".into(),
                },
                None,
            )),
        },
        UsageError::UnsupportedField {
            register: "HA_PCI_PMON_CTL{n}",
            field: "threshold",
        }
        .into(),
        UsageError::FieldTooWide(pmu_regs::FieldTooWide {
            register: "W_MSR_PMON_EVT_SEL{n}",
            field: "ev_sel",
            width: 8,
            value: 0x100,
        })
        .into(),
        UsageError::NoSuchCounter {
            counter: "W counter 7".into(),
            available: "W counter 0..3".into(),
        }
        .into(),
        SamplingError::BadInterval {
            n: 0,
            max: 0x7fff_ffff_ffff,
        }
        .into(),
        SamplingError::NotFrozen {
            reason: "the box has not overflowed since it was armed; wait for the PMI".into(),
        }
        .into(),
        SamplingError::InUse {
            counter: "IA32_PMC0".into(),
            holder: "enabled in IA32_PERF_GLOBAL_CTRL by another user".into(),
        }
        .into(),
        SamplingError::NotRepresentable {
            counter: "IA32_PMC0".into(),
            value: 0x8000_0000_0000,
            width: 48,
        }
        .into(),
        BackendError::Unwound {
            error: Box::new(backend(Op::Write, AccessError::Rejected, None)),
            cleanup: Box::new(backend(
                Op::Write,
                AccessError::Short { done: 0, wanted: 4 },
                None,
            )),
        }
        .into(),
        BackendError::Misplaced {
            register: "HA_PCI_PMON_CTL0",
            needs: "a PCI device (it is in PCI config space)",
        }
        .into(),
        UsageError::NoSuchBox {
            name: "C9 in the simulated Xeon 7500".into(),
            available: "U, W, C0".into(),
        }
        .into(),
        UsageError::NoSuchPlace {
            place: "CPU 9 in the simulator".into(),
            available: "CPUs 0-3".into(),
        }
        .into(),
        UsageError::UnknownBox {
            name: "C33".into(),
            processor: Some("xeon-7500".into()),
            suggestions: vec!["C3".into(), "C0".into()],
        }
        .into(),
        UsageError::UnknownProcessor {
            name: "skylake".into(),
            suggestions: vec!["skylake-sp".into()],
            processors: "xeon-7500, skylake-sp".into(),
        }
        .into(),
        UsageError::DuplicateCounter {
            counter: "C3_MSR_PMON_CTR0".into(),
        }
        .into(),
        UsageError::NotAsDiscovered {
            name: "CHA0".into(),
            why: "width: table 32, spec 48 (intel-pcm)".into(),
        }
        .into(),
        UsageError::AuxMsr {
            register: "MSR_OFFCORE_RSP_0",
            why: "event 2 needs it as 0x10002 and event 1 as 0x10001; it holds one value at a \
                  time, so count them in separate runs"
                .into(),
        }
        .into(),
        UsageError::Refused(
            "--unit IMC2 is given twice; give each box once".into(),
        )
        .into(),
        SamplingError::Owned {
            pmu: "the xeon-7500 uncore of socket 0".into(),
            holder: "process 4242 (pmu watch --unit C3)".into(),
        }
        .into(),
        SamplingError::Lock {
            path: "/run/pmu-regs/uncore-xeon-7500-socket0.lock".into(),
            source: io::Error::from_raw_os_error(13),
        }
        .into(),
        SamplingError::Enabled {
            register: "C3_MSR_PMON_EVT_SEL0",
            value: 0x40_0001,
            others: Vec::new(),
            pmu: None,
        }
        .into(),
        SamplingError::UnsafeLock {
            path: "/tmp/run/uncore-xeon-7500-socket0.lock".into(),
            problem: "it is a symbolic link, and a lock file is never followed".into(),
        }
        .into(),
        Error::RestoreFailed(Box::new(access(Op::Write, AccessError::Rejected, None))),
        Error::Broken(Box::new(pmu_runtime::error::BrokenBox {
            processor: "skylake-sp",
            socket: 0,
            instance: "CHA1",
            event: "UNC_CHA_CLOCKTICKS".into(),
            source: "intel-perfmon-skylake-sp",
            seconds: 1.0,
        })),
        Error::from(PerfError::PmuAbsent {
            pmu: "uncore_ha".into(),
            path: "/sys/bus/event_source/devices/uncore_ha".into(),
            driver: "intel_uncore (Linux arch/x86/events/intel/uncore_snbep.c)".into(),
        }),
        Error::from(PerfError::Sysfs {
            path: "/sys/bus/event_source/devices/uncore_ha/type".into(),
            source: io::Error::from_raw_os_error(13),
        }),
        Error::from(PerfError::BadSysfs {
            path: "/sys/bus/event_source/devices/uncore_ha/format/event".into(),
            text: "config3:0-7".into(),
            problem: "the word must be config, config1 or config2".into(),
        }),
        Error::from(PerfError::FieldNotInFormat {
            pmu: "uncore_pcu".into(),
            field: "ev_sel_ext (PCU_MSR_PMON_CTL{n})".into(),
            available: "event, occ_sel, edge, inv, thresh".into(),
            way_out: FormatWayOut::RawBackend,
        }),
        Error::from(PerfError::FieldNotInFormat {
            pmu: "armv8_pmuv3_0".into(),
            field: "u (PMEVTYPER{n}_EL0)".into(),
            available: "event, long, rdpmc".into(),
            way_out: FormatWayOut::PerfModifiers,
        }),
        Error::from(PerfError::ValueTooWide {
            pmu: "uncore_ubox".into(),
            field: "thresh".into(),
            value: 0x20,
            format: "config:24-28".into(),
        }),
        Error::from(PerfError::FormatMismatch {
            pmu: "uncore_pcu".into(),
            field: "occ_edge_det (PCU_MSR_PMON_CTL{n})".into(),
            format: "config:14-51".into(),
            width: 1,
        }),
        Error::from(PerfError::NotForCounting {
            field: "C_MSR_PMON_EVT_SEL{n}.pmi_en".into(),
        }),
        Error::from(PerfError::UnknownEvent {
            pmu: "msr".into(),
            event: "tcs".into(),
            available: "tsc".into(),
        }),
        Error::from(PerfError::BadEventSyntax {
            text: "msr/tsc".into(),
            problem: "a PMU's terms end with a slash: PMU/TERMS/".into(),
        }),
        Error::from(PerfError::UnknownName {
            name: "tssc".into(),
            suggestions: vec!["tsc".into()],
        }),
        Error::from(PerfError::NoHardwareEvents {
            event: "cycles".into(),
            source: io::Error::from_raw_os_error(2),
        }),
        Error::from(PerfError::NoPermission {
            event: "uncore_ha/event=0x1,umask=0x3/".into(),
            cpu: Some(0),
            paranoid: Some(2),
            source: io::Error::from_raw_os_error(13),
        }),
        Error::from(PerfError::Busy {
            event: "uncore_cbox_3/event=0x34,umask=0x3/".into(),
            pmu: "uncore_cbox_3".into(),
            source: io::Error::from_raw_os_error(16),
        }),
        Error::from(PerfError::TooManyEvents {
            event: "uncore_ha/event=0x2,umask=0x3/".into(),
            pmu: "uncore_ha".into(),
            opened: 4,
            source: io::Error::from_raw_os_error(22),
        }),
        Error::from(PerfError::Rejected {
            event: "msr/event=0x99/".into(),
            pmu: "msr".into(),
            source: io::Error::from_raw_os_error(22),
        }),
        Error::from(PerfError::Io {
            op: "read",
            event: "msr/event=0x0/".into(),
            source: io::Error::from_raw_os_error(9),
        }),
        Error::from(PerfError::NoPmuName {
            what: "socket 2 of uncore_ha".into(),
            reason: "its cpumask names 2 socket(s), so choose --socket 0 to 1".into(),
        }),
    ]
}

#[test]
fn every_error_message() {
    let errors = every_error();
    let mut seen: Vec<&str> = errors.iter().map(variant).collect();
    seen.sort();
    seen.dedup();
    assert_eq!(seen.len(), errors.len(), "one of each variant, no repeats");
    insta::assert_snapshot!(errors
        .iter()
        .map(|e| format!("[{}]\n{e}", variant(e)))
        .collect::<Vec<_>>()
        .join("\n\n"));
}

#[test]
fn source_chains_lead_to_the_os_error() {
    use std::error::Error as _;
    let io_code = |e: &dyn std::error::Error| {
        e.source()
            .and_then(|s| s.downcast_ref::<io::Error>())
            .and_then(io::Error::raw_os_error)
    };
    let denied = access(
        Op::Write,
        AccessError::PermissionDenied {
            path: "/dev/cpu/2/msr".into(),
        },
        Some(io::Error::from_raw_os_error(13)),
    );
    assert_eq!(io_code(&denied), Some(13));
    // Through the layers and a failed undo, the first failure's cause is kept.
    let cleanup = Error::Cleanup {
        error: Box::new(denied),
        cleanup: Box::new(access(Op::Write, AccessError::Rejected, None)),
    };
    assert_eq!(io_code(&cleanup), Some(13));
    let lock: Error = SamplingError::Lock {
        path: "/run/pmu-regs/x.lock".into(),
        source: io::Error::from_raw_os_error(30),
    }
    .into();
    assert_eq!(io_code(&lock), Some(30));
    assert!(UsageError::BadValue {
        text: "x".into(),
        expected: "y".into()
    }
    .source()
    .is_none());
}
