//! The pipeline spec (`pipelines/<workflow>/spec.yaml`), in the reference runner's keys.
//!
//! Only the keys inferbench acts on are typed here; the rest are kept as written and bound
//! into the run through the spec file's hash in `lock.json`. Paths inside the spec (prompt
//! templates, the provider table) are relative to the spec file's directory.
use crate::{Error, Result};
use serde::Deserialize;
use serde_json::Value;
use std::path::{Path, PathBuf};

/// The task families inferbench knows how to score, in their schedule order.
pub const FAMILIES: [&str; 3] = ["meeting-notes-lookup", "ticket-triage", "contract-terms-extraction"];

#[derive(Debug, Clone)]
pub struct Spec {
    pub path: PathBuf,
    pub slug: String,
    pub name: String,
    /// Default dataset directory (relative to the working directory, as in the reference).
    pub dataset_source: PathBuf,
    pub selected_per_family: usize,
    pub families: Vec<FamilySpec>,
    pub model: String,
    /// Provider table path, resolved against the spec's directory.
    pub providers_path: PathBuf,
    pub inference: Inference,
    pub required_columns: Vec<String>,
}

#[derive(Debug, Clone)]
pub struct FamilySpec {
    pub name: String,
    pub available_items: usize,
    pub input_tokens: (i64, i64),
    /// As written in the spec, e.g. `prompts/meeting-notes.system.txt`: the template's logical name.
    pub prompt_template: String,
}

#[derive(Debug, Clone, Deserialize)]
pub struct Inference {
    pub temperature: f64,
    pub top_p: f64,
    pub presence_penalty: f64,
    pub frequency_penalty: f64,
    pub max_completion_tokens: u32,
    pub timeout_seconds: f64,
    pub reasoning: Reasoning,
    pub structured_output: StructuredOutput,
}

#[derive(Debug, Clone, Deserialize)]
pub struct Reasoning {
    pub default_effort: String,
}

#[derive(Debug, Clone, Deserialize)]
pub struct StructuredOutput {
    pub mode: String,
}

fn field<'a>(path: &Path, root: &'a Value, pointer: &str) -> Result<&'a Value> {
    root.pointer(pointer).ok_or_else(|| {
        Error::bad(format!("{}: {}: missing", path.display(), pointer.trim_start_matches('/').replace('/', ".")))
    })
}

fn string(path: &Path, root: &Value, pointer: &str) -> Result<String> {
    field(path, root, pointer)?.as_str().map(str::to_string).ok_or_else(|| {
        Error::bad(format!(
            "{}: {}: expected a string",
            path.display(),
            pointer.trim_start_matches('/').replace('/', ".")
        ))
    })
}

fn count(path: &Path, root: &Value, pointer: &str) -> Result<usize> {
    field(path, root, pointer)?.as_u64().map(|n| n as usize).ok_or_else(|| {
        Error::bad(format!(
            "{}: {}: expected a non-negative integer",
            path.display(),
            pointer.trim_start_matches('/').replace('/', ".")
        ))
    })
}

/// Parses a token band such as `500-1000`.
pub fn parse_band(text: &str) -> Option<(i64, i64)> {
    let (lo, hi) = text.split_once('-')?;
    let (lo, hi) = (lo.trim().parse().ok()?, hi.trim().parse().ok()?);
    (lo <= hi).then_some((lo, hi))
}

impl Spec {
    /// Reads and validates a spec file.
    pub fn load(path: &Path) -> Result<Spec> {
        let text = std::fs::read_to_string(path).map_err(|e| Error::unreadable(path, e))?;
        let root: Value = serde_norway::from_str(&text).map_err(|e| Error::bad(format!("{}: {e}", path.display())))?;
        Self::from_value(path, &root)
    }

    fn from_value(path: &Path, root: &Value) -> Result<Spec> {
        let dir = path.parent().unwrap_or(Path::new("."));
        let families_value = field(path, root, "/dataset/task_families")?
            .as_object()
            .ok_or_else(|| Error::bad(format!("{}: dataset.task_families: expected a mapping", path.display())))?;
        let names: Vec<&str> = families_value.keys().map(String::as_str).collect();
        if names != FAMILIES {
            return Err(Error::bad(format!(
                "{}: dataset.task_families: expected exactly {FAMILIES:?} in this order, found {names:?}",
                path.display()
            )));
        }
        let mut families = Vec::new();
        for name in FAMILIES {
            let at = format!("/dataset/task_families/{name}");
            let band_text = string(path, root, &format!("{at}/input_tokens"))?;
            let input_tokens = parse_band(&band_text).ok_or_else(|| {
                Error::bad(format!(
                    "{}: dataset.task_families.{name}.input_tokens: expected LOW-HIGH, found `{band_text}`",
                    path.display()
                ))
            })?;
            families.push(FamilySpec {
                name: name.to_string(),
                available_items: count(path, root, &format!("{at}/available_items"))?,
                input_tokens,
                prompt_template: string(path, root, &format!("{at}/prompt_template"))?,
            });
        }
        let inference: Inference = serde_json::from_value(field(path, root, "/inference")?.clone())
            .map_err(|e| Error::bad(format!("{}: inference: {e}", path.display())))?;
        let required_columns = field(path, root, "/reporting/required_provider_metric_columns")?
            .as_array()
            .map(|cols| cols.iter().filter_map(Value::as_str).map(str::to_string).collect())
            .unwrap_or_default();
        Ok(Spec {
            path: path.to_path_buf(),
            slug: string(path, root, "/benchmark/slug")?,
            name: string(path, root, "/benchmark/name")?,
            dataset_source: PathBuf::from(string(path, root, "/dataset/source")?),
            selected_per_family: count(path, root, "/dataset/selection/selected_items_per_task_family")?,
            families,
            model: string(path, root, "/providers/model")?,
            providers_path: dir.join(string(path, root, "/providers/table")?),
            inference,
            required_columns,
        })
    }

    /// The directory the spec's relative paths are resolved against.
    pub fn dir(&self) -> &Path {
        self.path.parent().unwrap_or(Path::new("."))
    }

    /// The family's spec, if it is one of ours.
    pub fn family(&self, name: &str) -> Option<&FamilySpec> {
        self.families.iter().find(|f| f.name == name)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bands_parse_and_reject_nonsense() {
        assert_eq!(parse_band("500-1000"), Some((500, 1000)));
        assert_eq!(parse_band("50 - 100"), Some((50, 100)));
        assert_eq!(parse_band("100-50"), None);
        assert_eq!(parse_band("many"), None);
    }

    #[test]
    fn the_bundled_spec_loads() {
        let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("../pipelines/micro-single-task/spec.yaml");
        let spec = Spec::load(&path).unwrap();
        assert_eq!(spec.slug, "inference-micro-single-task");
        assert_eq!(spec.families.len(), 3);
        assert_eq!(spec.families[1].input_tokens, (50, 100));
        assert_eq!(spec.inference.max_completion_tokens, 256);
        assert_eq!(spec.required_columns.len(), 23);
    }

    #[test]
    fn a_missing_key_is_named() {
        let root: Value = serde_norway::from_str("benchmark: {slug: x}\n").unwrap();
        let err = Spec::from_value(Path::new("s.yaml"), &root).unwrap_err().to_string();
        assert_eq!(err, "s.yaml: dataset.task_families: missing");
    }
}
