//! Reading the stage's inputs. The lock is checked first: metrics computed against a spec or
//! provider table other than the run's would price, check and rank with the wrong entries.
use crate::args::Args;
use crate::join::Tables;
use inferbench_schemas::lock::Lock;
use inferbench_schemas::parquet_io;
use inferbench_schemas::pipeline::Pipeline;
use inferbench_schemas::providers::ProviderTable;
use inferbench_schemas::rules::Rules;
use inferbench_schemas::run::WriterLock;
use inferbench_schemas::spec::Spec;
use inferbench_schemas::tables::{EvaluationRow, ResponseRow};
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
    let tables = Tables {
        schedule: pipeline.table(&run.schedule(), "ib-schedule")?,
        responses: pipeline.table(&run.responses(), "ib-reconstruct")?,
        evaluations: pipeline.table(&run.evaluations(), "ib-evaluate")?,
    };
    // The scoring rules are the responses' (ib-reconstruct --rules); the evaluations must have
    // been derived from responses judged under the same ones.
    let rules = Rules::of(&parquet_io::read_inputs::<ResponseRow>(&run.responses())?);
    rules.check("evaluations.parquet", &parquet_io::read_inputs::<EvaluationRow>(&run.evaluations())?)?;
    let reference_paired_failures = inferbench_schemas::reference_records::paired_check_failures(&run)?;
    let Pipeline { spec, providers: table, lock, mut hashes, .. } = pipeline;
    rules.record(&mut hashes);
    Ok(RunInputs { spec, table, lock, tables, hashes, rules, reference_paired_failures, _writer: writer })
}
