//! The field names a serde struct accepts, read from its derived
//! `Deserialize`: every entry struct's allow-list comes from here, so a
//! tool's fields are written once, in its struct.

use std::fmt;

use serde::de::{self, DeserializeOwned, Deserializer, Visitor};

/// The JSON field names `T`'s derived `Deserialize` accepts, in declaration
/// order. `T` must be a struct with named fields and no `#[serde(flatten)]`
/// (a derived `Deserialize` of such a struct asks for
/// `deserialize_struct` with its field names); for anything else the list
/// is empty.
pub fn fields_of<T: DeserializeOwned>() -> &'static [&'static str] {
    let mut fields: &'static [&'static str] = &[];
    // The probe always stops `T` with an error once it has its field names.
    let _ = T::deserialize(FieldProbe {
        fields: &mut fields,
    });
    fields
}

/// A deserializer that only records the field names a struct asks for.
struct FieldProbe<'a> {
    fields: &'a mut &'static [&'static str],
}

/// The probe's error: it has the names (or there are none to have).
#[derive(Debug)]
struct Stop;

impl fmt::Display for Stop {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("field probe stops here")
    }
}

impl std::error::Error for Stop {}

impl de::Error for Stop {
    fn custom<M: fmt::Display>(_: M) -> Self {
        Stop
    }
}

impl<'de> Deserializer<'de> for FieldProbe<'_> {
    type Error = Stop;

    fn deserialize_any<V: Visitor<'de>>(self, _: V) -> Result<V::Value, Stop> {
        Err(Stop)
    }

    fn deserialize_struct<V: Visitor<'de>>(
        self,
        _name: &'static str,
        fields: &'static [&'static str],
        _: V,
    ) -> Result<V::Value, Stop> {
        *self.fields = fields;
        Err(Stop)
    }

    serde::forward_to_deserialize_any! {
        bool i8 i16 i32 i64 i128 u8 u16 u32 u64 u128 f32 f64 char str string
        bytes byte_buf option unit unit_struct newtype_struct seq tuple
        tuple_struct map enum identifier ignored_any
    }
}

#[cfg(test)]
mod tests {
    use super::fields_of;

    #[derive(serde::Deserialize)]
    #[serde(deny_unknown_fields)]
    #[allow(dead_code)]
    struct Probe {
        centre: Option<[f64; 3]>,
        #[serde(default)]
        plane_lock: bool,
        #[serde(rename = "radius")]
        radius_cells: f32,
    }

    #[derive(serde::Deserialize)]
    #[serde(deny_unknown_fields)]
    struct Empty {}

    #[test]
    fn names_come_from_the_struct_in_order() {
        assert_eq!(fields_of::<Probe>(), ["centre", "plane_lock", "radius"]);
        assert!(fields_of::<Empty>().is_empty());
        assert!(fields_of::<u32>().is_empty());
    }
}
