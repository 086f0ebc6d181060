//! The pipeline's stage graph, in one table: each stage in pipeline order, its binary, the run
//! files its outputs are derived from and the run files it writes, and what it is told besides
//! the run. The Makefile's run rules are checked against it (`tests/e2e/stage_graph.rs`),
//! `ib-verify` re-derives a run in its order with its flags, and the tests run the stages from
//! it, as one `dvc.yaml` serves both `dvc repro` and `dvc status`.
use crate::run::RunDir;
use inferbench_contract::execution;

/// What a stage is told besides `--run`, each by its flag: the inputs outside the run directory
/// (the lock binds them) and the scoring rules.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Flag {
    /// `--spec`: the pipeline spec (and the provider table it names).
    Spec,
    /// `--dataset`: the dataset directory (the spec's when not given).
    Dataset,
    /// `--rules`: the scoring rules the stages after the fetch apply.
    Rules,
}

impl Flag {
    pub const ALL: [Flag; 3] = [Flag::Spec, Flag::Dataset, Flag::Rules];

    /// The flag as the command line spells it.
    pub const fn name(self) -> &'static str {
        match self {
            Flag::Spec => "--spec",
            Flag::Dataset => "--dataset",
            Flag::Rules => "--rules",
        }
    }
}

/// A document an output carries in its Parquet metadata rather than as a file of its own.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Carried {
    /// The output that carries it.
    pub file: &'static str,
    /// The metadata key it is stored under.
    pub key: &'static str,
    /// What it is, in words.
    pub what: &'static str,
}

/// One stage of the pipeline.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Stage {
    /// Its name, as its folder `stages/<n>-<name>/` spells it.
    pub name: &'static str,
    /// Its binary.
    pub binary: &'static str,
    /// The run files its outputs are derived from: make's prerequisites, so a newer one makes
    /// the outputs stale. (Every stage also checks `lock.json`, which the schedule depends on.)
    pub inputs: &'static [&'static str],
    /// The run files it writes, the ones make's rule names; a directory is written as the
    /// stage goes and stands for every file in it.
    pub outputs: &'static [&'static str],
    /// Documents carried inside its outputs.
    pub carries: &'static [Carried],
    /// What it is told besides `--run`.
    pub flags: &'static [Flag],
    /// Whether its outputs are the run's record (what was selected, scheduled and sent): once
    /// the fetch has begun they are never derived again, so `make rescore` has no rule for
    /// them and `ib-verify` takes them as given.
    pub recorded: bool,
}

impl Stage {
    /// The outputs that are files, as make's targets name them (a directory is no target: the
    /// fetch's log is the record, and `events.parquet`, written when it is sealed, stands for it).
    pub fn files(&self) -> impl Iterator<Item = &'static str> {
        self.outputs.iter().copied().filter(|name| *name != RunDir::EVENTS)
    }
}

/// Every stage, in pipeline order: each one's inputs are written by the stages before it.
pub const STAGES: [Stage; 7] = [
    Stage {
        name: "select",
        binary: "ib-select",
        inputs: &[],
        outputs: &[RunDir::LOCK, RunDir::SELECTION],
        carries: &[],
        flags: &[Flag::Spec, Flag::Dataset],
        recorded: true,
    },
    Stage {
        name: "schedule",
        binary: "ib-schedule",
        inputs: &[RunDir::LOCK, RunDir::SELECTION],
        outputs: &[RunDir::SCHEDULE],
        carries: &[],
        flags: &[Flag::Spec],
        recorded: true,
    },
    Stage {
        name: "fetch",
        binary: "ib-fetch",
        inputs: &[RunDir::SCHEDULE],
        outputs: &[RunDir::EVENTS, RunDir::EVENTS_TABLE],
        carries: &[],
        flags: &[Flag::Spec, Flag::Dataset],
        recorded: true,
    },
    Stage {
        name: "reconstruct",
        binary: "ib-reconstruct",
        inputs: &[RunDir::EVENTS_TABLE, RunDir::SCHEDULE],
        outputs: &[RunDir::RESPONSES],
        carries: &[Carried {
            file: RunDir::RESPONSES,
            key: execution::METADATA_KEY,
            what:
                "the execution facts: each fetch segment, the wall-clock period, what was resumed, a load run's steps",
        }],
        flags: &[Flag::Rules],
        recorded: false,
    },
    Stage {
        name: "evaluate",
        binary: "ib-evaluate",
        inputs: &[RunDir::RESPONSES],
        outputs: &[RunDir::EVALUATIONS],
        carries: &[],
        flags: &[Flag::Spec, Flag::Dataset],
        recorded: false,
    },
    Stage {
        name: "aggregate",
        binary: "ib-aggregate",
        inputs: &[RunDir::RESPONSES, RunDir::EVALUATIONS, RunDir::SCHEDULE],
        outputs: &[RunDir::METRICS_JSON, RunDir::METRICS_PARQUET, RunDir::POOLED, RunDir::COMPARISONS],
        carries: &[],
        flags: &[Flag::Spec],
        recorded: false,
    },
    Stage {
        name: "report",
        binary: "ib-report",
        inputs: &[
            RunDir::METRICS_JSON,
            RunDir::METRICS_PARQUET,
            RunDir::POOLED,
            RunDir::COMPARISONS,
            RunDir::RESPONSES,
            RunDir::SCHEDULE,
        ],
        outputs: &[RunDir::REPORT_MD, RunDir::REPORT_HTML, RunDir::MANIFEST],
        carries: &[],
        flags: &[Flag::Spec],
        recorded: false,
    },
];

/// The stages after the record, in order: what `make rescore` and `ib-verify` derive again.
pub fn derived() -> impl Iterator<Item = &'static Stage> {
    STAGES.iter().filter(|s| !s.recorded)
}

/// The files the stages after the record write, in the order they write them: everything
/// else in a run is their input.
pub fn derived_files() -> impl Iterator<Item = &'static str> {
    derived().flat_map(Stage::files)
}

/// The stage whose binary is `binary`.
pub fn by_binary(binary: &str) -> Option<&'static Stage> {
    STAGES.iter().find(|s| s.binary == binary)
}

/// The stage that writes the run file `name`.
pub fn writer_of(name: &str) -> Option<&'static Stage> {
    STAGES.iter().find(|s| s.outputs.contains(&name))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_input_is_written_by_an_earlier_stage_and_every_file_by_one_stage() {
        for (i, stage) in STAGES.iter().enumerate() {
            for input in stage.inputs {
                let writer = STAGES.iter().position(|s| s.outputs.contains(input));
                assert!(writer.is_some_and(|w| w < i), "{}: {input} is written by no stage before it", stage.name);
            }
            assert_eq!(stage.binary, format!("ib-{}", stage.name));
            for carried in stage.carries {
                assert!(stage.outputs.contains(&carried.file), "{}: carries in {}", stage.name, carried.file);
            }
        }
        let mut all: Vec<&str> = STAGES.iter().flat_map(|s| s.outputs.iter().copied()).collect();
        let count = all.len();
        all.sort_unstable();
        all.dedup();
        assert_eq!(all.len(), count, "a file written by two stages");
    }

    #[test]
    fn the_record_comes_first_and_the_derived_files_follow_it() {
        let recorded = STAGES.iter().take_while(|s| s.recorded).count();
        assert!(STAGES[recorded..].iter().all(|s| !s.recorded), "a recorded stage after a derived one");
        assert_eq!(derived().next().map(|s| s.binary), Some("ib-reconstruct"));
        assert_eq!(derived_files().next(), Some(RunDir::RESPONSES));
        assert_eq!(derived_files().last(), Some(RunDir::MANIFEST));
        assert_eq!(writer_of(RunDir::POOLED).map(|s| s.name), Some("aggregate"));
        assert_eq!(by_binary("ib-fetch").map(|s| s.files().collect::<Vec<_>>()), Some(vec![RunDir::EVENTS_TABLE]));
    }
}
