//! Reads `//::` annotations of corpus files and compares them with Germanium's reports.
