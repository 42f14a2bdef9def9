//! Box addresses, counter addresses, widths and counts of the newer processors' units, copied
//! from a source other than the one the spec cites for each fact, for `tests/addresses.rs` to
//! compare with the spec.
//!
//! The spec cites Linux (`uncore_snbep.c`, `msr-index.h`, `amd/uncore.c`) for Skylake-SP, Ice
//! Lake-SP and AMD, so those rows come from likwid (`src/includes/registers.h` and
//! `perfmon_<arch>_counters.h`: the counter maps, the `BoxMap` tables whose seventh column is the
//! counter width, and the `PciDevice` tables) and from Intel PCM (`src/types.h`,
//! `src/cpucounters.cpp`) for PCI locations likwid gets wrong. Where the spec cites PCM
//! (Sapphire Rapids on), Linux's own constants are the independent source where the kernel has
//! them; most of those units the kernel reads only from the discovery table, which has no
//! constant to copy: `NO_INDEPENDENT_SOURCE` lists them with the reason.
//!
//! likwid as read: RRZE-HPC/likwid d9c523b15786fb9db80853fd0f5d1bfcb061a110; PCM as read:
//! intel/pcm 0fae0de1af65bc82f1c80dceb4e5bed25cc369da.

/// Where register `n` of box `b` of a unit is.
#[derive(Debug, Clone, Copy)]
pub enum At {
    /// MSR `first + b * box_stride + n * step`.
    Msr {
        first: u32,
        box_stride: u32,
        step: u32,
    },
    /// MSR `boxes[b] + offset + n * step`: boxes that are not evenly spaced.
    MsrEach {
        boxes: &'static [u32],
        offset: u32,
        step: u32,
    },
    /// PCI config space of box `b`'s function `devices[b]`, at `offset + n * step`.
    Pci {
        devices: &'static [Dev],
        offset: u16,
        step: u16,
    },
    /// Memory-mapped: box `b` in the window of controller `b / channels`, channel
    /// `b % channels`, at `offset + n * step`.
    Mmio {
        channels: u8,
        offset: u32,
        step: u32,
    },
}

/// A PCI function: device id where the source names one, device and function.
#[derive(Debug, Clone, Copy)]
pub struct Dev {
    pub id: Option<u16>,
    pub device: u8,
    pub function: u8,
}

const fn dev(id: u16, device: u8, function: u8) -> Dev {
    Dev {
        id: Some(id),
        device,
        function,
    }
}

const fn devfn(device: u8, function: u8) -> Dev {
    Dev {
        id: None,
        device,
        function,
    }
}

/// Counters numbered `first .. first + count` in the spec (`CounterInfo::number`), counter
/// `first + n` at index `n` of `control` and `counter`.
#[derive(Debug, Clone, Copy)]
pub struct Group {
    pub first: u32,
    pub count: u32,
    /// Counting bits; `None` where the source gives no width for these counters.
    pub width: Option<u32>,
    pub control: Option<At>,
    pub counter: At,
}

/// One unit of one processor as the independent source has it.
#[derive(Debug)]
pub struct Unit {
    /// Processors (spec ids) with these units: Cascade Lake has Skylake-SP's, Emerald Rapids
    /// Sapphire Rapids'.
    pub processors: &'static [&'static str],
    pub unit: &'static str,
    /// Instance names: `prefix0 ..` when `boxes` > 1 or the unit numbers its one box, else
    /// `prefix` itself.
    pub prefix: &'static str,
    pub numbered: bool,
    pub boxes: u32,
    /// General counters per box.
    pub general: u32,
    /// The box control (index 0), where the unit has one.
    pub box_ctl: Option<At>,
    pub groups: &'static [Group],
    /// Where each fact comes from.
    pub source: &'static str,
}

impl Unit {
    /// The spec's name for box `b`.
    pub fn instance(&self, b: u32) -> String {
        if self.numbered {
            format!("{}{b}", self.prefix)
        } else {
            self.prefix.to_string()
        }
    }
}

/// A disagreement between the independent source and the spec that no third source settles:
/// the test checks it is still there and reports it, without failing.
#[derive(Debug)]
pub struct Conflict {
    pub processor: &'static str,
    pub unit: &'static str,
    /// The fact that differs, as the comparison names it (`control`: every counter control).
    pub fact: &'static str,
    pub why: &'static str,
}

const SKX: &[&str] = &["skylake-sp", "cascade-lake"];
const ICX: &[&str] = &["ice-lake-sp"];
const SPR: &[&str] = &["sapphire-rapids", "emerald-rapids"];

/// likwid registers.h MSR_UNC_V3_C{n}_PMON_BOX_CTL / _CTL0.. / _CTR0.., 28 CBOXes in
/// perfmon_skylakeX_counters.h, width 48 (skylakeX_box_map CBOX).
const SKX_CHA: Unit = Unit {
    processors: SKX,
    unit: "CHA",
    prefix: "CHA",
    numbered: true,
    boxes: 28,
    general: 4,
    box_ctl: Some(At::Msr {
        first: 0xE00,
        box_stride: 0x10,
        step: 0,
    }),
    groups: &[Group {
        first: 0,
        count: 4,
        width: Some(48),
        control: Some(At::Msr {
            first: 0xE01,
            box_stride: 0x10,
            step: 1,
        }),
        counter: At::Msr {
            first: 0xE08,
            box_stride: 0x10,
            step: 1,
        },
    }],
    source: "likwid registers.h MSR_UNC_V3_C0..27_PMON_*, perfmon_skylakeX_counters.h CBOX0-27",
};

/// likwid MSR_UNC_SKX_II0_{CBDMA,PCIE0-2,MCP0-1}_BOX_CTL and their CTL0-3 / CTR0-3 (IBOX0-5),
/// width 48.
const SKX_IIO: Unit = Unit {
    processors: SKX,
    unit: "IIO",
    prefix: "IIO",
    numbered: true,
    boxes: 6,
    general: 4,
    box_ctl: Some(At::Msr {
        first: 0xA40,
        box_stride: 0x20,
        step: 0,
    }),
    groups: &[Group {
        first: 0,
        count: 4,
        width: Some(48),
        control: Some(At::Msr {
            first: 0xA48,
            box_stride: 0x20,
            step: 1,
        }),
        counter: At::Msr {
            first: 0xA41,
            box_stride: 0x20,
            step: 1,
        },
    }],
    source: "likwid registers.h MSR_UNC_SKX_II0_*_BOX_CTL/CTL0-3/CTR0-3, perfmon_skylakeX_counters.h IBOX0-5",
};

/// likwid MSR_UNC_SKX_IRP_*_BOX_CTL, CTL0-1, CTR0-1 (EUBOX0-5), width 48.
const SKX_IRP: Unit = Unit {
    processors: SKX,
    unit: "IRP",
    prefix: "IRP",
    numbered: true,
    boxes: 6,
    general: 2,
    box_ctl: Some(At::Msr {
        first: 0xA58,
        box_stride: 0x20,
        step: 0,
    }),
    groups: &[Group {
        first: 0,
        count: 2,
        width: Some(48),
        control: Some(At::Msr {
            first: 0xA5B,
            box_stride: 0x20,
            step: 1,
        }),
        counter: At::Msr {
            first: 0xA59,
            box_stride: 0x20,
            step: 1,
        },
    }],
    source: "likwid registers.h MSR_UNC_SKX_IRP_*, perfmon_skylakeX_counters.h EUBOX0-5",
};

/// likwid skylakeX IBOXnFIX: IBOXnCLK at 0xA45 + 0x20 n, IBANDnPI0-3/PO0-3 at 0xB00 + 0x10 n
/// upwards and IUTILnPI/PO at 0xB08 + 0x10 n upwards, width 36 (skylakeX_box_map IBOXnFIX).
const SKX_IIO_FREE: Unit = Unit {
    processors: SKX,
    unit: "IIO_FREE",
    prefix: "IIO_FREE",
    numbered: true,
    boxes: 6,
    general: 0,
    box_ctl: None,
    groups: &[
        Group {
            first: 0,
            count: 1,
            width: Some(36),
            control: None,
            counter: At::Msr {
                first: 0xA45,
                box_stride: 0x20,
                step: 0,
            },
        },
        Group {
            first: 1,
            count: 8,
            width: Some(36),
            control: None,
            counter: At::Msr {
                first: 0xB00,
                box_stride: 0x10,
                step: 1,
            },
        },
        Group {
            first: 9,
            count: 8,
            width: Some(36),
            control: None,
            counter: At::Msr {
                first: 0xB08,
                box_stride: 0x10,
                step: 1,
            },
        },
    ],
    source: "likwid perfmon_skylakeX_counters.h IBOX0-5FIX (IBOXnCLK, IBANDnPI/PO, IUTILnPI/PO)",
};

/// PCM SKX_MC{0,1}_CH{0-2}_REGISTER_DEV/FUNC_ADDR; likwid skylakeX_pci_devices device ids
/// and PCI_UNC_SKX_MC_PMON_* offsets, width 48 (MBOX).
const SKX_IMC_DEVS: &[Dev] = &[
    dev(0x2042, 10, 2),
    dev(0x2046, 10, 6),
    dev(0x204A, 11, 2),
    dev(0x2042, 12, 2),
    dev(0x2046, 12, 6),
    dev(0x204A, 13, 2),
];
const SKX_IMC: Unit = Unit {
    processors: SKX,
    unit: "IMC",
    prefix: "IMC",
    numbered: true,
    boxes: 6,
    general: 4,
    box_ctl: Some(At::Pci {
        devices: SKX_IMC_DEVS,
        offset: 0xF4,
        step: 0,
    }),
    groups: &[
        Group {
            first: 0,
            count: 4,
            width: Some(48),
            control: Some(At::Pci {
                devices: SKX_IMC_DEVS,
                offset: 0xD8,
                step: 4,
            }),
            counter: At::Pci {
                devices: SKX_IMC_DEVS,
                offset: 0xA0,
                step: 8,
            },
        },
        // The fixed DRAM-clock counter: likwid's BoxMap has no row for MBOXnFIX, so no width.
        Group {
            first: 4,
            count: 1,
            width: None,
            control: Some(At::Pci {
                devices: SKX_IMC_DEVS,
                offset: 0xF0,
                step: 0,
            }),
            counter: At::Pci {
                devices: SKX_IMC_DEVS,
                offset: 0xD0,
                step: 0,
            },
        },
    ],
    source:
        "likwid PCI_UNC_SKX_MC_PMON_*, skylakeX_pci_devices; PCM SKX_MC*_REGISTER_DEV/FUNC_ADDR",
};

/// likwid skylakeX_pci_devices PCI_HA_DEVICE_0/1 (08.0, 09.0, 0x2066) and
/// MSR_UNC_SKX_M2M_PMON_*; PCM SKX_M2M_PCI_PMON_* (the same offsets).
const SKX_M2M_DEVS: &[Dev] = &[dev(0x2066, 8, 0), dev(0x2066, 9, 0)];
const SKX_M2M: Unit = Unit {
    processors: SKX,
    unit: "M2M",
    prefix: "M2M",
    numbered: true,
    boxes: 2,
    general: 4,
    box_ctl: Some(At::Pci {
        devices: SKX_M2M_DEVS,
        offset: 0x258,
        step: 0,
    }),
    groups: &[Group {
        first: 0,
        count: 4,
        width: Some(48),
        control: Some(At::Pci {
            devices: SKX_M2M_DEVS,
            offset: 0x228,
            step: 8,
        }),
        // likwid's M2M1C3 names CTR2 (0x210), a slip: its M2M0C3 and PCM's
        // SKX_M2M_PCI_PMON_CTR3_ADDR are 0x218.
        counter: At::Pci {
            devices: SKX_M2M_DEVS,
            offset: 0x200,
            step: 8,
        },
    }],
    source: "likwid MSR_UNC_SKX_M2M_PMON_*, skylakeX_pci_devices PCI_HA_DEVICE_0/1; PCM SKX_M2M_PCI_PMON_*",
};

/// PCM SKX_M3UPI_PORT{0,1,2}_REGISTER_DEV/FUNC_ADDR (18.1, 18.2, 18.5) and M3UPI_PCI_PMON_*
/// (box 0xF4, CTL0-2 0xD8 4 apart, CTR0-2 0xA0 8 apart); likwid's skylakeX_pci_devices names
/// 12.0, 12.1 and 12.4 (0x204C/0x204D) instead, which no other source has, so PCM's functions.
const SKX_M3UPI_DEVS: &[Dev] = &[devfn(18, 1), devfn(18, 2), devfn(18, 5)];
const SKX_M3UPI: Unit = Unit {
    processors: SKX,
    unit: "M3UPI",
    prefix: "M3UPI",
    numbered: true,
    boxes: 3,
    general: 3,
    box_ctl: Some(At::Pci {
        devices: SKX_M3UPI_DEVS,
        offset: 0xF4,
        step: 0,
    }),
    groups: &[Group {
        first: 0,
        count: 3,
        width: Some(48),
        control: Some(At::Pci {
            devices: SKX_M3UPI_DEVS,
            offset: 0xD8,
            step: 4,
        }),
        counter: At::Pci {
            devices: SKX_M3UPI_DEVS,
            offset: 0xA0,
            step: 8,
        },
    }],
    source: "PCM SKX_M3UPI_PORT*_REGISTER_DEV/FUNC_ADDR, M3UPI_PCI_PMON_*; likwid MSR_UNC_SKX_M3UPI_PMON_* (width, RBOX)",
};

/// likwid skylakeX_pci_devices PCI_QPI_DEVICE_PORT_0-2 (0e.0, 0f.0, 10.0, 0x2058) and
/// MSR_UNC_SKX_UPI_PMON_*; PCM SKX_QPI_PORT*_REGISTER_DEV/FUNC_ADDR (14-16, 0).
const SKX_UPI_DEVS: &[Dev] = &[dev(0x2058, 14, 0), dev(0x2058, 15, 0), dev(0x2058, 16, 0)];
const SKX_UPI: Unit = Unit {
    processors: SKX,
    unit: "UPI",
    prefix: "UPI",
    numbered: true,
    boxes: 3,
    general: 4,
    box_ctl: Some(At::Pci {
        devices: SKX_UPI_DEVS,
        offset: 0x378,
        step: 0,
    }),
    groups: &[Group {
        first: 0,
        count: 4,
        width: Some(48),
        control: Some(At::Pci {
            devices: SKX_UPI_DEVS,
            offset: 0x350,
            step: 8,
        }),
        counter: At::Pci {
            devices: SKX_UPI_DEVS,
            offset: 0x318,
            step: 8,
        },
    }],
    source: "likwid MSR_UNC_SKX_UPI_PMON_*, skylakeX_pci_devices; PCM SKX_QPI_PORT*_REGISTER_DEV/FUNC_ADDR",
};

/// likwid MSR_UNC_V3_PCU_PMON_BOX_CTL / CTL0-3 / CTR0-3 (WBOX), width 48.
const SKX_PCU: Unit = Unit {
    processors: SKX,
    unit: "PCU",
    prefix: "PCU",
    numbered: false,
    boxes: 1,
    general: 4,
    box_ctl: Some(At::Msr {
        first: 0x710,
        box_stride: 0,
        step: 0,
    }),
    groups: &[Group {
        first: 0,
        count: 4,
        width: Some(48),
        control: Some(At::Msr {
            first: 0x711,
            box_stride: 0,
            step: 1,
        }),
        counter: At::Msr {
            first: 0x717,
            box_stride: 0,
            step: 1,
        },
    }],
    source: "likwid registers.h MSR_UNC_V3_PCU_PMON_*, perfmon_skylakeX_counters.h WBOX",
};

/// likwid MSR_UNC_V3_U_PMON_CTL0-1 / CTR0-1 and U_UCLK_FIXED_CTL/CTR (UBOX, UBOXFIX),
/// widths 48 (skylakeX_box_map UBOX, UBOXFIX). The U-box has no box control.
const SKX_UBOX: Unit = Unit {
    processors: SKX,
    unit: "UBOX",
    prefix: "UBOX",
    numbered: false,
    boxes: 1,
    general: 2,
    box_ctl: None,
    groups: &[
        Group {
            first: 0,
            count: 2,
            width: Some(48),
            control: Some(At::Msr {
                first: 0x705,
                box_stride: 0,
                step: 1,
            }),
            counter: At::Msr {
                first: 0x709,
                box_stride: 0,
                step: 1,
            },
        },
        Group {
            first: 2,
            count: 1,
            width: Some(48),
            control: Some(At::Msr {
                first: 0x703,
                box_stride: 0,
                step: 0,
            }),
            counter: At::Msr {
                first: 0x704,
                box_stride: 0,
                step: 0,
            },
        },
    ],
    source: "likwid registers.h MSR_UNC_V3_U_*, perfmon_skylakeX_counters.h UBOX/UBOXFIX",
};

/// likwid icelakeX_box_map CBOX0-39: MSR_UNC_ICX_C{n}_PMON_CTRL; the counter map puts CTL0
/// one above it and CTR0 eight above (CBOXnC0-3), width 48. CHA 34-39 sit below CHA 0.
const ICX_CHA_BOXES: &[u32] = &[
    0xE00, 0xE0E, 0xE1C, 0xE2A, 0xE38, 0xE46, 0xE54, 0xE62, 0xE70, 0xE7E, 0xE8C, 0xE9A, 0xEA8,
    0xEB6, 0xEC4, 0xED2, 0xEE0, 0xEEE, 0xF0A, 0xF18, 0xF26, 0xF34, 0xF42, 0xF50, 0xF5E, 0xF6C,
    0xF7A, 0xF88, 0xF96, 0xFA4, 0xFB2, 0xFC0, 0xFCE, 0xFDC, 0xB60, 0xB6E, 0xB7C, 0xB8A, 0xB98,
    0xBA6,
];
const ICX_CHA: Unit = Unit {
    processors: ICX,
    unit: "CHA",
    prefix: "CHA",
    numbered: true,
    boxes: 40,
    general: 4,
    box_ctl: Some(At::MsrEach {
        boxes: ICX_CHA_BOXES,
        offset: 0,
        step: 0,
    }),
    groups: &[Group {
        first: 0,
        count: 4,
        width: Some(48),
        control: Some(At::MsrEach {
            boxes: ICX_CHA_BOXES,
            offset: 1,
            step: 1,
        }),
        counter: At::MsrEach {
            boxes: ICX_CHA_BOXES,
            offset: 8,
            step: 1,
        },
    }],
    source: "likwid registers.h MSR_UNC_ICX_C0..39_PMON_*, perfmon_icelakeX_counters.h CBOX0-39",
};

/// likwid icelakeX EUBOX0-5: MSR_UNC_M2IOSF_TC{n}_PMON_CTRL, CTL0 8 above, CTR0 1 above.
const ICX_IIO_BOXES: &[u32] = &[0xA50, 0xA70, 0xA90, 0xAE0, 0xB00, 0xB20];
const ICX_IIO: Unit = Unit {
    processors: ICX,
    unit: "IIO",
    prefix: "IIO",
    numbered: true,
    boxes: 6,
    general: 4,
    box_ctl: Some(At::MsrEach {
        boxes: ICX_IIO_BOXES,
        offset: 0,
        step: 0,
    }),
    groups: &[Group {
        first: 0,
        count: 4,
        width: Some(48),
        control: Some(At::MsrEach {
            boxes: ICX_IIO_BOXES,
            offset: 8,
            step: 1,
        }),
        counter: At::MsrEach {
            boxes: ICX_IIO_BOXES,
            offset: 1,
            step: 1,
        },
    }],
    source: "likwid registers.h MSR_UNC_M2IOSF_TC*_PMON_*, perfmon_icelakeX_counters.h EUBOX0-5",
};

/// likwid icelakeX IBOX0-5: MSR_UNC_M2IOSF_IRP{n}_PMON_CTRL, CTL0 3 above, CTR0 1 above.
const ICX_IRP_BOXES: &[u32] = &[0xA4A, 0xA6A, 0xA8A, 0xADA, 0xAFA, 0xB1A];
const ICX_IRP: Unit = Unit {
    processors: ICX,
    unit: "IRP",
    prefix: "IRP",
    numbered: true,
    boxes: 6,
    general: 2,
    box_ctl: Some(At::MsrEach {
        boxes: ICX_IRP_BOXES,
        offset: 0,
        step: 0,
    }),
    groups: &[Group {
        first: 0,
        count: 2,
        width: Some(48),
        control: Some(At::MsrEach {
            boxes: ICX_IRP_BOXES,
            offset: 3,
            step: 1,
        }),
        counter: At::MsrEach {
            boxes: ICX_IRP_BOXES,
            offset: 1,
            step: 1,
        },
    }],
    source: "likwid registers.h MSR_UNC_M2IOSF_IRP*_PMON_*, perfmon_icelakeX_counters.h IBOX0-5",
};

/// likwid icelakeX PBOX, PBOX1-5: MSR_UNC_M2IOSF_M2PCIE{n}_PMON_CTRL, CTL0 6 above, CTR0 1
/// above.
const ICX_M2PCIE_BOXES: &[u32] = &[0xA40, 0xA60, 0xA80, 0xAD0, 0xAF0, 0xB10];
const ICX_M2PCIE: Unit = Unit {
    processors: ICX,
    unit: "M2PCIE",
    prefix: "M2PCIE",
    numbered: true,
    boxes: 6,
    general: 4,
    box_ctl: Some(At::MsrEach {
        boxes: ICX_M2PCIE_BOXES,
        offset: 0,
        step: 0,
    }),
    groups: &[Group {
        first: 0,
        count: 4,
        width: Some(48),
        control: Some(At::MsrEach {
            boxes: ICX_M2PCIE_BOXES,
            offset: 6,
            step: 1,
        }),
        counter: At::MsrEach {
            boxes: ICX_M2PCIE_BOXES,
            offset: 1,
            step: 1,
        },
    }],
    source:
        "likwid registers.h MSR_UNC_M2IOSF_M2PCIE*_PMON_*, perfmon_icelakeX_counters.h PBOX-PBOX5",
};

/// likwid icelakeX EUBOXnFIX (the I/O clock, one per IIO box: 0xA55 ..) and IBOXnFIX (eight
/// inbound bandwidth counters per box from 0xAA0 ..), width 48 (icelakeX_box_map).
const ICX_IOCLK: &[u32] = &[0xA55, 0xA75, 0xA95, 0xAE5, 0xB05, 0xB25];
const ICX_BW_IN: &[u32] = &[0xAA0, 0xAB0, 0xAC0, 0xB30, 0xB40, 0xB50];
const ICX_IIO_FREE: Unit = Unit {
    processors: ICX,
    unit: "IIO_FREE",
    prefix: "IIO_FREE",
    numbered: true,
    boxes: 6,
    general: 0,
    box_ctl: None,
    groups: &[
        Group {
            first: 0,
            count: 1,
            width: Some(48),
            control: None,
            counter: At::MsrEach {
                boxes: ICX_IOCLK,
                offset: 0,
                step: 0,
            },
        },
        Group {
            first: 1,
            count: 8,
            width: Some(48),
            control: None,
            counter: At::MsrEach {
                boxes: ICX_BW_IN,
                offset: 0,
                step: 1,
            },
        },
    ],
    source: "likwid perfmon_icelakeX_counters.h EUBOX0-5FIX, IBOX0-5FIX",
};

/// likwid PCI_UNC_ICX_M2M_PMON_* and icelakeX_pci_devices PCI_HA_DEVICE_0-3 (0c.0 - 0f.0,
/// 0x344A); PCM SERVER_M2M_PCI_PMON_* (box 0x438, CTL0 0x468 and CTR0 0x440, 8 apart).
const ICX_M2M_DEVS: &[Dev] = &[
    dev(0x344A, 12, 0),
    dev(0x344A, 13, 0),
    dev(0x344A, 14, 0),
    dev(0x344A, 15, 0),
];
const ICX_M2M: Unit = Unit {
    processors: ICX,
    unit: "M2M",
    prefix: "M2M",
    numbered: true,
    boxes: 4,
    general: 4,
    box_ctl: Some(At::Pci {
        devices: ICX_M2M_DEVS,
        offset: 0x438,
        step: 0,
    }),
    groups: &[Group {
        first: 0,
        count: 4,
        width: Some(48),
        control: Some(At::Pci {
            devices: ICX_M2M_DEVS,
            offset: 0x468,
            step: 8,
        }),
        counter: At::Pci {
            devices: ICX_M2M_DEVS,
            offset: 0x440,
            step: 8,
        },
    }],
    source: "likwid PCI_UNC_ICX_M2M_PMON_*, icelakeX_pci_devices; PCM SERVER_M2M_PCI_PMON_*",
};

/// likwid icelakeX_pci_devices PCI_R3QPI_DEVICE_LINK_0-2 (05.1 - 07.1, 0x3446); PCM
/// ICX_M3UPI_PORT*_REGISTER_DEV/FUNC_ADDR and ICX_M3UPI_PCI_PMON_* (box 0xA0, CTL0-3 0xD8 4
/// apart, CTR0-3 0xA8 8 apart).
const ICX_M3UPI_DEVS: &[Dev] = &[dev(0x3446, 5, 1), dev(0x3446, 6, 1), dev(0x3446, 7, 1)];
const ICX_M3UPI: Unit = Unit {
    processors: ICX,
    unit: "M3UPI",
    prefix: "M3UPI",
    numbered: true,
    boxes: 3,
    general: 4,
    box_ctl: Some(At::Pci {
        devices: ICX_M3UPI_DEVS,
        offset: 0xA0,
        step: 0,
    }),
    groups: &[Group {
        first: 0,
        count: 4,
        width: Some(48),
        control: Some(At::Pci {
            devices: ICX_M3UPI_DEVS,
            offset: 0xD8,
            step: 4,
        }),
        counter: At::Pci {
            devices: ICX_M3UPI_DEVS,
            offset: 0xA8,
            step: 8,
        },
    }],
    source: "PCM ICX_M3UPI_PORT*_REGISTER_*, ICX_M3UPI_PCI_PMON_*; likwid icelakeX_pci_devices (ids, width)",
};

/// likwid icelakeX_pci_devices PCI_QPI_DEVICE_PORT_0-2 (02.1 - 04.1, 0x3441); PCM
/// ICX_QPI_PORT*_REGISTER_DEV/FUNC_ADDR and ICX_UPI_PCI_PMON_* (box 0x318, CTL0 0x350, CTR0
/// 0x320, 8 apart).
const ICX_UPI_DEVS: &[Dev] = &[dev(0x3441, 2, 1), dev(0x3441, 3, 1), dev(0x3441, 4, 1)];
const ICX_UPI: Unit = Unit {
    processors: ICX,
    unit: "UPI",
    prefix: "UPI",
    numbered: true,
    boxes: 3,
    general: 4,
    box_ctl: Some(At::Pci {
        devices: ICX_UPI_DEVS,
        offset: 0x318,
        step: 0,
    }),
    groups: &[Group {
        first: 0,
        count: 4,
        width: Some(48),
        control: Some(At::Pci {
            devices: ICX_UPI_DEVS,
            offset: 0x350,
            step: 8,
        }),
        counter: At::Pci {
            devices: ICX_UPI_DEVS,
            offset: 0x320,
            step: 8,
        },
    }],
    source:
        "PCM ICX_QPI_PORT*_REGISTER_*, ICX_UPI_PCI_PMON_*; likwid icelakeX_pci_devices (ids, width)",
};

/// likwid icelakeX WBOX: MSR_UNC_V3_PCU_PMON_* as on Skylake-SP, width 48.
const ICX_PCU: Unit = Unit {
    processors: ICX,
    ..SKX_PCU
};

/// likwid icelakeX UBOX and UBOXFIX: the Skylake-SP MSRs, width 48.
const ICX_UBOX: Unit = Unit {
    processors: ICX,
    ..SKX_UBOX
};

/// PCM SERVER_MC_CH_PMON_* offsets in each channel window (box 0x00, CTL0 0x40 4 apart, CTR0
/// 0x08 8 apart, fixed 0x54 / 0x38). Boxes: PCM maps a window per channel for each memory
/// controller base getServerMemBars finds (one per M2M, four), 3 channels on Ice Lake-D
/// (ICX_D) and 2 on Ice Lake-SP; the spec's processor covers both models, so 4 x 3. Width:
/// likwid icelakeX_box_map MBOX and MBOXnFIX, 48.
const ICX_IMC: Unit = Unit {
    processors: ICX,
    unit: "IMC",
    prefix: "IMC",
    numbered: true,
    boxes: 12,
    general: 4,
    box_ctl: Some(At::Mmio {
        channels: 3,
        offset: 0,
        step: 0,
    }),
    groups: &[
        Group {
            first: 0,
            count: 4,
            width: Some(48),
            control: Some(At::Mmio {
                channels: 3,
                offset: 0x40,
                step: 4,
            }),
            counter: At::Mmio {
                channels: 3,
                offset: 0x08,
                step: 8,
            },
        },
        Group {
            first: 4,
            count: 1,
            width: Some(48),
            control: Some(At::Mmio {
                channels: 3,
                offset: 0x54,
                step: 0,
            }),
            counter: At::Mmio {
                channels: 3,
                offset: 0x38,
                step: 0,
            },
        },
    ],
    source:
        "PCM types.h SERVER_MC_CH_PMON_*; likwid MMIO_ICX_IMC_* and icelakeX_box_map MBOX width",
};

/// PCM SPR_QPI_PORT{0-3}_REGISTER_DEV/FUNC_ADDR (1-4, 1) and SPR_UPI_PCI_PMON_* (box 0x318,
/// CTL0 0x350 and CTR0 0x320, 8 apart), programmed for SPR, EMR and GNR alike.
const SPR_UPI_DEVS: &[Dev] = &[devfn(1, 1), devfn(2, 1), devfn(3, 1), devfn(4, 1)];
const SPR_UPI: Unit = Unit {
    processors: SPR,
    unit: "UPI",
    prefix: "UPI",
    numbered: true,
    boxes: 4,
    general: 4,
    box_ctl: Some(At::Pci {
        devices: SPR_UPI_DEVS,
        offset: 0x318,
        step: 0,
    }),
    groups: &[Group {
        first: 0,
        count: 4,
        width: None,
        control: Some(At::Pci {
            devices: SPR_UPI_DEVS,
            offset: 0x350,
            step: 8,
        }),
        counter: At::Pci {
            devices: SPR_UPI_DEVS,
            offset: 0x320,
            step: 8,
        },
    }],
    source: "PCM types.h SPR_QPI_PORT*_REGISTER_*, SPR_UPI_PCI_PMON_*; cpucounters.cpp xpiPMUs",
};

/// PCM SPR_M3UPI_PORT{0-3}_REGISTER_DEV/FUNC_ADDR (5-8, 1), programmed for ICX, SPR and EMR
/// with ICX_M3UPI_PCI_PMON_* (cpucounters.cpp m3upiPMUs).
const SPR_M3UPI_DEVS: &[Dev] = &[devfn(5, 1), devfn(6, 1), devfn(7, 1), devfn(8, 1)];
const SPR_M3UPI: Unit = Unit {
    processors: SPR,
    unit: "M3UPI",
    prefix: "M3UPI",
    numbered: true,
    boxes: 4,
    general: 4,
    box_ctl: Some(At::Pci {
        devices: SPR_M3UPI_DEVS,
        offset: 0xA0,
        step: 0,
    }),
    groups: &[Group {
        first: 0,
        count: 4,
        width: None,
        control: Some(At::Pci {
            devices: SPR_M3UPI_DEVS,
            offset: 0xD8,
            step: 4,
        }),
        counter: At::Pci {
            devices: SPR_M3UPI_DEVS,
            offset: 0xA8,
            step: 8,
        },
    }],
    source:
        "PCM types.h SPR_M3UPI_PORT*_REGISTER_*, ICX_M3UPI_PCI_PMON_*; cpucounters.cpp m3upiPMUs",
};

/// AMD's MSR pairs: control `first + 2 n`, counter one above it, each box `box_stride`
/// further; likwid's BoxMap gives every AMD counter 48 bits (zen2-5 PMC, CBOX0, MBOX0, BBOX).
const fn pairs(count: u32, first: u32, box_stride: u32) -> Group {
    Group {
        first: 0,
        count,
        width: Some(48),
        control: Some(At::Msr {
            first,
            box_stride,
            step: 2,
        }),
        counter: At::Msr {
            first: first + 1,
            box_stride,
            step: 2,
        },
    }
}

/// likwid MSR_AMD17_PERFEVTSEL0-3 / MSR_AMD17_2_PERFEVTSEL4-5 and their PMCs (PMC0-5).
const AMD_CORE: &[Group] = &[pairs(6, 0xC001_0200, 0)];
/// likwid MSR_AMD17_L3_PERFEVTSEL0-5 / L3_PMC0-5 (CPMC0-5).
const AMD_L3: &[Group] = &[pairs(6, 0xC001_0230, 0)];
/// likwid MSR_AMD17_2_DF_PERFEVTSEL0-3 (DFC0-3 in the zen2 and zen3 counter maps).
const AMD_DF4: &[Group] = &[pairs(4, 0xC001_0240, 0)];
/// likwid zen4_init_counter_map / zen5_init_counter_map: df_count 16 unless CPUID
/// 0x80000022 EBX[15:10] says otherwise, DFC i at MSR_AMD19_DF_PERFEVTSEL0 + 2 i.
const AMD_DF16: &[Group] = &[pairs(16, 0xC001_0240, 0)];
/// likwid zen4/zen5_init_counter_map: UMC i counter j at MSR_AMD1A_UMC_PERFEVTSEL0 +
/// 2 (i umc_pmcs + j), so 4 counters a UMC put each UMC 8 MSRs further.
const AMD_UMC: &[Group] = &[pairs(4, 0xC001_0800, 8)];

fn amd(
    processor: &'static [&'static str],
    unit: &'static str,
    boxes: u32,
    groups: &'static [Group],
    source: &'static str,
) -> Unit {
    Unit {
        processors: processor,
        unit,
        prefix: unit,
        numbered: boxes > 1,
        boxes,
        general: groups[0].count,
        box_ctl: None,
        groups,
        source,
    }
}

/// The AMD rows: likwid perfmon_zen{2,3,4,5}_counters.h and .h, registers.h. The UMC count,
/// 12, is AMD_K19_UMC_MAX_UNITS (zen4) and AMD_K1A_UMC_MAX_UNITS (zen5); counters per UMC
/// likwid reads from CPUID (umc_count / umc_units), 4 on the parts of the public boot logs
/// ("amd_uncore: 4 amd_umc_N counters").
fn amd_units() -> Vec<Unit> {
    const CORE: &str = "likwid perfmon_zenN_counters.h PMC0-5, registers.h MSR_AMD17_PERFEVTSEL*";
    const L3: &str = "likwid perfmon_zenN_counters.h CPMC0-5, registers.h MSR_AMD17_L3_*";
    const DF: &str = "likwid perfmon_zen2/3_counters.h DFC0-3; zen4/5.h init_counter_map df_count";
    const UMC: &str = "likwid perfmon_zen4/5.h init_counter_map, *_counters.h *_UMC_MAX_UNITS";
    let mut all = Vec::new();
    for p in ["amd-zen2", "amd-zen3", "amd-zen4", "amd-zen5"] {
        let one: &'static [&'static str] = match p {
            "amd-zen2" => &["amd-zen2"],
            "amd-zen3" => &["amd-zen3"],
            "amd-zen4" => &["amd-zen4"],
            _ => &["amd-zen5"],
        };
        let newer = matches!(p, "amd-zen4" | "amd-zen5");
        all.push(amd(one, "PMC", 1, AMD_CORE, CORE));
        all.push(amd(one, "L3", 1, AMD_L3, L3));
        all.push(amd(
            one,
            "DF",
            1,
            if newer { AMD_DF16 } else { AMD_DF4 },
            DF,
        ));
        if newer {
            all.push(amd(one, "UMC", 12, AMD_UMC, UMC));
        }
    }
    all
}

/// Every row.
pub fn units() -> Vec<Unit> {
    let mut all = vec![
        SKX_CHA,
        SKX_IIO,
        SKX_IRP,
        SKX_IIO_FREE,
        SKX_IMC,
        SKX_M2M,
        SKX_M3UPI,
        SKX_UPI,
        SKX_PCU,
        SKX_UBOX,
        ICX_CHA,
        ICX_IIO,
        ICX_IRP,
        ICX_M2PCIE,
        ICX_IIO_FREE,
        ICX_M2M,
        ICX_M3UPI,
        ICX_UPI,
        ICX_PCU,
        ICX_UBOX,
        ICX_IMC,
        SPR_UPI,
        SPR_M3UPI,
    ];
    all.extend(amd_units());
    all
}

/// Units of the ten processors with no row yet, and why: no source other than the one the
/// spec cites gives their addresses (Linux finds these boxes only through the discovery
/// table; likwid's Sapphire and Granite Rapids maps are placeholders filled from the same
/// table), or the row is not transcribed yet.
pub const NO_INDEPENDENT_SOURCE: &[(&str, &str, &str)] = &[
    ("sapphire-rapids", "CHA", "the kernel reads it from the discovery table (spr_uncore_chabox has no address); likwid FAKE_UNC_*"),
    ("sapphire-rapids", "IIO", "the kernel reads it from the discovery table (spr_uncore_iio); likwid FAKE_UNC_*"),
    ("sapphire-rapids", "IRP", "the kernel reads it from the discovery table (spr_uncore_irp); likwid FAKE_UNC_*"),
    ("sapphire-rapids", "M2M", "the kernel reads it from the discovery table (spr_uncore_m2m); likwid FAKE_UNC_*"),
    ("sapphire-rapids", "IMC", "the kernel reads it from the discovery table (spr_uncore_imc); likwid FAKE_UNC_*"),
    ("sapphire-rapids", "UBOX", "the kernel reads it from the discovery table; likwid FAKE_UNC_*"),
    ("sapphire-rapids", "IIO_FREE", "spec cites Linux spr_iio_freerunning; PCM and likwid have no free-running IIO counters: not transcribed"),
    ("sapphire-rapids", "IMC_FREE", "spec cites Linux spr_imc_freerunning; PCM and likwid have none for this part: not transcribed"),
    ("granite-rapids", "CHA", "the kernel reads it from the discovery table; likwid FAKE_UNC_*"),
    ("granite-rapids", "IIO", "the kernel reads it from the discovery table; likwid FAKE_UNC_*"),
    ("granite-rapids", "IRP", "the kernel reads it from the discovery table; likwid FAKE_UNC_*"),
    ("granite-rapids", "IMC", "the kernel reads it from the discovery table; likwid FAKE_UNC_*"),
    ("granite-rapids", "B2CMI", "the kernel reads it from the discovery table (gnr_uncore_b2cmi has no address)"),
    ("granite-rapids", "PCU", "placed by the discovery table alone (<from-table>): no fixed address to compare; Linux gnr_uncores[4] and PCM SPR_PCU_BOX_TYPE give only its type"),
    ("granite-rapids", "B2UPI", "placed by the discovery table alone (<from-table>, PCI): no fixed address to compare; Linux gnr_uncores[18] gives only its type and ops"),
    ("granite-rapids", "B2CXL", "placed by the discovery table alone (<from-table>, memory-mapped): no fixed address to compare; Linux gnr_uncores[17] gives only its type and ops"),
    ("granite-rapids", "UBOX", "the kernel reads it from the discovery table"),
    ("diamond-rapids", "CBO", "placed by the CBB discovery tables alone (<from-table>): no fixed address to compare; Linux dmr_uncores[31] gives only its type, and PCM and likwid have no Diamond Rapids support"),
    ("granite-rapids", "UPI", "the kernel reads it from the discovery table; not transcribed from another source"),
    ("granite-rapids", "IIO_FREE", "spec cites Linux; PCM and likwid have no free-running IIO counters: not transcribed"),
    ("skylake-sp", "M2PCIE", "spec cites Linux skx_uncore_m2pcie and skx_uncore_pci_ids; PCM and likwid program no M2PCIe box on this part"),
    ("cascade-lake", "M2PCIE", "Skylake-SP's unit (units-from): Linux only; PCM and likwid program no M2PCIe box on this part"),
    ("ice-lake-sp", "IMC_FREE", "spec cites Linux icx_imc_freerunning; likwid MDEV0-3 give offsets relative to another base: not transcribed"),
];

/// Disagreements no third source settles (see each `why`).
pub const CONFLICTS: &[Conflict] = &[Conflict {
    processor: "sapphire-rapids",
    unit: "M3UPI",
    fact: "control",
    why: "PCM programs Sapphire and Emerald Rapids' M3UPI with the Ice Lake-SP offsets, controls 4 bytes apart (ICX_M3UPI_PCI_PMON_CTL0-3_ADDR); the spec follows Linux, whose generic PCI init for the discovery units (UNCORE_BOX_FLAG_CTL_OFFS8) puts them 8 apart",
}];
