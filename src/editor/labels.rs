//! Numbers and counts as the panel and dialogs print them.

/// `count` and `noun`, plural unless `count` is 1: `"1 edited chunk
/// column"`, `"3 edited chunk columns"`.
pub fn count_noun(count: usize, noun: &str) -> String {
    if count == 1 {
        format!("1 {noun}")
    } else {
        format!("{count} {noun}s")
    }
}

/// `n` with its digits in groups of three, e.g. `1 048 576`.
pub fn group_digits(n: u64) -> String {
    let digits = n.to_string();
    let mut out = String::new();
    for (i, ch) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i).is_multiple_of(3) {
            out.push(' ');
        }
        out.push(ch);
    }
    out
}
