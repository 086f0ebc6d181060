//! Parquet tables: rows of a serde type in, an atomically written file out, with provenance.
//! Small tables are written and read whole ([`write`], [`read`]); big ones a row group at a
//! time ([`Writer`]) and a batch at a time ([`Reader`]), in bounded memory.
//!
//! Every table carries key-value metadata: `inferbench.table` (its name),
//! `inferbench.format_version`, `inferbench.code_version` and `inferbench.inputs` (the canonical
//! JSON map of the logical names and SHA-256 of the files it was derived from). Nothing in a
//! table depends on the clock or the machine, so re-deriving it from the same inputs with the
//! same code gives the same bytes.
use crate::atomic;
use arrow_schema::{DataType, FieldRef};
use inferbench_contract::{Error, Result, CODE_VERSION, FORMAT_VERSION};
use parquet::arrow::arrow_reader::ParquetRecordBatchReaderBuilder;
use parquet::arrow::ArrowWriter;
use parquet::basic::Compression;
use parquet::file::metadata::KeyValue;
use parquet::file::properties::WriterProperties;

use serde_arrow::schema::{SchemaLike, TracingOptions};
use serde_arrow::ArrayBuilder;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;

pub use inferbench_contract::provenance::Inputs;
pub use inferbench_contract::tables::{Table, ROW_GROUP_ROWS};

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
/// enums (`inferbench_contract::vocab`) are plain `Utf8` columns holding their strings, so a notebook reads
/// `outcome == "completed"` without a dictionary or union type.
pub fn fields<T: Table>() -> Result<Vec<FieldRef>> {
    let options = TracingOptions::default().strings_as_large_utf8(false).enums_without_data_as_strings(true);
    let traced = Vec::<FieldRef>::from_type::<T>(options).map_err(|e| parquet_err(Path::new(T::NAME), e))?;
    Ok(traced
        .into_iter()
        .map(|field| match field.data_type() {
            DataType::Dictionary(_, value) => Arc::new(field.as_ref().clone().with_data_type(value.as_ref().clone())),
            _ if T::TIMESTAMP_COLUMNS.contains(&field.name().as_str()) => Arc::new(
                field.as_ref().clone().with_data_type(DataType::Timestamp(arrow_schema::TimeUnit::Microsecond, None)),
            ),
            _ => field,
        })
        .collect())
}

/// Rows per batch a [`Reader`] yields.
pub const BATCH_ROWS: usize = 8_192;

/// Metadata a table carries beyond its identity and provenance: key → text.
pub type Extra = BTreeMap<String, String>;

/// The table's metadata; `inputs` when known up front (else [`Writer::finish_with_inputs`]
/// appends them to the footer).
fn key_values<T: Table>(inputs: Option<&Inputs>, extra: &Extra) -> Result<Vec<KeyValue>> {
    let mut kv = vec![
        KeyValue::new("inferbench.table".into(), T::NAME.to_string()),
        KeyValue::new("inferbench.format_version".into(), FORMAT_VERSION.to_string()),
        KeyValue::new("inferbench.code_version".into(), CODE_VERSION.to_string()),
    ];
    kv.extend(inputs.map(inputs_key_value::<T>).transpose()?);
    kv.extend(extra.iter().map(|(k, v)| KeyValue::new(k.clone(), v.clone())));
    Ok(kv)
}

fn inputs_key_value<T: Table>(inputs: &Inputs) -> Result<KeyValue> {
    let inputs_json = serde_json::to_string(inputs).map_err(|e| parquet_err(Path::new(T::NAME), e))?;
    Ok(KeyValue::new("inferbench.inputs".into(), inputs_json))
}

/// Rows of `T` encoded into Parquet on `W`, a bounded row group at a time.
struct Encoder<W: std::io::Write + Send> {
    /// The file being written, for messages.
    path: PathBuf,
    builder: ArrayBuilder,
    writer: ArrowWriter<W>,
    /// Rows in `builder`, not yet in a row group.
    pending: usize,
    group_rows: usize,
}

impl<W: std::io::Write + Send> Encoder<W> {
    fn new<T: Table>(path: &Path, sink: W, inputs: Option<&Inputs>, extra: &Extra) -> Result<Self> {
        let fields = fields::<T>()?;
        let schema = Arc::new(arrow_schema::Schema::new(fields.clone()));
        let props = WriterProperties::builder()
            .set_compression(Compression::ZSTD(parquet::basic::ZstdLevel::try_new(3).expect("a valid level")))
            .set_key_value_metadata(Some(key_values::<T>(inputs, extra)?))
            .set_max_row_group_row_count(Some(T::ROW_GROUP_ROWS))
            .build();
        let writer = ArrowWriter::try_new(sink, schema, Some(props)).map_err(|e| parquet_err(path, e))?;
        let builder = ArrayBuilder::from_arrow(&fields).map_err(|e| parquet_err(path, e))?;
        Ok(Encoder { path: path.to_path_buf(), builder, writer, pending: 0, group_rows: T::ROW_GROUP_ROWS })
    }

    fn write<T: Table>(&mut self, rows: &[T]) -> Result<()> {
        for row in rows {
            self.builder.push(row).map_err(|e| parquet_err(&self.path, e))?;
            self.pending += 1;
            if self.pending == self.group_rows {
                self.flush()?;
            }
        }
        Ok(())
    }

    /// Closes the row group in progress.
    fn flush(&mut self) -> Result<()> {
        if self.pending == 0 {
            return Ok(());
        }
        let batch = self.builder.to_record_batch().map_err(|e| parquet_err(&self.path, e))?;
        self.writer.write(&batch).map_err(|e| parquet_err(&self.path, e))?;
        self.writer.flush().map_err(|e| parquet_err(&self.path, e))?;
        self.pending = 0;
        Ok(())
    }

    /// Closes the table; `late` is metadata appended to its footer.
    fn finish(mut self, late: Option<KeyValue>) -> Result<W> {
        self.flush()?;
        if let Some(kv) = late {
            self.writer.append_key_value_metadata(kv);
        }
        self.writer.into_inner().map_err(|e| parquet_err(&self.path, e))
    }
}

/// Serialises `rows` to Parquet bytes (the same bytes a [`Writer`] given the same rows writes).
pub fn to_bytes<T: Table>(rows: &[T], inputs: &Inputs) -> Result<Vec<u8>> {
    let mut encoder = Encoder::new::<T>(Path::new(T::NAME), Vec::new(), Some(inputs), &Extra::new())?;
    encoder.write(rows)?;
    encoder.finish(None)
}

/// Writes `rows` to `path` atomically.
pub fn write<T: Table>(path: &Path, rows: &[T], inputs: &Inputs) -> Result<()> {
    let mut writer = Writer::<T>::create(path, inputs)?;
    writer.write(rows)?;
    writer.finish()
}

/// A table written a row group at a time, for tables too big to hold in memory.
///
/// Rows go to a temporary file beside `path`; [`Writer::finish`] closes the table, syncs it
/// and renames it over `path`, so a reader never sees a half-written table and a failure (or
/// a writer dropped without `finish`) leaves the previous table untouched and no temporary
/// file. It holds at most one row group ([`Table::ROW_GROUP_ROWS`] rows) in memory. The
/// provenance is given up front, or, when the inputs are hashed in the same read that derives
/// the rows, at the end ([`Writer::create_deferred`], [`Writer::finish_with_inputs`]).
pub struct Writer<T: Table> {
    path: PathBuf,
    tmp: PathBuf,
    encoder: Option<Encoder<std::io::BufWriter<std::fs::File>>>,
    rows: u64,
    _rows: std::marker::PhantomData<fn(&T)>,
}

impl<T: Table> Writer<T> {
    /// Starts writing the table `path` (its directory must exist).
    pub fn create(path: &Path, inputs: &Inputs) -> Result<Self> {
        Self::create_with(path, inputs, &Extra::new())
    }

    /// [`Writer::create`], the table carrying `extra` metadata besides its provenance.
    pub fn create_with(path: &Path, inputs: &Inputs, extra: &Extra) -> Result<Self> {
        Self::start(path, Some(inputs), extra)
    }

    /// [`Writer::create`] for a table whose inputs are known only once its rows are written:
    /// they go to its footer by [`Writer::finish_with_inputs`].
    pub fn create_deferred(path: &Path) -> Result<Self> {
        Self::start(path, None, &Extra::new())
    }

    fn start(path: &Path, inputs: Option<&Inputs>, extra: &Extra) -> Result<Self> {
        let tmp = atomic::temporary(path)?;
        let file = std::fs::File::create(&tmp).map_err(|e| Error::io(path, e))?;
        let mut writer =
            Writer { path: path.to_path_buf(), tmp, encoder: None, rows: 0, _rows: std::marker::PhantomData };
        // `writer` owns the temporary file from here: a failure below removes it on drop.
        writer.encoder =
            Some(Encoder::new::<T>(path, std::io::BufWriter::with_capacity(1 << 20, file), inputs, extra)?);
        Ok(writer)
    }

    /// Appends rows; a row group is written out each time [`Table::ROW_GROUP_ROWS`] accumulate.
    pub fn write(&mut self, rows: &[T]) -> Result<()> {
        let encoder = self.encoder.as_mut().expect("a writer is only used before finish");
        encoder.write(rows)?;
        self.rows += rows.len() as u64;
        Ok(())
    }

    /// Rows written so far.
    pub fn rows(&self) -> u64 {
        self.rows
    }

    /// Writes the last row group and the footer, syncs the file and publishes it at `path`.
    pub fn finish(self) -> Result<()> {
        self.close(None)
    }

    /// [`Writer::finish`] for a table created by [`Writer::create_deferred`], with its inputs.
    pub fn finish_with_inputs(self, inputs: &Inputs) -> Result<()> {
        let kv = inputs_key_value::<T>(inputs)?;
        self.close(Some(kv))
    }

    fn close(mut self, late: Option<KeyValue>) -> Result<()> {
        let encoder = self.encoder.take().expect("finish is called once");
        let file = encoder.finish(late)?.into_inner().map_err(|e| Error::io(&self.path, e.into_error()))?;
        file.sync_all().map_err(|e| Error::io(&self.path, e))?;
        drop(file);
        std::fs::rename(&self.tmp, &self.path).map_err(|e| Error::io(&self.path, e))?;
        Ok(())
    }
}

impl<T: Table> Drop for Writer<T> {
    fn drop(&mut self) {
        // Not finished (an error, or the caller gave up): the table was never published. After
        // a successful `finish` the temporary name no longer exists and this does nothing.
        let _ = std::fs::remove_file(&self.tmp);
    }
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
    meta: BTreeMap<String, String>,
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
    Ok(Header { builder, inputs, code_version, meta })
}

/// A table's Arrow reader, its name and format version checked (as [`Reader`] checks them),
/// for a caller that reads chosen columns itself rather than rows of `T`.
pub fn open_columns<T: Table>(path: &Path) -> Result<ParquetRecordBatchReaderBuilder<std::fs::File>> {
    Ok(open::<T>(path)?.builder)
}

/// A table that is not of the shape this build writes: bad input naming the file.
pub fn corrupt_table(path: &Path, e: impl std::fmt::Display) -> Error {
    corrupt(path, e)
}

/// The provenance a table records, without reading its rows.
pub fn read_inputs<T: Table>(path: &Path) -> Result<Inputs> {
    Ok(open::<T>(path)?.inputs)
}

/// The provenance a table records and the value of one more metadata key (see
/// [`Writer::create_with`]), without reading its rows.
pub fn read_inputs_and<T: Table>(path: &Path, key: &str) -> Result<(Inputs, Option<String>)> {
    let mut header = open::<T>(path)?;
    Ok((header.inputs, header.meta.remove(key)))
}

/// Reads a whole table written by [`write`] or a [`Writer`], checking its name and format
/// version. Every failure to read it is bad input naming the file.
pub fn read<T: Table>(path: &Path) -> Result<ReadTable<T>> {
    let mut reader = Reader::<T>::open(path)?;
    let mut rows = Vec::new();
    for batch in &mut reader {
        rows.append(&mut batch?);
    }
    let Reader { inputs, code_version, .. } = reader;
    Ok(ReadTable { rows, inputs, code_version })
}

/// A table read a bounded batch of rows at a time ([`BATCH_ROWS`]), with the same checks as
/// [`read`]: the name, format version and provenance are checked when it is opened, and every
/// batch that cannot be decoded as `T` is bad input naming the file.
pub struct Reader<T: Table> {
    path: PathBuf,
    batches: parquet::arrow::arrow_reader::ParquetRecordBatchReader,
    /// The logical inputs and their SHA-256 the table was derived from.
    pub inputs: Inputs,
    /// The code version that wrote it.
    pub code_version: String,
    /// Rows in the table, from its footer.
    pub total_rows: u64,
    /// The table's key-value metadata, for a document carried beside its rows.
    meta: BTreeMap<String, String>,
    _rows: std::marker::PhantomData<fn() -> T>,
}

impl<T: Table> Reader<T> {
    pub fn open(path: &Path) -> Result<Self> {
        Self::open_batched(path, BATCH_ROWS)
    }

    /// Opens a table to read `batch_rows` rows at a time (e.g. many tables merged at once).
    pub fn open_batched(path: &Path, batch_rows: usize) -> Result<Self> {
        let Header { builder, inputs, code_version, meta } = open::<T>(path)?;
        let total_rows = builder.metadata().file_metadata().num_rows().max(0) as u64;
        let batches = builder.with_batch_size(batch_rows.max(1)).build().map_err(|e| corrupt(path, e))?;
        Ok(Reader {
            path: path.to_path_buf(),
            batches,
            inputs,
            code_version,
            total_rows,
            meta,
            _rows: std::marker::PhantomData,
        })
    }

    /// The value of one more metadata key (see [`Writer::create_with`]), as
    /// [`read_inputs_and`] gives it, from the table already open.
    pub fn metadata(&self, key: &str) -> Option<&str> {
        self.meta.get(key).map(String::as_str)
    }
}

impl<T: Table> Iterator for Reader<T> {
    type Item = Result<Vec<T>>;
    fn next(&mut self) -> Option<Result<Vec<T>>> {
        let batch = match self.batches.next()? {
            Ok(batch) => batch,
            Err(e) => return Some(Err(corrupt(&self.path, e))),
        };
        Some(serde_arrow::from_record_batch(&batch).map_err(|e| corrupt(&self.path, e)))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde::{Deserialize, Serialize};

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
        use inferbench_contract::vocab::{Outcome, TaskFamily};
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

    #[derive(Debug, PartialEq, Serialize, Deserialize)]
    struct Small {
        i: u64,
        s: String,
    }
    impl Table for Small {
        const NAME: &'static str = "small_groups";
        const ROW_GROUP_ROWS: usize = 1000;
    }

    #[test]
    fn a_streamed_table_is_written_in_bounded_row_groups_and_read_back_in_batches() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("t.parquet");
        let rows: Vec<Small> = (0..25_500).map(|i| Small { i, s: format!("row {}", i % 7) }).collect();
        let inputs = Inputs::from([("events".to_string(), "cd".repeat(32))]);
        let mut writer = Writer::<Small>::create(&path, &inputs).unwrap();
        for chunk in rows.chunks(333) {
            writer.write(chunk).unwrap();
        }
        assert_eq!(writer.rows(), 25_500);
        assert!(!path.exists(), "nothing is published before finish");
        writer.finish().unwrap();
        let names: Vec<_> = std::fs::read_dir(dir.path()).unwrap().map(|e| e.unwrap().file_name()).collect();
        assert_eq!(names, vec![std::ffi::OsString::from("t.parquet")], "no temporary file is left");
        let file = std::fs::File::open(&path).unwrap();
        let meta = ParquetRecordBatchReaderBuilder::try_new(file).unwrap().metadata().clone();
        assert_eq!(meta.num_row_groups(), 26);
        assert!(meta.row_groups().iter().all(|g| g.num_rows() <= 1000));
        let mut reader = Reader::<Small>::open(&path).unwrap();
        assert_eq!((reader.total_rows, &reader.inputs), (25_500, &inputs));
        let mut back = Vec::new();
        for batch in &mut reader {
            let mut batch = batch.unwrap();
            assert!(!batch.is_empty() && batch.len() <= BATCH_ROWS);
            back.append(&mut batch);
        }
        assert_eq!(back, rows);
        assert_eq!(std::fs::read(&path).unwrap(), to_bytes(&rows, &inputs).unwrap(), "streamed = whole-table bytes");
    }

    #[test]
    fn an_unfinished_writer_leaves_the_old_table_and_no_temporary_file() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("t.parquet");
        let old = vec![Small { i: 1, s: "old".into() }];
        write(&path, &old, &Inputs::new()).unwrap();
        let mut writer = Writer::<Small>::create(&path, &Inputs::new()).unwrap();
        writer.write(&(0..2500).map(|i| Small { i, s: "new".into() }).collect::<Vec<_>>()).unwrap();
        drop(writer);
        assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 1);
        assert_eq!(read::<Small>(&path).unwrap().rows, old);
    }

    // The shapes of the contract's tables, as this module writes them.
    use inferbench_contract::tables::*;
    use inferbench_contract::vocab::{Classification, EvaluationError, TaskFamily};
    use serde_json::json;

    /// The Arrow type a contract word is stored as.
    fn arrow_type(kind: &str) -> DataType {
        match kind {
            "string" | "enum" => DataType::Utf8,
            "bool" => DataType::Boolean,
            "int | null" => DataType::Int64,
            other => panic!("a contract type the columns do not know: {other}"),
        }
    }

    #[test]
    fn parsed_output_has_one_struct_per_family_of_its_contract_fields_and_types() {
        let fields = super::fields::<EvaluationRow>().unwrap();
        let parsed = fields.iter().find(|f| f.name() == "parsed_output").unwrap();
        let DataType::Struct(families) = parsed.data_type() else { panic!("{parsed:?}") };
        let names: Vec<&str> = families.iter().map(|f| f.name().as_str()).collect();
        let expected: Vec<String> = TaskFamily::DATASET.iter().map(|f| parsed_output_field(*f)).collect();
        assert_eq!(names, expected);
        for (family, field) in TaskFamily::DATASET.iter().zip(families.iter()) {
            let DataType::Struct(columns) = field.data_type() else { panic!("{field:?}") };
            let contract = inferbench_contract::family::output_schema(*family);
            let contract: Vec<(&str, DataType)> = contract
                .as_object()
                .unwrap()
                .iter()
                .map(|(k, v)| (k.as_str(), arrow_type(v.as_str().unwrap())))
                .collect();
            let ours: Vec<(&str, DataType)> =
                columns.iter().map(|c| (c.name().as_str(), c.data_type().clone())).collect();
            assert_eq!(ours, contract, "{family}");
            assert!(columns.iter().all(|c| c.is_nullable()), "{family}");
        }
        let correct = fields.iter().find(|f| f.name() == "field_correct").unwrap();
        let DataType::Struct(flags) = correct.data_type() else { panic!("{correct:?}") };
        let names: Vec<&str> = flags.iter().map(|f| f.name().as_str()).collect();
        assert_eq!(names, inferbench_contract::family::CONTRACT_FIELDS);
    }

    #[test]
    fn evaluations_round_trip_through_parquet_with_nested_columns() {
        use inferbench_contract::testutil::evaluation_row;
        let rows = vec![
            EvaluationRow {
                evaluation_error_type: Some(EvaluationError::SchemaInvalid),
                correct_field_count: Some(9),
                field_count_total: Some(10),
                field_correct: ContractFieldCorrect::of(
                    &inferbench_contract::family::CONTRACT_FIELDS
                        .iter()
                        .map(|f| (*f, *f != "auto_renews"))
                        .collect::<Vec<_>>(),
                ),
                parsed_output: ParsedOutput::of(TaskFamily::ContractTermsExtraction, &json!({"auto_renews": true})),
                ..evaluation_row("r1", Classification::InvalidResult)
            },
            EvaluationRow {
                evaluation_error_type: Some(EvaluationError::Timeout),
                ..evaluation_row("r2", Classification::FailedRequest)
            },
        ];
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("evaluations.parquet");
        super::write(&path, &rows, &Inputs::new()).unwrap();
        assert_eq!(super::read::<EvaluationRow>(&path).unwrap().rows, rows);
    }

    #[test]
    fn metrics_and_pooled_share_their_metric_columns_and_pooled_has_no_family() {
        let metrics: Vec<String> = super::fields::<MetricRow>().unwrap().iter().map(|f| f.name().to_string()).collect();
        let pooled = super::fields::<PooledRow>().unwrap();
        let names: Vec<String> = pooled.iter().map(|f| f.name().to_string()).collect();
        assert_eq!(metrics[0..2], ["provider", "task_family"]);
        // After the shared metric columns, the pooled row's own: its eligibility and rank.
        let own = [
            "balanced",
            "configuration_compatible",
            "artifact_graph_complete",
            "eligible",
            "ineligibility_reasons",
            "ineligibility_details",
            "rank",
            "rank_first",
            "rank_last",
        ];
        assert_eq!(names[names.len() - own.len()..], own);
        assert_eq!(metrics[2..], names[1..names.len() - own.len()]);
        assert!(!names.contains(&"task_family".to_string()));
        let eligible = pooled.iter().find(|f| f.name() == "eligible").unwrap();
        assert!(!eligible.is_nullable() && eligible.data_type() == &DataType::Boolean);
        let reasons = pooled.iter().find(|f| f.name() == "ineligibility_reasons").unwrap();
        assert!(
            matches!(reasons.data_type(), DataType::List(item) | DataType::LargeList(item) if item.data_type() == &DataType::Utf8),
            "{reasons:?}"
        );
        assert!(pooled.iter().find(|f| f.name() == "rank").unwrap().is_nullable());
    }
}
