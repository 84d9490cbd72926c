//! Bootstrap: the PMI-1 wire protocol, its client (in every rank) and server (in the launcher).
