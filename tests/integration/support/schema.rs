//! The published JSON Schemas of the `--output json` documents (`docs/schema/`).

use std::path::Path;

/// Validates `doc` against `docs/schema/NAME.schema.json`, and its `schema_version`.
pub fn validate(name: &str, doc: &serde_json::Value) {
    let path =
        Path::new(env!("CARGO_MANIFEST_DIR")).join(format!("docs/schema/{name}.schema.json"));
    let schema: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap();
    let validator = jsonschema::validator_for(&schema).expect("a valid schema");
    let errors: Vec<String> = validator
        .iter_errors(doc)
        .map(|e| format!("{} at {}", e, e.instance_path()))
        .collect();
    assert!(errors.is_empty(), "{name}: {errors:#?}\n{doc:#}");
    assert_eq!(doc["schema_version"], 1, "{name}");
}
