//! The keys of ib-sim's profile file that shape one provider's stream: its speed (medians
//! only: every request draws around them), reasoning, chunking and accuracy. The faults of
//! the file are not read: ib-synth's failure shares are the same for every provider and
//! given on its command line. ib-sim itself checks the whole file (`tools/sim/profile.rs`);
//! here a missing or mistyped key that ib-synth reads is a precise error.
use anyhow::{bail, Context, Result};
use inferbench_inputs::providers::slug;
use serde_norway::Value;
use std::collections::BTreeMap;
use std::path::Path;

#[derive(Debug, Clone, PartialEq)]
pub struct Shape {
    /// Median time from receipt to the first answer token, profile ms.
    pub ttft_ms: f64,
    /// Median answer tokens per second.
    pub tokens_per_second: f64,
    /// Mean reasoning tokens before the answer; each request draws in [mean/2, 3·mean/2].
    pub reasoning_mean: f64,
    /// The delta field that carries reasoning (`reasoning_content`, `reasoning`).
    pub reasoning_field: String,
    pub tokens_per_chunk: usize,
    pub accuracy: f64,
}

/// The shapes by provider slug.
pub fn load(path: &Path) -> Result<BTreeMap<String, Shape>> {
    let text = std::fs::read_to_string(path).with_context(|| format!("reading {}", path.display()))?;
    parse(&text).map_err(|e| inferbench_contract::Error::bad(format!("{}: {e}", path.display())).into())
}

fn number(v: &Value, at: &str) -> std::result::Result<f64, String> {
    v.as_f64().filter(|x| x.is_finite() && *x >= 0.0).ok_or_else(|| format!("{at}: must be a number >= 0"))
}

pub fn parse(text: &str) -> std::result::Result<BTreeMap<String, Shape>, String> {
    let root: Value = serde_norway::from_str(text).map_err(|e| e.to_string())?;
    let providers = root.get("providers").and_then(Value::as_mapping).ok_or("providers: a mapping is required")?;
    let mut out = BTreeMap::new();
    for (name, p) in providers {
        let name = name.as_str().ok_or("providers: keys must be strings")?;
        let at = |key: &str| format!("providers.{name}.{key}");
        let median = |key: &str| -> std::result::Result<f64, String> {
            number(p.get(key).and_then(|d| d.get("median")).unwrap_or(&Value::Null), &at(&format!("{key}.median")))
        };
        let reasoning_mean = match p.get("reasoning_tokens") {
            None => 0.0,
            Some(r) => number(r.get("mean").unwrap_or(&Value::Null), &at("reasoning_tokens.mean"))?,
        };
        let reasoning_field = match p.get("reasoning_field") {
            None => "reasoning_content".to_string(),
            Some(v) => v.as_str().ok_or_else(|| format!("{}: must be a string", at("reasoning_field")))?.to_string(),
        };
        let tokens_per_chunk = match p.get("tokens_per_chunk") {
            None => 1,
            Some(v) => {
                v.as_u64().filter(|n| *n >= 1).ok_or_else(|| format!("{}: must be >= 1", at("tokens_per_chunk")))?
                    as usize
            }
        };
        let accuracy = match p.get("accuracy") {
            None => 1.0,
            Some(v) => number(v, &at("accuracy")).and_then(|a| {
                if a <= 1.0 {
                    Ok(a)
                } else {
                    Err(format!("{}: must be at most 1", at("accuracy")))
                }
            })?,
        };
        let shape = Shape {
            ttft_ms: median("ttft_ms")?,
            tokens_per_second: median("tokens_per_second")?,
            reasoning_mean,
            reasoning_field,
            tokens_per_chunk,
            accuracy,
        };
        if shape.tokens_per_second <= 0.0 {
            return Err(format!("{}: must be more than 0", at("tokens_per_second.median")));
        }
        out.insert(slug(name), shape);
    }
    Ok(out)
}

/// The shape of each of `providers` (the lock's names), by name.
pub fn for_providers(shapes: &BTreeMap<String, Shape>, providers: &[String], path: &Path) -> Result<Vec<Shape>> {
    let mut out = Vec::new();
    for name in providers {
        match shapes.get(&slug(name)) {
            Some(shape) => out.push(shape.clone()),
            None => bail!(inferbench_contract::Error::bad(format!(
                "{}: no profile for provider `{name}` (slug `{}`)",
                path.display(),
                slug(name)
            ))),
        }
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_default_profiles_read_and_defaults_apply() {
        let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("pipelines/micro-single-task/sim-profiles.yaml");
        let shapes = load(&path).unwrap();
        assert_eq!(shapes.len(), 10);
        let z = &shapes["z-ai"];
        assert_eq!((z.reasoning_field.as_str(), z.tokens_per_chunk, z.reasoning_mean), ("reasoning_content", 1, 24.0));
        assert_eq!(shapes["together"].reasoning_field, "reasoning");
        assert!((z.ttft_ms - 1391.8).abs() < 1e-9);
    }

    #[test]
    fn bad_keys_are_named() {
        let err = parse("providers:\n  a: {ttft_ms: {median: 1}, tokens_per_second: {median: 0}}\n").unwrap_err();
        assert!(err.contains("providers.a.tokens_per_second.median"), "{err}");
        let err = parse("providers:\n  a: {ttft_ms: {}, tokens_per_second: {median: 1}}\n").unwrap_err();
        assert!(err.contains("providers.a.ttft_ms.median"), "{err}");
        let err = parse("providers:\n  a: {ttft_ms: {median: 1}, tokens_per_second: {median: 1}, accuracy: 2}\n")
            .unwrap_err();
        assert!(err.contains("accuracy: must be at most 1"), "{err}");
    }
}
