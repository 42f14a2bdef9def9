//! `generated/model/pmu-regs.json` holds what `pmu list --json` and `pmu list --events --json`
//! print: every item of theirs is in the model, with the same keys and values, and the model
//! has no register instance or event they lack.

use std::collections::HashMap;
use std::path::Path;

use assert_cmd::Command;
use serde_json::{Map, Value};

fn pmu_json(args: &[&str]) -> Vec<Value> {
    let out = Command::cargo_bin("pmu")
        .expect("the pmu binary is built")
        .args(args)
        .output()
        .unwrap();
    assert!(out.status.success(), "pmu {args:?} failed");
    serde_json::from_slice::<Value>(&out.stdout)
        .unwrap()
        .as_array()
        .unwrap()
        .clone()
}

fn model() -> Value {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("../generated/model/pmu-regs.json");
    serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap()
}

fn units(model: &Value) -> impl Iterator<Item = (&str, &Value)> {
    model["processors"]
        .as_array()
        .unwrap()
        .iter()
        .flat_map(|p| {
            let id = p["id"].as_str().unwrap();
            p["units"].as_array().unwrap().iter().map(move |u| (id, u))
        })
}

/// Keeps only `keys` of `v` (objects) or of each element (arrays of objects).
fn only(v: &Value, keys: &[&str]) -> Value {
    match v {
        Value::Array(items) => Value::Array(items.iter().map(|i| only(i, keys)).collect()),
        Value::Object(m) => Value::Object(
            m.iter()
                .filter(|(k, _)| keys.contains(&k.as_str()))
                .map(|(k, v)| (k.clone(), v.clone()))
                .collect(),
        ),
        other => other.clone(),
    }
}

/// `v` without what `pmu list --json` adds for people and for jq: each `*_hex` string (checked
/// here to be its number in hex) and an event's `description` where no `--perfmon` file gave
/// one. What remains is the model's information, to compare with it.
fn without_presentation(v: &Value) -> Value {
    match v {
        Value::Object(map) => {
            let mut out = Map::new();
            for (k, x) in map {
                if let Some(base) = k.strip_suffix("_hex") {
                    let hex = x.as_str().expect("a hex string");
                    let n = u64::from_str_radix(hex.trim_start_matches("0x"), 16).expect("hex");
                    assert_eq!(map.get(base).and_then(Value::as_u64), Some(n), "{k}: {hex}");
                } else if !(k == "description" && x.is_null()) {
                    out.insert(k.clone(), without_presentation(x));
                }
            }
            Value::Object(out)
        }
        Value::Array(items) => Value::Array(items.iter().map(without_presentation).collect()),
        other => other.clone(),
    }
}

#[test]
fn list_json_is_in_the_model() {
    let model = model();
    // What the model says about each register instance, as `pmu list --json` would print it.
    let mut expected: HashMap<(String, String), Value> = HashMap::new();
    for (pid, u) in units(&model) {
        for r in u["registers"].as_array().unwrap() {
            let mut common = Map::new();
            common.insert("processor".into(), pid.into());
            common.insert("unit".into(), u["name"].clone());
            common.insert("space".into(), r["space"].clone());
            common.insert("width".into(), r["width"].clone());
            // `list --json` gives a field's `ranges` only where it has several (a split field).
            let mut fields = only(&r["fields"], &["name", "lsb", "msb", "access", "reset"]);
            for (f, model) in fields
                .as_array_mut()
                .unwrap()
                .iter_mut()
                .zip(r["fields"].as_array().unwrap())
            {
                if model["ranges"].as_array().is_some_and(|x| x.len() > 1) {
                    f["ranges"] = model["ranges"].clone();
                }
            }
            common.insert("fields".into(), fields);
            // A register the discovery table places (`from_table`) has no address of its own:
            // `list --json` says so where an address would be.
            let unknown = r["address_unknown"].as_str().or(r["from_table"]
                .is_object()
                .then_some(pmu_runtime::report::listing::TABLE_PLACED));
            if let Some(reason) = unknown {
                let mut item = common.clone();
                item.insert("name".into(), r["name"].clone());
                item.insert("address".into(), Value::Null);
                item.insert("address_unknown".into(), reason.into());
                expected.insert(
                    (pid.into(), r["name"].as_str().unwrap().into()),
                    item.into(),
                );
            }
            for a in r["addresses"].as_array().unwrap() {
                let mut item = common.clone();
                for (k, v) in a.as_object().unwrap() {
                    if !["instance", "index", "source"].contains(&k.as_str()) {
                        item.insert(k.clone(), v.clone());
                    }
                }
                expected.insert(
                    (pid.into(), a["name"].as_str().unwrap().into()),
                    item.into(),
                );
            }
        }
    }
    let listed: Vec<Value> = pmu_json(&["list", "--json"])
        .iter()
        .map(without_presentation)
        .collect();
    assert_eq!(listed.len(), expected.len(), "register instances");
    for item in &listed {
        let key = (
            item["processor"].as_str().unwrap().to_string(),
            item["name"].as_str().unwrap().to_string(),
        );
        let want = expected
            .get(&key)
            .unwrap_or_else(|| panic!("{key:?} is listed but not in the model"));
        assert_eq!(item, want, "{key:?}");
    }
}

#[test]
fn list_events_json_is_in_the_model() {
    let model = model();
    let mut expected = Vec::new();
    let keys = [
        "name",
        "code",
        "umask",
        "ext_sel",
        "counters",
        "counters_ht_off",
        "filters",
        "threshold",
        "invert",
        "edge",
        "any_thread",
        "umask_ext",
        "port_mask",
        "fc_mask",
        "experimental",
        "aux_msr",
    ];
    // Each processor's units' events, then its own core events (for its core PMU's unit).
    for p in model["processors"].as_array().unwrap() {
        let pid = p["id"].as_str().unwrap();
        let core = &p["core_events"];
        let lists = p["units"]
            .as_array()
            .unwrap()
            .iter()
            .map(|u| (&u["name"], &u["events"]))
            .chain((!core.is_null()).then(|| (&core["unit"], &core["events"])));
        for (unit, events) in lists {
            for e in events.as_array().unwrap() {
                let mut item = only(e, &keys);
                item["processor"] = pid.into();
                item["unit"] = unit.clone();
                expected.push(item);
            }
        }
    }
    // The kernel's events of free-running counters follow each unit's list: they are the
    // model's counters, not its events (cli.rs checks them against the summary).
    let all = pmu_json(&["list", "--events", "--json"]);
    let listed: Vec<Value> = all
        .iter()
        .filter(|e| e["free_running"] != true && e["mesh_node_event"] != true)
        .map(without_presentation)
        .collect();
    assert!(listed.len() > 400, "{} events", listed.len());
    assert_eq!(listed, expected);
    // A mesh's node events (`<node-events>`) are the model's `node_events` of their unit, with
    // the node type, event id and filter value the model gives.
    let mut mesh_expected = Vec::new();
    for p in model["processors"].as_array().unwrap() {
        for u in p["units"].as_array().unwrap() {
            let n = &u["node_events"];
            for e in n["events"].as_array().into_iter().flatten() {
                mesh_expected.push(serde_json::json!({
                    "name": e["name"], "processor": p["id"], "unit": u["name"],
                    "node_type": n["node_type"], "event_id": e["id"],
                    "filter": e["filter"], "occupid": e["occupid"],
                }));
            }
        }
    }
    let mesh: Vec<Value> = all
        .iter()
        .filter(|e| e["mesh_node_event"] == true)
        .map(|e| {
            only(
                e,
                &[
                    "name",
                    "processor",
                    "unit",
                    "node_type",
                    "event_id",
                    "filter",
                    "occupid",
                ],
            )
        })
        .collect();
    assert!(mesh.len() >= 75, "{} mesh events", mesh.len());
    assert_eq!(mesh, mesh_expected);
}
