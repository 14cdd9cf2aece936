//! The mutations behind the hostile inputs: edits of bytes (flip, set, insert, delete, truncate,
//! duplicate), structural changes of JSON documents (wrong types, odd and huge numbers, deep
//! nesting, missing and unknown fields), and the input kinds a target draws from.

use proptest::collection::vec;
use proptest::prelude::*;
use proptest::sample::select;
use serde_json::Value;

/// One edit of a byte string; positions wrap around the current length.
#[derive(Debug, Clone)]
pub(super) enum Edit {
    Flip {
        at: usize,
        bit: u8,
    },
    Set {
        at: usize,
        byte: u8,
    },
    Insert {
        at: usize,
        chunk: &'static str,
    },
    Delete {
        at: usize,
        len: usize,
    },
    Truncate {
        keep: usize,
    },
    /// Copies `len` bytes from `from` to `to`.
    Duplicate {
        from: usize,
        to: usize,
        len: usize,
    },
}

pub(super) fn edit(dict: &'static [&'static str]) -> impl Strategy<Value = Edit> {
    prop_oneof![
        (any::<usize>(), 0u8..8).prop_map(|(at, bit)| Edit::Flip { at, bit }),
        (any::<usize>(), any::<u8>()).prop_map(|(at, byte)| Edit::Set { at, byte }),
        (any::<usize>(), select(dict)).prop_map(|(at, chunk)| Edit::Insert { at, chunk }),
        (any::<usize>(), 1usize..32).prop_map(|(at, len)| Edit::Delete { at, len }),
        any::<usize>().prop_map(|keep| Edit::Truncate { keep }),
        (any::<usize>(), any::<usize>(), 1usize..64).prop_map(|(from, to, len)| Edit::Duplicate {
            from,
            to,
            len
        }),
    ]
}

pub(super) fn apply_edits(seed: &[u8], edits: &[Edit]) -> Vec<u8> {
    let mut b = seed.to_vec();
    for e in edits {
        let n = b.len();
        let at = |i: usize| if n == 0 { 0 } else { i % n };
        match *e {
            Edit::Flip { at: i, bit } if n > 0 => b[at(i)] ^= 1 << bit,
            Edit::Set { at: i, byte } if n > 0 => b[at(i)] = byte,
            Edit::Insert { at: i, chunk } => {
                let i = if n == 0 { 0 } else { i % (n + 1) };
                b.splice(i..i, chunk.bytes());
            }
            Edit::Delete { at: i, len } if n > 0 => {
                let i = at(i);
                b.drain(i..(i + len).min(n));
            }
            Edit::Truncate { keep } => b.truncate(keep % (n + 1)),
            Edit::Duplicate { from, to, len } if n > 0 => {
                let from = at(from);
                let chunk = b[from..(from + len).min(n)].to_vec();
                let to = to % (n + 1);
                b.splice(to..to, chunk);
            }
            _ => {}
        }
    }
    b
}

// ---------------------------------------------------------------------------------------------
// Structural JSON mutations

/// What replaces a JSON node.
#[derive(Debug, Clone)]
pub(super) enum Node {
    Null,
    Bool(bool),
    Int(i64),
    Text(String),
    EmptyArray,
    EmptyObject,
    /// A literal serde_json's `Value` cannot hold: huge or odd numbers, bad escapes.
    Raw(&'static str),
    /// Arrays or objects nested this deep.
    Nested {
        depth: usize,
        object: bool,
    },
}

const RAW: &[&str] = &[
    "18446744073709551616",
    "-9223372036854775809",
    "9223372036854775807",
    "-9223372036854775808",
    "2147483648",
    "-2147483649",
    "4294967296",
    "1e400",
    "-1e400",
    "1.5",
    "-0",
    "1E2",
    "\"\\ud800\"",
    "\"\\u0000\"",
    "\"+262143-12-31T23:59:59Z\"",
    "\"9999-12-31T23:59:60.999999999Z\"",
    "\"1970-01-01T00:00:00+24:00\"",
    "\"2.0\"",
    "\"1.9999999999999999999999\"",
    "\"\"",
];

pub(super) fn node() -> impl Strategy<Value = Node> {
    prop_oneof![
        Just(Node::Null),
        any::<bool>().prop_map(Node::Bool),
        any::<i64>().prop_map(Node::Int),
        ".{0,12}".prop_map(Node::Text),
        Just(Node::EmptyArray),
        Just(Node::EmptyObject),
        select(RAW).prop_map(Node::Raw),
        (
            select(&[2usize, 127, 128, 129, 1_000, 100_000][..]),
            any::<bool>()
        )
            .prop_map(|(depth, object)| Node::Nested { depth, object }),
    ]
}

impl Node {
    /// The JSON text of the node.
    pub(super) fn text(&self) -> String {
        match self {
            Node::Null => "null".into(),
            Node::Bool(b) => b.to_string(),
            Node::Int(i) => i.to_string(),
            Node::Text(s) => Value::from(s.as_str()).to_string(),
            Node::EmptyArray => "[]".into(),
            Node::EmptyObject => "{}".into(),
            Node::Raw(raw) => (*raw).into(),
            Node::Nested { depth, object } => {
                let (open, close) = if *object {
                    ("{\"a\":", "}")
                } else {
                    ("[", "]")
                };
                format!("{}1{}", open.repeat(*depth), close.repeat(*depth))
            }
        }
    }
}

/// One change of a JSON document at the node that `path` walks to (each step picks a member or
/// element, modulo the container's size).
#[derive(Debug, Clone)]
pub(super) enum Change {
    Replace {
        path: Vec<usize>,
        with: Node,
    },
    Remove {
        path: Vec<usize>,
    },
    AddField {
        path: Vec<usize>,
        key: String,
        with: Node,
    },
}

pub(super) fn change() -> impl Strategy<Value = Change> {
    let path = || vec(any::<usize>(), 0..6);
    prop_oneof![
        3 => (path(), node()).prop_map(|(path, with)| Change::Replace { path, with }),
        2 => path().prop_map(|path| Change::Remove { path }),
        1 => (path(), "[a-z_]{1,12}", node()).prop_map(|(path, key, with)| Change::AddField { path, key, with }),
    ]
}

/// Placeholder strings put into the tree and then swapped for the raw JSON text of a node.
fn placeholder(i: usize) -> String {
    format!("@@hostile-node-{i}@@")
}

/// Walks `path` into `value` and applies `f` to the container that holds the chosen node, with the
/// chosen member key or element index.
fn at_path(value: &mut Value, path: &[usize], f: &mut dyn FnMut(&mut Value, Option<&str>)) {
    let Some((&step, rest)) = path.split_first() else {
        return f(value, None);
    };
    let descend = |child: &Value, rest: &[usize]| {
        !rest.is_empty() && matches!(child, Value::Object(m) if !m.is_empty())
            || !rest.is_empty() && matches!(child, Value::Array(a) if !a.is_empty())
    };
    match value {
        Value::Object(map) if !map.is_empty() => {
            let key = map.keys().nth(step % map.len()).cloned().unwrap();
            if descend(&map[&key], rest) {
                return at_path(map.get_mut(&key).unwrap(), rest, f);
            }
            f(value, Some(&key));
        }
        Value::Array(items) if !items.is_empty() => {
            let i = step % items.len();
            if descend(&items[i], rest) {
                return at_path(&mut items[i], rest, f);
            }
            f(value, Some(&i.to_string()));
        }
        _ => f(value, None),
    }
}

/// The Parquet seed's rows with key-value metadata entry `entry` changed as JSON, or left out.
pub(super) fn parquet_with_changed_metadata(
    entry: usize,
    changes: &[Change],
    drop: bool,
) -> Vec<u8> {
    let mut kv = super::seeds::parquet_parts().1.clone();
    let i = entry % kv.len();
    if drop {
        kv.remove(i);
    } else {
        let changed = apply_changes(&kv[i].1, changes);
        kv[i].1 = String::from_utf8_lossy(&changed).into_owned();
    }
    super::seeds::parquet_with_kv(&kv)
}

pub(super) fn apply_changes(seed: &str, changes: &[Change]) -> Vec<u8> {
    let mut doc: Value = serde_json::from_str(seed).unwrap();
    let mut raw = Vec::new();
    for change in changes {
        let mut put = |node: &Node| {
            raw.push(node.text());
            Value::from(placeholder(raw.len() - 1))
        };
        at_path(
            &mut doc,
            match change {
                Change::Replace { path, .. }
                | Change::Remove { path }
                | Change::AddField { path, .. } => path,
            },
            &mut |container, member| match (change, container, member) {
                (Change::Replace { with, .. }, Value::Object(m), Some(k)) => {
                    m.insert(k.to_string(), put(with));
                }
                (Change::Replace { with, .. }, Value::Array(a), Some(i)) => {
                    a[i.parse::<usize>().unwrap()] = put(with);
                }
                (Change::Replace { with, .. }, node, None) => *node = put(with),
                (Change::Remove { .. }, Value::Object(m), Some(k)) => {
                    m.remove(k);
                }
                (Change::Remove { .. }, Value::Array(a), Some(i)) => {
                    a.remove(i.parse::<usize>().unwrap());
                }
                (Change::AddField { key, with, .. }, Value::Object(m), _) => {
                    m.insert(key.clone(), put(with));
                }
                _ => {}
            },
        );
    }
    let mut text = doc.to_string();
    for (i, node) in raw.iter().enumerate() {
        text = text.replace(&format!("\"{}\"", placeholder(i)), node);
    }
    text.into_bytes()
}

// ---------------------------------------------------------------------------------------------
// Inputs

/// One hostile input: random bytes, an edited seed, or a structurally changed JSON seed.
#[derive(Debug, Clone)]
pub(super) enum Input {
    Bytes(Vec<u8>),
    Text(String),
    Edited {
        seed: usize,
        edits: Vec<Edit>,
    },
    Changed {
        changes: Vec<Change>,
        edits: Vec<Edit>,
    },
    /// Parquet magic around random bytes and a random footer, so the footer decoder is reached.
    Framed {
        body: Vec<u8>,
        footer: Vec<u8>,
    },
    /// The Parquet seed's rows with one key-value metadata entry changed as JSON, or left out.
    Metadata {
        entry: usize,
        changes: Vec<Change>,
        drop: bool,
    },
}

impl Input {
    pub(super) fn render(&self, seeds: &[&[u8]]) -> Vec<u8> {
        match self {
            Input::Bytes(b) => b.clone(),
            Input::Text(t) => t.clone().into_bytes(),
            Input::Edited { seed, edits } => apply_edits(seeds[seed % seeds.len()], edits),
            Input::Changed { changes, edits } => {
                let seed = std::str::from_utf8(seeds[0]).unwrap();
                apply_edits(&apply_changes(seed, changes), edits)
            }
            Input::Framed { body, footer } => {
                let mut out = b"PAR1".to_vec();
                out.extend_from_slice(body);
                out.extend_from_slice(footer);
                out.extend_from_slice(&(footer.len() as u32).to_le_bytes());
                out.extend_from_slice(b"PAR1");
                out
            }
            Input::Metadata {
                entry,
                changes,
                drop,
            } => parquet_with_changed_metadata(*entry, changes, *drop),
        }
    }
}

/// What a byte input draws from besides random bytes and edited seeds.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Shape {
    /// Structural changes of the first seed, which is a JSON document.
    Json,
    /// Random bytes in Parquet's magic and footer frame.
    Parquet,
    /// Nothing else.
    Text,
}

pub(super) fn bytes_input(
    seeds: usize,
    dict: &'static [&'static str],
    shape: Shape,
    max: usize,
) -> impl Strategy<Value = Input> {
    let edits = move || vec(edit(dict), 1..8);
    let changed = (vec(change(), 1..4), vec(edit(dict), 0..2))
        .prop_map(|(changes, edits)| Input::Changed { changes, edits });
    let framed = (vec(any::<u8>(), 0..256), vec(any::<u8>(), 0..256))
        .prop_map(|(body, footer)| Input::Framed { body, footer });
    prop_oneof![
        1 => vec(any::<u8>(), 0..max).prop_map(Input::Bytes),
        1 => vec(select(dict), 0..16).prop_map(|parts| Input::Text(parts.concat())),
        3 => (0..seeds, edits()).prop_map(|(seed, edits)| Input::Edited { seed, edits }),
        if shape == Shape::Json { 3 } else { 0 } => changed,
        if shape == Shape::Parquet { 1 } else { 0 } => framed,
    ]
}

/// Inputs for the text parsers: random strings, runs of parser-relevant pieces, and edited seeds
/// (invalid UTF-8 after an edit becomes U+FFFD, as a lossy reader would see it).
pub(super) fn text_input(
    seeds: usize,
    dict: &'static [&'static str],
) -> impl Strategy<Value = Input> {
    prop_oneof![
        1 => any::<String>().prop_map(Input::Text),
        1 => vec(select(dict), 0..12).prop_map(|parts| Input::Text(parts.concat())),
        3 => (0..seeds, vec(edit(dict), 1..6)).prop_map(|(seed, edits)| Input::Edited { seed, edits }),
    ]
}

pub(super) fn render_text(input: &Input, seeds: &[&str]) -> String {
    let seeds: Vec<&[u8]> = seeds.iter().map(|s| s.as_bytes()).collect();
    String::from_utf8_lossy(&input.render(&seeds)).into_owned()
}
