//! Parquet tables: rows of a serde type in, an atomically written file out, with provenance.
//!
//! Every table carries key-value metadata: `inferbench.table` (its name),
//! `inferbench.format_version`, `inferbench.code_version` and `inferbench.inputs` (the canonical
//! JSON map of the logical names and SHA-256 of the files it was derived from). Nothing in a
//! table depends on the clock or the machine, so re-deriving it from the same inputs with the
//! same code gives the same bytes.
use crate::{atomic, Error, Result, CODE_VERSION, FORMAT_VERSION};
use arrow_schema::{DataType, FieldRef};
use parquet::arrow::arrow_reader::ParquetRecordBatchReaderBuilder;
use parquet::arrow::ArrowWriter;
use parquet::basic::Compression;
use parquet::file::metadata::KeyValue;
use parquet::file::properties::WriterProperties;
use serde::{de::DeserializeOwned, Serialize};
use serde_arrow::schema::{SchemaLike, TracingOptions};
use std::collections::BTreeMap;
use std::path::Path;
use std::sync::Arc;

/// A row type stored as a Parquet table.
pub trait Table: Serialize + DeserializeOwned {
    /// The table's name, e.g. `responses`.
    const NAME: &'static str;
}

/// Logical input name → SHA-256, recorded in the table's metadata.
pub type Inputs = BTreeMap<String, String>;

/// A failure to encode a table we are writing: the stage failed (exit 1).
fn parquet_err(path: &Path, e: impl std::fmt::Display) -> Error {
    Error::Parquet { path: path.to_path_buf(), message: e.to_string() }
}

/// A table we are reading that is not a readable table of the expected shape (truncated,
/// garbage, another program's file, other columns): bad input (exit 3), never a crash.
fn corrupt(path: &Path, e: impl std::fmt::Display) -> Error {
    Error::bad(format!("{}: not a readable inferbench table (corrupt or truncated?): {e}", path.display()))
}

/// The Arrow fields of `T`, traced from its serde shape. Strings are `Utf8`; the vocabulary
/// enums (`crate::vocab`) are plain `Utf8` columns holding their strings, so a notebook reads
/// `outcome == "completed"` without a dictionary or union type.
pub fn fields<T: Table>() -> Result<Vec<FieldRef>> {
    let options = TracingOptions::default().strings_as_large_utf8(false).enums_without_data_as_strings(true);
    let traced = Vec::<FieldRef>::from_type::<T>(options).map_err(|e| parquet_err(Path::new(T::NAME), e))?;
    Ok(traced
        .into_iter()
        .map(|field| match field.data_type() {
            DataType::Dictionary(_, value) => Arc::new(field.as_ref().clone().with_data_type(value.as_ref().clone())),
            _ => field,
        })
        .collect())
}

/// Serialises `rows` to Parquet bytes.
pub fn to_bytes<T: Table>(rows: &[T], inputs: &Inputs) -> Result<Vec<u8>> {
    let path = Path::new(T::NAME);
    let fields = fields::<T>()?;
    let batch = serde_arrow::to_record_batch(&fields, &rows).map_err(|e| parquet_err(path, e))?;
    let inputs_json = serde_json::to_string(inputs).map_err(|e| parquet_err(path, e))?;
    let metadata = vec![
        KeyValue::new("inferbench.table".into(), T::NAME.to_string()),
        KeyValue::new("inferbench.format_version".into(), FORMAT_VERSION.to_string()),
        KeyValue::new("inferbench.code_version".into(), CODE_VERSION.to_string()),
        KeyValue::new("inferbench.inputs".into(), inputs_json),
    ];
    let props =
        WriterProperties::builder().set_compression(Compression::SNAPPY).set_key_value_metadata(Some(metadata)).build();
    let mut bytes = Vec::new();
    let mut writer = ArrowWriter::try_new(&mut bytes, batch.schema(), Some(props)).map_err(|e| parquet_err(path, e))?;
    writer.write(&batch).map_err(|e| parquet_err(path, e))?;
    writer.close().map_err(|e| parquet_err(path, e))?;
    Ok(bytes)
}

/// Writes `rows` to `path` atomically.
pub fn write<T: Table>(path: &Path, rows: &[T], inputs: &Inputs) -> Result<()> {
    atomic::write(path, &to_bytes(rows, inputs)?)
}

/// A table read back, with the provenance it carried.
#[derive(Debug)]
pub struct ReadTable<T> {
    pub rows: Vec<T>,
    pub inputs: Inputs,
    pub code_version: String,
}

/// A table's identity and provenance, as its metadata records them.
struct Header {
    builder: ParquetRecordBatchReaderBuilder<std::fs::File>,
    inputs: Inputs,
    code_version: String,
}

/// Opens a table written by [`write`], checking its name and format version. Every failure
/// to read it is bad input naming the file.
fn open<T: Table>(path: &Path) -> Result<Header> {
    let file = std::fs::File::open(path).map_err(|e| Error::unreadable(path, e))?;
    let builder = ParquetRecordBatchReaderBuilder::try_new(file).map_err(|e| corrupt(path, e))?;
    let meta: BTreeMap<String, String> = builder
        .metadata()
        .file_metadata()
        .key_value_metadata()
        .map(|kv| kv.iter().map(|k| (k.key.clone(), k.value.clone().unwrap_or_default())).collect())
        .unwrap_or_default();
    let table = meta.get("inferbench.table").map(String::as_str).unwrap_or("");
    if table != T::NAME {
        return Err(Error::bad(format!("{}: expected a `{}` table, found `{table}`", path.display(), T::NAME)));
    }
    let version = meta.get("inferbench.format_version").map(String::as_str).unwrap_or("");
    if version != FORMAT_VERSION.to_string() {
        return Err(Error::bad(format!(
            "{}: format version `{version}` is not supported (this build reads {FORMAT_VERSION})",
            path.display()
        )));
    }
    let inputs = match meta.get("inferbench.inputs") {
        Some(json) => serde_json::from_str(json).map_err(|e| corrupt(path, e))?,
        None => Inputs::new(),
    };
    let code_version = meta.get("inferbench.code_version").cloned().unwrap_or_default();
    Ok(Header { builder, inputs, code_version })
}

/// The provenance a table records, without reading its rows.
pub fn read_inputs<T: Table>(path: &Path) -> Result<Inputs> {
    Ok(open::<T>(path)?.inputs)
}

/// Reads a table written by [`write`], checking its name and format version. Every failure
/// to read it is bad input naming the file.
pub fn read<T: Table>(path: &Path) -> Result<ReadTable<T>> {
    let Header { builder, inputs, code_version } = open::<T>(path)?;
    let mut rows = Vec::new();
    for batch in builder.build().map_err(|e| corrupt(path, e))? {
        let batch = batch.map_err(|e| corrupt(path, e))?;
        let mut part: Vec<T> = serde_arrow::from_record_batch(&batch).map_err(|e| corrupt(path, e))?;
        rows.append(&mut part);
    }
    Ok(ReadTable { rows, inputs, code_version })
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde::Deserialize;

    #[derive(Debug, PartialEq, Serialize, Deserialize)]
    struct Row {
        id: String,
        n: i64,
        x: Option<f64>,
        ok: bool,
    }
    impl Table for Row {
        const NAME: &'static str = "test_rows";
    }

    #[test]
    fn rows_round_trip_with_provenance_and_identical_bytes() {
        let rows = vec![
            Row { id: "a".into(), n: 1, x: Some(1.5), ok: true },
            Row { id: "b".into(), n: -2, x: None, ok: false },
        ];
        let inputs = Inputs::from([("responses.parquet".to_string(), "ab".repeat(32))]);
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("t.parquet");
        write(&path, &rows, &inputs).unwrap();
        let back: ReadTable<Row> = read(&path).unwrap();
        assert_eq!(back.rows, rows);
        assert_eq!(back.inputs, inputs);
        assert_eq!(back.code_version, CODE_VERSION);
        assert_eq!(std::fs::read(&path).unwrap(), to_bytes(&rows, &inputs).unwrap());
    }

    #[test]
    fn vocabulary_enums_are_plain_string_columns() {
        use crate::vocab::{Outcome, TaskFamily};
        #[derive(Debug, PartialEq, Serialize, Deserialize)]
        struct Tagged {
            outcome: Outcome,
            family: Option<TaskFamily>,
        }
        impl Table for Tagged {
            const NAME: &'static str = "tagged";
        }
        let fields = fields::<Tagged>().unwrap();
        assert_eq!(fields[0].data_type(), &DataType::Utf8);
        assert_eq!(fields[1].data_type(), &DataType::Utf8);
        let rows = vec![
            Tagged { outcome: Outcome::StreamError, family: Some(TaskFamily::TicketTriage) },
            Tagged { outcome: Outcome::Completed, family: None },
        ];
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("t.parquet");
        write(&path, &rows, &Inputs::new()).unwrap();
        assert_eq!(read::<Tagged>(&path).unwrap().rows, rows);
    }

    #[test]
    fn reading_the_wrong_table_is_refused() {
        #[derive(Debug, Serialize, Deserialize)]
        struct Other {
            id: String,
        }
        impl Table for Other {
            const NAME: &'static str = "other";
        }
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("t.parquet");
        write(&path, &[Row { id: "a".into(), n: 1, x: None, ok: true }], &Inputs::new()).unwrap();
        let err = read::<Other>(&path).unwrap_err().to_string();
        assert!(err.contains("expected a `other` table, found `test_rows`"), "{err}");
    }

    #[test]
    fn missing_truncated_garbage_and_misshapen_tables_are_bad_input() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("t.parquet");
        let err = read::<Row>(&path).unwrap_err();
        assert!(matches!(err, Error::Unreadable { .. }), "missing: {err:?}");
        let bytes = to_bytes(&[Row { id: "a".into(), n: 1, x: None, ok: true }], &Inputs::new()).unwrap();
        std::fs::write(&path, &bytes[..bytes.len() / 2]).unwrap();
        let err = read::<Row>(&path).unwrap_err();
        assert!(err.is_bad_input() && err.to_string().contains("corrupt or truncated"), "truncated: {err}");
        std::fs::write(&path, b"PAR1 this is not a parquet file PAR1").unwrap();
        assert!(read::<Row>(&path).unwrap_err().is_bad_input(), "garbage");
        std::fs::write(&path, b"").unwrap();
        assert!(read::<Row>(&path).unwrap_err().is_bad_input(), "empty");
        #[derive(Debug, Serialize, Deserialize)]
        struct Wider {
            id: String,
            missing_column: i64,
        }
        impl Table for Wider {
            const NAME: &'static str = "test_rows";
        }
        std::fs::write(&path, &bytes).unwrap();
        let err = read::<Wider>(&path).unwrap_err();
        assert!(err.is_bad_input() && err.to_string().contains("t.parquet"), "other columns: {err}");
    }
}
