//! Numbers as error messages print them: a value someone typed as 1e300
//! is shown as `1.000e300`, never as 300 digits.

/// `value` as a message prints it: plainly when it is of a reasonable
/// size, else in scientific notation with 4 significant digits.
pub fn short_number(value: f64) -> String {
    if value.is_finite() && value != 0.0 && !(1e-4..1e7).contains(&value.abs()) {
        format!("{value:.3e}")
    } else {
        format!("{value}")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn huge_and_tiny_values_print_short_and_ordinary_ones_plainly() {
        assert_eq!(short_number(1e300), "1.000e300");
        assert_eq!(short_number(-2.5e-9), "-2.500e-9");
        assert_eq!(short_number(24.0), "24");
        assert_eq!(short_number(0.5), "0.5");
        assert_eq!(short_number(f64::NAN), "NaN");
    }
}
