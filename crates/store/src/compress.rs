//! A live segment sealed: compressed beside itself into `NNNN.jsonl.zst`, a standard zstd frame
//! of exactly its bytes, written to a temporary name, synced, decompressed again and compared
//! with the original before it takes its name (see `crate::sealed` for the whole seal).
use crate::inventory::HashedSegment;
use crate::run::RunDir;
use inferbench_contract::canonical::{digest, file_digest};
use inferbench_contract::seal::SealedSegment;
use inferbench_contract::{Error, Result};
use std::io::{Read, Write};
use std::path::Path;

/// zstd level of sealed segments: a complete 6,000-request log (129 MB) compresses 22× at
/// this level in a quarter of a second; level 9 makes it 16% smaller in four times as long,
/// which a million-request log would pay for minutes.
pub const LEVEL: i32 = 3;

/// Compresses the live `segment` beside itself and checks that the compressed file
/// decompresses to exactly the original its inventory hashed; the plain file is left for the
/// caller to remove.
pub fn compress(run: &RunDir, segment: &HashedSegment) -> Result<SealedSegment> {
    let plain = &segment.path;
    let target = run.sealed_segment(segment.number);
    let tmp = crate::atomic::temporary(&target)?;
    let result = (|| -> Result<SealedSegment> {
        let io = |e: std::io::Error| Error::io(&target, e);
        let mut source = std::fs::File::open(plain).map_err(|e| Error::unreadable(plain, e))?;
        let file = std::fs::File::create(&tmp).map_err(io)?;
        let mut encoder =
            zstd::stream::write::Encoder::new(std::io::BufWriter::with_capacity(1 << 20, file), LEVEL).map_err(io)?;
        // The frame records the original size, so `zstd -l` shows it too.
        encoder.set_pledged_src_size(Some(segment.bytes)).map_err(io)?;
        encoder.include_checksum(true).map_err(io)?;
        let mut buf = vec![0u8; 1 << 16];
        loop {
            let n = source.read(&mut buf).map_err(|e| Error::unreadable(plain, e))?;
            if n == 0 {
                break;
            }
            encoder.write_all(&buf[..n]).map_err(io)?;
        }
        let mut written = encoder.finish().map_err(io)?;
        written.flush().map_err(io)?;
        written.into_inner().map_err(|e| io(e.into_error()))?.sync_all().map_err(io)?;
        let decoder = zstd::stream::read::Decoder::new(std::fs::File::open(&tmp).map_err(io)?).map_err(io)?;
        if digest(decoder, &tmp)? != (segment.bytes, segment.sha256.clone()) {
            return Err(Error::io(
                &target,
                std::io::Error::new(
                    std::io::ErrorKind::InvalidData,
                    "the compressed segment does not decompress to the original",
                ),
            ));
        }
        let (compressed_bytes, compressed_sha256) = file_digest(&tmp)?;
        std::fs::rename(&tmp, &target).map_err(io)?;
        let name = |p: &Path| p.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
        Ok(SealedSegment {
            segment: segment.number,
            original: name(plain),
            original_bytes: segment.bytes,
            original_sha256: segment.sha256.clone(),
            compressed: name(&target),
            compressed_bytes,
            compressed_sha256,
            // Linked by the seal, once every segment is in its record.
            chain_sha256: None,
        })
    })();
    if result.is_err() {
        let _ = std::fs::remove_file(&tmp);
    }
    result
}
