//! `ParquetSource`: a file ParquetSink wrote (a run's timeline or intervals), read back a batch
//! of rows at a time as numpy columns, in bounded memory.
//!
//! Why not pyarrow: reading such a file batch by batch, pyarrow held far more than a batch,
//! more for bigger row groups (the first batch of a ~100 000-row group: +24 MiB RSS, of which
//! 3 MiB in Arrow's pool; reading a day's timeline settled ~80 MiB above the start, against
//! +32 MiB for a minute's: bench/README.md "Memory of long runs"). This reader holds the
//! selected column chunks of one row group (compressed) and one batch decoded.
//!
//! A category column comes back as int64 codes into the run's category names (the file's
//! `mmpath:categories` metadata, -1 for none): a Parquet dictionary holds only the names its
//! row group met, in the order it met them.

use std::collections::HashMap;
use std::fs::File;
use std::path::PathBuf;

use arrow_array::cast::AsArray;
use arrow_array::types::{Float64Type, Int32Type, Int8Type, UInt64Type};
use arrow_array::{Array, RecordBatch};
use arrow_schema::DataType;
use numpy::IntoPyArray;
use parquet::arrow::arrow_reader::{ParquetRecordBatchReader, ParquetRecordBatchReaderBuilder};
use parquet::arrow::ProjectionMask;
use pyo3::exceptions::{PyOSError, PyStopIteration, PyValueError};
use pyo3::prelude::*;
use pyo3::types::PyDict;

/// The key ParquetSink's caller (outputs.TimelineFile) stores the category names under.
const CATEGORIES_KEY: &str = "mmpath:categories";

/// {category column: its names, in the run's order}.
type Categories = HashMap<String, Vec<String>>;

#[pyclass(module = "mmpath._core", unsendable)]
pub struct ParquetSource {
    path: PathBuf,
    reader: ParquetRecordBatchReader,
    /// Each category column's names, in the run's order (the file's `mmpath:categories`).
    categories: Categories,
    /// The same as name -> code.
    codes: HashMap<String, HashMap<String, i64>>,
}

fn err(path: &std::path::Path, e: impl std::fmt::Display) -> PyErr {
    PyOSError::new_err(format!("{}: {e}", path.display()))
}

/// The file's column names, in order, and its category names ({column: [names]}).
fn describe(path: &std::path::Path) -> PyResult<(ParquetRecordBatchReaderBuilder<File>, Categories)> {
    let file = File::open(path).map_err(|e| err(path, e))?;
    let builder = ParquetRecordBatchReaderBuilder::try_new(file).map_err(|e| err(path, e))?;
    // In the stored Arrow schema's metadata (where ParquetSink puts it), else the file's.
    let kv = builder.metadata().file_metadata().key_value_metadata();
    let raw = builder
        .schema()
        .metadata()
        .get(CATEGORIES_KEY)
        .cloned()
        .or_else(|| kv.and_then(|kv| kv.iter().find(|k| k.key == CATEGORIES_KEY)).and_then(|k| k.value.clone()));
    let cats: Categories = match raw {
        Some(text) => serde_json::from_str(&text).map_err(|e| err(path, format!("{CATEGORIES_KEY}: {e}")))?,
        None => HashMap::new(),
    };
    Ok((builder, cats))
}

#[pymethods]
impl ParquetSource {
    /// Opens `path` to read `columns` (None: all; names the file lacks are left out) in batches
    /// of at most `batch_rows` rows.
    #[new]
    #[pyo3(signature = (path, columns, batch_rows))]
    fn new(path: PathBuf, columns: Option<Vec<String>>, batch_rows: usize) -> PyResult<Self> {
        let (builder, cats) = describe(&path)?;
        let schema = builder.schema().clone();
        let roots: Vec<usize> = match &columns {
            None => (0..schema.fields().len()).collect(),
            Some(want) => want.iter().filter_map(|c| schema.index_of(c).ok()).collect(),
        };
        for &i in &roots {
            let f = schema.field(i);
            if matches!(f.data_type(), DataType::Dictionary(..)) && !cats.contains_key(f.name()) {
                return Err(err(
                    &path,
                    format!("column {:?} is categorical but the file has no {CATEGORIES_KEY} for it", f.name()),
                ));
            }
        }
        let mask = ProjectionMask::roots(builder.parquet_schema(), roots);
        let reader =
            builder.with_projection(mask).with_batch_size(batch_rows.max(1)).build().map_err(|e| err(&path, e))?;
        let codes = cats
            .iter()
            .map(|(col, names)| (col.clone(), names.iter().enumerate().map(|(i, n)| (n.clone(), i as i64)).collect()))
            .collect();
        Ok(ParquetSource { path, reader, categories: cats, codes })
    }

    /// The file's columns (names, in order) and its category names, without reading rows.
    #[staticmethod]
    fn describe(path: PathBuf) -> PyResult<(Vec<String>, Categories, u64)> {
        let (builder, cats) = describe(&path)?;
        let names = builder.schema().fields().iter().map(|f| f.name().clone()).collect();
        let rows = builder.metadata().file_metadata().num_rows().max(0) as u64;
        Ok((names, cats, rows))
    }

    /// The file's category names: {column: names in the run's order}.
    #[getter]
    fn categories(&self) -> Categories {
        self.categories.clone()
    }

    fn __iter__(slf: PyRef<'_, Self>) -> PyRef<'_, Self> {
        slf
    }

    /// The next batch as {column: numpy array} (category columns: int64 codes, -1 for none).
    fn __next__<'py>(&mut self, py: Python<'py>) -> PyResult<Bound<'py, PyDict>> {
        let batch = match self.reader.next() {
            None => return Err(PyStopIteration::new_err(())),
            Some(b) => b.map_err(|e| err(&self.path, e))?,
        };
        self.to_py(py, &batch)
    }
}

impl ParquetSource {
    fn to_py<'py>(&self, py: Python<'py>, batch: &RecordBatch) -> PyResult<Bound<'py, PyDict>> {
        let out = PyDict::new(py);
        let schema = batch.schema();
        for (field, col) in schema.fields().iter().zip(batch.columns()) {
            let name = field.name();
            let bad = |what: &str| PyValueError::new_err(format!("{}: column {name:?}: {what}", self.path.display()));
            if !matches!(col.data_type(), DataType::Dictionary(..)) && col.null_count() > 0 {
                return Err(bad("has missing values (a run's file never does)"));
            }
            match col.data_type() {
                DataType::Float64 => {
                    out.set_item(name, col.as_primitive::<Float64Type>().values().to_vec().into_pyarray(py))?
                }
                DataType::UInt64 => {
                    out.set_item(name, col.as_primitive::<UInt64Type>().values().to_vec().into_pyarray(py))?
                }
                DataType::Int32 => {
                    out.set_item(name, col.as_primitive::<Int32Type>().values().to_vec().into_pyarray(py))?
                }
                DataType::Int8 => {
                    out.set_item(name, col.as_primitive::<Int8Type>().values().to_vec().into_pyarray(py))?
                }
                DataType::Boolean => {
                    let v: Vec<bool> = col.as_boolean().values().iter().collect();
                    out.set_item(name, v.into_pyarray(py))?
                }
                DataType::Dictionary(..) => {
                    let dict = col.as_any_dictionary();
                    let names = dict.values().as_string_opt::<i32>().ok_or_else(|| bad("dictionary of non-strings"))?;
                    let run = &self.codes[name.as_str()];
                    // The run's code of each of this batch's dictionary entries.
                    let table: Vec<i64> =
                        names.iter().map(|n| n.and_then(|n| run.get(n).copied()).unwrap_or(-1)).collect();
                    let codes: Vec<i64> = if table.is_empty() {
                        // Every row null (a batch of connection-level rows has no path): the
                        // dictionary is empty, and arrow's normalized_keys refuses it.
                        vec![-1; col.len()]
                    } else {
                        let keys = dict.normalized_keys();
                        (0..col.len()).map(|i| if col.is_null(i) { -1 } else { table[keys[i]] }).collect()
                    };
                    out.set_item(name, codes.into_pyarray(py))?
                }
                other => return Err(bad(&format!("type {other} is not one a run writes"))),
            }
        }
        Ok(out)
    }
}
