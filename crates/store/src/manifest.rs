//! The files `manifest.json` covers: every file below the run directory, by its path relative
//! to it, except hidden ones (a writer lock, a temporary file not yet renamed) and the manifest
//! and its signature themselves. `ib-report` inventories them into the manifest and `ib-verify`
//! holds a run against it, so the two cannot disagree on what a run holds.
use crate::run::RunDir;
use inferbench_contract::canonical::file_digest;
use inferbench_contract::manifest::FileEntry;
use inferbench_contract::{Error, Result};
use std::collections::BTreeMap;
use std::path::PathBuf;

/// The files the manifest covers, by relative path (`/`-separated), in path order, each with
/// where it is.
pub fn covered(run: &RunDir) -> Result<BTreeMap<String, PathBuf>> {
    let root = run.root();
    let mut files = BTreeMap::new();
    let mut stack = vec![root.to_path_buf()];
    while let Some(dir) = stack.pop() {
        for entry in std::fs::read_dir(&dir).map_err(|e| Error::unreadable(&dir, e))? {
            let path = entry.map_err(|e| Error::unreadable(&dir, e))?.path();
            let name = path.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
            if name.starts_with('.') {
                continue;
            }
            if path.is_dir() {
                stack.push(path);
                continue;
            }
            let rel = path.strip_prefix(root).unwrap_or(&path).to_string_lossy().replace('\\', "/");
            if ![RunDir::MANIFEST, RunDir::MANIFEST_SIG, RunDir::MANIFEST_PUB].contains(&rel.as_str()) {
                files.insert(rel, path);
            }
        }
    }
    Ok(files)
}

/// The files the manifest covers, each read once for its size and SHA-256.
pub fn inventory(run: &RunDir) -> Result<BTreeMap<String, FileEntry>> {
    covered(run)?
        .into_iter()
        .map(|(name, path)| file_digest(&path).map(|(bytes, sha256)| (name, FileEntry { bytes, sha256 })))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_manifest_covers_every_file_but_hidden_ones_the_manifest_and_its_signature() {
        let dir = tempfile::tempdir().unwrap();
        let run = RunDir::new(dir.path());
        std::fs::create_dir_all(dir.path().join("events/.hidden")).unwrap();
        std::fs::write(dir.path().join("events/0001.jsonl"), "x\n").unwrap();
        std::fs::write(dir.path().join("events/.hidden/f"), "").unwrap();
        std::fs::write(dir.path().join("b.json"), "{}").unwrap();
        for name in ["manifest.json", "manifest.sig", "manifest.pub", ".lock", ".report.md.1.tmp"] {
            std::fs::write(dir.path().join(name), "00").unwrap();
        }
        assert_eq!(covered(&run).unwrap().keys().collect::<Vec<_>>(), ["b.json", "events/0001.jsonl"]);
        let files = inventory(&run).unwrap();
        assert_eq!(files["events/0001.jsonl"].bytes, 2);
        assert_eq!(files["events/0001.jsonl"].sha256, inferbench_contract::canonical::sha256_hex(b"x\n"));
    }
}
