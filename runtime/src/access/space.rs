//! A register space beyond the three the traits above name: registers addressed by a number
//! the space defines (a system register's encoding, a table found through an MSR), each
//! reached through a place (a CPU). A backend that has one offers it through
//! `MachineBackend::register_space`; the space names its own errors.

/// An error of a register space, its own type boxed: the layer above reports it as
/// [`crate::Error::Driver`], whose `downcast_ref` reaches the space's type.
pub type SpaceError = Box<dyn std::error::Error + Send + Sync + 'static>;

/// Raw access to a register space of a backend's own: 64-bit values by place and address.
pub trait RegisterSpace: Send + Sync {
    /// The space's name, for messages (`system registers`).
    fn space(&self) -> &'static str;
    /// Reads register `address` through `place`.
    fn read_register(&self, place: u32, address: u64) -> Result<u64, SpaceError>;
    /// Writes register `address` through `place`.
    fn write_register(&self, place: u32, address: u64, value: u64) -> Result<(), SpaceError>;
}
