//! The C headers of `generated/c/` against the Rust crate.
//!
//! The test writes a C program from the `pmu_regs` metadata: for every register layout its
//! width, count, reset value and masks, for every instance and index its address, for every
//! field its shift, width, mask, maximum and named values and, over a sample of register and
//! field values, what its get/set functions return (computed with `FieldInfo::extract` and
//! `FieldInfo::insert`), and for every event its code, unit mask, extension bit and counters.
//! It compiles that program as C99, C11 and C++ with `-Wall -Wextra -Werror -pedantic` and
//! runs it. The C names come from codegen's naming rules (`codegen::naming::c`).
//!
//! The system C and C++ compilers are needed (`cc` and `c++`, or `$CC` and `$CXX`):
//! `apt-get install -y gcc g++`. Without them the tests fail, saying so.

use std::fmt::Write;
use std::path::{Path, PathBuf};
use std::process::Command;

use codegen::model::strip_placeholders;
use codegen::naming::c as names;
use codegen::naming::event_ident;
use pmu_regs::{AddressInfo, FieldInfo, Location, RegisterInfo, PROCESSORS};

fn c_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../generated/c")
}

/// The compiler named by `var`, or `default`; fails the test with what to install if absent.
fn compiler(var: &str, default: &str) -> String {
    let cc = std::env::var(var).unwrap_or_else(|_| default.to_string());
    match Command::new(&cc).arg("--version").output() {
        Ok(out) if out.status.success() => cc,
        Ok(out) => panic!(
            "`{cc} --version` failed ({}): the C header tests need a working C and C++ compiler; \
             install them with `apt-get install -y gcc g++` (.ci/run does), or set CC and CXX",
            out.status
        ),
        Err(e) => panic!(
            "cannot run `{cc}` ({e}): the C header tests need the system C and C++ compilers; \
             install them with `apt-get install -y gcc g++` (.ci/run does), or set CC and CXX"
        ),
    }
}

/// Compiles `source` (written as `file` in a temporary directory) with the headers on the
/// include path, failing with the compiler's messages; returns the executable's path.
fn compile(dir: &Path, compiler: &str, flags: &[&str], file: &str, source: &str) -> PathBuf {
    let src = dir.join(file);
    std::fs::write(&src, source).unwrap();
    let exe = dir.join(format!("{file}.out"));
    let out = Command::new(compiler)
        .args(flags)
        .args(["-Wall", "-Wextra", "-Werror", "-pedantic", "-I"])
        .arg(c_dir())
        .arg(&src)
        .arg("-o")
        .arg(&exe)
        .output()
        .unwrap_or_else(|e| panic!("cannot run {compiler}: {e}"));
    assert!(
        out.status.success(),
        "{compiler} {} {file} failed:\n{}",
        flags.join(" "),
        String::from_utf8_lossy(&out.stderr)
    );
    exe
}

fn run(exe: &Path) -> String {
    let out = Command::new(exe).output().unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout).into_owned();
    assert!(
        out.status.success(),
        "{} failed:\n{}{}",
        exe.display(),
        stdout,
        String::from_utf8_lossy(&out.stderr)
    );
    stdout
}

fn includes() -> String {
    PROCESSORS
        .iter()
        .map(|p| format!("#include \"{}\"\n", names::header_file(p.module)))
        .collect()
}

/// A literal the C compiler reads as an unsigned 64-bit value.
fn u64_lit(v: u64) -> String {
    format!("0x{v:X}ULL")
}

/// Checks are grouped in one function per register, so no function gets huge, each a table
/// of (value, expected, name) rows that one loop compares: a call per check took the
/// compilers about twice as long.
struct Program {
    functions: String,
    calls: String,
    checks: usize,
    current: String,
}

impl Program {
    fn new() -> Self {
        Self {
            functions: String::new(),
            calls: String::new(),
            checks: 0,
            current: String::new(),
        }
    }

    /// `expr` (a C expression) must equal `expected`: one row of the current function's table.
    fn eq(&mut self, expr: &str, expected: u64) {
        self.checks += 1;
        let _ = writeln!(
            self.current,
            "\t\t{{ (unsigned long long)({expr}), {}, \"{}\" }},",
            u64_lit(expected),
            expr.replace('"', "\\\"")
        );
    }

    fn end_function(&mut self, n: usize) {
        let _ = write!(
            self.functions,
            "static void checks_{n}(void)\n{{\n\tconst struct expect c[] = {{\n{}\t\t{{ 0, 0, 0 }}\n\t}};\n\tcheck_all(c);\n}}\n\n",
            std::mem::take(&mut self.current)
        );
        let _ = writeln!(self.calls, "\tchecks_{n}();");
    }

    fn source(&self) -> String {
        format!(
            "#include <stdio.h>\n{}\n\
             static unsigned long failures;\n\
             struct expect {{ unsigned long long got, want; const char *what; }};\n\
             static void check_all(const struct expect *c)\n\
             {{\n\
             \tfor (; c->what; c++) {{\n\
             \t\tif (c->got != c->want) {{\n\
             \t\t\tfailures++;\n\
             \t\t\tfprintf(stderr, \"%s is 0x%llX, the Rust crate says 0x%llX\\n\", c->what, c->got, c->want);\n\
             \t\t}}\n\
             \t}}\n\
             }}\n\n\
             {}int main(void)\n{{\n{}\
             \tprintf(\"%d checks, %lu failed\\n\", {}, failures);\n\
             \treturn failures != 0;\n}}\n",
            includes(),
            self.functions,
            self.calls,
            self.checks
        )
    }
}

/// Register values to try: zero, all ones, and two patterns.
fn sample_raws(width: u32) -> [u64; 4] {
    let all = if width >= 64 {
        u64::MAX
    } else {
        (1 << width) - 1
    };
    [
        0,
        all,
        0xA5A5_5A5A_F00F_C33C & all,
        0x0123_4567_89AB_CDEF & all,
    ]
}

/// Field values to try: zero, the maximum, a pattern, and one too wide for the field (the C
/// set functions drop the excess bits).
fn sample_values(f: &FieldInfo) -> Vec<(u64, u64)> {
    let max = f.max();
    let mut v = vec![
        (0, 0),
        (max, max),
        (0x5555_5555_5555_5555 & max, 0x5555_5555_5555_5555 & max),
    ];
    if max != u64::MAX {
        let wide = (max + 1) | (0x2 & max);
        v.push((wide, wide & max));
    }
    v
}

/// The name of one instance of `r` with the index dropped (`C0_MSR_PMON_CTL`), from the
/// concrete name of its element 0.
fn instance_name(r: &RegisterInfo, first: &AddressInfo) -> String {
    let template = r.name;
    let name = match template.split_once("{i}") {
        Some((before, after)) => {
            let tail = after.replace("{n}", &first.index.to_string());
            let key = &first.name[before.len()..first.name.len() - tail.len()];
            template.replace("{i}", key)
        }
        None => template.to_string(),
    };
    strip_placeholders(&name)
}

/// Linux's `sys_reg(op0, op1, crn, crm, op2)` (arch/arm64/include/asm/sysreg.h: the fields
/// shifted by 19, 16, 12, 8 and 5), which the headers' `_ENCODING` macros give.
fn sys_reg(e: pmu_regs::SysRegEncoding) -> u64 {
    (u64::from(e.op0) << 19)
        | (u64::from(e.op1) << 16)
        | (u64::from(e.crn) << 12)
        | (u64::from(e.crm) << 8)
        | (u64::from(e.op2) << 5)
}

/// The elements of one instance's array lie `step` apart in one device.
fn regular_step(addrs: &[&AddressInfo]) -> Option<u64> {
    let at = |a: &AddressInfo| match a.location {
        Location::Msr(n) => (u64::from(n), None),
        Location::Pci {
            device_id,
            device,
            function,
            offset,
        } => (u64::from(offset), Some((device_id, device, function))),
        Location::Mmio { offset, .. } => (u64::from(offset), None),
        Location::Table(o) => (u64::from(o), None),
        Location::SysReg(e) => (sys_reg(e), None),
    };
    let (a0, d0) = at(addrs.first()?);
    let (a1, _) = at(addrs.get(1)?);
    let step = a1.checked_sub(a0).filter(|s| *s > 0)?;
    addrs
        .iter()
        .enumerate()
        .all(|(k, a)| a.index as usize == k && at(a) == (a0 + step * k as u64, d0))
        .then_some(step)
}

fn register_checks(prog: &mut Program, module: &str, r: &RegisterInfo) {
    let generic = strip_placeholders(r.name);
    let stem = names::layout(module, &generic);
    prog.eq(&format!("{stem}_WIDTH"), r.width.into());
    prog.eq(&format!("{stem}_COUNT"), r.count.into());
    prog.eq(&format!("{stem}_RESET"), r.reset);
    prog.eq(&format!("{stem}_RESERVED_MASK"), r.reserved_mask);
    prog.eq(&format!("{stem}_IGNORED_MASK"), r.ignored_mask);
    prog.eq(&format!("{stem}_WRITABLE_MASK"), r.writable_mask);

    let addrs = r.known_addresses();
    for a in addrs {
        let m = names::address(module, a.name);
        match a.location {
            Location::Msr(n) => prog.eq(&m, n.into()),
            Location::Pci {
                device_id,
                device,
                function,
                offset,
            } => {
                prog.eq(&format!("{m}_DEVICE_ID"), device_id.into());
                prog.eq(&format!("{m}_DEVICE"), device.into());
                prog.eq(&format!("{m}_FUNCTION"), function.into());
                prog.eq(&format!("{m}_OFFSET"), offset.into());
            }
            Location::Mmio {
                controller,
                channel,
                offset,
            } => {
                prog.eq(&format!("{m}_CONTROLLER"), controller.into());
                prog.eq(&format!("{m}_CHANNEL"), channel.into());
                prog.eq(&format!("{m}_OFFSET"), offset.into());
            }
            Location::Table(o) => prog.eq(&format!("{m}_OFFSET"), o.into()),
            Location::SysReg(e) => prog.eq(&format!("{m}_ENCODING"), sys_reg(e)),
        }
    }
    if r.count > 1 {
        let mut instances: Vec<&str> = addrs.iter().map(|a| a.instance).collect();
        instances.dedup();
        for inst in instances {
            let mine: Vec<&AddressInfo> = addrs.iter().filter(|a| a.instance == inst).collect();
            // Every regular array must have its (n) macro; the test names which one is missing.
            if regular_step(&mine).is_none() {
                continue;
            }
            let pci = !matches!(mine[0].location, Location::Msr(_) | Location::SysReg(_));
            let mut m = names::array_address(module, &instance_name(r, mine[0]), pci);
            if matches!(mine[0].location, Location::SysReg(_)) {
                m.push_str("_ENCODING");
            }
            for a in &mine {
                let want = match a.location {
                    Location::Msr(n) => u64::from(n),
                    Location::Pci { offset, .. } => u64::from(offset),
                    Location::Mmio { offset, .. } => u64::from(offset),
                    Location::Table(o) => u64::from(o),
                    Location::SysReg(e) => sys_reg(e),
                };
                prog.eq(&format!("{m}({})", a.index), want);
            }
        }
    }

    let int = if r.width > 32 { "uint64_t" } else { "uint32_t" };
    for f in r.fields.iter().filter(|f| !f.is_placeholder()) {
        let fs = names::field(module, &generic, f.name);
        if f.split.is_empty() {
            prog.eq(&format!("{fs}_SHIFT"), f.lsb.into());
        }
        // A field of several ranges: each range's shift and mask, and where it sits in the
        // value (the Rust crate's `FieldInfo::split`, most significant first).
        let mut at = f.width();
        for (i, &(msb, lsb)) in f.split.iter().enumerate() {
            at -= msb - lsb + 1;
            prog.eq(&format!("{fs}_R{i}_SHIFT"), lsb.into());
            prog.eq(
                &format!("{fs}_R{i}_MASK"),
                pmu_regs::support::field_mask(lsb, msb - lsb + 1),
            );
            prog.eq(&format!("{fs}_R{i}_AT"), at.into());
        }
        prog.eq(&format!("{fs}_WIDTH"), f.width().into());
        prog.eq(&format!("{fs}_MASK"), f.mask());
        let get = names::getter(module, &generic, f.name);
        let set = names::setter(module, &generic, f.name);
        if let Some(rep) = f.repeat {
            let ew = rep.element_width;
            let emax = (1u64 << ew) - 1;
            prog.eq(&format!("{fs}_ELEMENT_WIDTH"), ew.into());
            prog.eq(&format!("{fs}_COUNT"), rep.max_count.into());
            prog.eq(&format!("{fs}_MAX"), emax);
            for raw in sample_raws(r.width) {
                for n in [0, 1, rep.max_count - 1, rep.max_count] {
                    let in_range = n < rep.max_count;
                    let lsb = f.lsb + n * ew;
                    if f.access.is_readable() {
                        let want = if in_range { (raw >> lsb) & emax } else { 0 };
                        prog.eq(&format!("{get}(({int}){}, {n}U)", u64_lit(raw)), want);
                    }
                    if f.access.is_writable() {
                        for v in [0, emax] {
                            let want = if in_range {
                                (raw & !(emax << lsb)) | (v << lsb)
                            } else {
                                raw
                            };
                            prog.eq(
                                &format!(
                                    "{set}(({int}){}, {n}U, ({int}){})",
                                    u64_lit(raw),
                                    u64_lit(v)
                                ),
                                want,
                            );
                        }
                    }
                }
            }
            continue;
        }
        prog.eq(&format!("{fs}_MAX"), f.max());
        for v in f.values {
            prog.eq(
                &names::field_value(module, &generic, f.name, v.name),
                v.value,
            );
        }
        for raw in sample_raws(r.width) {
            if f.access.is_readable() {
                prog.eq(&format!("{get}(({int}){})", u64_lit(raw)), f.extract(raw));
            }
            if f.access.is_writable() {
                for (value, fitted) in sample_values(f) {
                    let want = f
                        .insert(r.name, raw, fitted)
                        .expect("a fitted value fits the field");
                    prog.eq(
                        &format!("{set}(({int}){}, ({int}){})", u64_lit(raw), u64_lit(value)),
                        want,
                    );
                }
            }
        }
    }
}

/// The C program that checks everything above, and the number of checks in it.
/// Every event's macros, and with `settings` its _THRESHOLD, _INVERT, _EDGE and _ANY_THREAD.
fn event_checks(
    prog: &mut Program,
    module: &str,
    unit: &str,
    events: &[&pmu_regs::EventInfo],
    settings: bool,
) {
    for e in events {
        let stem = names::event(module, unit, &event_ident(e.name));
        prog.eq(&format!("{stem}_CODE"), e.code.into());
        prog.eq(&format!("{stem}_UMASK"), e.umask.into());
        prog.eq(&format!("{stem}_EXT_SEL"), e.ext_sel.into());
        prog.eq(&format!("{stem}_COUNTERS"), e.counters.into());
        if settings {
            prog.eq(&format!("{stem}_THRESHOLD"), e.threshold.into());
            prog.eq(&format!("{stem}_INVERT"), e.invert.into());
            prog.eq(&format!("{stem}_EDGE"), e.edge.into());
            prog.eq(&format!("{stem}_ANY_THREAD"), e.any_thread.into());
        }
    }
}

/// A processor's discovery domains: their count, and per domain how its tables are found,
/// per socket or per die, and the types it ignores.
fn domain_checks(prog: &mut Program, p: &pmu_regs::ProcessorInfo) {
    prog.eq(
        &names::discovery_domain_count(p.module),
        p.discovery_domains.len() as u64,
    );
    for d in p.discovery_domains {
        let stem = names::discovery_domain(p.module, d.id);
        match d.place {
            pmu_regs::DomainPlace::PciDevice(id) => {
                prog.eq(&format!("{stem}_DEVICE_ID"), id.into())
            }
            pmu_regs::DomainPlace::Msr(msr) => prog.eq(&format!("{stem}_MSR"), msr.into()),
        }
        prog.eq(&format!("{stem}_PER_DIE"), d.per_die.into());
        prog.eq(&format!("sizeof({stem}_NAME) - 1"), d.id.len() as u64);
        for (ty, name) in d.ignored {
            prog.eq(
                &names::discovery_domain_ignored(p.module, d.id, name),
                (*ty).into(),
            );
        }
    }
}

fn check_program() -> (String, usize) {
    let mut prog = Program::new();
    let mut n = 0;
    for p in PROCESSORS {
        for u in p.units {
            for r in u.registers {
                register_checks(&mut prog, p.module, r);
                prog.end_function(n);
                n += 1;
            }
            let core = u.pmu.is_some_and(|pmu| pmu.scope == pmu_regs::Scope::Cpu);
            event_checks(&mut prog, p.module, u.name, u.events, core);
            prog.end_function(n);
            n += 1;
        }
        // The processor's own core events, with their settings.
        if let Some(c) = p.core_events {
            event_checks(&mut prog, p.module, c.unit, c.events, true);
            prog.end_function(n);
            n += 1;
        }
        if !p.discovery_domains.is_empty() {
            domain_checks(&mut prog, p);
            prog.end_function(n);
            n += 1;
        }
    }
    (prog.source(), prog.checks)
}

fn run_checks(compiler: &str, flags: &[&str], file: &str) {
    let (source, checks) = check_program();
    let dir = tempfile::tempdir().unwrap();
    let exe = compile(dir.path(), compiler, flags, file, &source);
    let out = run(&exe);
    println!("{file} ({}): {}", flags.join(" "), out.trim());
    assert_eq!(out.trim(), format!("{checks} checks, 0 failed"));
    // Every register, field and event is covered: thousands of checks, not a handful.
    assert!(checks > 10_000, "only {checks} checks");
}

#[test]
fn c99_headers_agree_with_the_rust_crate() {
    run_checks(&compiler("CC", "cc"), &["-std=c99"], "checks.c");
}

#[test]
fn c11_headers_agree_with_the_rust_crate() {
    run_checks(&compiler("CC", "cc"), &["-std=c11"], "checks.c");
}

#[test]
fn cxx_headers_agree_with_the_rust_crate() {
    run_checks(&compiler("CXX", "c++"), &["-std=c++11"], "checks.cpp");
}

/// The C example of docs/c-and-json.md, compiled and run as it is printed.
#[test]
fn docs_c_example_runs() {
    let readme = std::fs::read_to_string(
        Path::new(env!("CARGO_MANIFEST_DIR")).join("../docs/c-and-json.md"),
    )
    .unwrap();
    let start = readme
        .find("```c\n")
        .expect("docs/c-and-json.md has a ```c example")
        + 5;
    let len = readme[start..].find("```").unwrap();
    let dir = tempfile::tempdir().unwrap();
    let exe = compile(
        dir.path(),
        &compiler("CC", "cc"),
        &["-std=c99"],
        "example.c",
        &readme[start..start + len],
    );
    run(&exe);
}

/// A check that fails must make the program fail: the harness itself is tested.
#[test]
fn a_wrong_value_fails_the_c_check() {
    let mut prog = Program::new();
    prog.eq("PMU_XEON_7500_W_MSR_PMON_EVT_SEL2", 0xC95);
    prog.end_function(0);
    let dir = tempfile::tempdir().unwrap();
    let exe = compile(
        dir.path(),
        &compiler("CC", "cc"),
        &["-std=c99"],
        "wrong.c",
        &prog.source(),
    );
    let out = Command::new(exe).output().unwrap();
    assert!(!out.status.success());
    assert_eq!(
        String::from_utf8_lossy(&out.stderr).trim(),
        "PMU_XEON_7500_W_MSR_PMON_EVT_SEL2 is 0xC94, the Rust crate says 0xC95"
    );
}

/// The fixture spec's control whose event select is split over bits 35:32 and 7:0: its C
/// get and set gather and scatter exactly as the Rust crate's `get_ranges` and `set_ranges`
/// do, for sample register values and every kind of value (one too wide included: C drops
/// the excess bits).
#[test]
fn a_split_field_reads_and_writes_in_c_as_in_rust() {
    use pmu_regs::support::{get_ranges, set_ranges};
    const RANGES: &[(u32, u32)] = &[(35, 32), (7, 0)];
    let tree = codegen::render(&Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures/ok"))
        .expect("the fixture spec is valid");
    let dir = tempfile::tempdir().unwrap();
    for header in ["pmu_regs_common.h", "pmu_regs_demo.h"] {
        std::fs::write(dir.path().join(header), &tree[&format!("c/{header}")]).unwrap();
    }
    let mut prog = Program::new();
    let (get, set) = (
        "pmu_demo_x_msr_split_ctl_event_get",
        "pmu_demo_x_msr_split_ctl_event_set",
    );
    for raw in sample_raws(64).into_iter().chain([1 << 32 | 0xC0]) {
        prog.eq(&format!("{get}({})", u64_lit(raw)), get_ranges(raw, RANGES));
        for value in [0, 0x1C0, 0xFFF, 0xA5A, 0x1FFF] {
            prog.eq(
                &format!("{set}({}, {})", u64_lit(raw), u64_lit(value)),
                set_ranges(raw, RANGES, value & 0xFFF),
            );
        }
    }
    // Event 0x1C0 is 0x1 in bits 35:32 and 0xC0 in bits 7:0.
    prog.eq(&format!("{set}(0, 0x1C0)"), 1 << 32 | 0xC0);
    prog.end_function(0);
    let cc = compiler("CC", "cc");
    // Only the fixture's header: the generated ones describe the real spec.
    let source = prog
        .source()
        .replace(&includes(), "#include \"pmu_regs_demo.h\"\n");
    let exe = compile(dir.path(), &cc, &["-std=c99"], "split.c", &source);
    run(&exe);
}

/// A C program that includes only Diamond Rapids' header finds both discovery domains. The
/// expected output is Linux's (arch/x86/events/intel/uncore.c and uncore_discovery.h,
/// "perf/x86/intel/uncore: Support Diamond Rapids", January 2026): the IMH's tables behind
/// PCI device 0x09a1 (DMR_UNCORE_DISCOVERY_TABLE_DEVICE), one per socket, ignoring type 0x13
/// (MSE); the CBB's at the address in MSR 0x710 (CBB_UNCORE_DISCOVERY_MSR), read per die,
/// ignoring type 0x25 (SB2UCIE).
#[test]
fn diamond_rapids_domains_from_c() {
    const PROGRAM: &str = r#"#include <stdio.h>
#include "pmu_regs_diamond_rapids.h"

int main(void)
{
	printf("%d domains\n", PMU_DIAMOND_RAPIDS_DISCOVERY_DOMAINS);
	printf("%s pci-device 0x%04x per %s ignores 0x%x\n", PMU_DIAMOND_RAPIDS_DISCOVERY_DOMAIN_IMH_NAME,
	       PMU_DIAMOND_RAPIDS_DISCOVERY_DOMAIN_IMH_DEVICE_ID,
	       PMU_DIAMOND_RAPIDS_DISCOVERY_DOMAIN_IMH_PER_DIE ? "die" : "socket",
	       PMU_DIAMOND_RAPIDS_DISCOVERY_DOMAIN_IMH_IGNORED_MSE);
	printf("%s msr 0x%x per %s ignores 0x%x\n", PMU_DIAMOND_RAPIDS_DISCOVERY_DOMAIN_CBB_NAME,
	       PMU_DIAMOND_RAPIDS_DISCOVERY_DOMAIN_CBB_MSR,
	       PMU_DIAMOND_RAPIDS_DISCOVERY_DOMAIN_CBB_PER_DIE ? "die" : "socket",
	       PMU_DIAMOND_RAPIDS_DISCOVERY_DOMAIN_CBB_IGNORED_SB2UCIE);
	return 0;
}
"#;
    let dir = tempfile::tempdir().unwrap();
    for (cc, flags, file) in [
        (compiler("CC", "cc"), "-std=c99", "domains.c"),
        (compiler("CXX", "c++"), "-std=c++11", "domains.cpp"),
    ] {
        let exe = compile(dir.path(), &cc, &[flags], file, PROGRAM);
        assert_eq!(
            run(&exe),
            "2 domains\n\
             imh pci-device 0x09a1 per socket ignores 0x13\n\
             cbb msr 0x710 per die ignores 0x25\n",
            "{file}"
        );
    }
}

/// Two names that would collide in C are refused at generation, naming both owners.
#[test]
fn a_c_name_clash_is_an_error() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures");
    let dir = tempfile::tempdir().unwrap();
    std::fs::copy(
        root.join("ok/processors.xml"),
        dir.path().join("processors.xml"),
    )
    .unwrap();
    std::fs::create_dir(dir.path().join("demo")).unwrap();
    let register = |name: &str, address: &str| {
        format!(
            r#"<register name="{name}" width="32" space="msr">
    <source document="demo-guide" table="1-1"/>
    <description>A register.</description>
    <msr instance="Y" address="{address}" source="demo-driver"/>
    <field name="en" bits="31:0" access="rw" reset="0"><description>Enable.</description></field>
  </register>"#
        )
    };
    std::fs::write(
        dir.path().join("demo/y.xml"),
        format!(
            r#"<unit processor="demo" name="Y" module="ybox" title="Y-box">
  <description>Its register FOO_RESET is named like FOO's reset value.</description>
  <instance name="Y"/>
  {}
  {}
</unit>"#,
            register("FOO", "0x10"),
            register("FOO_RESET", "0x11")
        ),
    )
    .unwrap();
    let err = codegen::render(dir.path()).expect_err("the clash must be refused");
    assert_eq!(
        err.to_string(),
        "the C name `PMU_DEMO_FOO_RESET` would stand for both register FOO (Y unit) and the \
         address of FOO_RESET (Y unit); rename one of them in spec/ (codegen/src/naming/c.rs says \
         how C names are formed)"
    );
}

/// The counts and constants the C metric check evaluates with: every event counted
/// (`1000 (i + 1) + 37` for event i), or with event 0 missing and an interval of zero seconds,
/// which make every metric that reads them n/a.
fn metric_inputs(missing: bool) -> (Vec<Option<f64>>, pmu_regs::metrics::Constants) {
    let counts = (0..64)
        .map(|i| (!(missing && i == 0)).then_some(1000.0 * (i as f64 + 1.0) + 37.0))
        .collect();
    let constants = pmu_regs::metrics::Constants {
        tsc_hz: Some(2.0e9),
        socket_count: Some(2.0),
        cores_per_socket: Some(2.0),
        chas_per_socket: Some(28.0),
        threads_per_core: Some(1.0),
        cpu_count: Some(4.0),
        duration_seconds: Some(if missing { 0.0 } else { 0.5 }),
    };
    (counts, constants)
}

/// A C program printing every metric's value (or `n/a`) for both inputs of [`metric_inputs`],
/// one line each, in `PROCESSORS` and spec order; and the metrics, in that order.
fn metric_program() -> (
    String,
    Vec<(&'static str, &'static pmu_regs::metrics::MetricInfo)>,
) {
    let mut calls = String::new();
    let mut metrics = Vec::new();
    for p in PROCESSORS {
        for m in pmu_regs::metrics::for_processor(p.id) {
            let f = names::metric_function(p.module, m.name);
            // Two statements: the order a call's arguments are evaluated in is unspecified.
            let _ = writeln!(
                calls,
                "\t\tdefined = {f}(counts, &c, &v);\n\t\tshow(defined, v);"
            );
            metrics.push((p.id, m));
        }
    }
    let source = format!(
        "#include <stdio.h>\n{}\nstatic void show(int defined, double v)\n{{\n\tif (defined)\n\t\tprintf(\"%.17g\\n\", v);\n\telse\n\t\tprintf(\"n/a\\n\");\n}}\n\n\
         int main(void)\n{{\n\tstruct pmu_regs_metric_constants c = {{2.0e9, 2.0, 2.0, 28.0, 1.0, 4.0, 0.5}};\n\
         \tdouble counts[64];\n\tdouble v = 0.0;\n\tunsigned i, pass;\n\tint defined;\n\
         \tfor (pass = 0; pass < 2; pass++) {{\n\
         \t\tfor (i = 0; i < 64; i++)\n\t\t\tcounts[i] = 1000.0 * (i + 1) + 37.0;\n\
         \t\tif (pass == 1) {{\n\t\t\tcounts[0] = pmu_regs_metric_unknown();\n\t\t\tc.duration_seconds = 0.0;\n\t\t}}\n\
         {calls}\t}}\n\treturn 0;\n}}\n",
        includes()
    );
    (source, metrics)
}

fn check_metrics(compiler: &str, flags: &[&str], file: &str) {
    let (source, metrics) = metric_program();
    assert!(metrics.len() > 1000, "only {} metrics", metrics.len());
    let dir = tempfile::tempdir().unwrap();
    let out = run(&compile(dir.path(), compiler, flags, file, &source));
    let lines: Vec<&str> = out.lines().collect();
    assert_eq!(lines.len(), 2 * metrics.len());
    let mut defined = 0;
    for (pass, missing) in [false, true].into_iter().enumerate() {
        let (counts, constants) = metric_inputs(missing);
        for (n, (p, m)) in metrics.iter().enumerate() {
            let rust = m.evaluate(&counts[..m.events.len()], &constants);
            let c = lines[pass * metrics.len() + n];
            match rust {
                Some(r) => {
                    defined += 1;
                    let v: f64 = c.parse().unwrap_or_else(|_| {
                        panic!("{p} {} ({missing}): C says {c}, Rust {r}", m.name)
                    });
                    assert!(
                        (v - r).abs() <= 1e-12 * r.abs(),
                        "{p} {} ({missing}): C {v}, Rust {r}",
                        m.name
                    );
                }
                None => assert_eq!(c, "n/a", "{p} {} ({missing}): Rust says n/a", m.name),
            }
        }
    }
    // Most metrics are defined with every count known: the check compares numbers.
    assert!(defined > metrics.len() / 2, "only {defined} defined");
}

/// Every metric's C function gives the Rust evaluator's value, or n/a where it says n/a (a
/// missing count, a division by zero), as C99 and as C++.
#[test]
fn c_metrics_evaluate_as_the_rust_crate_does() {
    check_metrics(&compiler("CC", "cc"), &["-std=c99"], "metrics.c");
    check_metrics(&compiler("CXX", "c++"), &["-std=c++11"], "metrics.cpp");
}

/// The top-down reads in C: every metric event's `_READ` (and `_PERF_METRICS_BYTE`) macro
/// says what the Rust table says, and `pmu_regs_topdown_count` gives Rust's
/// `MetricRead::topdown_value` on slot counts up to 2^64 - 1 and every byte.
#[test]
fn c_topdown_reads_match_the_rust_crate() {
    use pmu_regs::metrics::MetricRead;
    let mut checks = String::new();
    let mut expected = Vec::new();
    for p in PROCESSORS {
        for m in pmu_regs::metrics::for_processor(p.id) {
            let stem = names::metric(p.module, m.name);
            for (i, e) in m.events.iter().enumerate() {
                let _ = writeln!(
                    checks,
                    "\tprintf(\"%u\\n\", (unsigned){stem}_EVENT{i}_READ);"
                );
                expected.push(match e.read {
                    MetricRead::Counted => "0".to_string(),
                    MetricRead::Slots => "1".to_string(),
                    MetricRead::SlotsShare(n) => {
                        let _ = writeln!(
                            checks,
                            "\tprintf(\"%u\\n\", (unsigned){stem}_EVENT{i}_PERF_METRICS_BYTE);"
                        );
                        format!("2\n{n}")
                    }
                });
            }
        }
    }
    let slots = [0u64, 1, 255, 1_000_003, u64::from(u32::MAX) + 7, u64::MAX];
    let metrics = [0u64, 0x3020_1522_4C33_1A66, u64::MAX, 0x0102_0304_0506_0708];
    for s in slots {
        for pm in metrics {
            for (read, value) in [(1u32, MetricRead::Slots), (0, MetricRead::Counted)]
                .into_iter()
                .chain((0..8).map(|b| (2, MetricRead::SlotsShare(b))))
            {
                let byte = match value {
                    MetricRead::SlotsShare(b) => b,
                    _ => 0,
                };
                let _ = writeln!(
                    checks,
                    "\tprintf(\"%llu\\n\", (unsigned long long)pmu_regs_topdown_count({read}U, {s}ULL, {pm}ULL, {byte}U));"
                );
                expected.push(value.topdown_value(s, pm).unwrap_or(0).to_string());
            }
        }
    }
    assert!(
        expected.iter().any(|e| e.starts_with('2')),
        "no PERF_METRICS event in any metric"
    );
    let source = format!(
        "#include <stdio.h>\n{}\nint main(void)\n{{\n{checks}\treturn 0;\n}}\n",
        includes()
    );
    let dir = tempfile::tempdir().unwrap();
    for (compiler, flags, file) in [
        (compiler("CC", "cc"), "-std=c99", "topdown.c"),
        (compiler("CXX", "c++"), "-std=c++11", "topdown.cpp"),
    ] {
        let out = run(&compile(dir.path(), &compiler, &[flags], file, &source));
        assert_eq!(out.trim_end(), expected.join("\n"), "{file}");
    }
}
