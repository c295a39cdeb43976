//! One entry of `strokes` as written: its text in the file, read twice.
//! First for its keys, `frame` and `tool` (every other value skipped, so
//! nothing large is held before the keys are checked, but noted when it is
//! `null` or `false`, see [`Blank`]), then into the struct of the tool it
//! names. serde's errors keep their line and column in the file.

use std::collections::BTreeSet;
use std::fmt;

use serde::Deserialize;
use serde::de::value::StringDeserializer;
use serde::de::{
    self, DeserializeOwned, DeserializeSeed, Deserializer, IgnoredAny, IntoDeserializer, MapAccess,
    SeqAccess, Visitor,
};
use serde_json::value::RawValue;

/// The keys every entry may hold besides its tool's fields.
const SHARED_KEYS: [&str; 2] = ["frame", "tool"];

/// An entry's text and where it starts in the file.
pub(super) struct RawEntry<'a> {
    text: &'a str,
    /// Line (from 1) of the entry's first character in the file.
    start_line: usize,
    /// Bytes between the start of that line and the entry.
    start_column: usize,
}

/// What the first read of an entry finds.
#[derive(Debug)]
pub(super) struct EntryHeader {
    /// `frame`.
    pub frame: u32,
    /// `tool`, when given.
    pub tool: Option<String>,
    /// Every other key, in file order, and whether its value is blank.
    pub keys: Vec<(String, Blank)>,
}

/// Whether a value is `null` or `false`, which a field whose default it is
/// reads as "not given" (a tool ignores such a field of another tool's).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Blank {
    /// `null`.
    Null,
    /// `false`.
    False,
    /// Any other value.
    No,
}

impl Blank {
    /// The blank value as JSON; `None` for [`Blank::No`].
    pub(super) fn to_json(self) -> Option<serde_json::Value> {
        match self {
            Blank::Null => Some(serde_json::Value::Null),
            Blank::False => Some(serde_json::Value::Bool(false)),
            Blank::No => None,
        }
    }
}

impl EntryHeader {
    /// True when `key` is given a value other than `null`.
    pub(super) fn given(&self, key: &str) -> bool {
        self.keys.iter().any(|(k, b)| k == key && *b != Blank::Null)
    }
}

impl<'a> RawEntry<'a> {
    /// The entry `raw`, a value borrowed from `file_text` (the whole file).
    pub(super) fn new(file_text: &'a str, raw: &'a RawValue) -> RawEntry<'a> {
        let text = raw.get();
        // A value borrowed from the file's text lies inside it; its offset
        // only places error positions, so anything else reads as line 1.
        let offset = (text.as_ptr() as usize)
            .checked_sub(file_text.as_ptr() as usize)
            .filter(|&o| o <= file_text.len())
            .unwrap_or(0);
        let before = file_text.as_bytes().get(..offset).unwrap_or_default();
        let line_start = before
            .iter()
            .rposition(|&b| b == b'\n')
            .map_or(0, |i| i + 1);
        RawEntry {
            text,
            start_line: 1 + before.iter().filter(|&&b| b == b'\n').count(),
            start_column: offset - line_start,
        }
    }

    /// The entry's `frame`, `tool` and other keys.
    ///
    /// # Errors
    /// serde's message, placed in the file: not an object, a missing or
    /// non-integer `frame`, a `tool` that is not a string, a key given twice.
    pub(super) fn header(&self) -> Result<EntryHeader, String> {
        let mut de = serde_json::Deserializer::from_str(self.text);
        de.deserialize_map(HeaderVisitor)
            .and_then(|h| de.end().map(|()| h))
            .map_err(|e| self.locate(&e))
    }

    /// The entry read into `T`, without `frame`, `tool` and the keys in
    /// `skip`.
    ///
    /// # Errors
    /// serde's message, placed in the file (a value of the wrong type, or a
    /// key `T` does not have).
    pub(super) fn read<T: DeserializeOwned>(&self, skip: &[&str]) -> Result<T, String> {
        let mut de = serde_json::Deserializer::from_str(self.text);
        T::deserialize(WithoutKeys { de: &mut de, skip })
            .and_then(|v| de.end().map(|()| v))
            .map_err(|e| self.locate(&e))
    }

    /// serde's message for an error in the entry's text, with the line and
    /// column it would have had in a read of the whole file.
    fn locate(&self, e: &serde_json::Error) -> String {
        let full = e.to_string();
        if e.line() == 0 {
            return full;
        }
        let suffix = format!(" at line {} column {}", e.line(), e.column());
        let message = full.strip_suffix(&suffix).unwrap_or(&full);
        let (line, column) = if e.line() == 1 {
            (self.start_line, self.start_column + e.column())
        } else {
            (self.start_line + e.line() - 1, e.column())
        };
        format!("{message} at line {line} column {column}")
    }
}

/// Reads an entry's keys, `frame` and `tool`, skipping other values.
struct HeaderVisitor;

impl<'de> Visitor<'de> for HeaderVisitor {
    type Value = EntryHeader;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a script entry (a JSON object)")
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<EntryHeader, A::Error> {
        let (mut frame, mut tool) = (None, None);
        let mut keys = Vec::new();
        let mut seen = BTreeSet::new();
        while let Some(key) = map.next_key::<String>()? {
            if !seen.insert(key.clone()) {
                return Err(de::Error::custom(format_args!("duplicate field `{key}`")));
            }
            match key.as_str() {
                "frame" => frame = Some(map.next_value::<u32>()?),
                "tool" => tool = Some(map.next_value::<String>()?),
                _ => {
                    let blank = map.next_value::<Blank>()?;
                    keys.push((key, blank));
                }
            }
        }
        let frame = frame.ok_or_else(|| de::Error::missing_field("frame"))?;
        Ok(EntryHeader { frame, tool, keys })
    }
}

impl<'de> Deserialize<'de> for Blank {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Blank, D::Error> {
        d.deserialize_any(BlankVisitor)
    }
}

/// Tells `null` and `false` from other values, skipping their content.
struct BlankVisitor;

impl<'de> Visitor<'de> for BlankVisitor {
    type Value = Blank;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("any value")
    }

    fn visit_unit<E: de::Error>(self) -> Result<Blank, E> {
        Ok(Blank::Null)
    }

    fn visit_none<E: de::Error>(self) -> Result<Blank, E> {
        Ok(Blank::Null)
    }

    fn visit_bool<E: de::Error>(self, v: bool) -> Result<Blank, E> {
        Ok(if v { Blank::No } else { Blank::False })
    }

    fn visit_i64<E: de::Error>(self, _: i64) -> Result<Blank, E> {
        Ok(Blank::No)
    }

    fn visit_u64<E: de::Error>(self, _: u64) -> Result<Blank, E> {
        Ok(Blank::No)
    }

    fn visit_f64<E: de::Error>(self, _: f64) -> Result<Blank, E> {
        Ok(Blank::No)
    }

    fn visit_str<E: de::Error>(self, _: &str) -> Result<Blank, E> {
        Ok(Blank::No)
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Blank, A::Error> {
        while seq.next_element::<IgnoredAny>()?.is_some() {}
        Ok(Blank::No)
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Blank, A::Error> {
        while map.next_entry::<IgnoredAny, IgnoredAny>()?.is_some() {}
        Ok(Blank::No)
    }
}

/// A deserializer for a JSON object that leaves out [`SHARED_KEYS`] and
/// the keys in `skip`, so a tool's struct (with `deny_unknown_fields`) sees
/// only its own fields.
struct WithoutKeys<'s, D> {
    de: D,
    skip: &'s [&'s str],
}

impl<'de, D: Deserializer<'de>> Deserializer<'de> for WithoutKeys<'_, D> {
    type Error = D::Error;

    fn deserialize_any<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, D::Error> {
        self.de.deserialize_map(SkipVisitor {
            visitor,
            skip: self.skip,
        })
    }

    serde::forward_to_deserialize_any! {
        bool i8 i16 i32 i64 i128 u8 u16 u32 u64 u128 f32 f64 char str string
        bytes byte_buf option unit unit_struct newtype_struct seq tuple
        tuple_struct map struct enum identifier ignored_any
    }
}

/// Hands its visitor the object's entries without the skipped keys.
struct SkipVisitor<'s, V> {
    visitor: V,
    skip: &'s [&'s str],
}

impl<'de, V: Visitor<'de>> Visitor<'de> for SkipVisitor<'_, V> {
    type Value = V::Value;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.visitor.expecting(f)
    }

    fn visit_map<A: MapAccess<'de>>(self, map: A) -> Result<V::Value, A::Error> {
        self.visitor.visit_map(SkipKeys {
            map,
            skip: self.skip,
        })
    }
}

/// A map whose [`SHARED_KEYS`] and skipped keys are left out.
struct SkipKeys<'s, A> {
    map: A,
    skip: &'s [&'s str],
}

impl<'de, A: MapAccess<'de>> MapAccess<'de> for SkipKeys<'_, A> {
    type Error = A::Error;

    fn next_key_seed<K: DeserializeSeed<'de>>(
        &mut self,
        seed: K,
    ) -> Result<Option<K::Value>, A::Error> {
        while let Some(key) = self.map.next_key::<String>()? {
            if SHARED_KEYS.contains(&key.as_str()) || self.skip.contains(&key.as_str()) {
                self.map.next_value::<IgnoredAny>()?;
            } else {
                let key: StringDeserializer<A::Error> = key.into_deserializer();
                return seed.deserialize(key).map(Some);
            }
        }
        Ok(None)
    }

    fn next_value_seed<S: DeserializeSeed<'de>>(&mut self, seed: S) -> Result<S::Value, A::Error> {
        self.map.next_value_seed(seed)
    }
}
