//! rove's results files written from Rust: the engine's columns as deterministic Parquet, and
//! `summary.json`'s text.
//!
//! `rove run` writes `summary.json`, `timeseries.parquet`, `queue.parquet` and, when present,
//! `features.parquet` and `radio.parquet` (python/rove/results.py documents the schema and the
//! atomic write around these files). This crate turns named columns into one Arrow record batch and writes it with
//! the arrow-rs Parquet writer, so the run path needs no numpy or pyarrow.
//!
//! The file layout follows what a pyarrow writer (`pq.write_table` with
//! `compression="zstd", compression_level=1, use_dictionary=[the string columns],
//! write_statistics=True, version="2.6", data_page_version="1.0"`, results.py's
//! `write_parquet`) produces, column for column:
//!
//! - every column nullable (pyarrow's tables built from arrays are), in the given order;
//! - numeric columns as their Arrow type (`f64`, `u64`, `u32`, `i32`, `i64`); unsigned ones keep
//!   their Parquet logical type (`INT(64, false)`, ...), as format 2.6 writes them;
//! - string columns dictionary-encoded (`dictionary<values=string, indices=int32>`), the
//!   dictionary in order of first appearance;
//! - zstd level 1; dictionary encoding for the string columns only (plain once a dictionary
//!   page would pass 1 MiB, both writers' default), numeric columns plain; data pages of
//!   version 1, one row group up to 1 Mi rows (both writers' default);
//! - statistics in each column chunk's metadata and in each data page header, no page index
//!   (what pyarrow wrote with `write_statistics=True` and its default `write_page_index=False`);
//! - the Arrow schema stored in the footer (`ARROW:schema`), so Arrow readers get the dictionary
//!   columns back as dictionaries (pandas: categoricals).
//!
//! Differences from the pyarrow-written files (same values and types on reading; other bytes):
//! - `created_by` is `parquet-rs version 59.3.2` instead of `parquet-cpp-arrow version N`;
//! - the footer's format version is 1, not 2: arrow-rs ties the data page version to the writer
//!   version (`WriterVersion::PARQUET_1_0` = data page v1, which the schema asks for), and the
//!   logical types that format 2.6 adds are written either way;
//! - the pages, compressed by arrow-rs's zstd binding rather than Arrow C++'s, may differ in
//!   their bytes (same level, same values);
//! - the stored Arrow schema is arrow-rs's IPC encoding of the same fields.
//!
//! Same columns -> same bytes: nothing in the file depends on time, machine or run.
//!
//! `summary.json`'s text is made here too ([`summary_text`], summary.rs): the engine's summary
//! laid out byte for byte as Python's `json.dumps` lays it out.
//!
//! A string column is given either as strings ([`Values::Str`]) or already as dictionary keys
//! and entries ([`Values::Dict`], built with [`DictBuilder`]: what the engine's columns of
//! flow, link and state names become without a `String` per row). Both give the same bytes
//! for the same strings.

mod summary;

pub use summary::{python_float, summary_text};

use std::borrow::Cow;
use std::collections::HashMap;
use std::fmt;
use std::io::Write;
use std::ops::Range;
use std::path::Path;
use std::sync::Arc;

use arrow_array::types::Int32Type;
use arrow_array::{
    ArrayRef, DictionaryArray, Float64Array, Int32Array, Int64Array, StringArray, UInt32Array,
    UInt64Array,
};
use arrow_schema::{DataType, Field, Schema};
use parquet::arrow::arrow_writer::compute_leaves;
use parquet::arrow::ArrowWriter;
use parquet::basic::{Compression, ZstdLevel};
use parquet::file::properties::{EnabledStatistics, WriterProperties, WriterVersion};
use parquet::schema::types::ColumnPath;

/// zstd level of the results files (and of results.py's `_PARQUET_OPTIONS`). Level 1 (zstd's
/// "fast" strategy) in place of zstd's default 3 (`ZSTD_CLEVEL_DEFAULT`, "dfast"): on the
/// benchmark dumbbell's time series it compresses in 21 % fewer instructions into a file 1.3 %
/// larger (docs/performance.md, "Writing the results files").
pub const ZSTD_LEVEL: i32 = 1;

/// The values of one column, borrowed (the engine's recorder, written in place) or owned.
#[derive(Clone, Debug, PartialEq)]
pub enum Values<'a> {
    F64(Cow<'a, [f64]>),
    U64(Cow<'a, [u64]>),
    U32(Cow<'a, [u32]>),
    I32(Cow<'a, [i32]>),
    I64(Cow<'a, [i64]>),
    /// Written dictionary-encoded.
    Str(Cow<'a, [String]>),
    /// Strings as keys into `entries`; written exactly as [`Values::Str`] of the same strings
    /// (the file's dictionary is built from the rows, whatever the order of `entries`).
    Dict {
        keys: Cow<'a, [i32]>,
        entries: Cow<'a, [String]>,
    },
}

impl<'a> Values<'a> {
    pub fn len(&self) -> usize {
        match self {
            Values::F64(v) => v.len(),
            Values::U64(v) => v.len(),
            Values::U32(v) => v.len(),
            Values::I32(v) => v.len(),
            Values::I64(v) => v.len(),
            Values::Str(v) => v.len(),
            Values::Dict { keys, .. } => keys.len(),
        }
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The type's name as numpy and pyarrow spell it (for error messages).
    pub fn kind(&self) -> &'static str {
        match self {
            Values::F64(_) => "float64",
            Values::U64(_) => "uint64",
            Values::U32(_) => "uint32",
            Values::I32(_) => "int32",
            Values::I64(_) => "int64",
            Values::Str(_) | Values::Dict { .. } => "string",
        }
    }

    fn data_type(&self) -> DataType {
        match self {
            Values::F64(_) => DataType::Float64,
            Values::U64(_) => DataType::UInt64,
            Values::U32(_) => DataType::UInt32,
            Values::I32(_) => DataType::Int32,
            Values::I64(_) => DataType::Int64,
            Values::Str(_) | Values::Dict { .. } => {
                DataType::Dictionary(Box::new(DataType::Int32), Box::new(DataType::Utf8))
            }
        }
    }

    /// Owned values, a [`Values::Dict`] as one string per row (for concatenation).
    fn into_plain(self) -> Values<'static> {
        match self {
            Values::F64(v) => Values::F64(Cow::Owned(v.into_owned())),
            Values::U64(v) => Values::U64(Cow::Owned(v.into_owned())),
            Values::U32(v) => Values::U32(Cow::Owned(v.into_owned())),
            Values::I32(v) => Values::I32(Cow::Owned(v.into_owned())),
            Values::I64(v) => Values::I64(Cow::Owned(v.into_owned())),
            Values::Str(v) => Values::Str(Cow::Owned(v.into_owned())),
            Values::Dict { keys, entries } => Values::Str(Cow::Owned(
                keys.iter()
                    .map(|&k| entries.get(k as usize).cloned().unwrap_or_default())
                    .collect(),
            )),
        }
    }

    /// `n` placeholder values of the same type (under a null mask).
    fn filler(&self, n: usize) -> Values<'static> {
        match self {
            Values::F64(_) => Values::F64(vec![0.0; n].into()),
            Values::U64(_) => Values::U64(vec![0; n].into()),
            Values::U32(_) => Values::U32(vec![0; n].into()),
            Values::I32(_) => Values::I32(vec![0; n].into()),
            Values::I64(_) => Values::I64(vec![0; n].into()),
            Values::Str(_) | Values::Dict { .. } => Values::Str(vec![String::new(); n].into()),
        }
    }

    /// Appends `other`, which has the same type (checked by the caller).
    fn extend(&mut self, other: &Values<'_>) {
        match (self, other) {
            (Values::F64(a), Values::F64(b)) => a.to_mut().extend_from_slice(b),
            (Values::U64(a), Values::U64(b)) => a.to_mut().extend_from_slice(b),
            (Values::U32(a), Values::U32(b)) => a.to_mut().extend_from_slice(b),
            (Values::I32(a), Values::I32(b)) => a.to_mut().extend_from_slice(b),
            (Values::I64(a), Values::I64(b)) => a.to_mut().extend_from_slice(b),
            (Values::Str(a), Values::Str(b)) => a.to_mut().extend_from_slice(b),
            (a, b) => unreachable!("extend {} with {}", a.kind(), b.kind()),
        }
    }
}

/// One named column; `valid[i] == false` makes row `i` null (`None`: no nulls).
#[derive(Clone, Debug, PartialEq)]
pub struct Column<'a> {
    pub name: String,
    pub values: Values<'a>,
    pub valid: Option<Vec<bool>>,
}

impl<'a> Column<'a> {
    pub fn new(name: impl Into<String>, values: Values<'a>) -> Self {
        Column {
            name: name.into(),
            values,
            valid: None,
        }
    }

    /// The Arrow array of rows `rows` of the column (strings dictionary-encoded), a copy of
    /// those rows: the writer holds one column's at a time.
    fn array(&self, rows: Range<usize>) -> ArrayRef {
        fn with_nulls<T: Copy>(v: &[T], valid: &[bool]) -> Vec<Option<T>> {
            v.iter()
                .zip(valid)
                .map(|(&x, &ok)| ok.then_some(x))
                .collect()
        }
        let valid = self.valid.as_deref().map(|m| &m[rows.clone()]);
        match (&self.values, valid) {
            (Values::F64(v), None) => Arc::new(Float64Array::from(v[rows].to_vec())),
            (Values::F64(v), Some(m)) => Arc::new(Float64Array::from(with_nulls(&v[rows], m))),
            (Values::U64(v), None) => Arc::new(UInt64Array::from(v[rows].to_vec())),
            (Values::U64(v), Some(m)) => Arc::new(UInt64Array::from(with_nulls(&v[rows], m))),
            (Values::U32(v), None) => Arc::new(UInt32Array::from(v[rows].to_vec())),
            (Values::U32(v), Some(m)) => Arc::new(UInt32Array::from(with_nulls(&v[rows], m))),
            (Values::I32(v), None) => Arc::new(Int32Array::from(v[rows].to_vec())),
            (Values::I32(v), Some(m)) => Arc::new(Int32Array::from(with_nulls(&v[rows], m))),
            (Values::I64(v), None) => Arc::new(Int64Array::from(v[rows].to_vec())),
            (Values::I64(v), Some(m)) => Arc::new(Int64Array::from(with_nulls(&v[rows], m))),
            (Values::Str(v), m) => {
                let mut dict = DictBuilder::with_capacity(rows.len());
                for (i, s) in v[rows].iter().enumerate() {
                    match m {
                        Some(m) if !m[i] => dict.push_null(),
                        _ => dict.push(s),
                    }
                }
                let (keys, entries) = dict.finish();
                Arc::new(dictionary_array(keys, &entries, m))
            }
            (Values::Dict { keys, entries }, m) => {
                Arc::new(dictionary_array(keys[rows].to_vec(), entries, m))
            }
        }
    }
}

/// Builds a dictionary-encoded string column row by row: each row's key, and the distinct
/// strings in order of first appearance (null rows are not entered). A row equal to the one
/// before costs a pointer comparison (the engine's state columns repeat the same `&'static
/// str` row after row); others one hash lookup.
#[derive(Default)]
pub struct DictBuilder<'a> {
    keys: Vec<i32>,
    entries: Vec<&'a str>,
    index: HashMap<&'a str, i32>,
    last: Option<(&'a str, i32)>,
}

impl<'a> DictBuilder<'a> {
    pub fn with_capacity(rows: usize) -> Self {
        DictBuilder {
            keys: Vec::with_capacity(rows),
            ..Default::default()
        }
    }

    /// Appends a row holding `s`.
    pub fn push(&mut self, s: &'a str) {
        let key = match self.last {
            Some((prev, key)) if std::ptr::eq(prev, s) => key,
            _ => {
                let next = self.entries.len() as i32;
                let key = *self.index.entry(s).or_insert(next);
                if key == next {
                    self.entries.push(s);
                }
                self.last = Some((s, key));
                key
            }
        };
        self.keys.push(key);
    }

    /// Appends a null row (its key, 0, is never read).
    pub fn push_null(&mut self) {
        self.keys.push(0);
    }

    /// The keys and the entries.
    pub fn finish(self) -> (Vec<i32>, Vec<&'a str>) {
        (self.keys, self.entries)
    }

    /// The column as [`Values::Dict`].
    pub fn into_values(self) -> Values<'static> {
        Values::Dict {
            keys: self.keys.into(),
            entries: self
                .entries
                .into_iter()
                .map(str::to_string)
                .collect::<Vec<_>>()
                .into(),
        }
    }
}

/// The dictionary array of `keys` into `entries` (`valid[i] == false`: row `i` is null).
fn dictionary_array<S: AsRef<str>>(
    keys: Vec<i32>,
    entries: &[S],
    valid: Option<&[bool]>,
) -> DictionaryArray<Int32Type> {
    let keys = match valid {
        None => Int32Array::from(keys),
        Some(m) => Int32Array::from(
            keys.into_iter()
                .zip(m)
                .map(|(k, &ok)| ok.then_some(k))
                .collect::<Vec<_>>(),
        ),
    };
    let dict: ArrayRef = Arc::new(StringArray::from_iter_values(entries.iter()));
    DictionaryArray::try_new(keys, dict).expect("keys index the dictionary")
}

/// Why columns could not be written.
#[derive(Debug)]
pub enum Error {
    /// The columns do not make a table (lengths, names, types); the message says which.
    Columns(String),
    /// The file could not be written.
    Io(std::io::Error),
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Error::Columns(m) => f.write_str(m),
            Error::Io(e) => e.fmt(f),
        }
    }
}

impl std::error::Error for Error {}

fn columns_error(m: impl Into<String>) -> Error {
    Error::Columns(m.into())
}

/// Checks that `columns` make a table (unique names, equal lengths, masks of that length) and
/// returns its number of rows.
pub fn num_rows(columns: &[Column<'_>]) -> Result<usize, Error> {
    let rows = columns.first().map_or(0, |c| c.values.len());
    for (i, c) in columns.iter().enumerate() {
        if columns[..i].iter().any(|d| d.name == c.name) {
            return Err(columns_error(format!("column {:?} given twice", c.name)));
        }
        if c.values.len() != rows {
            return Err(columns_error(format!(
                "column {:?} has {} rows, column {:?} has {rows}",
                c.name,
                c.values.len(),
                columns[0].name
            )));
        }
        if c.valid.as_ref().is_some_and(|m| m.len() != rows) {
            return Err(columns_error(format!(
                "column {:?}: the null mask has {} entries for {rows} rows",
                c.name,
                c.valid.as_ref().map_or(0, Vec::len)
            )));
        }
    }
    Ok(rows)
}

/// Several tables as one, rows in order: the columns of all of them in order of first
/// appearance, a column missing from a table null on its rows (pyarrow's
/// `concat_tables(promote_options="default")`). A column of two types is an error.
pub fn concat_promoted(tables: Vec<Vec<Column<'_>>>) -> Result<Vec<Column<'static>>, Error> {
    let tables: Vec<Vec<Column<'static>>> = tables
        .into_iter()
        .map(|t| {
            t.into_iter()
                .map(|c| Column {
                    name: c.name,
                    values: c.values.into_plain(),
                    valid: c.valid,
                })
                .collect()
        })
        .collect();
    let mut rows = Vec::with_capacity(tables.len());
    for t in &tables {
        rows.push(num_rows(t)?);
    }
    let total: usize = rows.iter().sum();
    let mut out: Vec<Column<'static>> = Vec::new();
    let mut first_in: Vec<usize> = Vec::new(); // the table each column first appears in
    for (k, t) in tables.iter().enumerate() {
        for c in t {
            match out.iter().position(|o| o.name == c.name) {
                Some(i) if out[i].values.kind() != c.values.kind() => {
                    return Err(columns_error(format!(
                        "column {:?} is {} in table {} but {} in table {k}",
                        c.name,
                        out[i].values.kind(),
                        first_in[i],
                        c.values.kind()
                    )));
                }
                Some(_) => {}
                None => {
                    out.push(Column {
                        name: c.name.clone(),
                        values: c.values.filler(0),
                        valid: None,
                    });
                    first_in.push(k);
                }
            }
        }
    }
    for col in &mut out {
        let mut valid: Vec<bool> = Vec::with_capacity(total);
        let mut any_null = false;
        for (t, &n) in tables.iter().zip(&rows) {
            match t.iter().find(|c| c.name == col.name) {
                Some(c) => {
                    col.values.extend(&c.values);
                    match &c.valid {
                        Some(m) => {
                            any_null |= m.iter().any(|&ok| !ok);
                            valid.extend(m);
                        }
                        None => valid.extend(std::iter::repeat_n(true, n)),
                    }
                }
                None => {
                    let filler = col.values.filler(n);
                    col.values.extend(&filler);
                    valid.extend(std::iter::repeat_n(false, n));
                    any_null |= n > 0;
                }
            }
        }
        col.valid = any_null.then_some(valid);
    }
    Ok(out)
}

/// The writer's fixed settings (see the module doc). Only the string columns of `columns` are
/// dictionary-encoded: a name or state column has a handful of distinct values, while a
/// numeric one (times, rates, byte counts) has nearly one per row, so its dictionary would
/// hold every value once more and cost a hash per row; plain and compressed, the benchmark
/// dumbbell's time series is 40 % smaller and written in 27 % fewer instructions.
fn properties(columns: &[Column<'_>]) -> WriterProperties {
    let mut props = WriterProperties::builder()
        .set_writer_version(WriterVersion::PARQUET_1_0)
        .set_compression(Compression::ZSTD(
            ZstdLevel::try_new(ZSTD_LEVEL).expect("zstd level 1 is valid"),
        ))
        .set_dictionary_enabled(false)
        .set_statistics_enabled(EnabledStatistics::Chunk)
        .set_write_page_header_statistics(true)
        .set_offset_index_disabled(true);
    for c in columns {
        if matches!(c.values, Values::Str(_) | Values::Dict { .. }) {
            props = props.set_column_dictionary_enabled(ColumnPath::from(c.name.as_str()), true);
        }
    }
    props.build()
}

/// The Parquet file of `columns`, in memory.
pub fn parquet_bytes(columns: &[Column<'_>]) -> Result<Vec<u8>, Error> {
    let mut buf = Vec::new();
    write_table(&mut buf, columns)?;
    Ok(buf)
}

/// Writes `columns` to a Parquet file at `path` (created or truncated; the caller makes the
/// write atomic and durable: results.py writes into a staging directory and fsyncs).
pub fn write_parquet(path: &Path, columns: &[Column<'_>]) -> Result<(), Error> {
    let file = std::fs::File::create(path).map_err(Error::Io)?;
    let mut out = std::io::BufWriter::with_capacity(1 << 16, file);
    write_table(&mut out, columns)?;
    out.flush().map_err(Error::Io)
}

/// Encodes `columns` into `out` one column at a time: per row group (at most the properties'
/// row count, 1 Mi rows), each column's rows become an Arrow array, are encoded and appended,
/// and the array is dropped before the next column's is made. The bytes are those of
/// `ArrowWriter::write` of the whole table as one record batch (which encodes the same column
/// chunks in the same order; a test holds the two to the same bytes), without a copy of the
/// whole table in memory.
fn write_table<W: Write + Send>(out: W, columns: &[Column<'_>]) -> Result<(), Error> {
    let parquet_err = |e: parquet::errors::ParquetError| columns_error(e.to_string());
    let rows = num_rows(columns)?;
    let fields: Vec<Field> = columns
        .iter()
        .map(|c| Field::new(&c.name, c.values.data_type(), true))
        .collect();
    let schema = Arc::new(Schema::new(fields));
    let props = properties(columns);
    let group_rows = props.max_row_group_row_count().unwrap_or(usize::MAX).max(1);
    // ArrowWriter sets up the file (schema, the Arrow schema in the footer's metadata); its
    // lower-level parts then write the row groups column by column.
    let writer = ArrowWriter::try_new(out, schema.clone(), Some(props)).map_err(parquet_err)?;
    let (mut file, factory) = writer.into_serialized_writer().map_err(parquet_err)?;
    let mut start = 0;
    while start < rows {
        let end = rows.min(start.saturating_add(group_rows));
        let index = file.flushed_row_groups().len();
        let writers = factory.create_column_writers(index).map_err(parquet_err)?;
        let mut group = file.next_row_group().map_err(parquet_err)?;
        for ((mut writer, column), field) in writers.into_iter().zip(columns).zip(schema.fields()) {
            let array = column.array(start..end);
            for leaf in compute_leaves(field, &array).map_err(parquet_err)? {
                writer.write(&leaf).map_err(parquet_err)?;
            }
            drop(array);
            let chunk = writer.close().map_err(parquet_err)?;
            chunk.append_to_row_group(&mut group).map_err(parquet_err)?;
        }
        group.close().map_err(parquet_err)?;
        start = end;
    }
    file.close().map_err(parquet_err)?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use arrow_array::cast::AsArray;
    use arrow_array::{Array, RecordBatch, RecordBatchOptions};
    use parquet::arrow::arrow_reader::ParquetRecordBatchReaderBuilder;
    use parquet::file::reader::{FileReader, SerializedFileReader};

    fn strings(v: &[&str]) -> Values<'static> {
        Values::Str(v.iter().map(|s| s.to_string()).collect::<Vec<_>>().into())
    }

    /// What the writer wrote before it went column by column: `ArrowWriter::write` of the
    /// whole table as one record batch.
    fn one_batch_bytes(columns: &[Column<'_>]) -> Vec<u8> {
        let rows = num_rows(columns).unwrap();
        let fields: Vec<Field> = columns
            .iter()
            .map(|c| Field::new(&c.name, c.values.data_type(), true))
            .collect();
        let schema = Arc::new(Schema::new(fields));
        let arrays = columns.iter().map(|c| c.array(0..rows)).collect();
        let batch = RecordBatch::try_new_with_options(
            schema.clone(),
            arrays,
            &RecordBatchOptions::new().with_row_count(Some(rows)),
        )
        .unwrap();
        let mut buf = Vec::new();
        let mut writer = ArrowWriter::try_new(&mut buf, schema, Some(properties(columns))).unwrap();
        if rows > 0 {
            writer.write(&batch).unwrap();
        }
        writer.close().unwrap();
        buf
    }

    fn sample() -> Vec<Column<'static>> {
        vec![
            Column::new("time_s", Values::F64(vec![0.1, 0.1, 0.2, 0.2].into())),
            Column::new("flow", strings(&["b", "a", "b", "a"])),
            Column::new("cwnd_pkts", Values::U32(vec![10, 20, 11, 21].into())),
            Column::new("bytes_acked", Values::U64(vec![0, 1, u64::MAX, 3].into())),
            Column::new("subflow", Values::I32(vec![-1, -1, 0, 1].into())),
        ]
    }

    fn read(bytes: Vec<u8>) -> RecordBatch {
        let reader = ParquetRecordBatchReaderBuilder::try_new(bytes::Bytes::from(bytes))
            .unwrap()
            .build()
            .unwrap();
        let batches: Vec<RecordBatch> = reader.map(Result::unwrap).collect();
        assert_eq!(batches.len(), 1);
        batches.into_iter().next().unwrap()
    }

    #[test]
    fn round_trip_keeps_order_types_and_dictionary_by_first_appearance() {
        let batch = read(parquet_bytes(&sample()).unwrap());
        let names: Vec<&str> = batch
            .schema_ref()
            .fields()
            .iter()
            .map(|f| f.name().as_str())
            .collect();
        assert_eq!(
            names,
            ["time_s", "flow", "cwnd_pkts", "bytes_acked", "subflow"]
        );
        assert_eq!(
            batch.schema_ref().field(1).data_type(),
            &DataType::Dictionary(Box::new(DataType::Int32), Box::new(DataType::Utf8))
        );
        assert_eq!(batch.schema_ref().field(3).data_type(), &DataType::UInt64);
        let flow = batch.column(1).as_dictionary::<Int32Type>();
        let dict: Vec<&str> = flow.values().as_string::<i32>().iter().flatten().collect();
        assert_eq!(dict, ["b", "a"]); // first appearance, not sorted
        assert_eq!(flow.keys().values().to_vec(), [0, 1, 0, 1]);
        let acked = batch
            .column(3)
            .as_primitive::<arrow_array::types::UInt64Type>();
        assert_eq!(acked.value(2), u64::MAX);
        assert!(batch.schema_ref().fields().iter().all(|f| f.is_nullable()));
    }

    #[test]
    fn settings_are_zstd_v1_pages_with_statistics() {
        let bytes = parquet_bytes(&sample()).unwrap();
        let reader = SerializedFileReader::new(bytes::Bytes::from(bytes)).unwrap();
        let meta = reader.metadata();
        assert_eq!(meta.file_metadata().version(), 1);
        assert_eq!(meta.num_row_groups(), 1);
        let kv = meta.file_metadata().key_value_metadata().unwrap();
        assert!(kv.iter().any(|k| k.key == "ARROW:schema"));
        for col in meta.row_group(0).columns() {
            // The file names the codec, not its level (the reader reports zstd's default).
            assert!(matches!(col.compression(), Compression::ZSTD(_)));
            assert!(col.statistics().is_some(), "{}", col.column_path());
        }
    }

    #[test]
    fn column_by_column_gives_the_bytes_of_one_record_batch() {
        let mut with_nulls = Column::new("ofo_bytes", Values::U64(vec![5, 0, 7, 1].into()));
        with_nulls.valid = Some(vec![true, false, true, true]);
        let mut dict = DictBuilder::default();
        for s in ["x", "y", "x", "z"] {
            dict.push(s);
        }
        let mut table = sample();
        table.push(with_nulls);
        table.push(Column::new("mode", dict.into_values()));
        assert_eq!(parquet_bytes(&table).unwrap(), one_batch_bytes(&table));
        let empty = vec![Column::new("time_s", Values::F64(vec![].into()))];
        assert_eq!(parquet_bytes(&empty).unwrap(), one_batch_bytes(&empty));
    }

    #[test]
    fn row_groups_split_where_arrow_writer_splits_them() {
        // 1 Mi rows per row group (parquet-rs's default, the properties keep it): 1.5 Mi rows
        // make two, the second of 0.5 Mi rows.
        let rows = 3 << 19;
        let time: Vec<f64> = (0..rows).map(|i| i as f64 * 0.01).collect();
        let flow: Vec<i32> = (0..rows).map(|i| (i % 3) as i32).collect();
        let table = vec![
            Column::new("time_s", Values::F64(Cow::Borrowed(&time))),
            Column::new(
                "flow",
                Values::Dict {
                    keys: Cow::Borrowed(&flow),
                    entries: vec!["a".to_string(), "b".into(), "c".into()].into(),
                },
            ),
        ];
        let bytes = parquet_bytes(&table).unwrap();
        assert_eq!(bytes, one_batch_bytes(&table));
        let reader = SerializedFileReader::new(bytes::Bytes::from(bytes)).unwrap();
        let groups: Vec<i64> = (0..reader.metadata().num_row_groups())
            .map(|i| reader.metadata().row_group(i).num_rows())
            .collect();
        assert_eq!(groups, [1 << 20, 1 << 19]);
    }

    #[test]
    fn a_dictionary_in_another_order_gives_the_same_file() {
        // The file's dictionary page is built from the rows as they come, so the order of the
        // entries (first appearance or not) does not reach the bytes.
        let first_seen = Values::Dict {
            keys: vec![0, 1, 0].into(),
            entries: vec!["b".to_string(), "a".into()].into(),
        };
        let sorted = Values::Dict {
            keys: vec![1, 0, 1].into(),
            entries: vec!["a".to_string(), "b".into(), "unused".into()].into(),
        };
        assert_eq!(
            parquet_bytes(&[Column::new("flow", first_seen)]).unwrap(),
            parquet_bytes(&[Column::new("flow", sorted)]).unwrap()
        );
    }

    #[test]
    fn same_columns_same_bytes() {
        assert_eq!(
            parquet_bytes(&sample()).unwrap(),
            parquet_bytes(&sample()).unwrap()
        );
    }

    #[test]
    fn dictionary_keys_give_the_bytes_of_the_strings() {
        let rows = ["cubic", "bbr", "cubic", "reno", "bbr"];
        let mut dict = DictBuilder::with_capacity(rows.len());
        for r in rows {
            dict.push(r);
        }
        let as_dict = dict.into_values();
        assert_eq!(
            as_dict,
            Values::Dict {
                keys: vec![0, 1, 0, 2, 1].into(),
                entries: vec!["cubic".to_string(), "bbr".into(), "reno".into()].into(),
            }
        );
        let a = parquet_bytes(&[Column::new("cc", strings(&rows))]).unwrap();
        let b = parquet_bytes(&[Column::new("cc", as_dict)]).unwrap();
        assert_eq!(a, b);
    }

    #[test]
    fn equal_strings_at_different_addresses_share_an_entry() {
        let owned = String::from("open");
        let mut dict = DictBuilder::default();
        dict.push("open");
        dict.push(owned.as_str());
        dict.push("loss");
        dict.push(owned.as_str());
        let (keys, entries) = dict.finish();
        assert_eq!(keys, [0, 0, 1, 0]);
        assert_eq!(entries, ["open", "loss"]);
    }

    #[test]
    fn null_rows_stay_out_of_the_dictionary() {
        let mut with_nulls = Column::new("mode", strings(&["x", "skip", "y"]));
        with_nulls.valid = Some(vec![true, false, true]);
        let mut dict = DictBuilder::default();
        dict.push("x");
        dict.push_null();
        dict.push("y");
        let mut as_dict = Column::new("mode", dict.into_values());
        as_dict.valid = Some(vec![true, false, true]);
        let a = parquet_bytes(&[with_nulls]).unwrap();
        assert_eq!(a, parquet_bytes(&[as_dict]).unwrap());
        let batch = read(a);
        let mode = batch.column(0).as_dictionary::<Int32Type>();
        let dict: Vec<&str> = mode.values().as_string::<i32>().iter().flatten().collect();
        assert_eq!(dict, ["x", "y"]);
        assert!(mode.is_null(1));
    }

    #[test]
    fn concat_takes_dictionary_columns_as_strings() {
        let mut d = DictBuilder::default();
        d.push("b");
        d.push("a");
        let a = vec![Column::new("mode", d.into_values())];
        let b = vec![Column::new("mode", strings(&["a", "c"]))];
        let t = concat_promoted(vec![a, b]).unwrap();
        assert_eq!(t[0].values, strings(&["b", "a", "a", "c"]));
    }

    #[test]
    fn empty_columns_write_a_file_with_the_schema() {
        let cols = vec![
            Column::new("time_s", Values::F64(vec![].into())),
            Column::new("link", strings(&[])),
        ];
        let bytes = parquet_bytes(&cols).unwrap();
        let reader = ParquetRecordBatchReaderBuilder::try_new(bytes::Bytes::from(bytes)).unwrap();
        assert_eq!(reader.schema().fields().len(), 2);
        assert_eq!(reader.metadata().file_metadata().num_rows(), 0);
    }

    #[test]
    fn nulls_are_written_as_nulls() {
        let mut c = Column::new("ofo_bytes", Values::U64(vec![5, 0, 7].into()));
        c.valid = Some(vec![true, false, true]);
        let batch = read(parquet_bytes(&[c]).unwrap());
        let v = batch.column(0);
        assert_eq!(v.null_count(), 1);
        assert!(v.is_null(1));
    }

    #[test]
    fn concat_promotes_missing_columns_to_nulls() {
        let a = vec![
            Column::new("time_s", Values::F64(vec![1.0, 2.0].into())),
            Column::new("mode", strings(&["x", "y"])),
            Column::new("controller", Values::I32(vec![0, 0].into())),
        ];
        let b = vec![
            Column::new("time_s", Values::F64(vec![3.0].into())),
            Column::new("rtt", Values::F64(vec![9.5].into())),
            Column::new("controller", Values::I32(vec![1].into())),
        ];
        let t = concat_promoted(vec![a, b]).unwrap();
        let names: Vec<&str> = t.iter().map(|c| c.name.as_str()).collect();
        assert_eq!(names, ["time_s", "mode", "controller", "rtt"]);
        assert_eq!(t[0].valid, None);
        assert_eq!(t[1].valid, Some(vec![true, true, false]));
        assert_eq!(t[3].valid, Some(vec![false, false, true]));
        assert_eq!(t[3].values, Values::F64(vec![0.0, 0.0, 9.5].into()));
        assert_eq!(t[2].values, Values::I32(vec![0, 0, 1].into()));
        let batch = read(parquet_bytes(&t).unwrap());
        assert_eq!(batch.num_rows(), 3);
        assert_eq!(batch.column(1).null_count(), 1);
    }

    #[test]
    fn bad_tables_are_refused_with_the_column_named() {
        let a = vec![Column::new("x", Values::F64(vec![1.0].into()))];
        let b = vec![Column::new("x", Values::U64(vec![1].into()))];
        let e = concat_promoted(vec![a, b]).unwrap_err().to_string();
        assert!(
            e.contains("\"x\"") && e.contains("float64") && e.contains("uint64"),
            "{e}"
        );
        let ragged = vec![
            Column::new("a", Values::F64(vec![1.0].into())),
            Column::new("b", Values::F64(vec![].into())),
        ];
        let e = parquet_bytes(&ragged).unwrap_err().to_string();
        assert!(e.contains("\"b\" has 0 rows"), "{e}");
    }
}
