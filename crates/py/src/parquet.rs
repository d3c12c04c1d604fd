//! `rove._core.write_parquet`: the results' Parquet files written from Rust (crates/results),
//! from columns in the shapes `finish()` returns them, so writing results needs no numpy or
//! pyarrow.

use pyo3::exceptions::{PyTypeError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyList, PyString, PyTuple};
use rove_results::{concat_promoted, write_parquet as write, Column, Error, Values};
use std::path::Path;

/// Writes one Parquet file at `path` from `tables`, a list of tables, each a list of
/// `(name, column)` pairs in file order; several tables are concatenated, a column missing from
/// one of them null on its rows. A column is `list[str]` (dictionary-encoded) or
/// `(dtype, bytes)` with dtype `<f8`, `<u8`, `<u4`, `<i4` or `<i8` (little-endian values), or
/// `(dtype, bytes, valid)` where `valid` holds one byte per row, 0 for a null.
#[pyfunction]
pub fn write_parquet(
    py: Python<'_>,
    path: &str,
    tables: Vec<Vec<(String, Bound<'_, PyAny>)>>,
) -> PyResult<()> {
    let mut parsed = Vec::with_capacity(tables.len());
    for table in tables {
        let mut columns = Vec::with_capacity(table.len());
        for (name, value) in table {
            columns.push(column(name, &value)?);
        }
        parsed.push(columns);
    }
    py.allow_threads(move || {
        let columns = if parsed.len() == 1 {
            parsed.pop().unwrap_or_default()
        } else {
            concat_promoted(parsed)?
        };
        write(Path::new(path), &columns)
    })
    .map_err(|e| match e {
        Error::Io(e) => e.into(),
        Error::Columns(m) => PyValueError::new_err(format!("{path}: {m}")),
    })
}

fn column(name: String, value: &Bound<'_, PyAny>) -> PyResult<Column<'static>> {
    if let Ok(list) = value.downcast::<PyList>() {
        let strings = list
            .iter()
            .map(|s| s.downcast::<PyString>()?.extract::<String>())
            .collect::<PyResult<Vec<String>>>()
            .map_err(|_| {
                PyTypeError::new_err(format!("column {name:?}: a list of str expected"))
            })?;
        return Ok(Column::new(name, Values::Str(strings.into())));
    }
    let shape_error =
        || {
            PyTypeError::new_err(format!(
            "column {name:?}: expected list[str], (dtype, bytes) or (dtype, bytes, valid), got {}",
            value.get_type().name().map_or("?".into(), |n| n.to_string())
        ))
        };
    let tuple = value.downcast::<PyTuple>().map_err(|_| shape_error())?;
    if !(2..=3).contains(&tuple.len()) {
        return Err(shape_error());
    }
    let dtype: String = tuple.get_item(0)?.extract().map_err(|_| shape_error())?;
    let data = tuple.get_item(1)?;
    let data = data
        .downcast::<PyBytes>()
        .map_err(|_| shape_error())?
        .as_bytes();
    let values = numeric(&name, &dtype, data)?;
    let valid = if tuple.len() == 3 {
        let mask = tuple.get_item(2)?;
        let mask = mask
            .downcast::<PyBytes>()
            .map_err(|_| shape_error())?
            .as_bytes();
        if mask.len() != values.len() {
            return Err(PyValueError::new_err(format!(
                "column {name:?}: {} validity bytes for {} values",
                mask.len(),
                values.len()
            )));
        }
        Some(mask.iter().map(|&b| b != 0).collect())
    } else {
        None
    };
    Ok(Column {
        name,
        values,
        valid,
    })
}

/// Little-endian values of numpy dtype `dtype` from `data`.
fn numeric(name: &str, dtype: &str, data: &[u8]) -> PyResult<Values<'static>> {
    fn le<const N: usize, T>(name: &str, data: &[u8], f: fn([u8; N]) -> T) -> PyResult<Vec<T>> {
        if !data.len().is_multiple_of(N) {
            return Err(PyValueError::new_err(format!(
                "column {name:?}: {} bytes is not a whole number of {N}-byte values",
                data.len()
            )));
        }
        Ok(data
            .chunks_exact(N)
            .map(|c| f(c.try_into().expect("chunks of N bytes")))
            .collect())
    }
    Ok(match dtype {
        "<f8" => Values::F64(le(name, data, f64::from_le_bytes)?.into()),
        "<u8" => Values::U64(le(name, data, u64::from_le_bytes)?.into()),
        "<u4" => Values::U32(le(name, data, u32::from_le_bytes)?.into()),
        "<i4" => Values::I32(le(name, data, i32::from_le_bytes)?.into()),
        "<i8" => Values::I64(le(name, data, i64::from_le_bytes)?.into()),
        _ => {
            return Err(PyValueError::new_err(format!(
                "column {name:?}: dtype {dtype:?}; accepted: <f8, <u8, <u4, <i4, <i8"
            )))
        }
    })
}
