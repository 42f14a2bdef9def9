//! JSON model emitter: `model/pmu-regs.json`, the validated model for tools that do not use
//! Rust, and `model/schema.json`, the JSON Schema it conforms to (a template whose
//! enumerations come from the model's vocabularies).
//!
//! The model is serialised from its own types (their `Serialize` derives, and
//! `model::json` for what needs its unit or processor), under a header naming the format
//! and its version: the format is documented in spec/README.md and the schema, and a change
//! to it raises [`FORMAT_VERSION`]. Register instances carry the same keys as
//! `pmu list --json` (`name`, `space`, `address`, `offset`, `device_id`, `device`,
//! `function`, `address_unknown`, `width`, `fields`), and events those of
//! `pmu list --events --json`.

use serde::Serialize;

use crate::model;

/// The schema's template: every `"enum": "@vocabulary Name"` becomes that vocabulary's list.
const SCHEMA_TEMPLATE: &str = include_str!("../../templates/model.schema.json");

/// The schema, emitted as `model/schema.json`.
pub fn schema() -> String {
    let mut text = SCHEMA_TEMPLATE.to_string();
    for vocab in crate::model::VOCABULARIES {
        let list: Vec<String> = vocab.spellings().map(|s| format!("{s:?}")).collect();
        text = text.replace(
            &format!("\"@vocabulary {}\"", vocab.name),
            &format!("[{}]", list.join(", ")),
        );
    }
    text
}

/// Version of the JSON format; raised on any change that can break a consumer (3: fields gained
/// `ranges`, and a split field's `lsb`/`msb` are its lowest range; 4: processors gained
/// `metrics`; 5: the `mmio` space and `units[].mmio_window`; 6: counters gained
/// `perf_event`, and a free-running counter's count field is `ro-v`; 7: metric events gained
/// `read` and `perf_metrics_byte`, for the top-down registers; 8: events gained `aux_msr`,
/// the auxiliary MSR and its value; 9: events gained `counters_ht_off`, the counters without
/// Hyper-Threading; 10: the `sysreg` space, whose addresses carry `op0`, `op1`, `crn`, `crm`,
/// `op2` and `sysreg`; 11: processors gained `discovery_domains`, where their discovery tables
/// are).
pub const FORMAT_VERSION: u32 = 11;

/// The file: the format's name and version, then the model.
#[derive(Serialize)]
struct Model<'a> {
    format: &'static str,
    format_version: u32,
    #[serde(flatten)]
    spec: &'a model::Spec,
}

/// `model/pmu-regs.json`: the whole validated model, pretty-printed, with a final newline.
pub fn model_text(spec: &model::Spec) -> String {
    let model = Model {
        format: "pmu-regs-model",
        format_version: FORMAT_VERSION,
        spec,
    };
    // Serialising plain structs of strings and integers cannot fail.
    let mut text = serde_json::to_string_pretty(&model).expect("the model serialises");
    text.push('\n');
    text
}

/// The model's files: (path relative to `generated/`, content).
pub fn files(spec: &model::Spec) -> Vec<(String, String)> {
    vec![
        ("model/pmu-regs.json".into(), model_text(spec)),
        ("model/schema.json".into(), schema()),
    ]
}
