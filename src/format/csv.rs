//! The CSV forms of `kafka-consumer-groups --reset-offsets`: what `--export` writes and what
//! `--from-file` reads. No header; `topic,partition,offset` for one group, and
//! `group,topic,partition,offset` for several. Fields are quoted only when they must be (a group
//! id may hold a comma or a quote).

use std::collections::BTreeMap;

use crate::error::{Error, Result};

/// One offset of a CSV file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CsvOffset {
    /// `None` in the one-group form.
    pub group: Option<String>,
    pub topic: String,
    pub partition: i32,
    pub offset: i64,
    /// The line it was read from (1-based); 0 for rows not read from a file.
    pub line: u64,
}

/// Writes offsets in the one-group form (`with_group` false: the group is left out) or the
/// several-groups form.
pub fn encode(rows: &[CsvOffset], with_group: bool) -> Result<Vec<u8>> {
    let mut out = Vec::new();
    encode_to(&mut out, &mut rows.iter().cloned().map(Ok), with_group)?;
    Ok(out)
}

/// [`encode`] as the rows come; returns how many were written.
pub fn encode_to<W: std::io::Write>(
    out: W,
    rows: &mut dyn Iterator<Item = Result<CsvOffset>>,
    with_group: bool,
) -> Result<u64> {
    let mut w = csv::WriterBuilder::new()
        .has_headers(false)
        .terminator(csv::Terminator::Any(b'\n'))
        .from_writer(out);
    let fail = |e: csv::Error| Error::Internal(format!("encode CSV: {e}"));
    let mut n = 0;
    for r in rows {
        let r = r?;
        let (partition, offset) = (r.partition.to_string(), r.offset.to_string());
        if with_group {
            let group = r.group.as_deref().unwrap_or_default();
            w.write_record([group, &r.topic, &partition, &offset])
                .map_err(fail)?;
        } else {
            w.write_record([r.topic.as_str(), &partition, &offset])
                .map_err(fail)?;
        }
        n += 1;
    }
    w.flush()
        .map_err(|e| Error::Internal(format!("encode CSV: {e}")))?;
    Ok(n)
}

/// A decoded CSV file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CsvFile {
    /// True for the `group,topic,partition,offset` form.
    pub with_group: bool,
    pub rows: Vec<CsvOffset>,
}

/// Reads either form. Every line must have the same number of fields (3 or 4); partitions and
/// offsets are whole numbers, not negative; a (group, topic, partition) appears once. The first
/// problem is reported with its line number. `name` names the file in errors.
pub fn decode(name: &str, bytes: &[u8]) -> Result<CsvFile> {
    let mut reader = csv::ReaderBuilder::new()
        .has_headers(false)
        .flexible(true)
        .trim(csv::Trim::All)
        .from_reader(bytes);
    let bad = |line: u64, why: String| {
        Error::usage(format!(
            "{name} line {line}: {why}; nothing was imported. Expected kafka-consumer-groups CSV: topic,partition,offset or group,topic,partition,offset, no header"
        ))
    };
    let mut with_group = None;
    let mut rows = Vec::new();
    let mut seen: BTreeMap<(Option<String>, String, i32), u64> = BTreeMap::new();
    // The line a record starts on. The reader's own line count does not count blank lines, and
    // its record position can be just before the line ends that precede the record.
    let line_at = |byte: u64| {
        let mut end = usize::try_from(byte).unwrap_or(usize::MAX).min(bytes.len());
        while end < bytes.len() && matches!(bytes[end], b'\r' | b'\n') {
            end += 1;
        }
        bytes[..end].iter().filter(|b| **b == b'\n').count() as u64 + 1
    };
    for record in reader.records() {
        let record = record.map_err(|e| {
            let line = e.position().map(|p| line_at(p.byte())).unwrap_or(0);
            bad(line, format!("not valid CSV: {e}"))
        })?;
        let line = record.position().map(|p| line_at(p.byte())).unwrap_or(0);
        if record.iter().all(str::is_empty) {
            continue;
        }
        let four = shape(record.len(), &mut with_group).map_err(|why| bad(line, why))?;
        let (group, topic, partition, offset) =
            fields(&record, four).map_err(|why| bad(line, why))?;
        if let Some(first) = seen.insert((group.clone(), topic.clone(), partition), line) {
            return Err(bad(
                line,
                format!("{topic} partition {partition} is already on line {first}"),
            ));
        }
        rows.push(CsvOffset {
            group,
            topic,
            partition,
            offset,
            line,
        });
    }
    if rows.is_empty() {
        return Err(Error::usage(format!(
            "{name}: no offsets in the file; nothing was imported"
        )));
    }
    Ok(CsvFile {
        with_group: with_group.unwrap_or(false),
        rows,
    })
}

/// Whether a record of `len` fields has a group field; every record must have as many fields
/// as the first.
fn shape(len: usize, with_group: &mut Option<bool>) -> std::result::Result<bool, String> {
    let four = match len {
        3 => false,
        4 => true,
        n => return Err(format!("{n} fields, expected 3 or 4")),
    };
    match *with_group {
        None => *with_group = Some(four),
        Some(w) if w != four => {
            return Err(format!(
                "{len} fields, but the lines before have {}",
                if w { 4 } else { 3 }
            ))
        }
        Some(_) => {}
    }
    Ok(four)
}

/// The (group, topic, partition, offset) of one record; `four`: it starts with a group.
fn fields(
    record: &csv::StringRecord,
    four: bool,
) -> std::result::Result<(Option<String>, String, i32, i64), String> {
    let field = |i: usize| record.get(i + usize::from(four)).unwrap_or_default();
    let group = four.then(|| record.get(0).unwrap_or_default().to_string());
    if group.as_deref() == Some("") {
        return Err("the group is empty".into());
    }
    let topic = field(0).to_string();
    if topic.is_empty() {
        return Err("the topic is empty".into());
    }
    let partition: i32 = field(1)
        .parse()
        .ok()
        .filter(|p: &i32| *p >= 0)
        .ok_or_else(|| format!("partition {:?} is not a partition number", field(1)))?;
    let offset: i64 = field(2)
        .parse()
        .ok()
        .filter(|o: &i64| *o >= 0)
        .ok_or_else(|| {
            format!(
                "offset {:?} is not an offset (a whole number, 0 or more)",
                field(2)
            )
        })?;
    Ok((group, topic, partition, offset))
}

/// The offsets of each group: a one-group file needs exactly one `groups` entry (its group); a
/// several-groups file keeps only `groups` when any are given. Groups and rows come sorted.
pub fn by_group(file: &CsvFile, groups: &[String]) -> Result<BTreeMap<String, Vec<CsvOffset>>> {
    let mut out: BTreeMap<String, Vec<CsvOffset>> = BTreeMap::new();
    if !file.with_group {
        let [group] = groups else {
            return Err(Error::usage(format!(
                "the file has the one-group form (topic,partition,offset): name its group with exactly one --group ({} given)",
                groups.len()
            )));
        };
        out.insert(group.clone(), file.rows.clone());
    } else {
        for r in &file.rows {
            let g = r.group.clone().unwrap_or_default();
            if groups.is_empty() || groups.contains(&g) {
                out.entry(g).or_default().push(r.clone());
            }
        }
        if let Some(missing) = groups.iter().find(|g| !out.contains_key(*g)) {
            return Err(Error::NotFound {
                what: "group in the CSV file",
                name: missing.clone(),
                hint: "; the first column of each line names the group".into(),
            });
        }
    }
    for rows in out.values_mut() {
        rows.sort_by(|a, b| (&a.topic, a.partition).cmp(&(&b.topic, b.partition)));
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn fixture(name: &str) -> Vec<u8> {
        let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("fixtures/csv")
            .join(name);
        std::fs::read(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
    }

    fn offset(group: Option<&str>, topic: &str, partition: i32, offset: i64) -> CsvOffset {
        CsvOffset {
            group: group.map(String::from),
            topic: topic.into(),
            partition,
            offset,
            line: 0,
        }
    }

    #[test]
    fn files_written_by_kafka_consumer_groups_are_read() {
        // (fixture, with group, (group, topic, partition, offset) rows)
        type Rows = Vec<(Option<&'static str>, &'static str, i32, i64)>;
        let cases: [(&str, bool, Rows); 2] = [
            (
                "one-group.csv",
                false,
                vec![
                    (None, "orders", 0, 17),
                    (None, "orders", 2, 1234567890123),
                    (None, "orders", 1, 0),
                ],
            ),
            (
                "several-groups.csv",
                true,
                vec![
                    (Some("odd,group \"name\""), "invoices", 0, 7),
                    (Some("billing"), "invoices", 0, 5),
                    (Some("billing"), "invoices", 2, 0),
                    (Some("billing"), "invoices", 1, 6),
                ],
            ),
        ];
        for (name, with_group, want) in cases {
            let file = decode(name, &fixture(name)).unwrap_or_else(|e| panic!("{name}: {e}"));
            assert_eq!(file.with_group, with_group, "{name}");
            let got: Vec<_> = file
                .rows
                .iter()
                .map(|r| (r.group.as_deref(), r.topic.as_str(), r.partition, r.offset))
                .collect();
            assert_eq!(got, want, "{name}");
        }
    }

    #[test]
    fn both_forms_round_trip_byte_for_byte() {
        for name in ["one-group.csv", "several-groups.csv"] {
            let bytes = fixture(name);
            let file = decode(name, &bytes).unwrap();
            let again = encode(&file.rows, file.with_group).unwrap();
            // The tool ends its output with a blank line; we do not.
            let text = String::from_utf8(bytes).unwrap();
            assert_eq!(
                String::from_utf8(again).unwrap(),
                format!("{}\n", text.trim_end()),
                "{name}"
            );
        }
        let rows = [offset(Some("g"), "t", 0, 1)];
        assert_eq!(encode(&rows, false).unwrap(), b"t,0,1\n");
        assert_eq!(encode(&rows, true).unwrap(), b"g,t,0,1\n");
    }

    #[test]
    fn malformed_lines_are_refused_with_their_number() {
        // (content, line in the message, words in the message)
        let cases = [
            ("t,0,1\nt,1\n", 2, "2 fields"),
            ("t,0,1\ng,t,1,1\n", 2, "lines before have 3"),
            ("t,zero,1\n", 1, "partition \"zero\""),
            ("t,-1,1\n", 1, "partition \"-1\""),
            ("t,0,1\nt,1,-5\n", 2, "offset \"-5\""),
            ("t,0,1\nt,1,1.5\n", 2, "offset \"1.5\""),
            ("t,0,1\n\nt,0,2\n", 3, "already on line 1"),
            (",0,1\n", 1, "topic is empty"),
            (",t,0,1\n", 1, "group is empty"),
            ("a,b,c,d,e\n", 1, "5 fields"),
        ];
        for (content, line, words) in cases {
            let err = decode("f.csv", content.as_bytes()).unwrap_err().to_string();
            assert!(
                err.contains(&format!("f.csv line {line}:")) && err.contains(words),
                "{content:?}: {err}"
            );
            assert!(err.contains("nothing was imported"), "{err}");
        }
        let err = decode("f.csv", b"t,0,1\nt\xff,1,2\n")
            .unwrap_err()
            .to_string();
        assert!(err.contains("f.csv line 2: not valid CSV"), "{err}");
        let err = decode("f.csv", b"\n\n").unwrap_err().to_string();
        assert!(err.contains("no offsets"), "{err}");
    }

    #[test]
    fn rows_are_split_by_group() {
        let one = decode("one.csv", &fixture("one-group.csv")).unwrap();
        let err = by_group(&one, &[]).unwrap_err().to_string();
        assert!(err.contains("exactly one --group"), "{err}");
        let g = by_group(&one, &["orders-app".into()]).unwrap();
        let parts: Vec<i32> = g["orders-app"].iter().map(|r| r.partition).collect();
        assert_eq!(parts, [0, 1, 2]);

        let several = decode("s.csv", &fixture("several-groups.csv")).unwrap();
        let all = by_group(&several, &[]).unwrap();
        assert_eq!(
            all.keys().collect::<Vec<_>>(),
            ["billing", "odd,group \"name\""]
        );
        assert_eq!(all["billing"].len(), 3);
        let only = by_group(&several, &["billing".into()]).unwrap();
        assert_eq!(only.len(), 1);
        let err = by_group(&several, &["nope".into()]).unwrap_err();
        assert_eq!(err.exit_code(), crate::error::exit::NOT_FOUND);
    }

    #[test]
    fn spaces_and_windows_line_ends_are_tolerated() {
        let file = decode("f.csv", b" t , 0 , 5 \r\nt,1,6\r\n").unwrap();
        assert_eq!(
            file.rows
                .iter()
                .map(|r| (r.topic.as_str(), r.partition, r.offset, r.line))
                .collect::<Vec<_>>(),
            vec![("t", 0, 5, 1), ("t", 1, 6, 2)]
        );
    }
}
