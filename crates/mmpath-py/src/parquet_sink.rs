//! `ParquetSink`: a run's timeline (or intervals) written to Parquet as the run goes, in row
//! groups far larger than the chunks the core hands over, in bounded memory.
//!
//! Why not pyarrow's ParquetWriter: it can only close a row group per `write_table` call, so a
//! run of a day written a chunk (16 384 rows) at a time has ~1 600 row groups, and every reader
//! of the file (pyarrow) holds ~27 KB of metadata per row group (measured: bench/README.md,
//! "Memory of long runs"): memory that grows with the run's length. The Rust `ArrowWriter`
//! appends each chunk to an open row group, encoded and compressed as it arrives, and closes it
//! when it reaches `max_group_bytes` (its encoded size, so what is held in memory has a bound)
//! or `max_group_rows`. The file is ordinary Parquet with the Arrow schema stored
//! (`ARROW:schema`), so pyarrow, pandas and polars read the categorical columns back as
//! dictionary columns, plus whatever key-value metadata the caller gives (pandas' own).

use std::collections::HashMap;
use std::fs::File;
use std::path::PathBuf;
use std::sync::Arc;

use arrow_array::types::{Int32Type, Int8Type};
use arrow_array::{
    ArrayRef, BooleanArray, DictionaryArray, Float64Array, Int32Array, Int8Array, PrimitiveArray, RecordBatch,
    StringArray, UInt64Array,
};
use arrow_schema::{DataType, Field, Schema, SchemaRef};
use numpy::PyReadonlyArray1;
use parquet::arrow::ArrowWriter;
use parquet::basic::Compression;
use parquet::file::properties::WriterProperties;
use parquet::schema::types::ColumnPath;
use pyo3::exceptions::{PyOSError, PyValueError};
use pyo3::prelude::*;

/// One column's kind: what numpy dtype `write` expects for it and what Arrow type it becomes.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum Kind {
    F64,
    U64,
    I32,
    I8,
    Bool,
    /// Integer codes into the column's category names (-1: none -> null), written as a
    /// dictionary column with int8 keys (int32 when there are more than 127 names).
    Category {
        wide: bool,
    },
}

fn kind_of(name: &str, kind: &str, n_categories: Option<usize>) -> PyResult<Kind> {
    Ok(match (kind, n_categories) {
        ("float64", _) => Kind::F64,
        ("uint64", _) => Kind::U64,
        ("int32", _) => Kind::I32,
        ("int8", _) => Kind::I8,
        ("bool", _) => Kind::Bool,
        ("category", Some(n)) => Kind::Category { wide: n > i8::MAX as usize },
        ("category", None) => {
            return Err(PyValueError::new_err(format!("column {name:?}: a category column needs its names")))
        }
        (other, _) => {
            return Err(PyValueError::new_err(format!(
                "column {name:?}: unknown kind {other:?} (allowed: float64, uint64, int32, int8, bool, category)"
            )))
        }
    })
}

fn data_type(kind: Kind) -> DataType {
    match kind {
        Kind::F64 => DataType::Float64,
        Kind::U64 => DataType::UInt64,
        Kind::I32 => DataType::Int32,
        Kind::I8 => DataType::Int8,
        Kind::Bool => DataType::Boolean,
        Kind::Category { wide } => DataType::Dictionary(
            Box::new(if wide { DataType::Int32 } else { DataType::Int8 }),
            Box::new(DataType::Utf8),
        ),
    }
}

#[pyclass(module = "mmpath._core", unsendable)]
pub struct ParquetSink {
    path: PathBuf,
    writer: Option<ArrowWriter<File>>,
    schema: SchemaRef,
    kinds: Vec<Kind>,
    /// Each category column's names (None for the other columns), shared by every chunk.
    names: Vec<Option<(ArrayRef, usize)>>,
    max_group_bytes: usize,
}

fn io_err(path: &std::path::Path, e: impl std::fmt::Display) -> PyErr {
    PyOSError::new_err(format!("{}: {e}", path.display()))
}

/// Codes (-1: none) as dictionary keys of type K, nulls where negative; every other code must
/// name one of `n` categories.
fn keys<K>(name: &str, codes: &[i64], n: usize) -> PyResult<PrimitiveArray<K>>
where
    K: arrow_array::types::ArrowDictionaryKeyType,
    K::Native: TryFrom<i64>,
{
    let mut out: Vec<Option<K::Native>> = Vec::with_capacity(codes.len());
    for &c in codes {
        if c < 0 {
            out.push(None);
        } else if (c as u64) < n as u64 {
            // In range of n, which fits the key type by construction (kind_of).
            out.push(K::Native::try_from(c).ok());
        } else {
            return Err(PyValueError::new_err(format!("column {name:?}: code {c} names no category (has {n})")));
        }
    }
    Ok(out.into_iter().collect())
}

#[pymethods]
impl ParquetSink {
    /// path: the file to create (truncated); columns: [(name, kind)] in order; categories:
    /// {name: [names]} for the category columns; metadata: [(key, value)] stored with the schema;
    /// a row group is closed at max_group_rows rows or max_group_bytes encoded bytes.
    #[new]
    fn new(
        path: PathBuf,
        columns: Vec<(String, String)>,
        categories: HashMap<String, Vec<String>>,
        metadata: Vec<(String, String)>,
        max_group_rows: usize,
        max_group_bytes: usize,
        page_bytes: usize,
    ) -> PyResult<Self> {
        let mut fields = Vec::with_capacity(columns.len());
        let mut kinds = Vec::with_capacity(columns.len());
        let mut names = Vec::with_capacity(columns.len());
        for (name, kind) in &columns {
            let cats = categories.get(name);
            let k = kind_of(name, kind, cats.map(Vec::len))?;
            fields.push(Field::new(name.as_str(), data_type(k), matches!(k, Kind::Category { .. })));
            kinds.push(k);
            names.push(cats.map(|c| (Arc::new(StringArray::from_iter_values(c.iter())) as ArrayRef, c.len())));
        }
        // The metadata goes into the Arrow schema, which the file stores (`ARROW:schema`) and
        // pyarrow reads its schema's metadata from.
        let schema: SchemaRef = Arc::new(Schema::new_with_metadata(fields, metadata.into_iter().collect()));
        let mut props = WriterProperties::builder()
            // pyarrow's default codec, so files keep their size.
            .set_compression(Compression::SNAPPY)
            .set_max_row_group_size(max_group_rows.max(1))
            // The caller's page size (outputs.PAGE_BYTES says why).
            .set_data_page_size_limit(page_bytes.max(1))
            .set_dictionary_page_size_limit(page_bytes.max(1))
            // Dictionary encoding for the category columns only: pyarrow reading a
            // dictionary-encoded number column of a big row group batch by batch held memory
            // growing with the rows read (+23 MiB for a day's intervals, 2.6 M rows, against
            // +8 MiB plain; bench/README.md "Memory of long runs").
            .set_dictionary_enabled(false);
        for ((name, _), kind) in columns.iter().zip(&kinds) {
            if matches!(kind, Kind::Category { .. }) {
                props = props.set_column_dictionary_enabled(ColumnPath::from(name.as_str()), true);
            }
        }
        let props = props.build();
        let file = File::create(&path).map_err(|e| io_err(&path, e))?;
        let writer = ArrowWriter::try_new(file, schema.clone(), Some(props)).map_err(|e| io_err(&path, e))?;
        Ok(ParquetSink { path, writer: Some(writer), schema, kinds, names, max_group_bytes: max_group_bytes.max(1) })
    }

    /// Appends one chunk: a numpy array per column, in the order given to the constructor
    /// (float64, uint64, int32, int8, bool; int64 codes for a category column), all one length.
    fn write(&mut self, arrays: Vec<Bound<'_, PyAny>>) -> PyResult<()> {
        if arrays.len() != self.kinds.len() {
            return Err(PyValueError::new_err(format!("{} arrays for {} columns", arrays.len(), self.kinds.len())));
        }
        let mut cols: Vec<ArrayRef> = Vec::with_capacity(arrays.len());
        for (i, a) in arrays.iter().enumerate() {
            let name = self.schema.field(i).name();
            let col: ArrayRef = match self.kinds[i] {
                Kind::F64 => Arc::new(Float64Array::from(a.extract::<PyReadonlyArray1<f64>>()?.as_slice()?.to_vec())),
                Kind::U64 => Arc::new(UInt64Array::from(a.extract::<PyReadonlyArray1<u64>>()?.as_slice()?.to_vec())),
                Kind::I32 => Arc::new(Int32Array::from(a.extract::<PyReadonlyArray1<i32>>()?.as_slice()?.to_vec())),
                Kind::I8 => Arc::new(Int8Array::from(a.extract::<PyReadonlyArray1<i8>>()?.as_slice()?.to_vec())),
                Kind::Bool => Arc::new(BooleanArray::from(a.extract::<PyReadonlyArray1<bool>>()?.as_slice()?.to_vec())),
                Kind::Category { wide } => {
                    let codes = a.extract::<PyReadonlyArray1<i64>>()?;
                    let codes = codes.as_slice()?;
                    let (values, n) = self.names[i].clone().expect("category column has names");
                    let r = if wide {
                        DictionaryArray::<Int32Type>::try_new(keys::<Int32Type>(name, codes, n)?, values)
                            .map(|d| Arc::new(d) as ArrayRef)
                    } else {
                        DictionaryArray::<Int8Type>::try_new(keys::<Int8Type>(name, codes, n)?, values)
                            .map(|d| Arc::new(d) as ArrayRef)
                    };
                    r.map_err(|e| PyValueError::new_err(format!("column {name:?}: {e}")))?
                }
            };
            cols.push(col);
        }
        let batch =
            RecordBatch::try_new(self.schema.clone(), cols).map_err(|e| PyValueError::new_err(e.to_string()))?;
        let path = self.path.clone();
        let w = self.writer.as_mut().ok_or_else(|| PyValueError::new_err("the file is already closed"))?;
        w.write(&batch).map_err(|e| io_err(&path, e))?;
        // The open row group is held encoded in memory: close it once it is this big.
        if w.in_progress_size() >= self.max_group_bytes {
            w.flush().map_err(|e| io_err(&path, e))?;
        }
        Ok(())
    }

    /// Writes the last row group and the footer; the file is complete afterwards.
    fn close(&mut self) -> PyResult<()> {
        if let Some(w) = self.writer.take() {
            w.close().map_err(|e| io_err(&self.path, e))?;
        }
        Ok(())
    }
}
