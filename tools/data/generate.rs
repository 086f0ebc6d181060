//! `ib-data generate`: decide, render and write a dataset, then validate it with the same
//! strict loader every stage uses, so a generated dataset that the pipeline would reject is
//! an error here rather than a surprise at `make`.
use crate::args::GenerateArgs;
use crate::item::{Generated, UserBand};
use crate::{contract, meeting, ticket, write};
use anyhow::{bail, Context, Result};
use inferbench_contract::canonical::sha256_hex;
use inferbench_contract::vocab::TaskFamily;
use inferbench_inputs::dataset::{self, LoadOptions};
use inferbench_inputs::spec::{FamilySpec, Spec};
use inferbench_judge::tokenizer;
use serde_json::Value;

/// Where a family's band is measured: the whole input for meeting notes, the user message
/// for the other two (reference §3.2).
pub fn user_band(family: &FamilySpec, system_tokens: usize) -> UserBand {
    let (lo, hi) = family.input_tokens;
    let (lo, hi) = (lo.max(0) as usize, hi.max(0) as usize);
    if family.name == TaskFamily::MeetingNotesLookup {
        UserBand { lo: lo.saturating_sub(system_tokens).max(1), hi: hi.saturating_sub(system_tokens) }
    } else {
        UserBand { lo, hi }
    }
}

/// The system prompt of a family: the template less exactly one trailing newline.
pub fn system_text(spec: &Spec, family: &FamilySpec) -> Result<String> {
    let path = spec.dir().join(&family.prompt_template);
    let text =
        std::fs::read_to_string(&path).with_context(|| format!("reading the prompt template {}", path.display()))?;
    Ok(text.strip_suffix('\n').unwrap_or(&text).to_string())
}

/// Generates `n` items of one family.
pub fn family_items(family: TaskFamily, seed: u64, n: usize, band: UserBand) -> Vec<Generated> {
    match family {
        TaskFamily::MeetingNotesLookup => meeting::generate(seed, n, band),
        TaskFamily::TicketTriage => ticket::generate(seed, n, band),
        TaskFamily::ContractTermsExtraction => contract::generate(seed, n, band),
        // No spec lists it as a dataset family (the spec's reader knows only the three).
        TaskFamily::Synthetic => Vec::new(),
    }
}

/// The dataset's files, in write order: `(file name, bytes)`.
pub fn dataset_files(spec: &Spec, seed: u64, sample: Option<usize>) -> Result<Vec<(String, Vec<u8>)>> {
    let mut files = Vec::new();
    let mut counts = Vec::new();
    for family in &spec.families {
        let system = system_text(spec, family)?;
        let system_tokens = tokenizer::count(&system);
        let band = user_band(family, system_tokens);
        if band.lo > band.hi {
            bail!(
                "{}: the system prompt alone ({system_tokens} tokens) leaves no room in the band {:?}",
                family.name,
                family.input_tokens
            );
        }
        let n = sample.unwrap_or(family.available_items);
        let items = family_items(family.name, seed, n, band);
        let rows: Vec<Value> = items
            .iter()
            .enumerate()
            .map(|(i, item)| write::row(family.name, i, &system, system_tokens, item))
            .collect();
        files.push((format!("{}.jsonl", family.name), write::jsonl(&rows)));
        counts.push((family.name.to_string(), n));
    }
    files.insert(0, ("manifest.json".to_string(), write::manifest(&counts)));
    Ok(files)
}

pub fn run(args: GenerateArgs) -> Result<()> {
    let spec = Spec::load(&args.spec)?;
    let sample = args.sample.map(|k| k as usize);
    let files = dataset_files(&spec, args.seed, sample)?;
    std::fs::create_dir_all(&args.out).with_context(|| format!("creating {}", args.out.display()))?;
    for (name, bytes) in &files {
        inferbench_store::atomic::write(&args.out.join(name), bytes)?;
    }
    dataset::load(&args.out, &spec, LoadOptions { sample: args.sample.is_some() }).with_context(|| {
        format!("the generated dataset in {} does not pass the loader (a generator bug)", args.out.display())
    })?;
    for (name, bytes) in &files {
        println!("{}  {}", sha256_hex(bytes), args.out.join(name).display());
    }
    Ok(())
}
