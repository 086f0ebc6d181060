//! inferbench's one integration-test binary: the real stage binaries, run against `ib-sim` on
//! an ephemeral loopback port, checked end to end.
mod bad_input;
mod browser;
mod compare;
mod fleet;
mod golden;
mod hive;
mod hostile;
mod import;
mod kills;
mod llama;
mod load;
mod make;
mod notebooks;
mod operator;
mod ops;
mod pipeline;
mod ranks;
mod reference;
mod resume;
mod search;
mod shards;
mod support;
mod synth;
mod tidy;
mod verify;
mod watch;
