//! The publisher's signature of `manifest.json` (format: `inferbench_contract::signature`),
//! with `ring`'s Ed25519, which the build already has for TLS.
use crate::failure::Failure;
use anyhow::Context;
use inferbench_contract::canonical::{hex, short_hash};
use inferbench_contract::signature::{self, PUBLIC_KEY_BYTES, SEED_BYTES, SIGNATURE_BYTES};
use inferbench_store::run::RunDir;
use ring::signature::{Ed25519KeyPair, KeyPair, UnparsedPublicKey, ED25519};

pub type PublicKey = [u8; PUBLIC_KEY_BYTES];

/// A public key given as 64 hex digits, or as a file holding them.
pub fn public_key(given: &str) -> anyhow::Result<PublicKey> {
    if given.trim().len() == 2 * PUBLIC_KEY_BYTES && given.trim().bytes().all(|b| b.is_ascii_hexdigit()) {
        return Ok(signature::decode(given, "--public-key")?);
    }
    let text = std::fs::read_to_string(given)
        .with_context(|| format!("--public-key {given}: neither 64 hex digits nor a readable file"))?;
    Ok(signature::decode(&text, given)?)
}

/// The secret key from `source`: `env:NAME` (the variable NAME) or a file. Its text is never
/// quoted in a message.
fn seed(source: &str) -> anyhow::Result<[u8; SEED_BYTES]> {
    let text = match source.strip_prefix("env:") {
        Some(name) => std::env::var(name).with_context(|| format!("--sign env:{name}: the variable is not set"))?,
        None => std::fs::read_to_string(source).with_context(|| format!("--sign {source}: cannot read"))?,
    };
    Ok(signature::decode(&text, &format!("--sign {source}"))?)
}

/// Signs the run's `manifest.json` as it is now: writes `manifest.sig` and `manifest.pub`.
/// Returns the public key.
pub fn sign(run: &RunDir, source: &str) -> anyhow::Result<PublicKey> {
    let pair = Ed25519KeyPair::from_seed_unchecked(&seed(source)?)
        .map_err(|e| anyhow::anyhow!("--sign {source}: not an Ed25519 key: {e}"))?;
    let manifest =
        std::fs::read(run.manifest()).with_context(|| format!("{}: cannot read", run.manifest().display()))?;
    let sig = pair.sign(&manifest);
    let public: PublicKey = pair.public_key().as_ref().try_into().context("an Ed25519 public key is 32 bytes")?;
    // The signature first: a manifest.pub without its signature would claim a signer.
    inferbench_store::atomic::write(
        &run.root().join(RunDir::MANIFEST_SIG),
        signature::encode(sig.as_ref()).as_bytes(),
    )?;
    inferbench_store::atomic::write(&run.root().join(RunDir::MANIFEST_PUB), signature::encode(&public).as_bytes())?;
    Ok(public)
}

/// The signer of the run's manifest, checked: `manifest.sig` is a signature of
/// `manifest.json`'s bytes by the key in `manifest.pub`, and that key is `trusted` when one is
/// given. `None` when the run is unsigned and no key is given.
pub fn check(run: &RunDir, trusted: Option<&PublicKey>) -> anyhow::Result<Option<PublicKey>> {
    let sig_path = run.root().join(RunDir::MANIFEST_SIG);
    let pub_path = run.root().join(RunDir::MANIFEST_PUB);
    if !sig_path.exists() && !pub_path.exists() && trusted.is_none() {
        return Ok(None);
    }
    let read = |name: &str| -> anyhow::Result<String> {
        std::fs::read_to_string(run.root().join(name))
            .map_err(|e| Failure::new(name, format!("the run is not signed ({e})")).into())
    };
    let stored: PublicKey = signature::decode(&read(RunDir::MANIFEST_PUB)?, RunDir::MANIFEST_PUB)
        .map_err(|e| Failure::new(RunDir::MANIFEST_PUB, e.to_string()))?;
    if let Some(trusted) = trusted {
        if &stored != trusted {
            return Err(Failure::new(
                RunDir::MANIFEST_PUB,
                format!(
                    "the manifest was signed with key {}…, not the given {}…",
                    short_hash(&hex(&stored)),
                    short_hash(&hex(trusted))
                ),
            )
            .into());
        }
    }
    let sig: [u8; SIGNATURE_BYTES] = signature::decode(&read(RunDir::MANIFEST_SIG)?, RunDir::MANIFEST_SIG)
        .map_err(|e| Failure::new(RunDir::MANIFEST_SIG, e.to_string()))?;
    let manifest =
        std::fs::read(run.manifest()).with_context(|| format!("{}: cannot read", run.manifest().display()))?;
    UnparsedPublicKey::new(&ED25519, &stored).verify(&manifest, &sig).map_err(|_| {
        Failure::new(
            RunDir::MANIFEST_SIG,
            format!("is not a signature of manifest.json's bytes by key {}…", short_hash(&hex(&stored))),
        )
    })?;
    Ok(Some(stored))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// RFC 8032, section 7.1, test 1: the empty message.
    const SEED: &str = "9d61b19deffd5a60ba844af492ec2cc44449c5697b326919703bac031cae7f60";
    const PUBLIC: &str = "d75a980182b10ab7d54bfed3c964073a0ee172f3daa62325af021a68f707511a";
    const SIG: &str = "e5564300c360ac729086e2cc806e828a84877f1eb8e5d974d873e065224901555fb8821590a33bacc61e39701cf9b46bd25bf5f0595bbe24655141438e7a100b";

    fn signed_run(dir: &std::path::Path, seed: &str) -> RunDir {
        let run = RunDir::new(dir);
        std::fs::write(run.manifest(), b"").unwrap();
        std::fs::write(dir.join("key"), seed).unwrap();
        sign(&run, dir.join("key").to_str().unwrap()).unwrap();
        run
    }

    #[test]
    fn signing_gives_rfc_8032s_signature_and_the_files_check() {
        let dir = tempfile::tempdir().unwrap();
        let run = signed_run(dir.path(), SEED);
        assert_eq!(std::fs::read_to_string(dir.path().join("manifest.sig")).unwrap(), format!("{SIG}\n"));
        assert_eq!(std::fs::read_to_string(dir.path().join("manifest.pub")).unwrap(), format!("{PUBLIC}\n"));
        let trusted = public_key(PUBLIC).unwrap();
        assert_eq!(check(&run, Some(&trusted)).unwrap(), Some(trusted));
        // The key as a file, too.
        assert_eq!(public_key(dir.path().join("manifest.pub").to_str().unwrap()).unwrap(), trusted);
    }

    #[test]
    fn another_key_an_edited_manifest_or_no_signature_fails_naming_the_file() {
        let dir = tempfile::tempdir().unwrap();
        let run = signed_run(dir.path(), &"11".repeat(32));
        let trusted = public_key(PUBLIC).unwrap();
        let failure = |e: anyhow::Error| e.downcast::<Failure>().unwrap();
        assert_eq!(failure(check(&run, Some(&trusted)).unwrap_err()).file, "manifest.pub");
        // The trusted key written beside another key's signature.
        std::fs::write(dir.path().join("manifest.pub"), PUBLIC).unwrap();
        assert_eq!(failure(check(&run, Some(&trusted)).unwrap_err()).file, "manifest.sig");
        let run = signed_run(dir.path(), SEED);
        std::fs::write(run.manifest(), b"{}").unwrap();
        assert_eq!(failure(check(&run, Some(&trusted)).unwrap_err()).file, "manifest.sig");
        std::fs::remove_file(dir.path().join("manifest.sig")).unwrap();
        std::fs::remove_file(dir.path().join("manifest.pub")).unwrap();
        assert_eq!(check(&run, None).unwrap(), None);
        let unsigned = failure(check(&run, Some(&trusted)).unwrap_err());
        assert!(unsigned.file == "manifest.pub" && unsigned.what.contains("not signed"), "{unsigned}");
    }

    #[test]
    fn the_secret_key_comes_from_the_environment_and_is_never_quoted() {
        std::env::set_var("IB_VERIFY_TEST_KEY", SEED);
        assert_eq!(hex(&seed("env:IB_VERIFY_TEST_KEY").unwrap()), SEED);
        std::env::set_var("IB_VERIFY_TEST_BAD_KEY", "not-a-key-s3cret");
        let err = format!("{:#}", seed("env:IB_VERIFY_TEST_BAD_KEY").unwrap_err());
        assert!(!err.contains("s3cret"), "{err}");
        assert!(seed("env:IB_VERIFY_TEST_UNSET").is_err());
    }
}
