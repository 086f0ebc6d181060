//! `manifest.sig` and `manifest.pub`, beside a run's `manifest.json`: a publisher's Ed25519
//! (RFC 8032) signature of the manifest's exact bytes, and the public key it verifies with.
//! Each file is one line: lower-case hex (64 bytes of signature, 32 of public key) and a
//! newline, so any Ed25519 tool checks it without inferbench. The secret key a publisher signs
//! with (`ib-verify --sign`) is the 32-byte Ed25519 seed, as 64 hex digits, in a file or an
//! environment variable; it is never written anywhere. Signing and checking are `ib-verify`'s.
use crate::{canonical, Error, Result};

pub const PUBLIC_KEY_BYTES: usize = 32;
pub const SIGNATURE_BYTES: usize = 64;
pub const SEED_BYTES: usize = 32;

/// The text of a signature or key file: hex and a newline.
pub fn encode(bytes: &[u8]) -> String {
    format!("{}\n", canonical::hex(bytes))
}

/// `N` bytes from their hex text (surrounding whitespace ignored); `what` names the text in
/// the error, which never quotes it (it may be a secret key).
pub fn decode<const N: usize>(text: &str, what: &str) -> Result<[u8; N]> {
    let text = text.trim();
    let bad = || Error::bad(format!("{what}: not {N} bytes as {} hex digits", 2 * N));
    if text.len() != 2 * N || !text.bytes().all(|b| b.is_ascii_hexdigit()) {
        return Err(bad());
    }
    let mut out = [0u8; N];
    for (i, byte) in out.iter_mut().enumerate() {
        *byte = u8::from_str_radix(&text[2 * i..2 * i + 2], 16).map_err(|_| bad())?;
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hex_round_trips_and_bad_text_is_refused_without_quoting_it() {
        let key: [u8; 4] = [0, 0xab, 0x10, 0xff];
        assert_eq!(encode(&key), "00ab10ff\n");
        assert_eq!(decode::<4>(" 00AB10ff\n", "key").unwrap(), key);
        let err = decode::<4>("00ab10", "key").unwrap_err().to_string();
        assert_eq!(err, "key: not 4 bytes as 8 hex digits");
        let err = decode::<4>("s3cr3t!!", "IB_SIGNING_KEY").unwrap_err().to_string();
        assert!(!err.contains("s3cr3t"), "{err}");
        assert!(decode::<2>("é1", "key").is_err(), "a multi-byte character is no hex digit");
    }
}
