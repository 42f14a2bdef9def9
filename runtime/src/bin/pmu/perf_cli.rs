//! The perf backend in the `pmu` command: `encode --perf`, `watch`'s `--backend perf|raw|auto`
//! and `--pmu` options (the counting is the library's `session`), `list --backends`.

use std::path::{Path, PathBuf};

use clap::builder::PossibleValue;
use clap::{Args, ValueEnum};
use pmu_runtime::codec;
use pmu_runtime::perf::encode::from_control;
use pmu_runtime::perf::{EventSources, PerfNames, SpecNames};
use pmu_runtime::session::Route;
use pmu_runtime::{Error, UsageError};

use crate::failure::Failure;

/// `--backend`: which way `watch` and `serve` reach the counters, the library's [`Route`].
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub struct RouteArg(pub Route);

impl ValueEnum for RouteArg {
    fn value_variants<'a>() -> &'a [Self] {
        &[
            RouteArg(Route::Auto),
            RouteArg(Route::Perf),
            RouteArg(Route::Raw),
        ]
    }

    fn to_possible_value(&self) -> Option<PossibleValue> {
        Some(match self.0 {
            Route::Auto => PossibleValue::new("auto")
                .help("Through the kernel's PMU (perf_event_open), where it exists; otherwise raw"),
            Route::Perf => PossibleValue::new("perf")
                .help("Through the kernel's PMU only (counting; no root needed with CAP_PERFMON)"),
            Route::Raw => PossibleValue::new("raw")
                .help("Programming the registers directly (/dev/cpu/N/msr, PCI config space)"),
        })
    }
}

/// `watch`'s perf options.
#[derive(Args, Clone, Default)]
pub struct PerfWatchArgs {
    /// How to reach the counters: perf (the kernel's PMU driver), raw (the registers), or
    /// auto (perf where the kernel has the box's PMU, raw otherwise).
    #[arg(long, value_enum, default_value_t = RouteArg::default())]
    pub backend: RouteArg,
    /// Count events of this kernel PMU (msr, software, uncore_ha, ...) instead of one of our
    /// units; --event then takes the PMU's event names or format terms (tsc, event=0x3c).
    #[arg(long, conflicts_with = "unit")]
    pub pmu: Option<String>,
}

/// The sysfs PMU directory under `root` (`/` by default).
pub fn sources(root: Option<&Path>) -> EventSources {
    let root = root.map_or_else(|| PathBuf::from("/"), Path::to_path_buf);
    EventSources::with_root(root.join("sys/bus/event_source/devices"))
}

/// `pmu encode REGISTER fields... --perf`: the perf event string of a counter control value.
/// The PMU's format comes from sysfs when the kernel has the PMU, from the driver's format
/// (as the kernel would write it) otherwise.
/// `processor` picks among registers several processors share; it (or, without it, the one
/// `root` describes) names the core events `event=NAME` may use, as for plain `encode`.
pub fn encode(
    register: &str,
    fields: &[String],
    (processor, root): (Option<&str>, Option<&Path>),
    json_out: bool,
) -> Result<String, Failure> {
    if let Some(ev) = pmu_runtime::perf::mesh::encode_named(register, fields, &sources(root)) {
        return Ok(format!("{}\n", ev.map_err(Error::from)?));
    }
    let (core, found) = crate::encode::core_and_register(register, processor, root)?;
    let info = found.info;
    let Some(addr) = found.address else {
        return Err(UsageError::needs_instance(register, info.known_addresses()).into());
    };
    let assignments = pmu_runtime::session::words::assignments(info, fields)?;
    let raw = codec::encode_for(info, info.reset, &assignments, core)?;
    let name = SpecNames
        .lookup(info.processor, info.unit, addr.instance, Some(addr.index))
        .map_err(Error::from)?;
    let s = sources(root);
    let formats = if s.has(name.pmu) {
        s.pmu(name.pmu, &name.driver_name())
            .map_err(Error::from)?
            .formats
    } else {
        name.driver_formats()
    };
    let mut ev = from_control(
        info,
        raw,
        name.pmu,
        &formats,
        Some(name.kernel_counter(addr.index)),
    )
    .map_err(Error::from)?;
    // A core event's auxiliary MSR goes into the driver's term for it (`offcore_rsp`,
    // `ldlat`, `frontend`: config1), which the kernel writes to the register.
    if let Some(aux) = codec::aux_for(info, &assignments, core) {
        pmu_runtime::perf::encode::with_aux(&mut ev, &formats, name.driver, aux)
            .map_err(Error::from)?;
    }
    if json_out {
        return Ok(ev.json_line(addr.name, raw));
    }
    Ok(format!("{ev}\n"))
}
