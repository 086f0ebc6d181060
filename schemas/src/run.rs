//! The run directory: `runs/<workflow>/<run-id>/`. See `runs/README.md` for the layout.
use std::path::{Path, PathBuf};

/// Canonical paths inside one run directory.
#[derive(Debug, Clone)]
pub struct RunDir {
    root: PathBuf,
}

impl RunDir {
    pub fn new(root: impl Into<PathBuf>) -> Self {
        RunDir { root: root.into() }
    }
    pub fn root(&self) -> &Path {
        &self.root
    }
    /// The run id: the directory's name.
    pub fn run_id(&self) -> String {
        self.root.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_else(|| "run".into())
    }
    pub fn lock(&self) -> PathBuf {
        self.root.join("lock.json")
    }
    pub fn selection(&self) -> PathBuf {
        self.root.join("selection.parquet")
    }
    pub fn schedule(&self) -> PathBuf {
        self.root.join("schedule.parquet")
    }
    pub fn events_dir(&self) -> PathBuf {
        self.root.join("events")
    }
    /// `events/0001.jsonl`, … one file per fetch process, never rewritten.
    pub fn segment(&self, n: u32) -> PathBuf {
        self.events_dir().join(format!("{n:04}.jsonl"))
    }
    /// The event-log segments that exist, in order.
    pub fn segments(&self) -> std::io::Result<Vec<(u32, PathBuf)>> {
        let dir = self.events_dir();
        if !dir.exists() {
            return Ok(Vec::new());
        }
        let mut found = Vec::new();
        for entry in std::fs::read_dir(&dir)? {
            let path = entry?.path();
            let number = path
                .file_name()
                .and_then(|n| n.to_str())
                .and_then(|n| n.strip_suffix(".jsonl"))
                .filter(|n| n.len() == 4)
                .and_then(|n| n.parse::<u32>().ok());
            if let Some(n) = number {
                found.push((n, path));
            }
        }
        found.sort();
        Ok(found)
    }
    pub fn events_parquet(&self) -> PathBuf {
        self.root.join("events.parquet")
    }
    pub fn responses(&self) -> PathBuf {
        self.root.join("responses.parquet")
    }
    pub fn evaluations(&self) -> PathBuf {
        self.root.join("evaluations.parquet")
    }
    pub fn metrics_json(&self) -> PathBuf {
        self.root.join("metrics.json")
    }
    pub fn metrics_parquet(&self) -> PathBuf {
        self.root.join("metrics.parquet")
    }
    pub fn comparisons(&self) -> PathBuf {
        self.root.join("comparisons.json")
    }
    pub fn report_md(&self) -> PathBuf {
        self.root.join("report.md")
    }
    pub fn manifest(&self) -> PathBuf {
        self.root.join("manifest.json")
    }
}

/// SHA-256 of a file, for provenance (`inputs` maps).
pub fn file_sha256(path: &Path) -> crate::Result<String> {
    Ok(crate::canonical::sha256_hex(&crate::atomic::read(path)?))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn segments_are_listed_in_numeric_order_and_strays_ignored() {
        let dir = tempfile::tempdir().unwrap();
        let run = RunDir::new(dir.path().join("run-1"));
        assert!(run.segments().unwrap().is_empty());
        std::fs::create_dir_all(run.events_dir()).unwrap();
        for name in ["0002.jsonl", "0001.jsonl", "notes.txt", ".0003.jsonl.tmp"] {
            std::fs::write(run.events_dir().join(name), "").unwrap();
        }
        let numbers: Vec<u32> = run.segments().unwrap().into_iter().map(|(n, _)| n).collect();
        assert_eq!(numbers, vec![1, 2]);
        assert_eq!(run.run_id(), "run-1");
        assert!(run.segment(12).ends_with("events/0012.jsonl"));
    }
}
