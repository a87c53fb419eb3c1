//! The tables written as CSV or Parquet ([`Tables`], [`write`]), a
//! document at a time, each file under a temporary name until it is whole.

use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use parquet::basic::{Compression, ZstdLevel};
use parquet::column::writer::{get_column_writer, get_typed_column_writer_mut, ColumnCloseResult};
use parquet::data_type::{ByteArray, ByteArrayType, DoubleType, Int64Type};
use parquet::file::metadata::KeyValue;
use parquet::file::properties::WriterProperties;
use parquet::file::properties::WriterPropertiesPtr;
use parquet::file::writer::{SerializedFileWriter, SerializedPageWriter, TrackedWrite};
use parquet::schema::parser::parse_message_type;
use parquet::schema::types::ColumnDescPtr;

use crate::read::Loaded;

use super::*;
use crate::cli::ExportFormat;
use crate::export::Export;

/// `unix_ns` as RFC 3339 UTC with nanoseconds; negative (before 1970, not
/// from a real run) as the number.
fn rfc3339(unix_ns: i64) -> String {
    u64::try_from(unix_ns).map_or_else(|_| unix_ns.to_string(), crate::export::ocptv::rfc3339)
}

/// One row of a table as CSV fields (see the module doc).
fn csv_record<R>(cols: &[Column<R>], r: &R) -> Vec<String> {
    cols.iter()
        .map(|c| {
            let mut cell = String::new();
            match ((c.get)(r), c.kind) {
                (Cell::Text(Some(s)), _) => cell.push_str(&crate::export::csv::defused(s)),
                (Cell::Double(Some(v)), _) => {
                    let _ = write!(cell, "{v}");
                }
                (Cell::Int(Some(v)), Kind::Timestamp) => cell = rfc3339(v),
                (Cell::Int(Some(v)), _) => {
                    let _ = write!(cell, "{v}");
                }
                (Cell::Text(None) | Cell::Double(None) | Cell::Int(None), _) => {}
            }
            cell
        })
        .collect()
}

/// The Parquet message type of a table's columns.
pub fn message_type<R>(table: &str, cols: &[Column<R>]) -> String {
    let mut m = format!("message {table} {{\n");
    for c in cols {
        let rep = if c.optional { "optional" } else { "required" };
        let ty = match c.kind {
            Kind::Text => "binary",
            Kind::Double => "double",
            Kind::Int | Kind::Timestamp => "int64",
        };
        let logical = match c.kind {
            Kind::Text => " (STRING)",
            Kind::Timestamp => " (TIMESTAMP(NANOS,true))",
            Kind::Double | Kind::Int => "",
        };
        let _ = writeln!(m, "  {rep} {ty} {}{logical};", c.name);
    }
    m.push('}');
    m
}

/// The definition levels of an optional column (1 present, 0 null), or
/// `None` for a required one.
fn levels(optional: bool, present: impl Iterator<Item = bool>) -> Option<Vec<i16>> {
    optional.then(|| present.map(i16::from).collect())
}

/// The writer properties of a table: zstd, [`ROW_GROUP`] rows a group at
/// most, and `bootbench.table` in the key-value metadata.
fn props(table: &str) -> WriterProperties {
    WriterProperties::builder()
        .set_compression(Compression::ZSTD(ZstdLevel::default()))
        .set_max_row_group_row_count(Some(ROW_GROUP))
        .set_key_value_metadata(Some(vec![KeyValue::new(TABLE_KEY.to_owned(), table.to_owned())]))
        .set_created_by(format!("bootbench-report {}", env!("CARGO_PKG_VERSION")))
        .build()
}

/// Write `rows` as one row group: each column chunk encoded on its own
/// core ([`encode_column`], into memory), then appended in the schema's
/// order. Each chunk's bytes depend on its rows alone, so the file is the
/// same byte for byte whatever the number of cores.
fn write_group<R: Sync, W: std::io::Write + Send>(
    w: &mut SerializedFileWriter<W>,
    cols: &[Column<R>],
    rows: &[R],
) -> parquet::errors::Result<()> {
    use rayon::prelude::*;
    let descr = w.schema_descr().columns().to_vec();
    let props = w.properties().clone();
    let chunks: Vec<parquet::errors::Result<(bytes::Bytes, ColumnCloseResult)>> = cols
        .par_iter()
        .zip(descr)
        .map(|(c, d)| encode_column(c, d, props.clone(), rows))
        .collect();
    let mut rg = w.next_row_group()?;
    for chunk in chunks {
        let (data, close) = chunk?;
        rg.append_column(&data, close)?;
    }
    rg.close()?;
    Ok(())
}

/// One column of `rows` encoded as a column chunk in memory: its pages'
/// bytes (offsets from 0) and what closing it told of them.
fn encode_column<R>(
    c: &Column<R>,
    descr: ColumnDescPtr,
    props: WriterPropertiesPtr,
    rows: &[R],
) -> parquet::errors::Result<(bytes::Bytes, ColumnCloseResult)> {
    let mut sink = TrackedWrite::new(Vec::new());
    let mut col = get_column_writer(descr, props, Box::new(SerializedPageWriter::new(&mut sink)));
    let cells: Vec<Cell> = rows.iter().map(|r| (c.get)(r)).collect();
    let def = levels(c.optional, cells.iter().map(Cell::is_some));
    match c.kind {
        Kind::Text => {
            // The identity columns repeat a value down a document's rows:
            // one ByteArray per run of equal text, shared, not a copy of
            // each.
            let mut values: Vec<ByteArray> = Vec::with_capacity(cells.len());
            let mut last: Option<&str> = None;
            for s in cells
                .iter()
                .filter_map(|x| if let Cell::Text(s) = x { *s } else { None })
            {
                match values.last() {
                    Some(v) if last == Some(s) => values.push(v.clone()),
                    _ => values.push(ByteArray::from(s)),
                }
                last = Some(s);
            }
            get_typed_column_writer_mut::<ByteArrayType>(&mut col).write_batch(&values, def.as_deref(), None)?;
        }
        Kind::Double => {
            let values: Vec<f64> = cells
                .iter()
                .filter_map(|x| if let Cell::Double(d) = x { *d } else { None })
                .collect();
            get_typed_column_writer_mut::<DoubleType>(&mut col).write_batch(&values, def.as_deref(), None)?;
        }
        Kind::Int | Kind::Timestamp => {
            let values: Vec<i64> = cells
                .iter()
                .filter_map(|x| if let Cell::Int(d) = x { *d } else { None })
                .collect();
            get_typed_column_writer_mut::<Int64Type>(&mut col).write_batch(&values, def.as_deref(), None)?;
        }
    }
    let close = col.close()?;
    Ok((bytes::Bytes::from(sink.into_inner()?), close))
}

/// Where one table's rows go as they come.
enum Sink<R: 'static> {
    Csv(csv::Writer<std::io::BufWriter<std::fs::File>>),
    Parquet {
        w: SerializedFileWriter<std::io::BufWriter<std::fs::File>>,
        /// The rows of the row group being gathered.
        rows: Vec<R>,
    },
}

/// One table written as its rows come: a CSV row at once, a Parquet row
/// group each [`ROW_GROUP`] rows; under its temporary name until
/// [`Table::finish`].
struct Table<R: 'static> {
    out: crate::output::Replacing,
    cols: &'static [Column<R>],
    sink: Sink<R>,
    path: PathBuf,
}

/// A write error, naming the file.
fn cannot(path: &Path, e: &dyn std::fmt::Display) -> String {
    format!("{}: cannot write: {e}", path.display())
}

impl<R: Sync + 'static> Table<R> {
    fn create(format: ExportFormat, path: &Path, table: &str, cols: &'static [Column<R>]) -> Result<Table<R>, String> {
        let out = crate::output::Replacing::create(path).map_err(|e| cannot(path, &e))?;
        let file = std::io::BufWriter::new(out.writer().map_err(|e| cannot(path, &e))?);
        let sink = match format {
            ExportFormat::Csv => {
                let mut w = csv::WriterBuilder::new()
                    .terminator(csv::Terminator::CRLF)
                    .from_writer(file);
                w.write_record(cols.iter().map(|c| c.name))
                    .map_err(|e| cannot(path, &e))?;
                Sink::Csv(w)
            }
            ExportFormat::Parquet => {
                let name = table.split('/').next().unwrap_or(table);
                let schema = parse_message_type(&message_type(name, cols)).map_err(|e| cannot(path, &e))?;
                let w = SerializedFileWriter::new(file, Arc::new(schema), Arc::new(props(table)))
                    .map_err(|e| cannot(path, &e))?;
                Sink::Parquet { w, rows: Vec::new() }
            }
            ExportFormat::Junit | ExportFormat::Ocptv => {
                return Err(format!("{}: {format:?} is not a table format", path.display()))
            }
        };
        Ok(Table {
            out,
            cols,
            sink,
            path: path.to_path_buf(),
        })
    }

    fn push(&mut self, r: R) -> Result<(), String> {
        let cols = self.cols;
        let done = match &mut self.sink {
            Sink::Csv(w) => w.write_record(csv_record(cols, &r)).map_err(|e| e.to_string()),
            Sink::Parquet { w, rows } => {
                rows.push(r);
                if rows.len() < ROW_GROUP {
                    return Ok(());
                }
                let done = write_group(w, cols, rows).map_err(|e| e.to_string());
                rows.clear();
                done
            }
        };
        done.map_err(|e| cannot(&self.path, &e))
    }

    /// The rest written, the file given its name.
    fn finish(self) -> Result<(), String> {
        let path = self.path;
        let mut f = match self.sink {
            Sink::Csv(w) => w.into_inner().map_err(|e| cannot(&path, e.error()))?,
            Sink::Parquet { mut w, rows } => {
                if !rows.is_empty() {
                    write_group(&mut w, self.cols, &rows).map_err(|e| cannot(&path, &e))?;
                }
                w.into_inner().map_err(|e| cannot(&path, &e))?
            }
        };
        std::io::Write::flush(&mut f).map_err(|e| cannot(&path, &e))?;
        self.out.commit().map_err(|e| cannot(&path, &e))
    }
}

/// An export being written: both tables, a document at a time, so that
/// only a row group of rows (Parquet) or none (CSV) is held, whatever the
/// number of documents. Nothing has its name before [`Tables::finish`];
/// dropped before, both temporary files are removed.
pub struct Tables {
    figures: Table<FigureRow>,
    runs: Table<RunRow>,
}

impl std::fmt::Debug for Tables {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "Tables({} and {})",
            self.figures.path.display(),
            self.runs.path.display()
        )
    }
}

impl Tables {
    /// Start the export of `format` (`csv` or `parquet`; another is an
    /// error) to `figures` and `runs`.
    pub fn create(format: ExportFormat, figures: &Path, runs: &Path) -> Result<Tables, String> {
        Ok(Tables {
            figures: Table::create(format, figures, FIGURES_TABLE, FIGURE_COLUMNS)?,
            runs: Table::create(format, runs, RUNS_TABLE, RUN_COLUMNS)?,
        })
    }

    /// Add one document's rows.
    pub fn add(&mut self, l: &Loaded) -> Result<(), String> {
        self.add_all(std::slice::from_ref(l))
    }

    /// Add documents' rows in order, each document's made on its own
    /// core.
    pub fn add_all(&mut self, docs: &[Loaded]) -> Result<(), String> {
        use rayon::prelude::*;
        let rows: Vec<(Vec<FigureRow>, Vec<RunRow>)> = docs
            .par_iter()
            .map(|l| {
                let one = std::slice::from_ref(l);
                (figure_rows(one), run_rows(one))
            })
            .collect();
        for (figures, runs) in rows {
            for r in figures {
                self.figures.push(r)?;
            }
            for r in runs {
                self.runs.push(r)?;
            }
        }
        Ok(())
    }

    /// Write what is left and give both files their names.
    pub fn finish(self) -> Result<(), String> {
        self.figures.finish()?;
        self.runs.finish()
    }
}

impl Export for Tables {
    fn add(&mut self, doc: Loaded) -> Result<(), String> {
        Tables::add(self, &doc)
    }

    fn add_all(&mut self, docs: Vec<Loaded>) -> Result<(), String> {
        Tables::add_all(self, &docs)
    }

    /// Both tables: the figures, then the runs.
    fn finish(self: Box<Self>) -> Result<Vec<PathBuf>, String> {
        let written = vec![self.figures.path.clone(), self.runs.path.clone()];
        Tables::finish(*self)?;
        Ok(written)
    }
}

/// Write the tables of `docs` in `format` to `figures` and `runs` (see the
/// module doc), each replaced atomically.
pub fn write(format: ExportFormat, docs: &[Loaded], figures: &Path, runs: &Path) -> Result<(), String> {
    let mut e = Tables::create(format, figures, runs)?;
    for l in docs {
        e.add(l)?;
    }
    e.finish()
}

/// [`write`] as CSV.
pub fn write_csv(docs: &[Loaded], figures: &Path, runs: &Path) -> Result<(), String> {
    write(ExportFormat::Csv, docs, figures, runs)
}

/// [`write`] as Parquet.
pub fn write_parquet(docs: &[Loaded], figures: &Path, runs: &Path) -> Result<(), String> {
    write(ExportFormat::Parquet, docs, figures, runs)
}
