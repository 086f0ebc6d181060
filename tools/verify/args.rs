//! Command-line arguments of `ib-verify`.
use clap::Parser;
use inferbench_cli::{DatasetArg, SpecArg};
use std::path::PathBuf;

/// Check a run on its own: every file against manifest.json, the sealed log against
/// events/seal.json and its chain, the provenance of every derived file, and a re-derivation
/// of reconstruct → evaluate → aggregate → report in a temporary directory compared byte for
/// byte (with the stage binaries beside ib-verify, the spec and dataset the run was locked
/// with). With --public-key, also the publisher's signature of the manifest.
///
/// Exit 0 when everything holds; 4 naming the first file that does not, and what differs.
/// Nothing in the run is written, except by --sign (manifest.sig and manifest.pub, once
/// every check holds).
#[derive(Debug, Parser)]
#[command(
    name = "ib-verify",
    version,
    after_help = "Exit codes: 0 every check holds; 4 a file does not (named, with what differs); \
                  1, 2, 3 as for every stage (a failure, a usage error, an unreadable input)."
)]
pub struct Args {
    /// The run directory.
    #[arg(value_name = "RUN")]
    pub run: PathBuf,

    #[command(flatten)]
    pub spec: SpecArg,

    #[command(flatten)]
    pub dataset: DatasetArg,

    /// The publisher's Ed25519 public key, as 64 hex digits or a file holding them (such as
    /// the manifest.pub of a run the publisher signed): manifest.sig must be its signature of
    /// manifest.json, and manifest.pub this key.
    #[arg(long, value_name = "FILE|HEX", conflicts_with = "sign")]
    pub public_key: Option<String>,

    /// Once every check holds, sign manifest.json: writes manifest.sig and manifest.pub
    /// beside it. The secret key (the 32-byte Ed25519 seed as 64 hex digits) is read from
    /// FILE, or with env:NAME from the environment variable NAME; it is never written.
    #[arg(long, value_name = "FILE|env:NAME")]
    pub sign: Option<String>,

    /// Check the files, the seal and the provenance only, without re-deriving (a run derived
    /// by another version of inferbench cannot be re-derived byte for byte by this one).
    #[arg(long)]
    pub skip_rederive: bool,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn signing_and_checking_a_signature_are_separate_runs() {
        let both = Args::try_parse_from(["ib-verify", "r", "--sign", "k", "--public-key", "p"]);
        assert!(both.is_err());
        let args = Args::try_parse_from(["ib-verify", "r", "--sign", "env:KEY"]).unwrap();
        assert_eq!(args.sign.as_deref(), Some("env:KEY"));
    }
}
