//! Shared machinery for rendering text from decided facts: `{slot}` templates, number
//! spellings (digits, thousands separators, legal "forty-five (45)"), money, lists, and the
//! small shared vocabulary (cities, currencies) more than one family uses.
use inferbench_stats::rng::SplitMix64;
use std::collections::BTreeMap;

/// Slot values for a template. A missing slot is a programming error and panics, so a
/// typo in a template fails every test instead of leaking `{slot}` into the dataset.
#[derive(Debug, Clone, Default)]
pub struct Vars(BTreeMap<&'static str, String>);

impl Vars {
    pub fn new() -> Self {
        Vars::default()
    }

    pub fn set(&mut self, key: &'static str, value: impl Into<String>) -> &mut Self {
        self.0.insert(key, value.into());
        self
    }

    pub fn with(mut self, key: &'static str, value: impl Into<String>) -> Self {
        self.set(key, value);
        self
    }

    pub fn get(&self, key: &str) -> &str {
        self.0.get(key).unwrap_or_else(|| panic!("template slot `{key}` is not set"))
    }

    /// Replaces every `{slot}` in `template`. `{^slot}` capitalises the value's first letter.
    pub fn fill(&self, template: &str) -> String {
        let mut out = String::with_capacity(template.len() + 32);
        let mut rest = template;
        while let Some(open) = rest.find('{') {
            out.push_str(&rest[..open]);
            let close = rest[open..].find('}').unwrap_or_else(|| panic!("unclosed slot in `{template}`")) + open;
            let name = &rest[open + 1..close];
            match name.strip_prefix('^') {
                Some(n) => out.push_str(&cap(self.get(n))),
                None => out.push_str(self.get(name)),
            }
            rest = &rest[close + 1..];
        }
        out.push_str(rest);
        out
    }

    /// One of `templates`, filled.
    pub fn pick(&self, rng: &mut SplitMix64, templates: &[&str]) -> String {
        self.fill(*rng.pick(templates))
    }
}

/// First letter upper-cased.
pub fn cap(s: &str) -> String {
    let mut chars = s.chars();
    match chars.next() {
        Some(c) => c.to_uppercase().collect::<String>() + chars.as_str(),
        None => String::new(),
    }
}

/// `a`, `a and b`, `a, b and c`.
pub fn and_list(items: &[String]) -> String {
    match items {
        [] => String::new(),
        [a] => a.clone(),
        [rest @ .., last] => format!("{} and {last}", rest.join(", ")),
    }
}

const ONES: [&str; 20] = [
    "zero",
    "one",
    "two",
    "three",
    "four",
    "five",
    "six",
    "seven",
    "eight",
    "nine",
    "ten",
    "eleven",
    "twelve",
    "thirteen",
    "fourteen",
    "fifteen",
    "sixteen",
    "seventeen",
    "eighteen",
    "nineteen",
];
const TENS: [&str; 10] = ["", "", "twenty", "thirty", "forty", "fifty", "sixty", "seventy", "eighty", "ninety"];

/// English words for 0..=999 ("one hundred twenty", as US contracts write it).
pub fn words(n: u32) -> String {
    assert!(n < 1000, "words({n})");
    if n < 20 {
        return ONES[n as usize].to_string();
    }
    if n < 100 {
        let (t, o) = (n / 10, n % 10);
        return if o == 0 {
            TENS[t as usize].to_string()
        } else {
            format!("{}-{}", TENS[t as usize], ONES[o as usize])
        };
    }
    let (h, r) = (n / 100, n % 100);
    if r == 0 {
        format!("{} hundred", ONES[h as usize])
    } else {
        format!("{} hundred {}", ONES[h as usize], words(r))
    }
}

/// Digits with comma thousands separators: 1900 → "1,900", 950 → "950".
pub fn thousands(n: u64) -> String {
    let digits = n.to_string();
    let mut out = String::new();
    for (i, c) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i).is_multiple_of(3) {
            out.push(',');
        }
        out.push(c);
    }
    out
}

/// A currency as an office writes it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Currency {
    Usd,
    Eur,
    Gbp,
    Cad,
    Aud,
    Sgd,
}

impl Currency {
    fn code(self) -> &'static str {
        match self {
            Currency::Usd => "USD",
            Currency::Eur => "EUR",
            Currency::Gbp => "GBP",
            Currency::Cad => "CAD",
            Currency::Aud => "AUD",
            Currency::Sgd => "SGD",
        }
    }

    fn symbol(self) -> &'static str {
        match self {
            Currency::Usd => "$",
            Currency::Eur => "€",
            Currency::Gbp => "£",
            Currency::Cad => "C$",
            Currency::Aud => "A$",
            Currency::Sgd => "S$",
        }
    }

    fn word(self) -> &'static str {
        match self {
            Currency::Usd => "dollars",
            Currency::Eur => "euros",
            Currency::Gbp => "pounds",
            Currency::Cad => "Canadian dollars",
            Currency::Aud => "Australian dollars",
            Currency::Sgd => "Singapore dollars",
        }
    }
}

/// How a document writes amounts of money; fixed per document.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum MoneyStyle {
    /// $7,500
    Symbol,
    /// 7,500 euros
    Word,
    /// EUR 7,500
    CodeFirst,
}

pub fn money(amount: u64, cur: Currency, style: MoneyStyle) -> String {
    let n = thousands(amount);
    match style {
        MoneyStyle::Symbol => format!("{}{n}", cur.symbol()),
        MoneyStyle::Word => format!("{n} {}", cur.word()),
        MoneyStyle::CodeFirst => format!("{} {n}", cur.code()),
    }
}

/// Other acceptable spellings of an amount: with and without separator, symbol or code.
pub fn money_aliases(amount: u64, cur: Currency, written: &str) -> Vec<String> {
    let (n, plain) = (thousands(amount), amount.to_string());
    let (sym, code, word) = (cur.symbol(), cur.code(), cur.word());
    let all = [
        n.clone(),
        plain.clone(),
        format!("{sym}{n}"),
        format!("{sym}{plain}"),
        format!("{sym} {n}"),
        format!("{n} {code}"),
        format!("{code} {n}"),
        format!("{plain} {code}"),
        format!("{code} {plain}"),
        format!("{n} {word}"),
        format!("{plain} {word}"),
        format!("{sym}{n}.00"),
    ];
    dedup_without(all, written)
}

/// Other spellings of a count or a measure: bare digits, with and without separator, with
/// the unit, and in words when small.
pub fn number_aliases(n: u64, unit: Option<&str>, written: &str) -> Vec<String> {
    let (sep, plain) = (thousands(n), n.to_string());
    let mut all = vec![sep.clone(), plain.clone()];
    if n < 100 {
        all.push(words(n as u32));
    }
    if let Some(u) = unit {
        all.push(format!("{sep} {u}"));
        all.push(format!("{plain} {u}"));
        if n < 100 {
            all.push(format!("{} {u}", words(n as u32)));
        }
    }
    dedup_without(all, written)
}

/// Other spellings of a percentage.
pub fn percent_aliases(value: &str, written: &str) -> Vec<String> {
    let all = [
        format!("{value}%"),
        value.to_string(),
        format!("{value} %"),
        format!("{value} percent"),
        format!("{value} per cent"),
    ];
    dedup_without(all, written)
}

fn dedup_without(all: impl IntoIterator<Item = String>, written: &str) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    for a in all {
        if a != written && !out.contains(&a) {
            out.push(a);
        }
    }
    out
}

/// Occurrences of `needle` in `text` that stand alone as a number or a phrase: not part of a
/// longer number ("5" in "15", "2.5", "5,000" or "10:00") or word ("Q5", "5th").
pub fn standalone_count(text: &str, needle: &str) -> usize {
    let is_digit = |c: Option<char>| c.is_some_and(|c| c.is_ascii_digit());
    let joins = |c: Option<char>| matches!(c, Some('.' | ',' | ':' | '/' | '-'));
    let alnum = |c: Option<char>| c.is_some_and(char::is_alphanumeric);
    text.match_indices(needle)
        .filter(|(start, _)| {
            let end = start + needle.len();
            let mut back = text[..*start].chars().rev();
            let (b1, b2) = (back.next(), back.next());
            let mut fwd = text[end..].chars();
            let (a1, a2) = (fwd.next(), fwd.next());
            let glued_before = alnum(b1) || (joins(b1) && is_digit(b2));
            let glued_after = alnum(a1) || (joins(a1) && is_digit(a2));
            !glued_before && !glued_after
        })
        .count()
}

/// Cities for offsites, events and offices.
pub const CITIES: [&str; 30] = [
    "Lisbon",
    "Rotterdam",
    "Austin",
    "Toronto",
    "Manchester",
    "Kraków",
    "Singapore",
    "Nairobi",
    "Melbourne",
    "Dublin",
    "Lyon",
    "Munich",
    "Denver",
    "Bengaluru",
    "São Paulo",
    "Osaka",
    "Seoul",
    "Cape Town",
    "Tallinn",
    "Valencia",
    "Montreal",
    "Edinburgh",
    "Copenhagen",
    "Phoenix",
    "Auckland",
    "Lagos",
    "Istanbul",
    "Vienna",
    "Chicago",
    "Hamburg",
];

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn templates_fill_and_capitalise() {
        let v = Vars::new().with("who", "priya").with("n", "5");
        assert_eq!(v.fill("{^who} asked for {n} hires."), "Priya asked for 5 hires.");
    }

    #[test]
    #[should_panic(expected = "not set")]
    fn a_missing_slot_panics() {
        Vars::new().fill("{nope}");
    }

    #[test]
    fn number_spellings() {
        assert_eq!(words(45), "forty-five");
        assert_eq!(words(120), "one hundred twenty");
        assert_eq!(words(90), "ninety");
        assert_eq!(thousands(1_900), "1,900");
        assert_eq!(thousands(148_300), "148,300");
        assert_eq!(thousands(950), "950");
        assert_eq!(money(7_500, Currency::Usd, MoneyStyle::Symbol), "$7,500");
        assert!(money_aliases(7_500, Currency::Usd, "$7,500").contains(&"7500".to_string()));
    }

    #[test]
    fn standalone_numbers_ignore_longer_numbers() {
        let t = "On 15 May we hired 5 people, 2.5 FTE, Q5 target, 5,000 users and 5.";
        assert_eq!(standalone_count(t, "5"), 2);
        assert_eq!(standalone_count("a 12% rise, 12 days", "12%"), 1);
        assert_eq!(standalone_count("$7,500 and 17,500", "7,500"), 1);
        assert_eq!(standalone_count("at 10:00 and 10 people", "10"), 1);
    }
}
