//! PCI device addresses: what a [`PciAccess`](super::PciAccess) backend is addressed by.

use std::fmt;
use std::str::FromStr;

/// A PCI device address: segment (domain), bus, device, function.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Bdf {
    /// PCI segment (domain).
    pub segment: u16,
    /// Bus.
    pub bus: u8,
    /// Device (slot), 0-31.
    pub device: u8,
    /// Function, 0-7.
    pub function: u8,
}

impl Bdf {
    /// A device on segment 0.
    pub const fn new(bus: u8, device: u8, function: u8) -> Self {
        Self {
            segment: 0,
            bus,
            device,
            function,
        }
    }
}

impl fmt::Display for Bdf {
    /// The sysfs spelling, `0000:3f:08.2`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{:04x}:{:02x}:{:02x}.{:x}",
            self.segment, self.bus, self.device, self.function
        )
    }
}

/// A BDF that could not be parsed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BadBdf(pub String);

impl fmt::Display for BadBdf {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "`{}` is not a PCI address; write it as [segment:]bus:device.function in hex, e.g. 0000:3f:08.2 or 3f:08.2",
            self.0
        )
    }
}

impl std::error::Error for BadBdf {}

impl FromStr for Bdf {
    type Err = BadBdf;

    /// Parses `SSSS:BB:DD.F` or `BB:DD.F` (hex).
    fn from_str(s: &str) -> Result<Self, BadBdf> {
        let bad = || BadBdf(s.to_string());
        let (rest, function) = s.rsplit_once('.').ok_or_else(bad)?;
        let parts: Vec<&str> = rest.split(':').collect();
        let (segment, bus, device) = match parts.as_slice() {
            [b, d] => ("0", *b, *d),
            [s, b, d] => (*s, *b, *d),
            _ => return Err(bad()),
        };
        let hex = |t: &str, max: u32| {
            u32::from_str_radix(t, 16)
                .ok()
                .filter(|v| *v <= max && !t.is_empty())
        };
        Ok(Bdf {
            segment: hex(segment, 0xFFFF).ok_or_else(bad)? as u16,
            bus: hex(bus, 0xFF).ok_or_else(bad)? as u8,
            device: hex(device, 31).ok_or_else(bad)? as u8,
            function: hex(function, 7).ok_or_else(bad)? as u8,
        })
    }
}
