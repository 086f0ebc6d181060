//! The stage's first phase: every input read once, each table a batch at a time and reduced
//! to the facts the figures read. The lock is checked first: metrics computed against a spec
//! or provider table other than the run's would price, check and rank with the wrong entries.
use crate::args::Args;
use crate::facts::{LoadFacts, ResponseFacts, Tables};
use inferbench_contract::execution::StepFacts;
use inferbench_contract::lock::Lock;
use inferbench_contract::tables::{EvaluationRow, ResponseRow, ScheduleRow};
use inferbench_inputs::providers::ProviderTable;
use inferbench_inputs::spec::Spec;
use inferbench_judge::rules::Rules;
use inferbench_store::parquet_io;
use inferbench_store::pipeline::Pipeline;
use inferbench_store::run::{RunDir, WriterLock};
use inferbench_store::{execution, parquet_io::Reader};
use std::collections::BTreeMap;

/// Everything the stage reads, validated individually (the join checks the tables together).
pub struct RunInputs {
    pub about: About,
    pub tables: Tables,
    /// A load run's own inputs (`None` unless the spec has a `load` section).
    pub load: Option<LoadInputs>,
}

/// What the run is: the inputs it is bound to and every file read.
pub struct About {
    pub spec: Spec,
    pub table: ProviderTable,
    pub lock: Lock,
    /// Logical name → SHA-256 of every file read: the outputs' provenance.
    pub hashes: BTreeMap<String, String>,
    /// The scoring rules the responses were judged under.
    pub rules: Rules,
    /// An imported run's reference records failing the reference's record-level paired
    /// check, by provider (what the reference's rules exclude from the pairs).
    pub reference_paired_failures: Option<BTreeMap<String, usize>>,
}

/// What a load run's figures read besides the tables: each response's times and answer
/// chunks, and the log's step runs (the execution facts `responses.parquet` carries).
pub struct LoadInputs {
    pub responses: Vec<LoadFacts>,
    pub steps: Vec<StepFacts>,
}

/// Reads the run's inputs; the writer lock returned is to be held until the outputs are
/// written, so that no other stage writes into the run meanwhile.
pub fn read(args: &Args) -> anyhow::Result<(RunInputs, WriterLock)> {
    let mut pipeline = Pipeline::open(&args.run, &args.spec)?;
    let run = pipeline.run.clone();
    let writer = run.lock_for_writing("ib-aggregate")?;
    // A synthetic request's prompt is no figure's input: dropped as each batch is decoded, so
    // the schedule held costs the same per request whatever the prompts' lengths.
    let schedule_reader = pipeline.reader::<ScheduleRow>(&run.schedule(), "ib-schedule")?;
    let mut schedule = Vec::with_capacity(capacity(schedule_reader.total_rows));
    for batch in schedule_reader {
        schedule.extend(batch?.into_iter().map(|row| ScheduleRow { prompt: None, ..row }));
    }
    let responses_reader = pipeline.reader::<ResponseRow>(&run.responses(), "ib-reconstruct")?;
    let evaluations_reader = pipeline.reader::<EvaluationRow>(&run.evaluations(), "ib-evaluate")?;
    // The scoring rules are the responses' (ib-reconstruct --rules); the evaluations must have
    // been derived from responses judged under the same ones.
    let rules = Rules::of(&responses_reader.inputs);
    rules.check(RunDir::EVALUATIONS, &evaluations_reader.inputs)?;
    let is_load = pipeline.spec.load.is_some();
    let steps = if is_load { steps(&responses_reader, &run)? } else { Vec::new() };
    let (responses, load_responses) = responses(responses_reader, is_load)?;
    let evaluations = facts(evaluations_reader)?;
    let reference_paired_failures =
        inferbench_inputs::reference_records::paired_check_failures(&run.reference_records())?;
    let Pipeline { spec, providers: table, lock, mut hashes, .. } = pipeline;
    rules.record(&mut hashes);
    let inputs = RunInputs {
        about: About { spec, table, lock, hashes, rules, reference_paired_failures },
        tables: Tables { schedule, responses, evaluations },
        load: is_load.then_some(LoadInputs { responses: load_responses, steps }),
    };
    Ok((inputs, writer))
}

/// Every response, reduced batch by batch to what the metrics read of it and, for a load run,
/// to what the load figures read of it as well.
fn responses(reader: Reader<ResponseRow>, is_load: bool) -> anyhow::Result<(Vec<ResponseFacts>, Vec<LoadFacts>)> {
    let mut responses = Vec::with_capacity(capacity(reader.total_rows));
    let mut load = Vec::with_capacity(if is_load { capacity(reader.total_rows) } else { 0 });
    for batch in reader {
        for row in batch? {
            if is_load {
                load.push(LoadFacts::from(&row));
            }
            responses.push(ResponseFacts::from(row));
        }
    }
    Ok((responses, load))
}

/// The log's step runs, from the execution facts `responses.parquet` carries in its metadata;
/// none for a table written before it carried them.
fn steps(reader: &Reader<ResponseRow>, run: &RunDir) -> anyhow::Result<Vec<StepFacts>> {
    Ok(execution::in_table(reader, &run.responses())?.map(|execution| execution.steps).unwrap_or_default())
}

/// Every row of a table, reduced batch by batch to `F`.
fn facts<T: parquet_io::Table, F: From<T>>(reader: Reader<T>) -> anyhow::Result<Vec<F>> {
    let mut out = Vec::with_capacity(capacity(reader.total_rows));
    for batch in reader {
        out.extend(batch?.into_iter().map(F::from));
    }
    Ok(out)
}

fn capacity(rows: u64) -> usize {
    usize::try_from(rows).unwrap_or(0)
}
