//! Semantic analysis of a parsed Viper program: name resolution, type checking and
//! consistency rules.
