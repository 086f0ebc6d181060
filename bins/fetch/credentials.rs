//! Credentials: read from the process environment, else from a `.env` file (process wins),
//! used only to build request headers, and scrubbed from everything that is logged.
use inferbench_schemas::providers::{Auth, Provider};
use std::collections::BTreeMap;
use std::path::Path;

pub const REDACTED: &str = "<redacted>";

/// The `KEY=VALUE` pairs of a `.env` file (comments, blank lines and `export ` ignored;
/// values may be quoted). Only the names asked for are kept.
pub fn read_env_file(path: &Path, wanted: &[&str]) -> BTreeMap<String, String> {
    let Ok(text) = std::fs::read_to_string(path) else { return BTreeMap::new() };
    let mut found = BTreeMap::new();
    for line in text.lines() {
        let line = line.trim();
        let line = line.strip_prefix("export ").unwrap_or(line);
        let Some((key, value)) = line.split_once('=') else { continue };
        let key = key.trim();
        if line.starts_with('#') || !wanted.contains(&key) {
            continue;
        }
        let value = value.trim();
        let value = value
            .strip_prefix('"')
            .and_then(|v| v.strip_suffix('"'))
            .or_else(|| value.strip_prefix('\'').and_then(|v| v.strip_suffix('\'')))
            .unwrap_or(value);
        if !value.is_empty() {
            found.insert(key.to_string(), value.to_string());
        }
    }
    found
}

/// The credential values of one provider, by variable name.
#[derive(Clone, Default)]
pub struct Credentials {
    values: BTreeMap<String, String>,
}

impl std::fmt::Debug for Credentials {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_list().entries(self.values.keys()).finish()
    }
}

impl Credentials {
    /// Looks up every variable the provider needs; returns the names that are missing.
    pub fn resolve(provider: &Provider, env_file: &BTreeMap<String, String>) -> (Credentials, Vec<String>) {
        let mut values = BTreeMap::new();
        let mut missing = Vec::new();
        for name in provider.credential_names() {
            let value = std::env::var(name).ok().filter(|v| !v.is_empty()).or_else(|| env_file.get(name).cloned());
            match value {
                Some(v) => {
                    values.insert(name.to_string(), v);
                }
                None => missing.push(name.to_string()),
            }
        }
        (Credentials { values }, missing)
    }

    /// Placeholder credentials for simulated providers, used when none are set.
    pub fn simulated(provider: &Provider) -> Credentials {
        let values =
            provider.credential_names().into_iter().map(|n| (n.to_string(), "simulated".to_string())).collect();
        Credentials { values }
    }

    /// The auth headers to send (real values) and to log (redacted).
    pub fn headers(&self, provider: &Provider) -> Vec<(String, String)> {
        let get = |name: &str| self.values.get(name).cloned().unwrap_or_default();
        match &provider.auth {
            Auth::Bearer { env } => vec![("Authorization".to_string(), format!("Bearer {}", get(env)))],
            Auth::Headers { headers } => headers.iter().map(|(h, env)| (h.clone(), get(env))).collect(),
        }
    }

    /// `text` with every credential value replaced by `<redacted>`.
    pub fn redact(&self, text: &str) -> String {
        let mut out = text.to_string();
        for value in self.values.values().filter(|v| v.len() >= 4) {
            out = out.replace(value.as_str(), REDACTED);
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn env_file_parsing_keeps_only_wanted_names() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join(".env");
        std::fs::write(&path, "# c\nexport A_KEY=\"abc def\"\nB_KEY='x'\nOTHER=1\nEMPTY=\n").unwrap();
        let found = read_env_file(&path, &["A_KEY", "B_KEY", "EMPTY"]);
        assert_eq!(found.get("A_KEY").map(String::as_str), Some("abc def"));
        assert_eq!(found.get("B_KEY").map(String::as_str), Some("x"));
        assert!(!found.contains_key("OTHER") && !found.contains_key("EMPTY"));
    }

    #[test]
    fn redaction_removes_every_occurrence_and_debug_shows_names_only() {
        let creds = Credentials { values: BTreeMap::from([("K".to_string(), "sk-secret-123".to_string())]) };
        assert_eq!(creds.redact("Bearer sk-secret-123 / sk-secret-123"), "Bearer <redacted> / <redacted>");
        assert!(!format!("{creds:?}").contains("sk-secret"));
    }
}
