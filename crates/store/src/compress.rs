//! A live segment sealed: compressed beside itself into `NNNN.jsonl.zst`, a standard zstd frame
//! of exactly its bytes (see `crate::sealed` for the whole seal).
//!
//! The compression rides on the seal's one read of the log: the log reader's thread hands every
//! block it reads (and hashes) to a [`SegmentCompressor`] as well, so the segment is read from
//! disk once, not once to hash it, once to derive `events.parquet` and once to compress it. At
//! the segment's end the frame is finished, synced and read back: decompressed in full, its
//! length compared with the original's, and its content checksum (XXH64 of the bytes the
//! encoder was given, which are the bytes the reader hashed) checked by the decoder; the
//! compressed file's SHA-256 is taken from that read. Only then is it a [`CompressedSegment`],
//! which the seal renames into place once the whole log is known to be complete.
use crate::run::RunDir;
use inferbench_contract::canonical::hex;
use inferbench_contract::seal::SealedSegment;
use inferbench_contract::{Error, Result};
use sha2::{Digest, Sha256};
use std::io::{Read, Write};
use std::path::{Path, PathBuf};

/// zstd level of sealed segments: a complete 6,000-request log (129 MB) compresses 22× at
/// this level in a quarter of a second; level 9 makes it 16% smaller in four times as long,
/// which a million-request log would pay for minutes.
pub const LEVEL: i32 = 3;

/// A live segment compressed and checked, under its temporary name until the seal publishes it.
#[derive(Debug, Clone, PartialEq)]
pub struct CompressedSegment {
    /// The temporary file holding the frame (`crate::atomic::temporary` of the sealed name).
    pub tmp: PathBuf,
    /// The name it takes: `events/NNNN.jsonl.zst`.
    pub target: PathBuf,
    /// Size and SHA-256 of the compressed file, as read back.
    pub bytes: u64,
    pub sha256: String,
}

/// A live segment's bytes compressed as they are read, into a temporary file beside the
/// segment's sealed name. Dropped unfinished (an error, a reader given up), it removes that file.
pub struct SegmentCompressor {
    tmp: PathBuf,
    target: PathBuf,
    encoder: Option<zstd::stream::write::Encoder<'static, std::io::BufWriter<std::fs::File>>>,
}

impl SegmentCompressor {
    /// Starts compressing segment `number` of `run`, whose JSONL holds `bytes` bytes.
    pub fn start(run: &RunDir, number: u32, bytes: u64) -> Result<SegmentCompressor> {
        let target = run.sealed_segment(number);
        let tmp = crate::atomic::temporary(&target)?;
        let io = |e: std::io::Error| Error::io(&target, e);
        let file = std::fs::File::create(&tmp).map_err(io)?;
        let mut compressor = SegmentCompressor { tmp, target: target.clone(), encoder: None };
        let mut encoder =
            zstd::stream::write::Encoder::new(std::io::BufWriter::with_capacity(1 << 20, file), LEVEL).map_err(io)?;
        // The frame records the original size, so `zstd -l` shows it too.
        encoder.set_pledged_src_size(Some(bytes)).map_err(io)?;
        encoder.include_checksum(true).map_err(io)?;
        compressor.encoder = Some(encoder);
        Ok(compressor)
    }

    /// Compresses the segment's next bytes.
    pub fn write(&mut self, bytes: &[u8]) -> Result<()> {
        let encoder = self.encoder.as_mut().expect("written to before finish");
        encoder.write_all(bytes).map_err(|e| Error::io(&self.target, e))
    }

    /// Ends the frame after `original_bytes` bytes, syncs it and checks it decompresses to
    /// exactly as many bytes, its content checksum intact (see the module docs).
    pub fn finish(mut self, original_bytes: u64) -> Result<CompressedSegment> {
        let io = |e: std::io::Error| Error::io(&self.target, e);
        let encoder = self.encoder.take().expect("finish is called once");
        let mut written = encoder.finish().map_err(io)?;
        written.flush().map_err(io)?;
        written.into_inner().map_err(|e| io(e.into_error()))?.sync_all().map_err(io)?;
        let (bytes, sha256, decompressed) = read_back(&self.tmp).map_err(io)?;
        if decompressed != original_bytes {
            return Err(io(std::io::Error::new(
                std::io::ErrorKind::InvalidData,
                format!(
                    "the compressed segment decompresses to {decompressed} bytes, not the original's {original_bytes}"
                ),
            )));
        }
        let tmp = std::mem::take(&mut self.tmp);
        Ok(CompressedSegment { tmp, target: self.target.clone(), bytes, sha256 })
    }
}

impl Drop for SegmentCompressor {
    fn drop(&mut self) {
        // Unfinished or failed: nothing may be left under the temporary name. After a successful
        // `finish` the name is empty and the caller owns the file.
        if !self.tmp.as_os_str().is_empty() {
            let _ = std::fs::remove_file(&self.tmp);
        }
    }
}

/// The compressed file at `path` read back: its size and SHA-256, and the size of what it
/// decompresses to (the decoder checks the frame's content checksum and fails on a mismatch).
fn read_back(path: &Path) -> std::io::Result<(u64, String, u64)> {
    let mut hashing = Hashing { inner: std::fs::File::open(path)?, hasher: Sha256::new(), bytes: 0 };
    // To the file's end: anything after the frame that is not a frame is an error too.
    let decompressed = std::io::copy(&mut zstd::stream::read::Decoder::new(&mut hashing)?, &mut std::io::sink())?;
    Ok((hashing.bytes, hex(&hashing.hasher.finalize()), decompressed))
}

/// A reader that hashes and counts what passes through it.
struct Hashing<R> {
    inner: R,
    hasher: Sha256,
    bytes: u64,
}

impl<R: Read> Read for Hashing<R> {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        let n = self.inner.read(buf)?;
        self.hasher.update(&buf[..n]);
        self.bytes += n as u64;
        Ok(n)
    }
}

/// Publishes `compressed`, segment `number`'s frame whose JSONL `plain` held `original_bytes`
/// bytes hashing to `original_sha256`: renamed to its sealed name, and its record entry.
pub fn publish(
    compressed: &CompressedSegment,
    number: u32,
    plain: &Path,
    original_bytes: u64,
    original_sha256: &str,
) -> Result<SealedSegment> {
    std::fs::rename(&compressed.tmp, &compressed.target).map_err(|e| Error::io(&compressed.target, e))?;
    let name = |p: &Path| p.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
    Ok(SealedSegment {
        segment: number,
        original: name(plain),
        original_bytes,
        original_sha256: original_sha256.to_string(),
        compressed: name(&compressed.target),
        compressed_bytes: compressed.bytes,
        compressed_sha256: compressed.sha256.clone(),
        // Linked by the seal, once every segment is in its record.
        chain_sha256: None,
    })
}

/// Removes the temporary frame of segment `number` of `run`, if one is left (an incomplete log,
/// or a seal that failed after compressing).
pub fn discard(run: &RunDir, number: u32) {
    if let Ok(tmp) = crate::atomic::temporary(&run.sealed_segment(number)) {
        let _ = std::fs::remove_file(tmp);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_frame_is_checked_against_the_original_length_and_cleaned_up_when_dropped() {
        let dir = tempfile::tempdir().unwrap();
        let run = RunDir::new(dir.path());
        std::fs::create_dir_all(run.events_dir()).unwrap();
        let text = b"{\"a\":1}\n".repeat(1000);
        let mut c = SegmentCompressor::start(&run, 1, text.len() as u64).unwrap();
        c.write(&text[..100]).unwrap();
        c.write(&text[100..]).unwrap();
        let done = c.finish(text.len() as u64).unwrap();
        let frame = std::fs::read(&done.tmp).unwrap();
        assert_eq!(zstd::decode_all(frame.as_slice()).unwrap(), text);
        assert_eq!(
            (done.bytes, done.sha256.clone()),
            (frame.len() as u64, inferbench_contract::canonical::sha256_hex(&frame))
        );
        assert_eq!(done.target, run.sealed_segment(1));

        // Fewer bytes than pledged: the frame cannot be finished, and nothing is left behind.
        let mut short = SegmentCompressor::start(&run, 2, 10).unwrap();
        short.write(b"12345").unwrap();
        assert!(short.finish(10).is_err());
        assert!(!crate::atomic::temporary(&run.sealed_segment(2)).unwrap().exists());

        // Given up midway: removed.
        let mut dropped = SegmentCompressor::start(&run, 3, 10).unwrap();
        dropped.write(b"12345").unwrap();
        drop(dropped);
        assert!(!crate::atomic::temporary(&run.sealed_segment(3)).unwrap().exists());
    }

    #[test]
    fn a_damaged_frame_is_refused_on_read_back() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("f.zst");
        let text = b"hello hello hello hello\n".repeat(500);
        let mut encoder = zstd::stream::write::Encoder::new(Vec::new(), 3).unwrap();
        encoder.include_checksum(true).unwrap();
        encoder.write_all(&text).unwrap();
        let frame = encoder.finish().unwrap();
        std::fs::write(&path, &frame).unwrap();
        assert_eq!(read_back(&path).unwrap().2, text.len() as u64);
        // The content checksum (the frame's last four bytes) no longer matches: refused.
        let mut damaged = frame.clone();
        let last = damaged.len() - 1;
        damaged[last] ^= 0xff;
        std::fs::write(&path, &damaged).unwrap();
        assert!(read_back(&path).is_err());
        // A frame followed by bytes that are no frame: refused.
        std::fs::write(&path, [frame.as_slice(), b"garbage"].concat()).unwrap();
        assert!(read_back(&path).is_err());
    }
}
