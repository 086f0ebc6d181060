//! The reference runner's terminal records as an imported run keeps them
//! (`reference/records.jsonl`, written by `ib-import`), and the one check of the reference's
//! that inferbench reproduces from them rather than from its own reading: the record-level
//! configuration check of its paired comparisons (seed-runner.md §8.6), which leaves a provider
//! out of every pair when any one of its records fails it.
use inferbench_contract::{Error, Result};
use serde_json::Value;
use std::collections::BTreeMap;
use std::path::Path;

/// The `error` of the one `runner_error` the reference itself scores as a transport error
/// (seed-runner.md §5.9): its `type` and its `message`.
pub const HISTORICAL_ERROR_TYPE: &str = "AttributeError";
pub const HISTORICAL_ERROR_MESSAGE: &str = "'NoneType' object has no attribute 'read'";

/// Why a record fails the reference's record-level check, if it does: an explicit
/// `configuration_compatible` flag that is not true; a `model_identity.matches` that is
/// present and not true (an HTTP error's is null: nothing was reported); an
/// `adapter_compatibility.status` of `unsupported`, `request_failed` or `incompatible`; or a
/// `configuration_checks` value that is not true.
pub fn paired_check_failure(record: &Value) -> Option<&'static str> {
    for key in ["configuration_compatible", "provider_configuration_compatible"] {
        if let Some(flag) = record.get(key) {
            return (flag != &Value::Bool(true)).then_some("its record says it is not configuration-compatible");
        }
    }
    if let Some(identity) = record.get("model_identity").and_then(Value::as_object) {
        if identity.get("matches").is_some_and(|m| m != &Value::Bool(true)) {
            return Some("its model identity is not an exact match");
        }
    }
    let status = record.pointer("/adapter_compatibility/status").and_then(Value::as_str);
    if matches!(status, Some("unsupported" | "request_failed" | "incompatible")) {
        return Some("its adapter compatibility is unsupported, request_failed or incompatible");
    }
    if let Some(checks) = record.get("configuration_checks").and_then(Value::as_object) {
        if checks.values().any(|v| v != &Value::Bool(true)) {
            return Some("a configuration check failed");
        }
    }
    None
}

/// Provider → how many of the reference records at `path` (an imported run's
/// `reference/records.jsonl`) fail the record-level check; `None` when there is no such file
/// (the run was not imported).
pub fn paired_check_failures(path: &Path) -> Result<Option<BTreeMap<String, usize>>> {
    if !path.exists() {
        return Ok(None);
    }
    let bytes = std::fs::read(path).map_err(|e| Error::unreadable(path, e))?;
    let mut failures = BTreeMap::new();
    for (i, line) in String::from_utf8_lossy(&bytes).lines().enumerate() {
        let record = serde_json::from_str::<Value>(line)
            .ok()
            .or_else(|| inferbench_contract::lenient_json::parse(line))
            .ok_or_else(|| Error::bad(format!("{}:{}: not valid JSON", path.display(), i + 1)))?;
        let provider = record.get("provider").and_then(Value::as_str).unwrap_or_default().to_string();
        let failed = usize::from(paired_check_failure(&record).is_some());
        *failures.entry(provider).or_insert(0) += failed;
    }
    Ok(Some(failures))
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn the_record_level_check_follows_the_references_rules() {
        let completed = json!({"model_identity": {"matches": true}, "adapter_compatibility": {"status": "documented"}});
        assert_eq!(paired_check_failure(&completed), None);
        let http_error =
            json!({"model_identity": {"matches": null}, "adapter_compatibility": {"status": "request_failed"}});
        assert!(paired_check_failure(&http_error).is_some());
        assert_eq!(paired_check_failure(&json!({"terminal_outcome": "timeout"})), None, "no identity, no verdict");
        assert!(paired_check_failure(&json!({"model_identity": {"matches": false}})).is_some());
        assert!(paired_check_failure(&json!({"configuration_checks": {"a": true, "b": false}})).is_some());
        assert!(paired_check_failure(&json!({"configuration_compatible": false, "model_identity": {"matches": true}}))
            .is_some());
        assert_eq!(
            paired_check_failure(&json!({"configuration_compatible": true, "model_identity": {"matches": false}})),
            None
        );
    }
}
