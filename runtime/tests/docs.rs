//! The docs cannot drift from the code. Every command in the documentation (README.md,
//! ARCHITECTURE.md, TESTING.md, docs/*.md, spec/README.md) is checked here:
//!
//! - a `pmu` command (in a ```sh block, or inline as `pmu ...`) runs against the built binary
//!   and must succeed; `read`, `write` and `watch` get `--sim` (no hardware here) and `watch`
//!   a `--count 1` where the page leaves them out; `serve` must still be serving after three
//!   seconds (on a free port unless the page names one). An inline `pmu <subcommand>` naming a
//!   subcommand in prose must be one (`--help` succeeds).
//! - a `cargo` command must be one that `.ci/run` runs, or a narrowing of its
//!   `cargo test --workspace` to packages and test targets that exist;
//! - anything else, and anything that cannot run here (root, hardware, a server, nightly), is
//!   in [`ALLOWED`] with the reason, and every entry there must still be in the docs.
//!
//! Every page with ```rust blocks must be included in `tests/lib.rs`, which makes them doc
//! tests; the coverage table of docs/coverage.md must be what `pmu list --summary` prints; and
//! the `rust-version`s the manifests declare must be the floors the dependencies set.

#[path = "support/chunks.rs"]
mod chunks;

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

/// Commands the docs show that this test does not run, and why. Exact text, whitespace
/// normalized.
const ALLOWED: &[(&str, &str)] = &[
    ("cargo run -p codegen", "rewrites generated/; CI runs it with `-- --check`, and tests/pipeline.rs generates into temporary directories"),
    ("cargo run -p codegen -- --check", "CI runs the codegen binary `cargo test --workspace --no-run` built, with `--check`: `cargo run -p codegen` would build the dependencies again with codegen's features alone"),
    ("cargo install --path runtime", "installs into ~/.cargo/bin; `cargo test --workspace` builds the same binary"),
    ("cargo install cargo-fuzz", "fuzzing needs nightly and libFuzzer (TESTING.md)"),
    ("cargo +nightly fuzz run spec_unit corpus/spec_unit ../spec/xeon-7500 -- -len_control=0", "nightly and libFuzzer; tests/fuzz_corpus.rs replays the inputs found"),
    ("cargo run -p codegen -- import-perfmon PATH/haswellx_uncore.json --processor xeon-e5-2600-v3", "needs Intel's list, which is not kept here; tests/events.rs imports fixtures"),
    ("cargo run -p codegen -- import-metrics ../shared/perfmon/haswellx_metrics.json", "needs Intel's metric list, which is not kept here; tests/metrics.rs checks every imported formula"),
    ("cargo run -p codegen -- import-metrics FILE", "needs Intel's metric list, which is not kept here; tests/metrics.rs checks every imported formula"),
    ("cargo run -p codegen -- import-perfmon FILE", "needs Intel's list, which is not kept here; tests/events.rs imports fixtures"),
    ("cargo run -p codegen -- import-arm ../shared/arm/neoverse-v2.json", "rewrites spec/neoverse-v2/events/core.xml from Arm's list beside the workspace; tests/arm_events.rs imports a fixture and compares the committed events with the list"),
    ("bash codegen/scripts/import-uncore.sh ../shared/perfmon", "needs Intel's lists, which are not kept here, and rewrites spec/ and generated/; tests/events.rs imports fixtures with the masks"),
    ("cargo run -p codegen -- import-perfmon PATH/linux/tools/perf/pmu-events/arch/x86/amdzen4 --processor amd-zen4", "needs Linux's lists, which are not kept here; tests/events.rs imports a fixture directory"),
    ("cargo run -p pmu-runtime --example sample", "`cargo test --workspace` compiles the example but does not run it; the sampling it shows is what runtime/tests/sessions.rs tests"),
    ("bash .ci/run", "CI itself"),
    ("pmu man --dir DIR", "DIR is a placeholder; runtime/tests/cli_conventions.rs writes the pages into a temporary directory and reads them"),
    ("jq -r '.processors[] | select(.id==\"xeon-7500\") | .units[] | .registers[] | .addresses[] | \"\\(.name) \\(.address)\"' generated/model/pmu-regs.json", "jq is not installed by CI; tests/json_model.rs checks every address of the model"),
    ("jq -r '.processors[] | select(.id==\"diamond-rapids\") | .discovery_domains[] | \"\\(.id) \\(.place) \\(.pci_device_id // .msr) per \\(.per)\"' generated/model/pmu-regs.json", "jq is not installed by CI; tests/json_model.rs (diamond_rapids_domains_from_the_json) reads the same domains from the model against Linux's values"),
    ("pmu serve --config /etc/pmu-serve.conf --listen 127.0.0.1:9464 -a", "a server on real uncore counters; runtime/tests/serve.rs runs `serve --sim` and scrapes it"),
    ("pmu serve --unit xeon-e5-2600:IMC0 --event event=UNC_M_CAS_COUNT.RD --listen 127.0.0.1:9464", "a server on real uncore counters; runtime/tests/serve.rs runs `serve --sim` and scrapes it"),
    ("pmu list --events --unit CORE --perfmon Jaketown_core.json", "needs Intel's list, which is not kept here; runtime/tests/cli.rs runs --perfmon on a fixture"),
    ("pmu watch --backend perf --unit xeon-e5-2600:CBO3 --event event=UNC_C_LLC_LOOKUP.DATA_READ", "needs the kernel's uncore driver of an E5-2600; runtime/tests/perf_sim.rs counts every unit through perf on the simulator"),
    ("pmu watch -e msr/tsc/,cpu-clock,task-clock --interval 1", "counts for real through perf, which --sim does not simulate; runtime/tests/perf_cli.rs pastes `perf stat -e` lists and counts them"),
    ("pmu watch --backend perf --pmu msr --event tsc --count 3", "needs perf_event_open permission; runtime/tests/perf_cli.rs runs it where the machine allows"),
];

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("..")
}

/// The documentation pages, relative to the repository root.
fn pages() -> Vec<String> {
    let mut pages: Vec<String> = [
        "README.md",
        "ARCHITECTURE.md",
        "TESTING.md",
        "spec/README.md",
    ]
    .map(String::from)
    .to_vec();
    let mut docs: Vec<String> = std::fs::read_dir(root().join("docs"))
        .expect("docs/ exists")
        .flatten()
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .filter(|name| name.ends_with(".md"))
        .map(|name| format!("docs/{name}"))
        .collect();
    docs.sort();
    pages.extend(docs);
    pages
}

fn read(page: &str) -> String {
    std::fs::read_to_string(root().join(page)).unwrap_or_else(|e| panic!("{page}: {e}"))
}

/// Fenced blocks as (language, body), and the text outside them.
fn split_fences(markdown: &str) -> (Vec<(String, String)>, String) {
    let mut blocks = Vec::new();
    let mut prose = String::new();
    let mut open: Option<(String, String)> = None;
    for line in markdown.lines() {
        let fence = line.trim_start().strip_prefix("```");
        match (&mut open, fence) {
            (None, Some(lang)) => open = Some((lang.trim().to_string(), String::new())),
            (Some(_), Some(_)) => blocks.push(open.take().unwrap()),
            (Some((_, body)), None) => {
                body.push_str(line);
                body.push('\n');
            }
            (None, None) => {
                prose.push_str(line);
                prose.push('\n');
            }
        }
    }
    (blocks, prose)
}

fn normalize(text: &str) -> String {
    text.split_whitespace().collect::<Vec<_>>().join(" ")
}

/// A shell line without its trailing `# comment` (outside quotes).
fn strip_comment(line: &str) -> &str {
    let mut quote = None;
    let mut previous = ' ';
    for (i, c) in line.char_indices() {
        match (quote, c) {
            (None, '\'' | '"') => quote = Some(c),
            (Some(q), _) if c == q => quote = None,
            (None, '#') if previous.is_whitespace() => return &line[..i],
            _ => {}
        }
        previous = c;
    }
    line
}

/// Every command of a page: the lines of its ```sh blocks (continuations joined, comments
/// dropped) and its inline code spans that start with `pmu ` or `cargo `.
fn commands(markdown: &str) -> Vec<String> {
    let (blocks, prose) = split_fences(markdown);
    let mut found = Vec::new();
    for (lang, body) in blocks {
        if !matches!(lang.as_str(), "sh" | "bash" | "shell" | "console") {
            continue;
        }
        let mut pending = String::new();
        for line in body.lines() {
            let line = strip_comment(line);
            if let Some(head) = line.trim_end().strip_suffix('\\') {
                pending.push_str(head);
                pending.push(' ');
                continue;
            }
            pending.push_str(line);
            let command = normalize(&pending);
            pending.clear();
            if !command.is_empty() {
                found.push(command);
            }
        }
    }
    // Inline spans: the odd pieces between backticks (a span may wrap onto the next line).
    for (i, span) in prose.split('`').enumerate() {
        let span = normalize(span);
        if i % 2 == 1 && (span.starts_with("pmu ") || span.starts_with("cargo ")) {
            found.push(span);
        }
    }
    found
}

/// Splits a command line into words as a shell would (quotes, no expansions).
fn words(command: &str) -> Vec<String> {
    let mut words = Vec::new();
    let mut word = String::new();
    let mut in_word = false;
    let mut quote = None;
    for c in command.chars() {
        match (quote, c) {
            (None, '\'' | '"') => {
                quote = Some(c);
                in_word = true;
            }
            (Some(q), _) if c == q => quote = None,
            (None, c) if c.is_whitespace() => {
                if in_word {
                    words.push(std::mem::take(&mut word));
                    in_word = false;
                }
            }
            _ => {
                word.push(c);
                in_word = true;
            }
        }
    }
    if in_word {
        words.push(word);
    }
    words
}

/// The cargo commands `.ci/run` runs, as word lists without `-q`/`--locked` and without the
/// environment assignments before them.
fn ci_cargo_commands() -> Vec<Vec<String>> {
    read(".ci/run")
        .lines()
        .map(|line| words(strip_comment(line)))
        .map(|w| {
            w.into_iter()
                .skip_while(|w| w.contains('=') && !w.starts_with('-'))
                .collect()
        })
        .filter(|w: &Vec<String>| w.first().is_some_and(|c| c == "cargo"))
        .map(|w| {
            w.into_iter()
                .filter(|w| w != "-q" && w != "--locked")
                .collect()
        })
        .collect()
}

/// The workspace's packages and their directories.
fn packages() -> Vec<(String, PathBuf)> {
    let manifest = read("Cargo.toml");
    let members = manifest
        .lines()
        .find(|l| l.starts_with("members"))
        .expect("a members list");
    members
        .split('"')
        .skip(1)
        .step_by(2)
        .map(|dir| {
            let text = read(&format!("{dir}/Cargo.toml"));
            let name = text
                .lines()
                .find_map(|l| l.strip_prefix("name = \""))
                .expect("a package name")
                .trim_end_matches('"')
                .to_string();
            (name, root().join(dir))
        })
        .collect()
}

/// Why a `cargo test` command is not a narrowing of CI's `cargo test --workspace` to things
/// that exist, or `None` if it is one.
fn not_a_narrowing(args: &[String]) -> Option<String> {
    let packages = packages();
    let mut package: Option<&(String, PathBuf)> = None;
    let mut i = 0;
    while i < args.len() {
        let arg = args[i].as_str();
        let value = args.get(i + 1);
        match arg {
            "--workspace" | "--lib" | "--doc" => {}
            "-p" | "--package" => {
                let Some(name) = value else {
                    return Some(format!("{arg} without a value"));
                };
                package = packages.iter().find(|(n, _)| n == name);
                if package.is_none() {
                    return Some(format!("no package {name} in the workspace"));
                }
                i += 1;
            }
            "--test" | "--bin" => {
                let Some(name) = value else {
                    return Some(format!("{arg} without a value"));
                };
                let Some((pkg, dir)) = package else {
                    return Some(format!("{arg} {name} without -p"));
                };
                let manifest = std::fs::read_to_string(dir.join("Cargo.toml")).unwrap();
                let exists = if arg == "--test" {
                    dir.join(format!("tests/{name}.rs")).exists()
                        || manifest.contains(&format!("name = \"{name}\""))
                } else {
                    manifest.contains(&format!("name = \"{name}\""))
                };
                if !exists {
                    return Some(format!("{pkg} has no {arg} {name}"));
                }
                i += 1;
            }
            "--" => {
                // Test name filters and --nocapture narrow; --ignored runs more than CI's command.
                return args[i + 1..]
                    .iter()
                    .find(|a| a.starts_with('-') && *a != "--nocapture" && *a != "--exact")
                    .map(|a| format!("`-- {a}` is not part of CI's cargo test --workspace"));
            }
            other => {
                return Some(format!(
                    "`{other}` is not part of CI's cargo test --workspace"
                ))
            }
        }
        i += 1;
    }
    None
}

/// What happened to one command: `Ok` with how it was covered, or `Err` with the problem.
fn check(command: &str, pmu: &Path, cwd: &Path) -> Result<String, String> {
    if let Some((_, why)) = ALLOWED.iter().find(|(c, _)| normalize(c) == command) {
        return Ok(format!("allowed: {why}"));
    }
    let w = words(command);
    match w.first().map(String::as_str) {
        Some("pmu") => run_pmu(&w[1..], pmu, cwd),
        Some("cargo") => {
            // `cargo run ... --bin pmu -- ARGS` is the pmu command.
            if let Some(at) = w.iter().position(|a| a == "--") {
                if w[1] == "run" && w[..at].windows(2).any(|p| p[0] == "--bin" && p[1] == "pmu") {
                    return run_pmu(&w[at + 1..], pmu, cwd);
                }
            }
            let plain: Vec<String> = w
                .iter()
                .filter(|a| *a != "-q" && *a != "--locked")
                .cloned()
                .collect();
            if ci_cargo_commands().contains(&plain) {
                return Ok("run by .ci/run".into());
            }
            if plain.get(1).is_some_and(|c| c == "test") {
                return match not_a_narrowing(&plain[2..]) {
                    None => Ok("run by CI's cargo test --workspace".into()),
                    Some(why) => Err(why),
                };
            }
            Err("not run by .ci/run, and not in ALLOWED".into())
        }
        _ => Err("not a pmu or cargo command, and not in ALLOWED".into()),
    }
}

/// Runs a `pmu` command (its arguments) and requires success within a minute.
fn run_pmu(args: &[String], pmu: &Path, cwd: &Path) -> Result<String, String> {
    let mut args = args.to_vec();
    let sub = args.first().cloned().unwrap_or_default();
    let how = if args.len() == 1 && !matches!(sub.as_str(), "detect" | "man") {
        // A subcommand named in prose: it must exist.
        args.push("--help".into());
        "a subcommand (--help)"
    } else {
        let given = args.clone();
        let has = |flag: &str| given.iter().any(|a| a == flag);
        if matches!(sub.as_str(), "read" | "write" | "watch") && !has("--sim") && !has("--root") {
            args.push("--sim".into());
        }
        if sub == "watch" && !has("--count") {
            args.extend(["--count".into(), "1".into()]);
        }
        if sub == "serve" && !has("--listen") {
            args.extend(["--listen".into(), "127.0.0.1:0".into()]);
        }
        "ran"
    };
    // A server that is still serving after a few seconds has started as the page says.
    let serving = (sub == "serve" && how == "ran").then_some(Duration::from_secs(3));
    let runtime_dir = tempfile::tempdir().unwrap();
    let mut child = Command::new(pmu)
        .args(&args)
        .current_dir(cwd)
        .env("PMU_RUNTIME_DIR", runtime_dir.path())
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .map_err(|e| format!("cannot run pmu: {e}"))?;
    let start = Instant::now();
    let status = loop {
        if let Some(status) = child.try_wait().unwrap() {
            break status;
        }
        if serving.is_some_and(|after| start.elapsed() > after) {
            let _ = child.kill();
            let _ = child.wait();
            return Ok(format!("served: pmu {}", args.join(" ")));
        }
        if start.elapsed() > Duration::from_secs(60) {
            let _ = child.kill();
            let _ = child.wait();
            return Err(format!("`pmu {}` ran for a minute", args.join(" ")));
        }
        std::thread::sleep(Duration::from_millis(20));
    };
    if status.success() {
        Ok(format!("{how}: pmu {}", args.join(" ")))
    } else {
        let mut stderr = String::new();
        std::io::Read::read_to_string(&mut child.stderr.take().unwrap(), &mut stderr).unwrap();
        Err(format!(
            "`pmu {}` failed ({status}): {}",
            args.join(" "),
            stderr.trim()
        ))
    }
}

/// Checks every command of the given pages' text; returns the problems, and how many `pmu`
/// commands ran. Pages are checked four at a time, each in a directory of its own, its
/// commands in order (a `serve` spends its seconds waiting, not computing).
fn problems(pages: &[(String, String)]) -> (Vec<String>, usize) {
    let pmu = Path::new(env!("CARGO_BIN_EXE_pmu"));
    let page_problems = |(page, text): &(String, String)| {
        let cwd = tempfile::tempdir().unwrap();
        let mut problems = Vec::new();
        let mut ran = 0;
        for command in commands(text) {
            match check(&command, pmu, cwd.path()) {
                Ok(how) => ran += usize::from(how.starts_with("ran") || how.starts_with("served")),
                Err(why) => problems.push(format!("{page}: `{command}`: {why}")),
            }
        }
        (problems, ran)
    };
    let per_page: Vec<(Vec<String>, usize)> =
        chunks::in_chunks(pages, 4, |some| some.iter().map(page_problems).collect());
    let ran = per_page.iter().map(|(_, n)| n).sum();
    (per_page.into_iter().flat_map(|(p, _)| p).collect(), ran)
}

#[test]
fn every_command_in_the_docs_is_run_or_allowed_with_a_reason() {
    let pages: Vec<(String, String)> = pages().into_iter().map(|p| (p.clone(), read(&p))).collect();
    let (problems, ran) = problems(&pages);
    // The extractor finds the commands (today about 50 run): a broken one must not pass empty.
    assert!(ran >= 30, "only {ran} pmu commands were found and run");
    assert!(
        problems.is_empty(),
        "commands in the docs that no test or CI runs (fix the command, or add it to ALLOWED \
         in runtime/tests/docs.rs with the reason):\n{}",
        problems.join("\n")
    );
    // And no reason is kept for a command the docs no longer show.
    let all: BTreeSet<String> = pages.iter().flat_map(|(_, t)| commands(t)).collect();
    for (command, _) in ALLOWED {
        assert!(
            all.contains(&normalize(command)),
            "ALLOWED lists `{command}`, which no page shows"
        );
    }
}

#[test]
fn a_made_up_command_fails_the_check() {
    let page = "Try `pmu frobnicate --now`, or `pmu list --summary`, then `pmu lsit`:\n\n\
                ```sh\ncargo test --workspace   # every test\ncargo test -p pmu-runtime --test no_such_test\n\
                cargo frob\nmake all\n```\n";
    let (problems, ran) = problems(&[("made-up.md".into(), page.into())]);
    assert_eq!(ran, 1, "pmu list --summary runs");
    assert_eq!(problems.len(), 5, "{problems:#?}");
    for bad in [
        "pmu frobnicate",
        "pmu lsit",
        "no_such_test",
        "cargo frob",
        "make all",
    ] {
        assert!(
            problems.iter().any(|p| p.contains(bad)),
            "{bad} not reported: {problems:#?}"
        );
    }
}

#[test]
fn commands_are_found_in_blocks_spans_and_continuations() {
    let page = "Run `pmu list\n--summary` and `cargo` alone.\n\n```sh\n# a comment\n\
                pmu decode W_MSR_PMON_EVT_SEL2 \\\n  0x500f01   # decode\n\n```\n\n```text\npmu no\n```\n";
    assert_eq!(
        commands(page),
        [
            "pmu decode W_MSR_PMON_EVT_SEL2 0x500f01",
            "pmu list --summary"
        ]
    );
    assert_eq!(
        words("jq -r '.a | \"x\"' f"),
        ["jq", "-r", ".a | \"x\"", "f"]
    );
}

/// Every page with Rust examples is included in tests/lib.rs, where they run as doc tests.
#[test]
fn every_rust_example_in_the_docs_is_a_doc_test() {
    let lib = read("tests/lib.rs");
    for page in pages() {
        let (blocks, _) = split_fences(&read(&page));
        let rust = blocks
            .iter()
            .filter(|(lang, _)| lang.starts_with("rust"))
            .count();
        let bare = blocks.iter().filter(|(lang, _)| lang.is_empty()).count();
        assert_eq!(bare, 0, "{page}: a fence without a language runs as Rust in a doc test; name it (text, sh, ...)");
        if rust > 0 {
            assert!(
                lib.contains(&format!("include_str!(\"../{page}\")")),
                "{page} has {rust} Rust example(s): include it in tests/lib.rs so they run as doc tests"
            );
        }
    }
}

/// docs/coverage.md's table is what `pmu list --summary` prints, and README's totals its last row.
#[test]
fn the_coverage_table_is_what_pmu_list_summary_prints() {
    let out = Command::new(env!("CARGO_BIN_EXE_pmu"))
        .args(["list", "--summary"])
        .output()
        .unwrap();
    assert!(out.status.success());
    let text = String::from_utf8(out.stdout).unwrap();
    let mut table = String::from(
        "| processor | unit | layouts | registers | events | boxes |\n|---|---|---|---|---|---|\n",
    );
    let mut totals = None;
    for line in text.lines().skip(1) {
        let w: Vec<&str> = line.split_whitespace().collect();
        match w.as_slice() {
            ["total", layouts, registers, events] => {
                table.push_str(&format!(
                    "| total | | {layouts} | {registers} | {events} | |\n"
                ));
                totals = Some([layouts, registers, events].map(|n| thousands(n)));
            }
            [processor, unit, layouts, registers, events, boxes] => table.push_str(&format!(
                "| {processor} | {unit} | {layouts} | {registers} | {events} | {boxes} |\n"
            )),
            _ => panic!("unexpected line of pmu list --summary: {line}"),
        }
    }
    let page = read("docs/coverage.md");
    let start = page
        .find("<!-- docs.rs: pmu list --summary -->\n")
        .expect("the table's start marker");
    let end = page
        .find("<!-- /docs.rs -->")
        .expect("the table's end marker");
    let documented = &page[start..end].split_once('\n').unwrap().1;
    assert_eq!(
        *documented, table,
        "docs/coverage.md's table is out of date; it should read:\n{table}"
    );
    let [layouts, registers, events] = totals.expect("a total row");
    let summary = format!("{layouts} register layouts, {registers}\nregisters and {events} events");
    assert!(
        normalize(&read("README.md")).contains(&normalize(&summary)),
        "README.md's coverage summary should say: {summary}"
    );
}

/// `1234567` as `1,234,567`.
fn thousands(n: &str) -> String {
    let mut out = String::new();
    for (i, c) in n.chars().enumerate() {
        if i > 0 && (n.len() - i) % 3 == 0 {
            out.push(',');
        }
        out.push(c);
    }
    out
}

/// `1.88` or `1.88.0` as comparable numbers.
fn version(v: &str) -> (u32, u32, u32) {
    let mut parts = v.split('.').map(|p| p.parse::<u32>().unwrap());
    (
        parts.next().unwrap(),
        parts.next().unwrap_or(0),
        parts.next().unwrap_or(0),
    )
}

/// The declared rust-versions are the floors Cargo.lock's dependencies set: the workspace's
/// is the highest of any dependency (codegen and the tests need them all), and pmu-regs' and
/// pmu-runtime's (which CI builds with that very compiler) are at least their own normal and
/// build dependencies' highest.
#[test]
fn the_declared_rust_versions_are_the_dependencies_floor() {
    let out = Command::new(std::env::var("CARGO").unwrap_or_else(|_| "cargo".into()))
        .args(["metadata", "--format-version", "1", "--locked", "--offline"])
        .args(["--filter-platform", "x86_64-unknown-linux-gnu"])
        .current_dir(root())
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "cargo metadata: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    let meta: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let packages = meta["packages"].as_array().unwrap();
    let members: Vec<&str> = meta["workspace_members"]
        .as_array()
        .unwrap()
        .iter()
        .map(|m| m.as_str().unwrap())
        .collect();
    let rust_version = |id: &str| {
        packages
            .iter()
            .find(|p| p["id"] == id)
            .and_then(|p| p["rust_version"].as_str())
            .map(version)
    };
    let name_of = |id: &str| {
        packages.iter().find(|p| p["id"] == id).unwrap()["name"]
            .as_str()
            .unwrap()
            .to_string()
    };
    let nodes = meta["resolve"]["nodes"].as_array().unwrap();
    // The highest rust-version reachable from `id` through the given dependency kinds.
    let floor = |start: &str, dev: bool| {
        let mut seen = BTreeSet::new();
        let mut todo = vec![(start.to_string(), true)];
        let mut best = ((0, 0, 0), String::new());
        while let Some((id, top)) = todo.pop() {
            if !seen.insert(id.clone()) {
                continue;
            }
            if !top {
                if let Some(v) = rust_version(&id) {
                    best = best.max((v, name_of(&id)));
                }
            }
            let node = nodes.iter().find(|n| n["id"] == id.as_str()).unwrap();
            for dep in node["deps"].as_array().unwrap() {
                let kinds = dep["dep_kinds"].as_array().unwrap();
                let follow = kinds.iter().any(|k| {
                    k["kind"].is_null()
                        || k["kind"] == "build"
                        || (dev && top && k["kind"] == "dev")
                });
                if follow {
                    todo.push((dep["pkg"].as_str().unwrap().to_string(), false));
                }
            }
        }
        best
    };
    let workspace_floor = members.iter().map(|m| floor(m, true)).max().unwrap();
    for id in &members {
        let name = name_of(id);
        let declared =
            rust_version(id).unwrap_or_else(|| panic!("{name} declares no rust-version"));
        match name.as_str() {
            "pmu-regs" | "pmu-runtime" => {
                let (needed, by) = floor(id, false);
                assert!(declared >= needed, "{name} declares rust-version {declared:?}, but {by} needs {needed:?}");
            }
            _ => assert_eq!(
                declared, workspace_floor.0,
                "{name} declares rust-version {declared:?}; the dependencies' highest is {:?} ({}): declare that in Cargo.toml",
                workspace_floor.0, workspace_floor.1
            ),
        }
    }
    // CI builds pmu-runtime with the compiler of its declared version; pmu-regs declares the same.
    let runtime = members
        .iter()
        .find(|m| name_of(m) == "pmu-runtime")
        .unwrap();
    let regs = members.iter().find(|m| name_of(m) == "pmu-regs").unwrap();
    assert_eq!(
        rust_version(runtime),
        rust_version(regs),
        "CI checks both with one compiler: declare one version"
    );
}

/// A heading's anchor as GitHub writes it: lower case, spaces as `-`, punctuation dropped.
fn anchor(heading: &str) -> String {
    heading
        .trim()
        .to_lowercase()
        .chars()
        .filter_map(|c| match c {
            ' ' => Some('-'),
            c if c.is_alphanumeric() || c == '-' || c == '_' => Some(c),
            _ => None,
        })
        .collect()
}

/// Every relative link of the docs leads to a file that exists, and to a heading it has.
#[test]
fn every_link_in_the_docs_leads_somewhere() {
    let mut broken = Vec::new();
    for page in pages() {
        let (_, prose) = split_fences(&read(&page));
        let dir = Path::new(&page).parent().unwrap().to_path_buf();
        for (at, _) in prose.match_indices("](") {
            let rest = &prose[at + 2..];
            let Some(end) = rest.find(')') else { continue };
            let target = &rest[..end];
            if target.contains("://") || target.starts_with("mailto:") {
                continue;
            }
            let (path, fragment) = target.split_once('#').unwrap_or((target, ""));
            let file = if path.is_empty() {
                PathBuf::from(&page)
            } else {
                dir.join(path)
            };
            let full = root().join(&file);
            if !full.exists() {
                broken.push(format!("{page}: ({target}): no file {}", file.display()));
                continue;
            }
            if !fragment.is_empty() && full.extension().is_some_and(|e| e == "md") {
                let text = std::fs::read_to_string(&full).unwrap();
                let (_, headings) = split_fences(&text);
                let found = headings
                    .lines()
                    .filter_map(|l| l.strip_prefix('#'))
                    .map(|l| anchor(l.trim_start_matches('#')))
                    .any(|a| a == fragment);
                if !found {
                    broken.push(format!("{page}: ({target}): no heading #{fragment}"));
                }
            }
        }
    }
    assert!(broken.is_empty(), "broken links:\n{}", broken.join("\n"));
}

#[test]
fn anchors_are_written_as_github_writes_them() {
    assert_eq!(anchor(" `processors.xml`"), "processorsxml");
    assert_eq!(anchor(" Minimum Rust version"), "minimum-rust-version");
    assert_eq!(
        anchor(" What the runtime drives"),
        "what-the-runtime-drives"
    );
}

/// The file or folder of module `segments` under `dir` (`a/b.rs` or `a/b/mod.rs`).
fn module_file(dir: &Path, segments: &[&str]) -> Option<PathBuf> {
    let base = segments.iter().fold(dir.to_path_buf(), |p, s| p.join(s));
    let file = base.with_extension("rs");
    if segments.is_empty() {
        Some(dir.join("lib.rs"))
    } else if file.is_file() {
        Some(file)
    } else {
        Some(base.join("mod.rs")).filter(|m| m.is_file())
    }
}

/// Whether the module source `text` defines or re-exports an item named `name`.
fn names_item(text: &str, name: &str) -> bool {
    let is_word = |s: &str| {
        s.split(|c: char| !(c.is_alphanumeric() || c == '_'))
            .any(|w| w == name)
    };
    let defined = [
        "struct", "enum", "trait", "type", "fn", "mod", "const", "static",
    ]
    .iter()
    .any(|kind| text.contains(&format!("{kind} {name}")));
    defined
        || text.match_indices("pub use ").any(|(i, _)| {
            let rest = &text[i..];
            is_word(&rest[..rest.find(';').unwrap_or(rest.len())])
        })
}

/// What of ARCHITECTURE.md's `runtime/src/...`, `codegen/src/...` and `pmu_runtime::...`
/// paths names nothing in the code.
fn missing_paths(architecture: &str, root: &Path) -> Vec<String> {
    let mut missing = BTreeSet::new();
    let word = |c: char| c.is_alphanumeric() || "_/.:".contains(c);
    for prefix in ["runtime/src/", "codegen/src/"] {
        for (i, _) in architecture.match_indices(prefix) {
            let rest = &architecture[i..];
            let path = rest[..rest.find(|c| !word(c)).unwrap_or(rest.len())].trim_end_matches('.');
            if !root.join(path).exists() {
                missing.insert(path.to_string());
            }
        }
    }
    let src = root.join("runtime/src");
    for (i, _) in architecture.match_indices("pmu_runtime::") {
        let rest = &architecture[i + "pmu_runtime::".len()..];
        let path = &rest[..rest.find(|c| !word(c)).unwrap_or(rest.len())];
        let segments: Vec<&str> = path.split("::").filter(|s| !s.is_empty()).collect();
        // The longest prefix that is a module; what follows must be one item of it.
        let found = (0..=segments.len()).rev().any(|n| {
            module_file(&src, &segments[..n]).is_some_and(|file| match &segments[n..] {
                [] => true,
                [item] => names_item(&std::fs::read_to_string(file).unwrap(), item),
                _ => false,
            })
        });
        if !found {
            missing.insert(format!("pmu_runtime::{path}"));
        }
    }
    missing.into_iter().collect()
}

#[test]
fn every_module_path_architecture_md_names_exists() {
    let root = root();
    let architecture = std::fs::read_to_string(root.join("ARCHITECTURE.md")).unwrap();
    let missing = missing_paths(&architecture, &root);
    assert!(
        missing.is_empty(),
        "ARCHITECTURE.md names what the code does not have (update the page):\n{}",
        missing.join("\n")
    );
}

#[test]
fn a_made_up_module_path_is_found_missing() {
    let text = "`runtime/src/lib.rs`, `runtime/src/nowhere.rs`, `pmu_runtime::machine::Machine`, \
                `pmu_runtime::sampling::counting::Counting`, `pmu_runtime::perf`.";
    assert_eq!(
        missing_paths(text, &root()),
        [
            "pmu_runtime::sampling::counting::Counting",
            "runtime/src/nowhere.rs"
        ]
    );
}

/// The `pmu watch --sim ... --metric` commands of `markdown`.
fn metric_watches(markdown: &str) -> Vec<String> {
    commands(markdown)
        .into_iter()
        .filter(|c| c.starts_with("pmu watch ") && c.contains("--sim") && c.contains("--metric"))
        .collect()
}

/// `command`'s words after `pmu`, with `extra` in place of its output options (`-x,`,
/// `--json`, `--format F`, `-o F`) when `extra` is given, and `--count 1` where it sets none.
fn watch_words(command: &str, extra: Option<&str>) -> Vec<String> {
    let mut out = Vec::new();
    let mut skip = false;
    for w in words(command).into_iter().skip(1) {
        if std::mem::take(&mut skip) {
            continue;
        }
        if extra.is_some() {
            if matches!(w.as_str(), "--format" | "-o") {
                skip = true;
                continue;
            }
            if w == "--json" || w.starts_with("-x") {
                continue;
            }
        }
        out.push(w);
    }
    if !out.iter().any(|w| w == "--count") {
        out.extend(["--count".to_string(), "1".to_string()]);
    }
    out.extend(extra.map(String::from));
    out
}

/// What `pmu args` prints on stdout, or why it failed.
fn stdout_of(pmu: &Path, args: &[String]) -> Result<String, String> {
    let out = Command::new(pmu)
        .args(args)
        .current_dir(root())
        .output()
        .map_err(|e| e.to_string())?;
    if out.status.success() {
        Ok(String::from_utf8_lossy(&out.stdout).into_owned())
    } else {
        Err(String::from_utf8_lossy(&out.stderr).into_owned())
    }
}

/// Issue 38: every `pmu watch --sim --metric` example the docs show (README.md and
/// docs/*.md) prints values a machine could have: run with `--json`, every value is a
/// number, none is negative, and none in `percent` is over 100. Where the page shows the
/// command's output (a ```text block right after its ```sh block), every row it shows is one
/// the command prints, value included.
#[test]
fn every_metric_example_in_the_docs_is_plausible_and_shows_what_the_workload_gives() {
    let pmu = Path::new(env!("CARGO_BIN_EXE_pmu"));
    let mut failures = Vec::new();
    let mut checked = 0;
    for page in pages() {
        let markdown = read(&page);
        for command in metric_watches(&markdown) {
            let out = match stdout_of(pmu, &watch_words(&command, Some("--json"))) {
                Ok(out) => out,
                Err(e) => {
                    failures.push(format!("{page}: {command}: {e}"));
                    continue;
                }
            };
            for line in out.lines() {
                checked += 1;
                let v: serde_json::Value = serde_json::from_str(line).unwrap();
                let (value, unit) = (v["value"].as_f64(), v["unit"].as_str().unwrap_or(""));
                let plausible =
                    value.is_some_and(|x| x >= 0.0 && (unit != "percent" || x <= 100.0 + 1e-9));
                if !plausible {
                    failures.push(format!("{page}: {command}: {line}"));
                }
            }
        }
        let (blocks, _) = split_fences(&markdown);
        for pair in blocks.windows(2) {
            let [(lang, sh), (next, shown)] = pair else {
                continue;
            };
            if lang != "sh" || next != "text" {
                continue;
            }
            for command in metric_watches(&format!("```sh\n{sh}```\n")) {
                let out = stdout_of(pmu, &watch_words(&command, None)).unwrap_or_default();
                let rows = shown
                    .lines()
                    .filter(|l| !l.starts_with('#') && !l.trim_start().starts_with("time"));
                for row in rows {
                    checked += 1;
                    if !out.lines().any(|l| normalize(l) == normalize(row)) {
                        failures.push(format!("{page}: {command} does not print {row:?}:\n{out}"));
                    }
                }
            }
        }
    }
    assert!(checked > 10, "only {checked} values checked");
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}
