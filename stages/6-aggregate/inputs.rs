//! Reading the stage's inputs. The lock is checked first: metrics computed against a spec or
//! provider table other than the run's would price, check and rank with the wrong entries.
use crate::args::Args;
use crate::join::Tables;
use inferbench_contract::lock::Lock;
use inferbench_contract::tables::{EvaluationRow, ResponseRow, ScheduleRow};
use inferbench_inputs::providers::ProviderTable;
use inferbench_inputs::spec::Spec;
use inferbench_judge::rules::Rules;
use inferbench_store::parquet_io;
use inferbench_store::pipeline::Pipeline;
use inferbench_store::run::{RunDir, WriterLock};
use std::collections::BTreeMap;

/// Everything the stage reads, validated individually (the join checks them together).
pub struct RunInputs {
    pub spec: Spec,
    pub table: ProviderTable,
    pub lock: Lock,
    pub tables: Tables,
    /// Logical name → SHA-256 of every file read: the outputs' provenance.
    pub hashes: BTreeMap<String, String>,
    /// The scoring rules the responses were judged under.
    pub rules: Rules,
    /// An imported run's reference records failing the reference's record-level paired
    /// check, by provider (what the reference's rules exclude from the pairs).
    pub reference_paired_failures: Option<BTreeMap<String, usize>>,
    /// Held until the outputs are written: no other stage writes into the run meanwhile.
    pub _writer: WriterLock,
}

pub fn load(args: &Args) -> anyhow::Result<RunInputs> {
    let mut pipeline = Pipeline::open(&args.run, &args.spec)?;
    let run = pipeline.run.clone();
    let writer = run.lock_for_writing("ib-aggregate")?;
    // A synthetic request's prompt is no figure's input: dropped as each batch is decoded, so
    // the schedule held costs the same per request whatever the prompts' lengths.
    let schedule_reader = pipeline.reader::<ScheduleRow>(&run.schedule(), "ib-schedule")?;
    let mut schedule = Vec::with_capacity(usize::try_from(schedule_reader.total_rows).unwrap_or(0));
    for batch in schedule_reader {
        schedule.extend(batch?.into_iter().map(|row| ScheduleRow { prompt: None, ..row }));
    }
    // Each batch of rows is reduced to what the metrics read as soon as it is decoded.
    let responses_reader = pipeline.reader::<ResponseRow>(&run.responses(), "ib-reconstruct")?;
    let evaluations_reader = pipeline.reader::<EvaluationRow>(&run.evaluations(), "ib-evaluate")?;
    // The scoring rules are the responses' (ib-reconstruct --rules); the evaluations must have
    // been derived from responses judged under the same ones.
    let rules = Rules::of(&responses_reader.inputs);
    rules.check(RunDir::EVALUATIONS, &evaluations_reader.inputs)?;
    let tables = Tables { schedule, responses: facts(responses_reader)?, evaluations: facts(evaluations_reader)? };
    let reference_paired_failures =
        inferbench_inputs::reference_records::paired_check_failures(&run.reference_records())?;
    let Pipeline { spec, providers: table, lock, mut hashes, .. } = pipeline;
    rules.record(&mut hashes);
    Ok(RunInputs { spec, table, lock, tables, hashes, rules, reference_paired_failures, _writer: writer })
}

/// Every row of a table, reduced batch by batch to `F`.
fn facts<T: parquet_io::Table, F: From<T>>(reader: parquet_io::Reader<T>) -> anyhow::Result<Vec<F>> {
    let mut out = Vec::with_capacity(usize::try_from(reader.total_rows).unwrap_or(0));
    for batch in reader {
        out.extend(batch?.into_iter().map(F::from));
    }
    Ok(out)
}
