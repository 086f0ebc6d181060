//! inferbench's one integration-test binary: the real stage binaries, run against `ib-sim` on
//! an ephemeral loopback port, checked end to end.
mod bad_input;
mod make;
mod pipeline;
mod resume;
mod support;
