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
    rows(path, None, false, each)
}

/// [`for_each_figure_row`] of the rows whose `step` is null only (each
/// test's summary figures, or its one row without: see the module doc),
/// and of those only the `columns` named: what `fleet` reads. A column not
/// named is left empty in the rows (`""`, `None`, 0) and need not be in
/// the file. The rest is never made a row, nor its cells values: the
/// `step` column is read first, a batch at a time, and each named column
/// then reads the runs of rows whose `step` is null and skips the others
/// (a skipped dictionary-encoded value is an index passed over, a page
/// of skipped rows is not decompressed).
pub fn for_each_summary_row(path: &Path, columns: &[&str], each: impl FnMut(FigureRow)) -> Result<(), String> {
    if let Some(c) = columns.iter().find(|c| !FIGURE_COLUMNS.iter().any(|k| k.name == **c)) {
        return Err(format!(
            "no column `{c}` in the figures table (asked of {})",
            path.display()
        ));
    }
    rows(path, Some(columns), true, each)
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

/// What is read of a file: the columns (each with its place in the file)
/// and, when only the summary rows are, where `step` is.
struct Plan {
    cols: Vec<(&'static Column<FigureRow>, usize)>,
    step: Option<usize>,
}

impl Plan {
    /// The columns of `only` (all of them for `None`) found by name in
    /// `names` (the file's columns, in its order), `run_started` left out
    /// (it is `run_started_unix_ns` again); an error naming the file and
    /// the first column missing.
    fn find(
        names: &[String],
        only: Option<&[&str]>,
        summary_only: bool,
        file: &dyn std::fmt::Display,
    ) -> Result<Plan, String> {
        let at = |name: &str| {
            names
                .iter()
                .position(|n| n == name)
                .ok_or_else(|| format!("{file}: no column `{name}` in the figures table"))
        };
        let mut cols = Vec::new();
        for c in FIGURE_COLUMNS {
            let wanted = only.is_none_or(|o| o.contains(&c.name));
            if wanted && !matches!(c.set, Set::Derived) && !(summary_only && c.name == "step") {
                cols.push((c, at(c.name)?));
            }
        }
        let step = if summary_only { Some(at("step")?) } else { None };
        Ok(Plan { cols, step })
    }
}

fn rows(path: &Path, only: Option<&[&str]>, summary_only: bool, mut each: impl FnMut(FigureRow)) -> Result<(), String> {
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
    let plan = Plan::find(&names, only, summary_only, &file)?;
    let mut first = 0;
    for g in 0..r.num_row_groups() {
        let rg = r.get_row_group(g).map_err(|e| format!("{file}: row group {g}: {e}"))?;
        let mut group = Group {
            file: &file,
            g,
            first,
            done: 0,
            // Checked by parquet_footer: at least 0, at most what each
            // column chunk holds; still read a batch at a time, never
            // allocated by.
            n: usize::try_from(rg.metadata().num_rows()).unwrap_or(0),
        };
        let open = |i: usize| {
            let max_def = rg.metadata().column(i).column_descr().max_def_level();
            rg.get_column_reader(i)
                .map(|c| (ChunkReader::of(c), max_def))
                .map_err(|e| format!("{file}: column `{}`: {e}", names[i]))
        };
        let mut readers = Vec::with_capacity(plan.cols.len());
        for &(c, i) in &plan.cols {
            let (reader, max_def) = open(i)?;
            if !reader.reads(c.kind) {
                return Err(format!(
                    "{file}: column `{}` is {}, not {}",
                    c.name,
                    reader.physical(),
                    kind_name(c.kind)
                ));
            }
            readers.push((reader, max_def));
        }
        let mut step = plan.step.map(open).transpose()?;
        while group.done < group.n {
            let batch = (group.n - group.done).min(BATCH_ROWS);
            // The runs of rows read (true) and skipped: the whole batch,
            // or the rows whose `step` is null.
            let runs = match step.as_mut() {
                None => vec![(true, batch)],
                Some((c, max_def)) => {
                    let def = c.levels(batch, *max_def).map_err(|e| group.wrong("step", e))?;
                    runs_of(def.iter().map(|&d| d < *max_def))
                }
            };
            let mut cols = Vec::with_capacity(readers.len());
            for (&(c, _), (reader, max_def)) in plan.cols.iter().zip(readers.iter_mut()) {
                cols.push(reader.read_runs(&runs, *max_def).map_err(|e| group.wrong(c.name, e))?);
            }
            group.emit(&plan, &runs, cols, &mut each)?;
            group.done += batch;
        }
        first += group.n;
    }
    Ok(())
}

/// The row group being read: where it is, for errors and row numbers.
struct Group<'a> {
    file: &'a dyn std::fmt::Display,
    g: usize,
    /// The rows of the groups before.
    first: usize,
    /// The group's rows read so far (the batches before).
    done: usize,
    n: usize,
}

impl Group<'_> {
    /// An error of column `name` in this group's batch being read.
    fn wrong(&self, name: &str, e: Short) -> String {
        let e = match e {
            Short::End(k) => format!("its pages end after {} of the group's {} rows", self.done + k, self.n),
            Short::Other(e) => e,
        };
        format!("{}: row group {}: column `{name}`: {e}", self.file, self.g)
    }

    /// Each row read of the batch (its cells in `cols`, in [`Plan::cols`]'s
    /// order) made a [`FigureRow`] and given to `each`.
    fn emit(
        &self,
        plan: &Plan,
        runs: &[(bool, usize)],
        mut cols: Vec<Values>,
        each: &mut impl FnMut(FigureRow),
    ) -> Result<(), String> {
        let mut at = self.first + self.done;
        let mut k = 0;
        for &(read, len) in runs {
            if !read {
                at += len;
                continue;
            }
            for row in at..at + len {
                let mut r = FigureRow::default();
                for (&(c, _), v) in plan.cols.iter().zip(cols.iter_mut()) {
                    v.put(k, &c.set, &mut r)
                        .map_err(|what| format!("{}: row {row}: column `{}` {what}", self.file, c.name))?;
                }
                each(r);
                k += 1;
            }
            at += len;
        }
        Ok(())
    }
}

/// The runs of equal values of `take`, in order: (value, length).
fn runs_of(take: impl Iterator<Item = bool>) -> Vec<(bool, usize)> {
    let mut runs: Vec<(bool, usize)> = Vec::new();
    for t in take {
        match runs.last_mut() {
            Some((v, n)) if *v == t => *n += 1,
            _ => runs.push((t, 1)),
        }
    }
    runs
}

/// Rows read of each column at a time: what the reader holds, whatever a
/// row group's `num_rows` says.
const BATCH_ROWS: usize = 8192;

fn kind_name(k: Kind) -> &'static str {
    match k {
        Kind::Text => "text",
        Kind::Double => "a double",
        Kind::Int | Kind::Timestamp => "an INT64",
    }
}

/// The rows read of one column in a batch: each row's value, `None` for a
/// null.
enum Values {
    Text(Vec<Option<ByteArray>>),
    Double(Vec<Option<f64>>),
    Int(Vec<Option<i64>>),
}

impl Values {
    /// The value of the `k`th row read put into `r` by `set`; what is
    /// wrong with it otherwise.
    fn put(&mut self, k: usize, set: &Set<FigureRow>, r: &mut FigureRow) -> Result<(), &'static str> {
        let (ok, what) = match (self, set) {
            (Values::Text(v), Set::Text(set)) => {
                let text = v
                    .get_mut(k)
                    .and_then(Option::take)
                    .map(|b| String::from_utf8(b.data().to_vec()))
                    .transpose()
                    .map_err(|_| "is not UTF-8 text")?;
                (set(r, text), "is null, not text")
            }
            (Values::Double(v), Set::Double(set)) => (set(r, v.get(k).copied().flatten()), "is null, not a double"),
            (Values::Int(v), Set::Int(set)) => (set(r, v.get(k).copied().flatten()), "is null, not an INT64"),
            // The kind of each chunk is checked against its column's
            // before anything is read.
            _ => (false, "is not of its column's kind"),
        };
        if ok {
            Ok(())
        } else {
            Err(what)
        }
    }
}

/// Why a column chunk's rows could not be read.
enum Short {
    /// Its pages end after this many rows of the batch.
    End(usize),
    /// The parquet crate's error, or a type the tables do not use.
    Other(String),
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

    /// Whether it reads a column of kind `k` (an INT64 for both integers
    /// and timestamps).
    fn reads(&self, k: Kind) -> bool {
        matches!(
            (self, k),
            (ChunkReader::Text(_), Kind::Text)
                | (ChunkReader::Double(_), Kind::Double)
                | (ChunkReader::Int(_), Kind::Int | Kind::Timestamp)
        )
    }

    /// Its physical type, as Parquet names it.
    fn physical(&self) -> &'static str {
        match self {
            ChunkReader::Text(_) => "BYTE_ARRAY",
            ChunkReader::Double(_) => "DOUBLE",
            ChunkReader::Int(_) => "INT64",
            ChunkReader::Other(k) => k,
        }
    }

    /// The definition levels of the next `n` rows (all `max_def` for a
    /// required column); an error where its pages end before.
    fn levels(&mut self, n: usize, max_def: i16) -> Result<Vec<i16>, Short> {
        let mut def = Vec::with_capacity(n);
        let got = match self {
            ChunkReader::Text(r) => read_into(r, n, max_def, &mut def, &mut Vec::new()),
            ChunkReader::Double(r) => read_into(r, n, max_def, &mut def, &mut Vec::new()),
            ChunkReader::Int(r) => read_into(r, n, max_def, &mut def, &mut Vec::new()),
            ChunkReader::Other(k) => return Err(Short::Other(format!("is {k}, not text"))),
        }
        .map_err(|e| Short::Other(e.to_string()))?;
        if got < n {
            return Err(Short::End(got));
        }
        if max_def == 0 {
            def.resize(got, 0);
        }
        Ok(def)
    }

    /// The rows of each run `(true, n)` read, those of each `(false, n)`
    /// skipped; an error where its pages end before the runs do.
    fn read_runs(&mut self, runs: &[(bool, usize)], max_def: i16) -> Result<Values, Short> {
        Ok(match self {
            ChunkReader::Text(r) => Values::Text(read_runs(r, runs, max_def)?),
            ChunkReader::Double(r) => Values::Double(read_runs(r, runs, max_def)?),
            ChunkReader::Int(r) => Values::Int(read_runs(r, runs, max_def)?),
            ChunkReader::Other(k) => return Err(Short::Other(format!("is {k}"))),
        })
    }
}

/// [`ChunkReader::read_runs`] of one typed reader: the rows read, nulls in
/// place.
fn read_runs<T: parquet::data_type::DataType>(
    r: &mut parquet::column::reader::ColumnReaderImpl<T>,
    runs: &[(bool, usize)],
    max_def: i16,
) -> Result<Vec<Option<T::T>>, Short> {
    let mut values = Vec::new();
    let mut def = Vec::new();
    let mut passed = 0;
    for &(read, n) in runs {
        let got = if read {
            read_into(r, n, max_def, &mut def, &mut values)
        } else {
            r.skip_records(n)
        }
        .map_err(|e| Short::Other(e.to_string()))?;
        if got < n {
            return Err(Short::End(passed + got));
        }
        passed += n;
    }
    if max_def == 0 {
        return Ok(values.into_iter().map(Some).collect());
    }
    let mut present = values.into_iter();
    Ok(def
        .iter()
        .map(|&d| if d == max_def { present.next() } else { None })
        .collect())
}

/// The next `n` rows of one column chunk appended to `def` (where
/// `max_def` > 0) and `values` (those present), and how many (fewer where
/// its pages end).
fn read_into<T: parquet::data_type::DataType>(
    r: &mut parquet::column::reader::ColumnReaderImpl<T>,
    n: usize,
    max_def: i16,
    def: &mut Vec<i16>,
    values: &mut Vec<T::T>,
) -> parquet::errors::Result<usize> {
    let mut records = 0;
    while records < n {
        let levels = if max_def > 0 { Some(&mut *def) } else { None };
        let (got, _, _) = r.read_records(n - records, levels, None, values)?;
        if got == 0 {
            break;
        }
        records += got;
    }
    Ok(records)
}
