//! The figures table of a Parquet export read back ([`read_parquet`],
//! [`for_each_summary_row`]: what `fleet` reads), its footer checked first
//! ([`crate::export::parquet_footer`]).

use std::path::Path;

use parquet::data_type::{ByteArray, ByteArrayType, DoubleType, Int64Type};
use parquet::file::reader::{FileReader, SerializedFileReader};

use super::*;

/// Whether `path` starts with Parquet's magic `PAR1` (a cheap test, before
/// [`parquet_table`] reads the footer); false if it cannot be read.
pub fn is_parquet(path: &Path) -> bool {
    use std::io::Read as _;
    let mut magic = [0u8; 4];
    std::fs::File::open(path)
        .and_then(|mut f| f.read_exact(&mut magic))
        .is_ok_and(|()| &magic == b"PAR1")
}

/// Open `path` as Parquet, with the `bootbench.table` of its metadata
/// (`None` in a Parquet file bootbench did not write).
fn open(path: &Path) -> Result<(SerializedFileReader<std::fs::File>, Option<String>), String> {
    let file = path.display();
    if !is_parquet(path) {
        return Err(format!("{file}: not a Parquet file (it does not start with PAR1)"));
    }
    // Its footer bounded by the file before the parquet crate allocates
    // by it.
    crate::export::parquet_footer::check(path)?;
    let f = std::fs::File::open(path).map_err(|e| format!("{file}: cannot read: {e}"))?;
    let r = SerializedFileReader::new(f).map_err(|e| format!("{file}: not a readable Parquet file: {e}"))?;
    let table = r
        .metadata()
        .file_metadata()
        .key_value_metadata()
        .and_then(|kv| kv.iter().find(|k| k.key == TABLE_KEY))
        .and_then(|k| k.value.clone());
    Ok((r, table))
}

/// The table a bootbench Parquet export holds: `figures/1` or `runs/1`
/// (its `bootbench.table` metadata); an error naming the file if it is not
/// Parquet or not bootbench's.
pub fn parquet_table(path: &Path) -> Result<String, String> {
    let (_, table) = open(path)?;
    table.ok_or_else(|| {
        format!(
            "{}: a Parquet file, but not a bootbench export (no `{TABLE_KEY}` in its metadata)",
            path.display()
        )
    })
}

/// Read the figures table of a Parquet export back (see the module doc):
/// columns found by name, in any order; an error naming the file if it is
/// not one (a run table, a foreign Parquet file, another version) or a
/// column is missing or of another type.
pub fn read_parquet(path: &Path) -> Result<Vec<FigureRow>, String> {
    let mut out = Vec::new();
    for_each_figure_row(path, |r| out.push(r))?;
    Ok(out)
}

/// [`read_parquet`] a row at a time, in the file's order, without holding
/// the table: `fleet` reads an export of any size this way.
pub fn for_each_figure_row(path: &Path, each: impl FnMut(FigureRow)) -> Result<(), String> {
    rows(path, false, each)
}

/// [`for_each_figure_row`] of the rows whose `step` is null only: each
/// test's summary figures, or its one row without (see the module doc),
/// the rest skipped before they are made rows. What `fleet` reads.
pub fn for_each_summary_row(path: &Path, each: impl FnMut(FigureRow)) -> Result<(), String> {
    rows(path, true, each)
}

/// Whether `table` (a file's `bootbench.table`) is the figures table; an
/// error naming the file and what it holds instead.
fn figures_table(file: &dyn std::fmt::Display, table: Option<&str>) -> Result<(), String> {
    match table {
        Some(FIGURES_TABLE) => {}
        Some(RUNS_TABLE) => {
            return Err(format!(
                "{file}: bootbench's run table (`{TABLE_KEY}` = {RUNS_TABLE}), not its figures table: give the \
             figures file (the one without `.runs`)"
            ))
        }
        Some(other) => {
            return Err(format!(
                "{file}: bootbench table `{other}`; this tool reads `{FIGURES_TABLE}`"
            ))
        }
        None => {
            return Err(format!(
                "{file}: a Parquet file, but not a bootbench export (no `{TABLE_KEY}` in its metadata)"
            ))
        }
    }
    Ok(())
}

fn rows(path: &Path, summary_only: bool, mut each: impl FnMut(FigureRow)) -> Result<(), String> {
    let file = path.display();
    let (r, table) = open(path)?;
    figures_table(&file, table.as_deref())?;
    let names: Vec<String> = r
        .metadata()
        .file_metadata()
        .schema_descr()
        .columns()
        .iter()
        .map(|c| c.name().to_owned())
        .collect();
    let ix = FigureIx::find(&names, &file)?;
    let mut rows_seen = 0;
    for g in 0..r.num_row_groups() {
        let rg = r.get_row_group(g).map_err(|e| format!("{file}: row group {g}: {e}"))?;
        // Checked by parquet_footer: at least 0, at most what each column
        // chunk holds; still read a batch at a time, never allocated by.
        let n = usize::try_from(rg.metadata().num_rows()).unwrap_or(0);
        let mut readers: Vec<Option<(ChunkReader, i16)>> = (0..names.len()).map(|_| None).collect();
        for i in ix.all() {
            let max_def = rg.metadata().column(i).column_descr().max_def_level();
            let reader = rg
                .get_column_reader(i)
                .map_err(|e| format!("{file}: column `{}`: {e}", names[i]))?;
            readers[i] = Some((ChunkReader::of(reader), max_def));
        }
        let mut done = 0;
        while done < n {
            let batch = (n - done).min(BATCH_ROWS);
            // Each column's next `batch` rows, by its typed reader: a
            // batch at a time, not a record of fields per row.
            let mut cols: Vec<Option<Values>> = (0..names.len()).map(|_| None).collect();
            for i in ix.all() {
                if let Some((c, max_def)) = readers[i].as_mut() {
                    let got = c
                        .read(batch, *max_def)
                        .map_err(|e| format!("{e}"))
                        .and_then(|(v, read)| {
                            if read < batch {
                                Err(format!("its pages end after {} of the group's {n} rows", done + read))
                            } else {
                                Ok(v)
                            }
                        });
                    cols[i] = Some(got.map_err(|e| format!("{file}: row group {g}: column `{}`: {e}", names[i]))?);
                }
            }
            let mut cell = Cells {
                file: &file,
                names: &names,
                cols,
                row: 0,
                first: rows_seen,
            };
            for row in 0..batch {
                cell.row = row;
                if summary_only && cell.is_set(ix.step) {
                    continue;
                }
                each(cell.figure_row(&ix)?);
            }
            done += batch;
            rows_seen += batch;
        }
    }
    Ok(())
}

/// Rows read of each column at a time: what the reader holds, whatever a
/// row group's `num_rows` says.
const BATCH_ROWS: usize = 8192;

/// Where each of [`FigureRow`]'s fields is in the file being read.
struct FigureIx {
    file: usize,
    machine: usize,
    machine_by: usize,
    machine_serial: usize,
    hostname: usize,
    host_model: usize,
    cpu_model: usize,
    profile: usize,
    run_started_unix_ns: usize,
    schema_version: usize,
    tool_version: usize,
    disk: usize,
    target_kind: usize,
    disk_serial: usize,
    disk_model: usize,
    disk_firmware: usize,
    transport: usize,
    disk_wwn: usize,
    disk_verdict: usize,
    disk_verdict_reason: usize,
    disk_verdict_rule: usize,
    run: usize,
    test: usize,
    workload: usize,
    status: usize,
    status_detail: usize,
    step: usize,
    label: usize,
    figure: usize,
    value: usize,
    unit: usize,
}

impl FigureIx {
    /// Each column of the figures table found by name in `names` (the
    /// file's columns, in its order); an error naming the file and the
    /// first column missing.
    fn find(names: &[String], file: &dyn std::fmt::Display) -> Result<FigureIx, String> {
        let at = |name: &str| {
            names
                .iter()
                .position(|n| n == name)
                .ok_or_else(|| format!("{file}: no column `{name}` in the figures table"))
        };
        Ok(FigureIx {
            file: at("file")?,
            machine: at("machine")?,
            machine_by: at("machine_by")?,
            machine_serial: at("machine_serial")?,
            hostname: at("hostname")?,
            host_model: at("host_model")?,
            cpu_model: at("cpu_model")?,
            profile: at("profile")?,
            run_started_unix_ns: at("run_started_unix_ns")?,
            schema_version: at("schema_version")?,
            tool_version: at("tool_version")?,
            disk: at("disk")?,
            target_kind: at("target_kind")?,
            disk_serial: at("disk_serial")?,
            disk_model: at("disk_model")?,
            disk_firmware: at("disk_firmware")?,
            transport: at("transport")?,
            disk_wwn: at("disk_wwn")?,
            disk_verdict: at("disk_verdict")?,
            disk_verdict_reason: at("disk_verdict_reason")?,
            disk_verdict_rule: at("disk_verdict_rule")?,
            run: at("run")?,
            test: at("test")?,
            workload: at("workload")?,
            status: at("status")?,
            status_detail: at("status_detail")?,
            step: at("step")?,
            label: at("label")?,
            figure: at("figure")?,
            value: at("value")?,
            unit: at("unit")?,
        })
    }

    /// Every column the row is made of (the table's others are not read).
    fn all(&self) -> [usize; 31] {
        [
            self.file,
            self.machine,
            self.machine_by,
            self.machine_serial,
            self.hostname,
            self.host_model,
            self.cpu_model,
            self.profile,
            self.run_started_unix_ns,
            self.schema_version,
            self.tool_version,
            self.disk,
            self.target_kind,
            self.disk_serial,
            self.disk_model,
            self.disk_firmware,
            self.transport,
            self.disk_wwn,
            self.disk_verdict,
            self.disk_verdict_reason,
            self.disk_verdict_rule,
            self.run,
            self.test,
            self.workload,
            self.status,
            self.status_detail,
            self.step,
            self.label,
            self.figure,
            self.value,
            self.unit,
        ]
    }
}

/// A batch of rows of one column: each row's value, `None` for a null.
enum Values {
    Text(Vec<Option<ByteArray>>),
    Double(Vec<Option<f64>>),
    Int(Vec<Option<i64>>),
    /// A physical type the tables do not use.
    Other(&'static str),
}

impl Values {
    fn kind(&self) -> &'static str {
        match self {
            Values::Text(_) => "BYTE_ARRAY",
            Values::Double(_) => "DOUBLE",
            Values::Int(_) => "INT64",
            Values::Other(k) => k,
        }
    }
}

/// A column chunk being read, by its typed reader.
enum ChunkReader {
    Text(parquet::column::reader::ColumnReaderImpl<ByteArrayType>),
    Double(parquet::column::reader::ColumnReaderImpl<DoubleType>),
    Int(parquet::column::reader::ColumnReaderImpl<Int64Type>),
    Other(&'static str),
}

impl ChunkReader {
    fn of(reader: parquet::column::reader::ColumnReader) -> ChunkReader {
        use parquet::column::reader::ColumnReader as C;
        match reader {
            C::ByteArrayColumnReader(r) => ChunkReader::Text(r),
            C::DoubleColumnReader(r) => ChunkReader::Double(r),
            C::Int64ColumnReader(r) => ChunkReader::Int(r),
            C::BoolColumnReader(_) => ChunkReader::Other("BOOLEAN"),
            C::Int32ColumnReader(_) => ChunkReader::Other("INT32"),
            C::Int96ColumnReader(_) => ChunkReader::Other("INT96"),
            C::FloatColumnReader(_) => ChunkReader::Other("FLOAT"),
            C::FixedLenByteArrayColumnReader(_) => ChunkReader::Other("FIXED_LEN_BYTE_ARRAY"),
        }
    }

    /// The next `n` rows of a column whose values are present at
    /// definition level `max_def` (0: a required column, no levels), and
    /// how many there were (fewer than `n` where its pages end).
    fn read(&mut self, n: usize, max_def: i16) -> parquet::errors::Result<(Values, usize)> {
        Ok(match self {
            ChunkReader::Text(r) => read_all(r, n, max_def).map(|(v, got)| (Values::Text(v), got))?,
            ChunkReader::Double(r) => read_all(r, n, max_def).map(|(v, got)| (Values::Double(v), got))?,
            ChunkReader::Int(r) => read_all(r, n, max_def).map(|(v, got)| (Values::Int(v), got))?,
            ChunkReader::Other(k) => (Values::Other(k), n),
        })
    }
}

/// The next `n` rows of one column chunk (fewer where its pages end),
/// nulls in place, and how many.
fn read_all<T: parquet::data_type::DataType>(
    r: &mut parquet::column::reader::ColumnReaderImpl<T>,
    n: usize,
    max_def: i16,
) -> parquet::errors::Result<(Vec<Option<T::T>>, usize)> {
    let mut values = Vec::with_capacity(n);
    let mut def: Vec<i16> = Vec::with_capacity(n);
    let mut records = 0;
    while records < n {
        let levels = if max_def > 0 { Some(&mut def) } else { None };
        let (got, _, _) = r.read_records(n - records, levels, None, &mut values)?;
        if got == 0 {
            break;
        }
        records += got;
    }
    if max_def == 0 {
        return Ok((values.into_iter().map(Some).collect(), records));
    }
    let mut present = values.into_iter();
    Ok((
        def.iter()
            .map(|&d| if d == max_def { present.next() } else { None })
            .collect(),
        records,
    ))
}

/// The cells of the row group being read, taken a row at a time.
struct Cells<'a> {
    file: &'a dyn std::fmt::Display,
    names: &'a [String],
    cols: Vec<Option<Values>>,
    /// The row within the group.
    row: usize,
    /// The rows of the groups before.
    first: usize,
}

impl Cells<'_> {
    /// The row at [`Cells::row`] as a [`FigureRow`], its columns where
    /// `ix` found them.
    fn figure_row(&mut self, ix: &FigureIx) -> Result<FigureRow, String> {
        Ok(FigureRow {
            file: self.text(ix.file)?,
            machine: self.text(ix.machine)?,
            machine_by: self.text(ix.machine_by)?,
            machine_serial: self.opt_text(ix.machine_serial)?,
            hostname: self.opt_text(ix.hostname)?,
            host_model: self.opt_text(ix.host_model)?,
            cpu_model: self.opt_text(ix.cpu_model)?,
            profile: self.opt_text(ix.profile)?,
            run_started_unix_ns: self.int(ix.run_started_unix_ns)?,
            schema_version: self.text(ix.schema_version)?,
            tool_version: self.text(ix.tool_version)?,
            disk: self.text(ix.disk)?,
            target_kind: self.text(ix.target_kind)?,
            disk_serial: self.opt_text(ix.disk_serial)?,
            disk_model: self.opt_text(ix.disk_model)?,
            disk_firmware: self.opt_text(ix.disk_firmware)?,
            transport: self.opt_text(ix.transport)?,
            disk_wwn: self.opt_text(ix.disk_wwn)?,
            disk_verdict: self.opt_text(ix.disk_verdict)?,
            disk_verdict_reason: self.opt_text(ix.disk_verdict_reason)?,
            disk_verdict_rule: self.opt_text(ix.disk_verdict_rule)?,
            run: self.text(ix.run)?,
            test: self.text(ix.test)?,
            workload: self.text(ix.workload)?,
            status: self.text(ix.status)?,
            status_detail: self.opt_text(ix.status_detail)?,
            step: self.opt_text(ix.step)?,
            label: self.opt_text(ix.label)?,
            figure: self.opt_text(ix.figure)?,
            value: self.opt_double(ix.value)?,
            unit: self.opt_text(ix.unit)?,
        })
    }

    fn wrong(&self, i: usize, what: &str) -> String {
        format!(
            "{}: row {}: column `{}` {what}",
            self.file,
            self.first + self.row,
            self.names.get(i).map_or("?", String::as_str),
        )
    }

    fn opt_text(&mut self, i: usize) -> Result<Option<String>, String> {
        let row = self.row;
        let got = match self.cols.get_mut(i) {
            Some(Some(Values::Text(v))) => Ok(v.get_mut(row).and_then(Option::take)),
            Some(Some(other)) => Err(other.kind()),
            _ => Err("missing"),
        };
        match got {
            Ok(None) => Ok(None),
            Ok(Some(b)) => match String::from_utf8(b.data().to_vec()) {
                Ok(s) => Ok(Some(s)),
                Err(_) => Err(self.wrong(i, "is not UTF-8 text")),
            },
            Err(kind) => Err(self.wrong(i, &format!("is {kind}, not text"))),
        }
    }

    /// Whether column `i` has a value in this row (a text column).
    fn is_set(&self, i: usize) -> bool {
        matches!(self.cols.get(i), Some(Some(Values::Text(v))) if v.get(self.row).is_some_and(Option::is_some))
    }

    fn text(&mut self, i: usize) -> Result<String, String> {
        self.opt_text(i)?.ok_or_else(|| self.wrong(i, "is null, not text"))
    }

    fn opt_double(&mut self, i: usize) -> Result<Option<f64>, String> {
        match self.cols.get(i) {
            Some(Some(Values::Double(v))) => Ok(v.get(self.row).copied().flatten()),
            Some(Some(other)) => Err(self.wrong(i, &format!("is {}, not a double", other.kind()))),
            _ => Err(self.wrong(i, "is missing")),
        }
    }

    fn int(&mut self, i: usize) -> Result<i64, String> {
        match self.cols.get(i) {
            Some(Some(Values::Int(v))) => v
                .get(self.row)
                .copied()
                .flatten()
                .ok_or_else(|| self.wrong(i, "is null, not an INT64")),
            Some(Some(other)) => Err(self.wrong(i, &format!("is {}, not an INT64", other.kind()))),
            _ => Err(self.wrong(i, "is missing")),
        }
    }
}
