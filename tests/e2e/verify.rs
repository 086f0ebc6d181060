//! `ib-verify` on a small run fetched by two shards from `ib-sim` (two sealed segments):
//! the untouched run verifies (0) and verifies again once signed; every tampered copy is
//! refused (4) naming its file: one byte changed in a Parquet table, a JSON document, a
//! sealed segment or `report.md`; a segment deleted; two segments swapped; the signature
//! checked against another key. Copies whose manifest an editor without the key re-made to
//! match are still refused, by the signature, the seal's chain or the re-derivation.
use crate::support::{bin, ok, Sim, Workspace};
use inferbench_contract::canonical::file_digest;
use inferbench_contract::manifest::{FileEntry, Manifest};
use inferbench_contract::seal::SealRecord;
use inferbench_testkit::reference_run::copy_tree;
use std::path::Path;
use std::process::{Command, Output};

/// The publisher's key, and another one.
const KEY: &str = "4c7d1a9e0b2f36c58d4e7a1b9c0f2e3d5a6b7c8d9e0f1a2b3c4d5e6f7a8b9c0d";
const OTHER_KEY: &str = "1111111111111111111111111111111111111111111111111111111111111111";

fn verify(ws: &Workspace, run: &Path, extra: &[&str]) -> Output {
    Command::new(bin("ib-verify"))
        .arg(run)
        .arg("--spec")
        .arg(ws.spec())
        .arg("--dataset")
        .arg(ws.dataset())
        .args(extra)
        .current_dir(ws.dir.path())
        .output()
        .unwrap()
}

/// `ib-verify` refused the run with exit 4, naming `file` first in its message.
fn refused(out: &Output, file: &str) -> String {
    let said = String::from_utf8_lossy(&out.stderr).into_owned();
    assert_eq!(out.status.code(), Some(4), "{said}{}", String::from_utf8_lossy(&out.stdout));
    assert!(said.starts_with(&format!("ib-verify: {file}: ")), "expected {file} named: {said}");
    said
}

/// A copy of `run` as `name`, changed by `edit`.
fn tampered(ws: &Workspace, run: &Path, name: &str, edit: impl FnOnce(&Path)) -> std::path::PathBuf {
    let copy = ws.run(name);
    copy_tree(run, &copy);
    edit(&copy);
    copy
}

fn flip_byte(path: &Path) {
    let mut bytes = std::fs::read(path).unwrap();
    let middle = bytes.len() / 2;
    bytes[middle] ^= 0x01;
    std::fs::write(path, bytes).unwrap();
}

/// The manifest's inventory re-made from the files as they are, as an editor without the
/// publisher's key could (the signature left as it was).
fn remake_manifest(run: &Path) {
    let mut manifest: Manifest = serde_json::from_slice(&std::fs::read(run.join("manifest.json")).unwrap()).unwrap();
    manifest.files.retain(|name, _| run.join(name).exists());
    for (name, entry) in manifest.files.iter_mut() {
        let (bytes, sha256) = file_digest(&run.join(name)).unwrap();
        *entry = FileEntry { bytes, sha256 };
    }
    std::fs::write(run.join("manifest.json"), serde_json::to_vec_pretty(&manifest).unwrap()).unwrap();
}

fn unsign(run: &Path) {
    for signature in ["manifest.sig", "manifest.pub"] {
        std::fs::remove_file(run.join(signature)).unwrap();
    }
}

fn seal(run: &Path) -> SealRecord {
    serde_json::from_slice(&std::fs::read(run.join("events/seal.json")).unwrap()).unwrap()
}

fn write_seal(run: &Path, record: &SealRecord) {
    std::fs::write(run.join("events/seal.json"), serde_json::to_vec_pretty(record).unwrap()).unwrap();
}

#[test]
fn a_run_verifies_and_every_tampered_copy_is_refused_naming_the_file() {
    let ws = Workspace::with_table(crate::load::TABLE, "sim-profiles.yaml", |spec| spec);
    let run = ws.run("published");
    ok(ws.stage("ib-select", &run).args(["--per-family", "1", "--sample"]));
    ok(&mut ws.stage("ib-schedule", &run));
    {
        let sim = Sim::start(&ws);
        // Two shards: two segments, 0001 and 0002, sealed together and chained.
        let now = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).unwrap();
        let start_at = format!("{:.3}", now.as_secs_f64() + 1.0);
        for which in ["1/2", "0/2"] {
            ok(ws.stage("ib-fetch", &run).args([
                "--endpoint-base",
                &sim.url,
                "--shard",
                which,
                "--start-at",
                &start_at,
            ]));
        }
    }
    for stage in ["ib-reconstruct", "ib-evaluate", "ib-aggregate", "ib-report"] {
        ok(&mut ws.stage(stage, &run));
    }
    let record = seal(&run);
    assert_eq!(record.segments.len(), 2);
    assert!(record.segments.iter().all(|s| s.chain_sha256.is_some()));

    // Untouched: every check holds, and nothing in the run changed.
    let before = crate::support::files(&run);
    let out = verify(&ws, &run, &[]);
    let said = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success(), "{said}{}", String::from_utf8_lossy(&out.stderr));
    assert!(said.contains("2 sealed segments, chained"), "{said}");
    assert!(said.contains("re-derivation: 9 files re-derived byte for byte"), "{said}");
    assert_eq!(crate::support::files(&run), before);

    // Signed by the publisher (the key from the environment), checked with the public key.
    ok(Command::new(bin("ib-verify"))
        .arg(&run)
        .args(["--skip-rederive", "--sign", "env:IB_TEST_SIGNING_KEY"])
        .env("IB_TEST_SIGNING_KEY", KEY));
    let public = std::fs::read_to_string(run.join("manifest.pub")).unwrap();
    assert_eq!(public.trim().len(), 64);
    assert!(!std::fs::read_dir(&run)
        .unwrap()
        .any(|e| std::fs::read(e.unwrap().path()).is_ok_and(|b| String::from_utf8_lossy(&b).contains(KEY))));
    let out = verify(&ws, &run, &["--public-key", public.trim()]);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    assert!(String::from_utf8_lossy(&out.stdout).contains("signature holds"));

    // One byte of each kind of file.
    for (name, file) in [
        ("parquet", "responses.parquet"),
        ("json", "metrics.json"),
        ("segment", "events/0001.jsonl.zst"),
        ("report", "report.md"),
    ] {
        let copy = tampered(&ws, &run, name, |copy| flip_byte(&copy.join(file)));
        refused(&verify(&ws, &copy, &["--skip-rederive"]), file);
    }
    // A segment deleted; two segments swapped.
    let copy = tampered(&ws, &run, "deleted", |copy| std::fs::remove_file(copy.join("events/0002.jsonl.zst")).unwrap());
    let said = refused(&verify(&ws, &copy, &[]), "events/0002.jsonl.zst");
    assert!(said.contains("listed in manifest.json, but the run has no such file"), "{said}");
    let copy = tampered(&ws, &run, "swapped", |copy| {
        std::fs::rename(copy.join("events/0001.jsonl.zst"), copy.join("tmp")).unwrap();
        std::fs::rename(copy.join("events/0002.jsonl.zst"), copy.join("events/0001.jsonl.zst")).unwrap();
        std::fs::rename(copy.join("tmp"), copy.join("events/0002.jsonl.zst")).unwrap();
    });
    refused(&verify(&ws, &copy, &[]), "events/0001.jsonl.zst");
    // Signed with another key: the public key given is not the signer's.
    let other_key = ws.path("other.key");
    std::fs::write(&other_key, OTHER_KEY).unwrap();
    let copy = tampered(&ws, &run, "resigned", |copy| {
        ok(Command::new(bin("ib-verify")).arg(copy).args(["--skip-rederive", "--sign"]).arg(&other_key));
    });
    let said = refused(&verify(&ws, &copy, &["--public-key", public.trim()]), "manifest.pub");
    assert!(said.contains("not the given"), "{said}");
    // ... or that key's manifest.pub put back beside the other key's signature.
    std::fs::write(copy.join("manifest.pub"), &public).unwrap();
    refused(&verify(&ws, &copy, &["--public-key", run.join("manifest.pub").to_str().unwrap()]), "manifest.sig");

    // The manifest re-made to match an edit: the signature no longer holds...
    let copy = tampered(&ws, &run, "remade", |copy| {
        flip_byte(&copy.join("report.md"));
        remake_manifest(copy);
    });
    refused(&verify(&ws, &copy, &["--public-key", public.trim()]), "manifest.sig");
    // ... and, unsigned, the re-derivation names the edited report.
    unsign(&copy);
    let said = refused(&verify(&ws, &copy, &[]), "report.md");
    assert!(said.contains("differs from its re-derivation"), "{said}");
    // A segment dropped with its seal entry, or two swapped with their entries renamed: the
    // chain no longer holds.
    let copy = tampered(&ws, &run, "dropped", |copy| {
        let mut record = seal(copy);
        record.segments.remove(0);
        write_seal(copy, &record);
        std::fs::remove_file(copy.join("events/0001.jsonl.zst")).unwrap();
        remake_manifest(copy);
        unsign(copy);
    });
    let said = refused(&verify(&ws, &copy, &[]), "events/seal.json");
    assert!(said.contains("segment 2's chain_sha256"), "{said}");
    let copy = tampered(&ws, &run, "reordered", |copy| {
        let mut record = seal(copy);
        let (first, second) = (record.segments[0].clone(), record.segments[1].clone());
        record.segments[0] = inferbench_contract::seal::SealedSegment {
            segment: 1,
            original: first.original,
            compressed: first.compressed,
            ..second.clone()
        };
        record.segments[1] = inferbench_contract::seal::SealedSegment {
            segment: 2,
            original: second.original,
            compressed: second.compressed,
            ..first
        };
        write_seal(copy, &record);
        std::fs::rename(copy.join("events/0001.jsonl.zst"), copy.join("tmp")).unwrap();
        std::fs::rename(copy.join("events/0002.jsonl.zst"), copy.join("events/0001.jsonl.zst")).unwrap();
        std::fs::rename(copy.join("tmp"), copy.join("events/0002.jsonl.zst")).unwrap();
        remake_manifest(copy);
        unsign(copy);
    });
    let said = refused(&verify(&ws, &copy, &[]), "events/seal.json");
    assert!(said.contains("segment 1's chain_sha256"), "{said}");
}
