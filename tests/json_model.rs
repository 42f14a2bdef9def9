//! The JSON model of `generated/model/`: it conforms to its schema, the schema is strict
//! enough to reject broken models, and every value agrees with the Rust crate's metadata.
//! (`runtime/tests/model_json.rs` compares it with `pmu list --json`.)

use std::path::Path;

use pmu_regs::{Addresses, Location, PROCESSORS};
use serde_json::{json, Value};

fn load(name: &str) -> Value {
    let path = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../generated/model")
        .join(name);
    let text = std::fs::read_to_string(&path)
        .unwrap_or_else(|e| panic!("{}: {e}; run `cargo run -p codegen`", path.display()));
    serde_json::from_str(&text).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

fn validator() -> jsonschema::Validator {
    jsonschema::draft202012::new(&load("schema.json")).expect("schema.json is a valid schema")
}

/// Every schema violation of `model`, one per line.
fn violations(v: &jsonschema::Validator, model: &Value) -> Vec<String> {
    v.iter_errors(model)
        .map(|e| format!("{} at {}", e, e.instance_path()))
        .collect()
}

#[test]
fn model_conforms_to_its_schema() {
    let errors = violations(&validator(), &load("pmu-regs.json"));
    assert!(errors.is_empty(), "{}", errors.join("\n"));
}

/// The fixture spec's model (every feature of the format, including `address-unknown`,
/// PCI registers and bit arrays) conforms too.
#[test]
fn fixture_model_conforms_to_the_schema() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures/ok");
    let spec = codegen::load_spec(&dir).unwrap();
    let model: Value = serde_json::from_str(&codegen::emit::json::model_text(&spec)).unwrap();
    let errors = violations(&validator(), &model);
    assert!(errors.is_empty(), "{}", errors.join("\n"));
}

/// Each edit breaks the model in one way the schema must catch.
#[test]
fn schema_rejects_broken_models() {
    let v = validator();
    let good = load("pmu-regs.json");
    type Edit = fn(&mut Value);
    let edits: [(&str, Edit); 11] = [
        ("unknown access kind", |m| {
            m["processors"][0]["units"][0]["registers"][0]["fields"][0]["access"] = json!("rwx")
        }),
        ("missing mask", |m| {
            m["processors"][0]["units"][0]["registers"][0]
                .as_object_mut()
                .unwrap()
                .remove("reserved_mask");
        }),
        ("width 48", |m| {
            m["processors"][0]["units"][0]["registers"][0]["width"] = json!(48)
        }),
        ("bit 64", |m| {
            m["processors"][0]["units"][0]["registers"][0]["fields"][0]["msb"] = json!(64)
        }),
        ("unknown key", |m| {
            m["processors"][0]["units"][0]["registers"][0]["colour"] = json!("red")
        }),
        ("negative address", |m| {
            m["processors"][0]["units"][0]["registers"][0]["addresses"][0]["address"] = json!(-1)
        }),
        ("PCI keys on an MSR", |m| {
            m["processors"][0]["units"][0]["registers"][0]["addresses"][0]["device"] = json!(3)
        }),
        ("MMIO keys on an MSR", |m| {
            m["processors"][0]["units"][0]["registers"][0]["addresses"][0]["controller"] = json!(0)
        }),
        ("an MSR domain with a PCI device id", |m| {
            dmr_domain(m, "cbb")["pci_device_id"] = json!(0x09a1)
        }),
        ("a domain found per core", |m| {
            dmr_domain(m, "imh")["per"] = json!("core")
        }),
        ("another format version", |m| {
            m["format_version"] = json!(99)
        }),
    ];
    assert_eq!(
        good["processors"][0]["units"][0]["registers"][0]["space"],
        "msr"
    );
    for (what, edit) in edits {
        let mut broken = good.clone();
        edit(&mut broken);
        assert!(
            !violations(&v, &broken).is_empty(),
            "the schema accepts a model with {what}"
        );
    }
}

/// Diamond Rapids' discovery domain `id` in the model `m`.
fn dmr_domain<'a>(m: &'a mut Value, id: &str) -> &'a mut Value {
    let procs = m["processors"].as_array_mut().unwrap();
    let dmr = procs
        .iter_mut()
        .find(|p| p["id"] == "diamond-rapids")
        .unwrap();
    let domains = dmr["discovery_domains"].as_array_mut().unwrap();
    domains.iter_mut().find(|d| d["id"] == id).unwrap()
}

fn location_keys(loc: &Location) -> Value {
    match *loc {
        Location::Msr(a) => json!({"space": "msr", "address": a}),
        Location::Pci {
            device_id,
            device,
            function,
            offset,
        } => json!({"space": "pci", "address": offset, "offset": offset,
                    "device_id": device_id, "device": device, "function": function}),
        Location::Mmio {
            controller,
            channel,
            offset,
        } => json!({"space": "mmio", "address": offset, "offset": offset,
                    "controller": controller, "channel": channel}),
        Location::Table(o) => json!({"space": "table", "address": o}),
        // Linux sysreg.h: sys_reg() puts op0 at bit 19, op1 at 16, CRn at 12, CRm at 8 and
        // op2 at 5.
        Location::SysReg(e) => json!({"space": "sysreg",
            "address": (u32::from(e.op0) << 19) | (u32::from(e.op1) << 16)
                | (u32::from(e.crn) << 12) | (u32::from(e.crm) << 8) | (u32::from(e.op2) << 5),
            "op0": e.op0, "op1": e.op1, "crn": e.crn, "crm": e.crm, "op2": e.op2,
            "sysreg": format!("S{}_{}_C{}_C{}_{}", e.op0, e.op1, e.crn, e.crm, e.op2)}),
    }
}

/// Every processor, unit, register, address, field, named value, note and event of the Rust
/// metadata is in the model with the same values, in the same order, and nothing else is.
#[test]
fn model_agrees_with_the_rust_metadata() {
    let model = load("pmu-regs.json");
    let procs = model["processors"].as_array().unwrap();
    assert_eq!(procs.len(), PROCESSORS.len());
    let (mut registers, mut fields, mut events, mut structures) = (0, 0, 0, 0);
    for (p, jp) in PROCESSORS.iter().zip(procs) {
        assert_eq!(jp["id"], p.id);
        assert_eq!(jp["module"], p.module);
        assert_eq!(jp["name"], p.name);
        let docs: Vec<(&str, &str)> = jp["documents"]
            .as_array()
            .unwrap()
            .iter()
            .map(|d| {
                (
                    d["title"].as_str().unwrap(),
                    d["reference"].as_str().unwrap(),
                )
            })
            .collect();
        assert_eq!(docs, p.documents);
        let global = p.global.map(|g| {
            json!({"unit": g.unit, "instance": g.instance, "control": g.control.name,
                   "status": g.status.name, "overflow_clear": g.overflow_clear.map(|r| r.name)})
        });
        assert_eq!(jp["global"], json!(global), "{}", p.id);
        let units = jp["units"].as_array().unwrap();
        assert_eq!(units.len(), p.units.len(), "{}", p.id);
        for (u, ju) in p.units.iter().zip(units) {
            assert_eq!(ju["name"], u.name);
            assert_eq!(ju["module"], u.module);
            assert_eq!(ju["title"], u.title);
            assert_eq!(ju["description"], u.description);
            let inst: Vec<&str> = ju["instances"]
                .as_array()
                .unwrap()
                .iter()
                .map(|i| i["name"].as_str().unwrap())
                .collect();
            assert_eq!(inst, u.instances);
            let regs = ju["registers"].as_array().unwrap();
            assert_eq!(regs.len(), u.registers.len(), "{} {}", p.id, u.name);
            for (r, jr) in u.registers.iter().zip(regs) {
                registers += 1;
                let at = format!("{} {}", p.id, r.name);
                assert_eq!(jr["name"], r.name, "{at}");
                assert_eq!(jr["type_name"], r.type_name, "{at}");
                assert_eq!(jr["width"], r.width, "{at}");
                assert_eq!(jr["space"], r.space.as_str(), "{at}");
                assert_eq!(jr["count"], r.count, "{at}");
                assert_eq!(jr["count_cpuid"], json!(r.count_cpuid), "{at}");
                assert_eq!(jr["reset"], r.reset, "{at}");
                assert_eq!(jr["reserved_mask"], r.reserved_mask, "{at}");
                assert_eq!(jr["ignored_mask"], r.ignored_mask, "{at}");
                assert_eq!(jr["writable_mask"], r.writable_mask, "{at}");
                assert_eq!(jr["description"], r.description, "{at}");
                let citations: Vec<&str> = jr["sources"]
                    .as_array()
                    .unwrap()
                    .iter()
                    .map(|s| s["citation"].as_str().unwrap())
                    .collect();
                assert_eq!(citations, r.sources, "{at}");
                match r.addresses {
                    Addresses::Known(addrs) => {
                        assert_eq!(jr["address_unknown"], Value::Null, "{at}");
                        let ja = jr["addresses"].as_array().unwrap();
                        assert_eq!(ja.len(), addrs.len(), "{at}");
                        for (a, j) in addrs.iter().zip(ja) {
                            let mut want = location_keys(&a.location);
                            want["name"] = json!(a.name);
                            want["instance"] = json!(a.instance);
                            want["index"] = json!(a.index);
                            want["source"] = json!(a.source);
                            assert_eq!(j, &want, "{at}");
                        }
                    }
                    Addresses::Unknown(reason) => {
                        assert_eq!(jr["address_unknown"], reason, "{at}");
                        assert_eq!(jr["addresses"], json!([]), "{at}");
                    }
                    Addresses::FromTable(t) => {
                        let place = match t.place {
                            pmu_regs::TablePlace::BoxControl => "box-control",
                            pmu_regs::TablePlace::CounterControl => "counter-control",
                            pmu_regs::TablePlace::Counter => "counter",
                        };
                        let want = json!({"place": place, "stride": t.stride, "source": t.source});
                        assert_eq!(jr["from_table"], want, "{at}");
                        assert_eq!(jr["addresses"], json!([]), "{at}");
                    }
                }
                let jf = jr["fields"].as_array().unwrap();
                assert_eq!(jf.len(), r.fields.len(), "{at}");
                for (f, j) in r.fields.iter().zip(jf) {
                    fields += 1;
                    let values: Vec<Value> = f
                        .values
                        .iter()
                        .map(|v| json!({"value": v.value, "name": v.name, "description": v.description}))
                        .collect();
                    let repeat = f.repeat.map(|r| {
                        json!({"element_width": r.element_width, "max_count": r.max_count,
                               "count_cpuid": r.count_cpuid})
                    });
                    let ranges: Vec<Value> = f
                        .ranges()
                        .map(|(msb, lsb)| json!({"msb": msb, "lsb": lsb}))
                        .collect();
                    let count_default = f.count_default.map(|d| match d {
                        pmu_regs::CountDefault::AllOnes => {
                            json!({"value": f.max(), "all_ones": true})
                        }
                        pmu_regs::CountDefault::Value(v) => json!({"value": v, "all_ones": false}),
                    });
                    let mut j = j.clone();
                    // The field's own source is not in the Rust metadata; its shape is in
                    // the schema.
                    j.as_object_mut().unwrap().remove("source");
                    assert_eq!(
                        j,
                        json!({"name": f.name, "lsb": f.lsb, "msb": f.msb, "ranges": ranges, "width": f.width(),
                               "mask": f.mask(), "access": f.access.as_str(), "reset": f.reset,
                               "description": f.description, "values": values, "repeat": repeat,
                               "role": f.role.map(kebab), "counters": f.counters,
                               "count_default": count_default}),
                        "{at}"
                    );
                }
                let notes: Vec<Value> = r
                    .notes
                    .iter()
                    .map(|n| json!({"kind": n.kind, "title": n.title, "text": n.text}))
                    .collect();
                assert_eq!(jr["notes"], json!(notes), "{at}");
            }
            match u.pmu {
                Some(pmu) => {
                    structure_agrees(pmu, &ju["pmu"]);
                    structures += 1;
                }
                None => assert_eq!(ju["pmu"], Value::Null, "{} {}", p.id, u.name),
            }
            events += events_agree(u.events, &ju["events"], p.id, u.name);
        }
        match p.core_events {
            Some(c) => {
                let jc = &jp["core_events"];
                assert_eq!(
                    (jc["processor"].as_str(), jc["unit"].as_str()),
                    (Some(c.processor), Some(c.unit)),
                    "{}",
                    p.id
                );
                events += events_agree(c.events, &jc["events"], p.id, c.unit);
            }
            None => assert_eq!(jp["core_events"], Value::Null, "{}", p.id),
        }
        domains_agree(p, &jp["discovery_domains"]);
    }
    // The README's coverage table: 113 layouts, 495 events today; never none.
    assert!(registers > 100 && fields > 500 && events > 400 && structures > 10);
}

/// A processor's discovery domains in the model are its `ProcessorInfo::discovery_domains`.
fn domains_agree(p: &pmu_regs::ProcessorInfo, jd: &Value) {
    let want: Vec<Value> = p
        .discovery_domains
        .iter()
        .map(|d| {
            let (place, device, msr) = match d.place {
                pmu_regs::DomainPlace::PciDevice(id) => ("pci-device", json!(id), Value::Null),
                pmu_regs::DomainPlace::Msr(a) => ("msr", Value::Null, json!(a)),
            };
            let ignored: Vec<Value> = d
                .ignored
                .iter()
                .map(|(t, n)| json!({"type": t, "name": n}))
                .collect();
            json!({"id": d.id, "place": place, "pci_device_id": device, "msr": msr,
                   "per": if d.per_die { "die" } else { "socket" }, "ignored": ignored,
                   "global_init": d.global_init, "source": d.source})
        })
        .collect();
    assert_eq!(jd, &json!(want), "{}", p.id);
}

/// A consumer of the JSON alone finds Diamond Rapids' two discovery domains. The expected
/// values are Linux's (uncore.c / uncore_discovery.h, "perf/x86/intel/uncore: Support Diamond
/// Rapids", January 2026): DMR_UNCORE_DISCOVERY_TABLE_DEVICE is 0x09a1, the IMH's table device
/// (one per socket); CBB_UNCORE_DISCOVERY_MSR is 0x710, read on each compute die;
/// dmr_uncore_imh_units_ignore holds type 0x13 (MSE) and dmr_uncore_cbb_units_ignore 0x25
/// (SB2UCIE). Every other processor has no domain of its own (the generic device 0x09a7).
#[test]
fn diamond_rapids_domains_from_the_json() {
    let model = load("pmu-regs.json");
    let procs = model["processors"].as_array().unwrap();
    let dmr = procs.iter().find(|p| p["id"] == "diamond-rapids").unwrap();
    let domains = dmr["discovery_domains"].as_array().unwrap();
    let by_id = |id: &str| domains.iter().find(|d| d["id"] == id).unwrap();
    let (imh, cbb) = (by_id("imh"), by_id("cbb"));
    assert_eq!(domains.len(), 2);
    assert_eq!(
        (
            &imh["place"],
            &imh["pci_device_id"],
            &imh["msr"],
            &imh["per"]
        ),
        (
            &json!("pci-device"),
            &json!(0x09a1),
            &Value::Null,
            &json!("socket")
        )
    );
    assert_eq!(imh["ignored"], json!([{"type": 0x13, "name": "MSE"}]));
    assert_eq!(
        (
            &cbb["place"],
            &cbb["pci_device_id"],
            &cbb["msr"],
            &cbb["per"]
        ),
        (&json!("msr"), &Value::Null, &json!(0x710), &json!("die"))
    );
    assert_eq!(cbb["ignored"], json!([{"type": 0x25, "name": "SB2UCIE"}]));
    // Linux tip b575fc0e3357: only the CBB domain has a global_init, a 32-bit write of 0.
    assert_eq!(
        (&imh["global_init"], &cbb["global_init"]),
        (&Value::Null, &json!(0))
    );
    let others: Vec<&str> = procs
        .iter()
        .filter(|p| p["id"] != "diamond-rapids" && p["discovery_domains"] != json!([]))
        .map(|p| p["id"].as_str().unwrap())
        .collect();
    assert!(others.is_empty(), "{others:?}");
}

/// Each event of `events` is the model's `je` entry in the same place, with the same values;
/// returns how many.
fn events_agree(events: &[&pmu_regs::EventInfo], je: &Value, p: &str, unit: &str) -> usize {
    let je = je.as_array().unwrap();
    assert_eq!(je.len(), events.len(), "{p} {unit}");
    for (e, j) in events.iter().zip(je) {
        let counters: Vec<u32> = (0..32).filter(|n| e.can_count_on(*n)).collect();
        assert_eq!(j["name"], e.name);
        assert_eq!(j["code"], e.code, "{}", e.name);
        assert_eq!(j["umask"], e.umask, "{}", e.name);
        assert_eq!(j["ext_sel"], e.ext_sel, "{}", e.name);
        assert_eq!(j["counters"], json!(counters), "{}", e.name);
        assert_eq!(j["filters"], e.filters, "{}", e.name);
        assert_eq!(j["threshold"], e.threshold, "{}", e.name);
        assert_eq!(j["invert"], e.invert, "{}", e.name);
        assert_eq!(j["edge"], e.edge, "{}", e.name);
        assert_eq!(j["any_thread"], e.any_thread, "{}", e.name);
    }
    events.len()
}

/// `OverflowEnable` -> `overflow-enable`: the spec spelling of a generated enum variant.
fn kebab(v: impl std::fmt::Debug) -> String {
    let mut out = String::new();
    for c in format!("{v:?}").chars() {
        if c.is_ascii_uppercase() && !out.is_empty() {
            out.push('-');
        }
        out.push(c.to_ascii_lowercase());
    }
    out
}

fn element(r: &pmu_regs::structure::RegRef) -> Value {
    json!({"register": r.register.name, "index": r.index})
}

fn hop_bit(b: &pmu_regs::structure::BitRef) -> Value {
    json!({"unit": b.register.unit, "register": b.register_name, "layout": b.register.name,
           "instance": b.instance, "index": b.index, "field": b.field.name, "bit": b.field.lsb})
}

/// A unit's `pmu` object says what its `PmuInfo` says.
fn structure_agrees(pmu: &pmu_regs::structure::PmuInfo, j: &Value) {
    let at = format!("{} {} pmu", pmu.processor, pmu.unit);
    let names = |regs: &[&pmu_regs::RegisterInfo]| -> Value {
        regs.iter().map(|r| r.name).collect::<Vec<_>>().into()
    };
    let counters: Vec<Value> = pmu
        .counters
        .iter()
        .map(|c| {
            let mut v = json!({"number": c.number, "kind": kebab(c.kind), "width": c.width,
                   "width_cpuid": c.width_cpuid, "control": c.control.as_ref().map(element),
                   "counter": element(&c.counter), "alias": c.alias.as_ref().map(element),
                   "event": c.event,
                   "perf_event": c.perf_event.map(|p| json!({"name": p.name, "umask": p.umask,
                       "scale": p.scale, "unit": p.unit}))});
            // Present only where the box's status does not show the overflow.
            if c.overflow != pmu_regs::OverflowSeen::Status {
                v["overflow"] = json!({"seen": c.overflow.as_str(), "source": c.overflow_source});
            }
            v
        })
        .collect();
    let filters: Vec<Value> = pmu
        .filters
        .iter()
        .map(|f| {
            json!({"register": f.register.name, "mask": f.mask.map(|m| m.name),
                   "event": f.event, "event_ext": f.event_ext, "counters": f.counters,
                   "description": f.description})
        })
        .collect();
    let routes: Vec<Value> = pmu
        .routes
        .iter()
        .map(|r| {
            let hops: Vec<Value> = r
                .hops
                .iter()
                .map(|h| json!({"bit": hop_bit(&h.bit), "clear": h.clear.as_ref().map(hop_bit)}))
                .collect();
            json!({"instances": r.instances, "counters": r.counters, "hops": hops})
        })
        .collect();
    let notes: Vec<Value> = pmu
        .notes
        .iter()
        .map(|n| json!({"kind": n.kind, "title": n.title, "text": n.text}))
        .collect();
    assert_eq!(
        j,
        &json!({"scope": kebab(pmu.scope), "discovery_type": pmu.discovery_type,
            "discovery_ignored": pmu.discovery_ignored.map(|d| json!({"source": d.source, "description": d.description})),
            "discovery_count": pmu.discovery_count.map(|c| json!({"boxes": c.boxes, "source": c.source, "description": c.description})),
            "discovery_broken": pmu.discovery_broken.map(|d| json!({"source": d.source, "description": d.description})),
            "saturation": pmu.saturation.map(|q| json!({"reset_bit": q.reset_bit, "source": q.source, "description": q.description})),
            "global_init": pmu.global_init.iter().map(|g| json!({"register": g.register.name, "field": g.field.name,
                "write": g.write, "power_on": g.power_on, "source": g.source, "description": g.description})).collect::<Vec<_>>(),
            "clock_event": pmu.clock_event.map(|c| json!({"code": c.code, "umask": c.umask, "source": c.source})),
                "controls": names(pmu.controls),
                "statuses": names(pmu.statuses), "overflow_clears": names(pmu.overflow_clears),
                "counters": counters, "filters": filters, "routes": routes, "notes": notes}),
        "{at}"
    );
}

/// A consumer of the JSON alone finds a unit's clock event: Sapphire Rapids' CHA counts its
/// clock with UNC_CHA_CLOCKTICKS, EventCode 0x01 and UMask 0x00 in Intel's
/// sapphirerapids_uncore.json; a unit whose list names no clock-tick event (the free-running
/// IIO counters) has `null`.
#[test]
fn a_units_clock_event_from_the_json() {
    let model = load("pmu-regs.json");
    let procs = model["processors"].as_array().unwrap();
    let unit = |p: &str, u: &str| -> Value {
        let jp = procs.iter().find(|j| j["id"] == p).unwrap();
        let units = jp["units"].as_array().unwrap();
        units.iter().find(|j| j["name"] == u).unwrap()["pmu"].clone()
    };
    assert_eq!(
        unit("sapphire-rapids", "CHA")["clock_event"],
        json!({"code": 0x01, "umask": 0x00, "source": "intel-perfmon-sapphire-rapids"})
    );
    assert_eq!(
        unit("sapphire-rapids", "IIO_FREE")["clock_event"],
        Value::Null
    );
}
