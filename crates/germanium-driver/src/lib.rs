//! Runs the stages of Germanium over one input file and collects a report.
