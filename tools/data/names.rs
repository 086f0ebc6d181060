//! People and organisations. Names come in pairs from one culture at a time (a given name
//! and a family name that belong together), from many cultures, so a meeting's attendee list
//! looks like a real international team rather than one list shuffled.
use inferbench_stats::rng::SplitMix64;

/// (given names, family names) of one naming culture.
const CULTURES: &[(&[&str], &[&str])] = &[
    // English-speaking
    (
        &[
            "Dana", "Marcus", "Helen", "Jonah", "Olivia", "Ben", "Grace", "Laura", "Peter", "Harriet", "Sam", "Rachel",
            "Tom", "Claire", "Owen", "Megan", "Nathan", "Abigail",
        ],
        &[
            "Whitfield",
            "Holloway",
            "Brandt",
            "Walsh",
            "Quinn",
            "Foster",
            "Hargreaves",
            "Bennett",
            "Collins",
            "Pryce",
            "Lawson",
            "Ashby",
            "Carver",
            "Doyle",
            "Fletcher",
        ],
    ),
    // Irish and Scottish
    (
        &["Siobhan", "Ciarán", "Aoife", "Niall", "Fiona", "Callum", "Orla", "Euan", "Róisín"],
        &["Byrne", "Gallagher", "McAllister", "Kavanagh", "Fraser", "Duggan", "Sweeney", "Reid"],
    ),
    // Spanish and Latin American
    (
        &[
            "Laura",
            "Tomás",
            "Lucía",
            "Diego",
            "Camila",
            "Andrés",
            "Valentina",
            "Javier",
            "Paula",
            "Mateo",
            "Ximena",
            "Rodrigo",
        ],
        &[
            "Perez", "Ortega", "Romero", "Castillo", "Navarro", "Herrera", "Fuentes", "Salazar", "Iglesias", "Mendoza",
            "Vargas",
        ],
    ),
    // Portuguese and Brazilian
    (
        &["João", "Beatriz", "Rafael", "Mariana", "Thiago", "Inês", "Gustavo", "Larissa"],
        &["Almeida", "Carvalho", "Ribeiro", "Souza", "Teixeira", "Pereira", "Moura", "Lopes"],
    ),
    // French
    (
        &["Claire", "Julien", "Élodie", "Mathieu", "Camille", "Antoine", "Margaux", "Théo"],
        &["Dubois", "Lefèvre", "Moreau", "Girard", "Fontaine", "Bertrand", "Rousseau", "Marchand"],
    ),
    // German, Austrian, Swiss
    (
        &["Leo", "Katrin", "Jonas", "Anke", "Felix", "Miriam", "Stefan", "Lena", "Tobias"],
        &["Fischer", "Brenner", "Hoffmann", "Weiss", "Keller", "Vogel", "Schäfer", "Lindner"],
    ),
    // Dutch and Flemish
    (
        &["Sanne", "Pieter", "Femke", "Joris", "Lotte", "Bram", "Eline", "Ruben"],
        &["de Vries", "Jansen", "Visser", "Bakker", "Mertens", "Smit", "van Dijk", "Peeters"],
    ),
    // Nordic
    (
        &["Ingrid", "Maya", "Erik", "Astrid", "Lars", "Sigrid", "Henrik", "Freja", "Mikkel"],
        &["Halvorsen", "Lindqvist", "Nyberg", "Dahl", "Andersen", "Sundberg", "Virtanen", "Berg"],
    ),
    // Polish, Czech, Slovak
    (
        &["Sandra", "Piotr", "Agnieszka", "Tomasz", "Kasia", "Jakub", "Zuzana", "Marek"],
        &["Kowalczyk", "Nowak", "Wiśniewska", "Dvořák", "Zieliński", "Horváth", "Krajewski"],
    ),
    // Italian
    (
        &["Sofia", "Marco", "Giulia", "Luca", "Chiara", "Alessandro", "Francesca", "Matteo"],
        &["Romano", "Bianchi", "Esposito", "Greco", "Colombo", "Ferraro", "Ricci", "Marchetti"],
    ),
    // Greek
    (
        &["Eleni", "Nikos", "Katerina", "Yannis", "Dimitra", "Stavros"],
        &["Papadopoulos", "Georgiou", "Karalis", "Antoniou", "Vlachos"],
    ),
    // Turkish
    (
        &["Elif", "Emre", "Zeynep", "Burak", "Deniz", "Selin", "Kerem"],
        &["Yılmaz", "Demir", "Aydın", "Kaya", "Öztürk", "Arslan", "Çelik"],
    ),
    // Arabic
    (
        &["Fatima", "Omar", "Layla", "Karim", "Nour", "Yusuf", "Rania", "Tariq", "Salma"],
        &["Al-Sayed", "Haddad", "Nasser", "Khalil", "Mansour", "Saleh", "Farouk", "Aziz"],
    ),
    // Persian
    (
        &["Dariush", "Shirin", "Arash", "Parisa", "Kaveh", "Nasrin"],
        &["Tehrani", "Karimi", "Ahmadi", "Rahimi", "Farahani"],
    ),
    // Hebrew
    (&["Eitan", "Noa", "Avi", "Tamar", "Yael", "Ori"], &["Shapiro", "Levy", "Peretz", "Ben-David", "Katz", "Mizrahi"]),
    // Indian
    (
        &[
            "Priya", "Rahul", "Ravi", "Ananya", "Vikram", "Deepa", "Arjun", "Meera", "Sanjay", "Kavya", "Nikhil",
            "Shreya",
        ],
        &[
            "Raman",
            "Mehta",
            "Iyer",
            "Nair",
            "Sharma",
            "Kulkarni",
            "Reddy",
            "Bhattacharya",
            "Menon",
            "Gupta",
            "Desai",
            "Rao",
        ],
    ),
    // Chinese
    (
        &["Wei", "Chloe", "Jun", "Mei", "Hao", "Xin", "Yifan", "Lin", "Jia"],
        &["Zhang", "Chen", "Liu", "Wang", "Huang", "Zhou", "Xu", "Lin", "Guo"],
    ),
    // Japanese
    (
        &["Haruto", "Yuki", "Kenji", "Aiko", "Sota", "Naomi", "Riku", "Emi"],
        &["Tanaka", "Sato", "Nakamura", "Watanabe", "Kobayashi", "Yamamoto", "Mori", "Ishikawa"],
    ),
    // Korean
    (
        &["Min-jun", "Ji-woo", "Seo-yeon", "Hyun", "Soo-ah", "Dong-hyun", "Ha-eun"],
        &["Park", "Kim", "Choi", "Jung", "Kang", "Yoon", "Han"],
    ),
    // Vietnamese
    (&["Linh", "Minh", "Thao", "Quang", "Huong", "Duc"], &["Nguyen", "Tran", "Pham", "Le", "Vu", "Hoang"]),
    // Filipino
    (
        &["Angelica", "Paolo", "Kristine", "Jericho", "Bea", "Carlo"],
        &["Santos", "Reyes", "Dela Cruz", "Bautista", "Villanueva", "Aquino"],
    ),
    // West African
    (
        &["Kofi", "Aisha", "Chidi", "Ama", "Tunde", "Ngozi", "Kwame", "Efua", "Segun"],
        &["Mensah", "Bello", "Adeyemi", "Osei", "Okafor", "Boateng", "Eze", "Asante", "Okoro"],
    ),
    // East African
    (
        &["Wanjiru", "Baraka", "Amani", "Zawadi", "Juma", "Nyokabi"],
        &["Kamau", "Otieno", "Mwangi", "Njoroge", "Wambua", "Achieng"],
    ),
    // Russian, Ukrainian
    (
        &["Dmitri", "Olena", "Sergei", "Natalia", "Andriy", "Irina", "Pavel"],
        &["Volkov", "Kovalenko", "Petrova", "Sokolov", "Shevchenko", "Morozova", "Bondarenko"],
    ),
];

/// Family names with a masculine and a feminine form (Slavic -ski/-ska, -ov/-ova,
/// Czech -ová, Greek -os/-ou): a person gets the form that matches the given name.
const GENDERED: &[(&str, &str)] = &[
    ("Wiśniewski", "Wiśniewska"),
    ("Zieliński", "Zielińska"),
    ("Krajewski", "Krajewska"),
    ("Dvořák", "Dvořáková"),
    ("Volkov", "Volkova"),
    ("Sokolov", "Sokolova"),
    ("Petrov", "Petrova"),
    ("Morozov", "Morozova"),
    ("Papadopoulos", "Papadopoulou"),
    ("Karalis", "Karali"),
    ("Vlachos", "Vlachou"),
];

/// Women's given names of the cultures whose family names have gendered forms.
const FEMININE_GIVEN: &[&str] =
    &["Sandra", "Agnieszka", "Kasia", "Zuzana", "Olena", "Natalia", "Irina", "Eleni", "Katerina", "Dimitra"];

/// The family name in the form that agrees with the given name.
pub fn agree(first: &str, last: &str) -> String {
    let female = FEMININE_GIVEN.contains(&first);
    for &(m, f) in GENDERED {
        if last == m || last == f {
            return if female { f } else { m }.to_string();
        }
    }
    last.to_string()
}

/// The masculine form of a family name, so "Volkov" and "Volkova" count as one name.
fn base(last: &str) -> &str {
    GENDERED.iter().find(|(m, f)| last == *m || last == *f).map_or(last, |(m, _)| m)
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Person {
    pub first: String,
    pub last: String,
}

impl Person {
    pub fn full(&self) -> String {
        format!("{} {}", self.first, self.last)
    }

    /// Spellings other than the full name that a reader may give: the family name alone,
    /// the given name alone, "Family, Given", the ASCII spelling when the name has accents,
    /// and a capitalised particle ("Van Dijk").
    pub fn aliases(&self) -> Vec<String> {
        let mut out = vec![self.last.clone(), self.first.clone(), format!("{}, {}", self.last, self.first)];
        let full = self.full();
        for v in [full.clone(), self.last.clone(), self.first.clone()] {
            let ascii = fold_ascii(&v);
            if ascii != v {
                out.push(ascii);
            }
        }
        if self.last.starts_with(|c: char| c.is_lowercase()) {
            let capital = crate::pools::cap(&self.last);
            out.push(format!("{} {capital}", self.first));
            out.push(capital);
        }
        out.retain(|a| a != &full);
        let mut seen = Vec::new();
        out.retain(|a| {
            let fresh = !seen.contains(a);
            seen.push(a.clone());
            fresh
        });
        out
    }
}

/// Draws people with pairwise distinct given names and family names (and distinct from
/// `avoid`), so "Priya" or "Raman" alone always identifies one person in a document.
pub fn people(rng: &mut SplitMix64, n: usize, avoid: &[Person]) -> Vec<Person> {
    let mut out: Vec<Person> = Vec::new();
    let mut cultures: Vec<usize> = (0..CULTURES.len()).collect();
    rng.shuffle(&mut cultures);
    let mut i = 0;
    let mut guard = 0;
    while out.len() < n {
        guard += 1;
        assert!(guard < 10_000, "cannot draw {n} distinct people");
        // A team is a mix: mostly different cultures, sometimes two from the same one.
        let culture = if rng.chance(25) { cultures[rng.below(cultures.len())] } else { cultures[i % cultures.len()] };
        let (firsts, lasts) = CULTURES[culture];
        let first = rng.pick(firsts).to_string();
        let last = agree(&first, *rng.pick(lasts));
        let p = Person { first, last };
        let clash = |q: &Person| {
            q.first == p.first
                || base(&q.last) == base(&p.last)
                || q.first == p.last
                || q.last == p.first
                || fold_ascii(&q.first) == fold_ascii(&p.first)
        };
        // "Lin Lin" would make the given name and the surname the same alias.
        if p.first == p.last || out.iter().chain(avoid).any(clash) {
            continue;
        }
        out.push(p);
        i += 1;
    }
    out
}

/// Accents removed, for the alias a keyboard without them would produce.
pub fn fold_ascii(s: &str) -> String {
    s.chars()
        .map(|c| match c {
            'á' | 'à' | 'â' | 'ä' | 'ã' => 'a',
            'é' | 'è' | 'ê' | 'ë' => 'e',
            'í' | 'ì' | 'î' | 'ï' | 'ı' => 'i',
            'ó' | 'ò' | 'ô' | 'ö' | 'õ' => 'o',
            'ú' | 'ù' | 'û' | 'ü' => 'u',
            'ç' => 'c',
            'ñ' => 'n',
            'ś' => 's',
            'ř' => 'r',
            'ń' => 'n',
            'ł' => 'l',
            'ğ' => 'g',
            'ş' => 's',
            'Ç' => 'C',
            'Ö' => 'O',
            'É' => 'E',
            'Ś' => 'S',
            other => other,
        })
        .collect()
}

// Organisations: an invented stem, a line of business and a legal form. Stems are invented
// so that no real company is named.
const STEMS: &[&str] = &[
    "Northwind",
    "Halcyon",
    "Quillstone",
    "Brightwater",
    "Oakridge",
    "Vantor",
    "Kestrel",
    "Nimbus",
    "Harlow",
    "Meridian",
    "Solvay Park",
    "Tidewell",
    "Corvane",
    "Alder & Finch",
    "Bluefen",
    "Cobaltline",
    "Driftwood",
    "Everhart",
    "Fernhill",
    "Glasswing",
    "Hollowell",
    "Ironbark",
    "Juniper Row",
    "Kittering",
    "Lumenor",
    "Marlowe",
    "Norrland",
    "Orchard Lane",
    "Pinecrest",
    "Quayside",
    "Redfern",
    "Saltmarsh",
    "Thornbury",
    "Upland",
    "Verity",
    "Westbrook",
    "Yarrow",
    "Zephyrine",
    "Ashgrove",
    "Birchmount",
    "Calloway",
    "Delmont",
    "Eastgate",
    "Fairhaven",
    "Greystone",
    "Highmoor",
    "Isola",
    "Jetstream",
    "Kingsmere",
    "Larkspur",
    "Moorfield",
    "Nettlebed",
    "Old Quarry",
    "Palisade",
    "Rookwood",
    "Sablewood",
    "Tamarind",
    "Ulverton",
    "Valemont",
    "Whinfell",
    "Arkwright",
    "Bellweather",
    "Crestline",
    "Dunmore",
    "Elderfield",
    "Foxglove",
    "Goldcrest",
    "Hazelmere",
    "Inverleith",
    "Kelpie",
];

/// Lines of business of technology suppliers.
pub const TECH_LINES: &[&str] = &[
    "Systems",
    "Software",
    "Analytics",
    "Cloud",
    "Data",
    "Digital",
    "Technologies",
    "Labs",
    "Networks",
    "Informatics",
    "Digital Consulting",
    "Cloud Services",
    "IT Services",
    "Solutions",
    "Logic",
];

/// Lines of business of customers.
pub const CUSTOMER_LINES: &[&str] = &[
    "Freight Holdings",
    "Retail Group",
    "Credit Union",
    "Health Partners",
    "Aerospace Components",
    "Foods",
    "Energy",
    "Insurance",
    "Logistics",
    "Pharma",
    "Media Group",
    "Learning Trust",
    "Hotels",
    "Building Supplies",
    "Veterinary Clinics",
    "Housing Association",
    "Manufacturing",
    "Marine Services",
    "Dental Group",
    "Properties",
    "Utilities",
    "Bank",
    "Outdoor Equipment",
    "Publishing",
    "Engineering",
];

/// Legal forms, each with the country it suggests.
const FORMS: &[&str] = &[
    "Inc.",
    "LLC",
    "Ltd",
    "plc",
    "GmbH",
    "AG",
    "B.V.",
    "S.A.",
    "SAS",
    "AB",
    "Oy",
    "Pty Ltd",
    "Pte. Ltd.",
    "S.r.l.",
    "sp. z o.o.",
    "A/S",
    "Corp.",
    "Limited",
    "N.V.",
    "K.K.",
];

/// A company name such as "Quillstone Systems GmbH"; `lines` chooses supplier or customer.
pub fn company(rng: &mut SplitMix64, lines: &[&str], with_form: bool) -> String {
    let stem = rng.pick(STEMS);
    let line = rng.pick(lines);
    if with_form {
        format!("{stem} {line} {}", rng.pick(FORMS))
    } else {
        format!("{stem} {line}")
    }
}

/// Distinct companies with distinct stems.
pub fn companies(rng: &mut SplitMix64, lines: &[&str], n: usize, with_form: bool) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    while out.len() < n {
        let c = company(rng, lines, with_form);
        let stem = |s: &str| s.split(' ').next().unwrap_or("").to_string();
        if !out.iter().any(|o| stem(o) == stem(&c)) {
            out.push(c);
        }
    }
    out
}

/// The name of a company without its legal form, as people say it in a meeting.
pub fn short_company(name: &str) -> String {
    let mut s = name.to_string();
    for form in FORMS {
        if let Some(rest) = s.strip_suffix(&format!(" {form}")) {
            s = rest.to_string();
            break;
        }
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn people_have_distinct_given_and_family_names() {
        for seed in 0..200 {
            let ps = people(&mut SplitMix64::new(seed), 9, &[]);
            for (i, a) in ps.iter().enumerate() {
                for b in &ps[i + 1..] {
                    assert_ne!(a.first, b.first);
                    assert_ne!(a.last, b.last);
                }
            }
        }
    }

    #[test]
    fn gendered_family_names_agree_with_the_given_name() {
        let mut rng = SplitMix64::new(7);
        for _ in 0..400 {
            for p in people(&mut rng, 6, &[]) {
                for &(m, f) in GENDERED {
                    if FEMININE_GIVEN.contains(&p.first.as_str()) {
                        assert_ne!(p.last, m, "{}", p.full());
                    } else {
                        assert_ne!(p.last, f, "{}", p.full());
                    }
                }
            }
        }
        assert_eq!(agree("Jakub", "Wiśniewska"), "Wiśniewski");
        assert_eq!(agree("Pavel", "Morozova"), "Morozov");
        assert_eq!(agree("Irina", "Volkov"), "Volkova");
        assert_eq!(agree("Eleni", "Papadopoulos"), "Papadopoulou");
    }

    #[test]
    fn aliases_cover_surname_and_ascii() {
        let p = Person { first: "Tomás".into(), last: "Ortega".into() };
        let a = p.aliases();
        assert!(a.contains(&"Ortega".to_string()));
        assert!(a.contains(&"Tomas Ortega".to_string()));
        assert!(a.contains(&"Tomás".to_string()));
        assert!(!a.contains(&"Tomás Ortega".to_string()));
    }
}
