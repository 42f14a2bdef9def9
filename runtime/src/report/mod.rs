//! What the `pmu` command prints, as functions a program can call to print the same: aligned
//! text tables, and register values decoded as text or JSON. The binary only parses its
//! arguments and prints what these return.

pub mod register;
pub mod table;
